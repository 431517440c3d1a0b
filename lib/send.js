'use strict'

// The one write of the native path and the bookkeeping around it: what
// OutgoingMessage#end leaves on the response and the socket once _send,
// _writeRaw and the forced uncork have run; what follows the write differs
// per Node line and is the protocol adapter's (lib/protocol/).

const binding = require('./binding.js')
const internals = require('./internals.js')
const { FLAGS, ERRORS, KEY, SENT, sendOutcome, sendDetail } = require('./codes.js')
const { COPY_MAX_BODY } = require('./rules.js')

// Read once: the globals `process` and `Buffer` are getters. nextTick is
// still looked up on the process object per call, as Node's own modules do.
const processObject = process
const BufferClass = Buffer
const { allocUnsafe, byteLength } = Buffer
const stringSlice = String.prototype.slice
const { latin1Slice } = Buffer.prototype
// The intrinsic TypedArray getters: a Uint8Array subclass cannot intercept
// the view of a body's unwritten rest.
const typedArrayProto = Object.getPrototypeOf(Uint8Array.prototype)
const getBuffer = Object.getOwnPropertyDescriptor(typedArrayProto, 'buffer').get
const getByteOffset = Object.getOwnPropertyDescriptor(typedArrayProto, 'byteOffset').get
// send()'s result when a body above COPY_MAX_BODY could not go out in a
// direct write: Node's own end() writes it without the copy.
const SEND_TOO_LARGE = -1
// sendWaiting()'s results when the kernel took nothing (the socket's
// buffer is full) and when a pending socket error failed the write.
const SEND_BUSY = -3
const SEND_REPORT = -4
// waitingBody()'s result for a write of an encoding but utf8 or latin1.
const SEND_ENCODING = -2
// waitingBody()'s result when the first write waiting does not begin with
// the header block (it went out on an earlier tick).
const SEND_HEADER_GONE = -5
// The key of sendCached()/fillCached() (lib/codes.js), as constants of
// this file: read per response.
const {
  SHIFT: KEY_SHIFT, REPEAT: KEY_REPEAT, CHECK: KEY_CHECK, STRING: KEY_STRING, BYTES: KEY_BYTES,
  EMPTY: KEY_EMPTY
} = KEY
const { WHOLE, REJECTED, FAILED } = SENT
const { ENONASCII } = ERRORS

// Responses whose bytes went to the descriptor directly: whole, or in part
// with the rest through socket.write().
const directStats = { direct: 0, partial: 0 }

// The direct-write counts start again from zero (lib/shim.js resetStats()).
function resetDirectStats () {
  directStats.direct = 0
  directStats.partial = 0
}

// The direct-write counts, as a copy (lib/shim.js counts()).
function directCounts () {
  return { direct: directStats.direct, partial: directStats.partial }
}

// --- What a direct write must reproduce --------------------------------------
//
// socket.write(buffer, cb) on an idle TCP socket whose kernel buffer takes
// the whole message (Writable#write, Socket#_writeGeneric, writeGeneric, the
// handle's writeBuffer; alike on Node 20 to 26) leaves behind:
// - the handle's byte counter (socket.bytesWritten reads it) grown by the
//   message size;
// - the socket's idle timer refreshed (_unrefTimer);
// - one pending callback (state.pendingcb) until the next tick, where it is
//   dropped and the callback runs ('finish' here); no 'drain' while the
//   message stays below the high-water mark;
// - one TickObject async resource (that tick) and no WriteWrap: Node creates
//   none for a write that completes at once (checked with an init hook on
//   Node 20.20 and 24.22).
// Node's end() writes on a corked socket, so the Writable compares the whole
// message with the high-water mark before the write runs: a message of at
// least writableHighWaterMark bytes (characters, for a string; the same
// count here: test/shim.test.js, "a non-ASCII UTF-8 message at the
// socket's high-water mark") sets needDrain, and
// the tick that runs the callback emits the socket's 'drain' first
// (afterWrite). The shim's writes are not corked, so markNeedDrain() sets
// the flag after the write, and afterDirectWrite() emits 'drain' for a
// direct write; a write through socket.write() leaves that to the
// Writable's own afterWrite.
// Anything else takes socket.write() as before.
//
// A pending socket error (a reset that arrived before the server read it)
// fails the direct write, which consumes it: the kernel answers any later
// write with EPIPE. The message then goes to socket.write() with the
// handle's writeBuffer answering that one call with the direct write's
// error (writeReporting()), so Node's own write path reports it, with its
// own bookkeeping. Only where the rest would go to Node's own end() (a body
// above COPY_MAX_BODY, which is not copied) does C check for a pending
// error first, with a poll() that leaves it in place: a system call that
// costs a small response more than everything else the kernel does for it.

// The handle class, its writeBuffer and its byte counter, learnt from the
// first TCP handle seen (a listening server's handle is one too).
let TCP = null
let tcpWriteBuffer = null
let tcpBytesWritten = null

function learnHandle (handle) {
  const ctor = handle.constructor
  if (typeof ctor !== 'function' || ctor.name !== 'TCP') return false
  let proto = Object.getPrototypeOf(handle)
  let desc
  while (proto !== null && (desc = Object.getOwnPropertyDescriptor(proto, 'bytesWritten')) === undefined) {
    proto = Object.getPrototypeOf(proto)
  }
  if (desc === undefined || typeof desc.get !== 'function' ||
      typeof handle.writeBuffer !== 'function' || typeof handle.fd !== 'number') {
    return false
  }
  TCP = ctor
  tcpWriteBuffer = handle.writeBuffer
  tcpWritev = handle.writev
  tcpBytesWritten = desc.get
  return true
}

// The bytes each handle wrote directly, in a private field of the handle:
// no key a program can list, nothing util.inspect() prints (a symbol key
// showed in console.log(socket)). A base class whose constructor returns
// its argument lets the field go on an object it did not create.
class Target {
  constructor (object) {
    return object
  }
}

class DirectBytes extends Target {
  #bytes
  constructor (handle, n) {
    super(handle)
    this.#bytes = n
  }

  // Adds `n`; returns true for a handle that had none.
  static add (handle, n) {
    if (#bytes in handle) {
      handle.#bytes += n
      return false
    }
    // eslint-disable-next-line no-new
    new DirectBytes(handle, n)
    return true
  }

  static of (handle) {
    return #bytes in handle ? handle.#bytes : 0
  }
}

// The handle's own counter plus the bytes written directly: an accessor of
// the handle instance (Node's, on LibuvStreamWrap.prototype, cannot be
// redefined), not enumerable, defined on the first direct write, so the
// socket's bytesWritten (and the copy it keeps after destroy()) reads what
// Node's own write would have left.
function bytesWrittenGetter () {
  return tcpBytesWritten.call(this) + DirectBytes.of(this)
}

function countDirect (handle, n) {
  if (DirectBytes.add(handle, n)) {
    Object.defineProperty(handle, 'bytesWritten', {
      get: bytesWrittenGetter, enumerable: false, configurable: true
    })
  }
}

// What end() does once the write is done, per Node line (lib/protocol/).
const protocol = internals === null ? null : internals.protocol
// Where write_() holds chunks on a corked response (Node 24.22+, 26.10+):
// its cork count, the chunks (chunk, encoding, callback per write) and
// their bytes.
const heldChunks = internals !== null && internals.chunkedUncork === true
const kCorked = internals === null ? null : internals.kCorked
const kChunkedBuffer = internals === null ? null : internals.kChunkedBuffer
const kChunkedLength = internals === null ? null : internals.kChunkedLength
const socketWritev = internals === null ? null : internals.socketMethods._writev
const direct = binding !== null && binding.canSend === true && internals !== null &&
  internals.socketState !== null

// The Writable state's bit field and its needDrain bit (lib/internals.js,
// learnWritableState()), and the symbols of a socket's handle and last
// write (learnt from the first socket, learn()), read here instead of
// through Node's getters.
const socketState = internals === null ? null : internals.socketState
const kState = socketState === null ? null : socketState.kState
const NEED_DRAIN = socketState === null ? 0 : socketState.needDrain
const PlainSocket = socketState === null ? null : socketState.Socket
const learned = internals === null ? null : internals.learned

// Whether the Writable state of a socket of exactly net.Socket's class
// says needDrain.
function needDrain (state) {
  return (state[kState] & NEED_DRAIN) !== 0
}

// The socket's handle when a direct write may replace socket.write(), else
// null. Only sockets of exactly net.Socket's class: fallbackReason() found
// them writable, so writableNeedDrain is the needDrain flag itself.
function directHandle (socket) {
  const handle = tcpHandle(socket)
  return handle === null || needDrain(socket._writableState) ? null : handle
}

// The TCP handle of a socket of exactly net.Socket's class whose writes
// the addon may make on the descriptor (connected, the handle's own write
// methods), else null.
function tcpHandle (socket) {
  if (!direct || socket.constructor !== PlainSocket || learned.kHandle === null ||
      learned.kLastWriteQueueSize === null) {
    return null
  }
  const handle = socket[learned.kHandle]
  if (handle === null || (handle.constructor !== TCP && (TCP !== null || !learnHandle(handle)))) {
    return null
  }
  if (handle.writeBuffer !== tcpWriteBuffer || socket.connecting || socket._pendingData !== null) {
    return null
  }
  return handle
}

// writeOrBuffer() on the corked socket of Node's end(): the message was
// added to an empty queue (fallbackReason() checked writableLength 0).
function markNeedDrain (socket, total) {
  const state = socket._writableState
  if (total >= state.highWaterMark) state.needDrain = true
}

// Writes `data` (the message, as a Buffer or a latin1 string) with
// socket.write() after a direct write failed with `errno`: the handle's
// write method answers that one call with the error (a libuv code:
// -errno), as its own does for a write that fails at once, and Node's
// write path reports it. A failed Buffer write counts its bytes in the
// handle's byte counter all the same; a failed string write does not.
function writeReporting (socket, handle, data, errno, onWrite) {
  handle.writeBuffer = function writeBuffer () {
    countDirect(handle, data.length)
    return -errno
  }
  handle.writeLatin1String = function writeLatin1String () {
    return -errno
  }
  try {
    socket.write(data, 'latin1', onWrite)
  } finally {
    delete handle.writeBuffer
    delete handle.writeLatin1String
  }
}

// The tick after a direct write: what afterWriteTick()/afterWrite() do for
// one completed write whose callback is the protocol's onFinish.
function afterDirectWrite (socket, res) {
  const state = socket._writableState
  if (needDrain(state) && !state.ending && !state.destroyed && state.length === 0) {
    state.needDrain = false
    socket.emit('drain')
  }
  state.pendingcb--
  protocol.onFinish(res, null)
}

// What a body of `len` bytes leaves unwritten once `from` of its bytes are
// out: a view of a Uint8Array (as Node's own writev holds the caller's
// bytes), the rest of a string whose chars are its bytes.
function bodyRest (chunk, from, len) {
  if (typeof chunk === 'string') return stringSlice.call(chunk, from)
  return Buffer.from(getBuffer.call(chunk), getByteOffset.call(chunk) + from, len - from)
}

// Counts the header lines of a block Node rendered, for the core's
// line-count check.
function countLines (head) {
  let lines = -2
  let at = -1
  while ((at = head.indexOf('\r\n', at + 1)) !== -1) lines++
  return lines
}

// The callback write_() hands a dropped body, on the next tick.
function nop () {}

// The bytes chunked framing adds around a body of `len` bytes: the
// chunk-size line (hex digits, CRLF) and CRLF after the body when there is
// one, then the last chunk 0 CRLF CRLF (src/http_message.h).
function chunkFraming (len) {
  if (len === 0) return 5
  let digits = 1
  for (let n = len; n > 15; n = Math.floor(n / 16)) digits++
  return digits + 2 + 2 + 5
}

/**
 * The inputs of one write (send()). end() keeps one and fills it for each
 * call; send() reads it before anything else, so a response ended from
 * within the write finds its own.
 */
class Message {
  constructor () {
    // The header block: cached in C (`slot` >= 0, with `contentLength` the
    // Content-Length argument, lib/cache-entry.js lengthArgument()) or
    // res._header itself (`slot` -1, with `lines` header lines, which C
    // checks again).
    this.slot = -1
    this.contentLength = 0
    // The lib/cache-entry.js Entry the block is (its `slot`), or null for a
    // block Node rendered: sendEnd() reads its Content-Length value.
    this.block = null
    this.lines = 0
    // The body (a string or Uint8Array, or null) and its bytes.
    this.body = null
    this.bodyLength = 0
    // The message flags (lib/codes.js FLAGS).
    this.flags = 0
    // end() was given a body that Node drops (HEAD, 1xx, 204, 304): `body`
    // is null, and write_()'s tick is queued.
    this.dropped = false
    // The socket's handle when the write may go to the descriptor
    // (directHandle(); sendEnd() finds it), else null.
    this.handle = null
    // The errno of a direct write that failed (sendWaiting()).
    this.failed = 0
  }
}

/**
 * Writes the response once: straight to the descriptor when
 * `message.handle` is given, else (or for what the kernel did not take,
 * sendRest()) with one socket.write() carrying the finish callback; then
 * sets what end() sets. A body above COPY_MAX_BODY needs a handle and a
 * direct write that took the whole header block: the rest of the body then
 * goes to socket.write() as it is.
 * Every char of an accepted head is one byte (latin1, or ASCII when the
 * block goes out as UTF-8, as a cached block always is), so the message
 * size is known before the write, and a Buffer for it comes from Node's
 * shared pool: a standalone allocation per response costs more than
 * everything else the native path does (benchmark/build-message.js).
 * What a response whose message a direct write took whole runs is written
 * out here, without helpers of its own; the rest is in sendRest()
 * (docs/architecture.md, "The inlining budget").
 * @param {http.ServerResponse} res
 * @param {Message} message
 * @param {Function|undefined} callback end()'s callback
 * @returns {number} 0 when sent, SEND_TOO_LARGE, or the core's rejection
 *   code (nothing was sent or changed; Node's own end() must continue)
 */
function send (res, message, callback) {
  // Every field is read before anything of the user's can run: a response
  // ended from within the write finds its own message.
  const slot = message.slot
  const contentLength = message.contentLength
  const chunk = message.body
  const bodyLength = message.bodyLength
  const flags = message.flags
  const handle = message.handle
  const dropped = message.dropped
  const head = res._header
  const socket = res.socket
  const chunked = (flags & FLAGS.CHUNKED) !== 0
  let size = head.length
  // Node's writable-state count of the message (state.length, in chars of
  // the strings it wrote), which differs from its size for UTF-8 text.
  let nodeLength = -1
  if ((flags & (FLAGS.HEAD_UTF8 | FLAGS.ASCII_ONLY)) === FLAGS.HEAD_UTF8) {
    // With chunked framing Node writes the head as latin1, with the size
    // line; C reads it so.
    if (slot < 0 && !chunked) size = byteLength(head, 'utf8')
    nodeLength = head.length + chunk.length + (chunked ? chunkFraming(bodyLength) : 0)
  }
  const total = chunked ? size + bodyLength + chunkFraming(bodyLength) : size + bodyLength
  // Above the high-water mark the two counts would disagree on 'drain'.
  if (nodeLength !== -1 && total >= socket.writableHighWaterMark) return ENONASCII
  // A Content-Length argument of -1 repeats the digits C kept for the slot
  // (lib/cache-entry.js, lengthArgument()). (The typeof first:
  // `contentLength` is a number or a string, and a strict comparison of
  // either with -1 would otherwise be a call.)
  const repeat = typeof contentLength === 'number' && contentLength === -1
  const key = slot < 0
    ? 0
    : slot | flags << KEY_SHIFT | (repeat ? KEY_REPEAT : 0) |
      (!chunk ? KEY_EMPTY : typeof chunk === 'string' ? KEY_STRING : KEY_BYTES)
  let written = -1
  let failed = 0
  if (handle !== null) {
    const checked = bodyLength > COPY_MAX_BODY ? key | KEY_CHECK : key
    const result = binding.sendCached(handle.fd, checked, contentLength, chunk || undefined)
    const outcome = sendOutcome(result)
    if (outcome === REJECTED) return sendDetail(result)
    if (outcome === FAILED) failed = sendDetail(result)
    written = outcome === WHOLE ? total : outcome === FAILED ? 0 : sendDetail(result)
  }
  if (written !== total) return sendRest(res, message, callback, { written, failed, total, nodeLength, key })
  // leaveEnded(), written out (docs/architecture.md, "The inlining budget").
  if (dropped) processObject.nextTick(nop)
  res._headerSent = true
  if (chunk && typeof chunk !== 'string' && (!chunked || chunk.length === 0)) {
    // headerThroughOutput(), written out.
    const notify = socket._paused || res[kNeedDrain]
    if (notify) res._onPendingData(head.length)
    res.outputData = []
    if (notify) res._onPendingData(-head.length)
  }
  if (typeof callback === 'function') protocol.queueEndCallback(res, callback)
  // Written whole: leave what socket.write() would have left.
  directStats.direct++
  const state = socket._writableState
  state.pendingcb++
  // writeOrBuffer() leaves sync false after every write; a socket that
  // never had one still has the true it starts with.
  if (state.sync) state.sync = false
  socket._unrefTimer()
  countDirect(handle, total)
  markNeedDrain(socket, total)
  processObject.nextTick(afterDirectWrite, socket, res)
  // end() then emits 'prefinish' (finishSent()), once the caller counted
  // the response: a listener may throw.
  res.finished = true
  return 0
}

/**
 * What send() found of a message no direct write took whole.
 * @typedef {object} Unsent
 * @property {number} written the bytes a direct write took; -1 for none tried
 * @property {number} failed the errno of a direct write that failed, else 0
 * @property {number} total the message's size in bytes
 * @property {number} nodeLength Node's count of the message where it
 *   differs from `total` (UTF-8 text), else -1
 * @property {number} key the key of fillCached() for a cached block
 */

/**
 * send() where no direct write took the whole message: the message, or
 * what the kernel did not take of it, goes to socket.write() as one write
 * carrying the finish callback, and the socket's counts read as if Node had
 * written the whole message.
 * @param {http.ServerResponse} res
 * @param {Message} message
 * @param {Function|undefined} callback end()'s callback
 * @param {Unsent} unsent
 * @returns {number} as send()
 */
function sendRest (res, message, callback, unsent) {
  const { written, total, nodeLength } = unsent
  const chunk = message.body
  const bodyLength = message.bodyLength
  const chunked = (message.flags & FLAGS.CHUNKED) !== 0
  const dropped = message.dropped
  const head = res._header
  let out = null
  // With `out` null and `written` short of `total`: the body's unwritten
  // rest, written without a copy.
  let rest = null
  if (bodyLength > COPY_MAX_BODY) {
    // Nothing written: Node's own end() meets the same full buffer or
    // pending error, without copying the body first.
    if (written <= 0) return SEND_TOO_LARGE
    // The rest of the body as it is, where the body's bytes are its chars
    // and follow the header directly (no chunk framing); else a copy.
    if (written >= head.length && !chunked && nodeLength === -1) {
      rest = bodyRest(chunk, written - head.length, bodyLength)
    }
  }
  if (rest === null && message.slot < 0 && !chunk && !chunked) {
    // A block Node rendered, without a body (none, or one Node drops):
    // Node's end() writes that string alone. C checks it, and it goes
    // out as it is, with no copy into a Buffer.
    const code = binding.checkHead(head, message.lines)
    if (code !== 0) return code
  } else if (rest === null) {
    out = allocUnsafe(total)
    const code = message.slot >= 0
      ? binding.fillCached(out, unsent.key, message.contentLength, chunk || undefined)
      : binding.fillFromHead(out, head, message.lines, chunk || undefined, message.flags)
    if (code !== 0) return code
  }
  const socket = res.socket
  const handle = message.handle
  leaveEnded(res, chunk, chunked, dropped, callback)
  const oneString = protocol.oneStringWrite(chunk, chunked)
  const onWrite = finishCallback(res, oneString)
  if (written > 0) {
    writePartRest(socket, handle, out !== null ? out.subarray(written) : rest, unsent, onWrite)
  } else {
    // The message in the form Node's own end() hands the socket: a failed
    // write of one string leaves the handle's byte counter as it was, where
    // a Buffer or a writev counts the bytes all the same.
    const data = out === null ? head : oneString ? latin1Slice.call(out) : out
    writeMessage(socket, handle, data, unsent, onWrite)
  }
  res.finished = true
  return 0
}

// What end() leaves on the response once its write is under way, in
// Node's order: write_()'s tick for a body Node drops (queued before end()
// sends the header, so it comes before the write's own), _headerSent, the
// header's pass through outputData before a Uint8Array body, and the end
// callback.
function leaveEnded (res, chunk, chunked, dropped, callback) {
  if (dropped) processObject.nextTick(nop)
  res._headerSent = true
  // (write_() sends a non-empty chunk of chunked framing after its latin1
  // size line, which carries the header instead.)
  if (chunk && typeof chunk !== 'string' && (!chunked || chunk.length === 0)) headerThroughOutput(res)
  if (typeof callback === 'function') protocol.queueEndCallback(res, callback)
}

// Node queues the latin1 header in outputData and flushes it before a
// Uint8Array body (_send, _flushOutput): its pending-data updates can
// resume a paused socket and must happen here too. The updater the server
// gives each response (a bound updateOutgoingData, lib/_http_server.js,
// Node 20 to 26) acts only on a paused socket or on a response waiting for
// 'drain': otherwise its two calls, whose counts cancel out, change
// nothing, and they are left out (benchmark/instructions.js, shape
// express3). Telling that bound function from a replacement would cost
// more (its name is computed on each read).
function headerThroughOutput (res) {
  const notify = res.socket._paused || res[kNeedDrain]
  const headLength = res._header.length
  if (notify) res._onPendingData(headLength)
  res.outputData = []
  if (notify) res._onPendingData(-headLength)
}

// A message of `unsent.total` bytes (`nodeLength` in Node's count, or -1
// for the same) whose first `written` went out directly: the rest goes
// through socket.write(), and the socket's counters read as if Node had
// written the whole message.
function writePartRest (socket, handle, rest, unsent, onWrite) {
  const { written, total, nodeLength } = unsent
  directStats.partial++
  countDirect(handle, written)
  const count = nodeLength === -1 ? written : written + nodeLength - total
  writeRestCounted(socket, rest, onWrite, total - written, count, written)
  markNeedDrain(socket, total)
}

// `rest` (`restLength` bytes) through socket.write(), then the socket's
// counters as Node's own write of the whole would leave them: `count` more
// bytes in its length, `written` more in the handle's queue size. Where
// the write did not queue exactly `rest` (a socket error, another write),
// the counters are Node's own.
function writeRestCounted (socket, rest, onWrite, restLength, count, written) {
  if (typeof rest === 'string') {
    // One char per byte: the latin1 write gives the body's bytes.
    socket.write(rest, 'latin1', onWrite)
  } else {
    socket.write(rest, onWrite)
  }
  const state = socket._writableState
  if (state.length === restLength && state.writelen === restLength) {
    state.length += count
    state.writelen += count
    socket[learned.kLastWriteQueueSize] += written
  }
}

// The whole message through socket.write(), answered with the error of a
// direct write that failed (`unsent.failed`, an errno) when there was one.
function writeMessage (socket, handle, data, unsent, onWrite) {
  const { failed, total, nodeLength } = unsent
  if (failed === 0) {
    socket.write(data, 'latin1', onWrite)
  } else {
    writeReporting(socket, handle, data, failed, onWrite)
  }
  const state = socket._writableState
  if (nodeLength !== -1 && state.length === total && state.writelen === total) {
    state.length = nodeLength
    state.writelen = nodeLength
  }
  markNeedDrain(socket, total)
}

/**
 * What end() does last, after `finished`: _finish(), which emits
 * 'prefinish', where the response holds no output and owns its socket.
 * @param {http.ServerResponse} res
 */
function finishSent (res) {
  if (res.outputData.length === 0 && res.socket && res.socket._httpMessage === res) {
    res._finish()
  }
}

/**
 * The write of end() (lib/shim.js fills `message`, all but `handle` and
 * `contentLength`): finds the socket's handle for a direct write of a
 * cached block, sends (send()), and on success ends as end() does
 * (finishSent()). The caller counts the response as native before it
 * calls: a 'prefinish' listener may throw.
 * Inlined into its caller; send() stays a unit of its own
 * (docs/architecture.md, "The inlining budget").
 * @param {http.ServerResponse} res
 * @param {Message} message
 * @param {Function|undefined} callback end()'s callback
 * @returns {number} as send(): 0 when sent and finished; otherwise nothing
 *   was sent or changed, and the slot's Content-Length digits are
 *   forgotten (C may have stopped before it read them)
 */
function sendEnd (res, message, callback) {
  const slot = message.slot
  // A body above COPY_MAX_BODY goes out only in a direct write (a cached
  // block, a TCP handle that takes it): copying it into one Buffer with the
  // header costs more than Node's own path.
  const handle = slot >= 0 ? directHandle(res.socket) : null
  if (message.bodyLength > COPY_MAX_BODY && handle === null) return SEND_TOO_LARGE
  message.handle = handle
  // C frames the body of a chunked block; it has no Content-Length.
  message.contentLength = slot >= 0 && (message.flags & FLAGS.CHUNKED) === 0
    ? message.block.lengthArgument()
    : 0
  const code = send(res, message, callback)
  if (code !== 0) {
    if (slot >= 0) message.block.forgetLength()
    return code
  }
  // The record outlives the response: it keeps neither the body nor the
  // socket's handle once the write took them (test/retention.test.js).
  // Before 'prefinish', whose listener may throw.
  message.body = null
  message.handle = null
  finishSent(res)
  return 0
}

// --- write() with chunked framing -------------------------------------------
//
// Node 20's write_() frames a chunk with four writes on the socket, which it
// corks until the next tick: the chunk-size line (latin1, with the header
// in front on the first write), a CRLF Buffer, the chunk, and a CRLF Buffer
// carrying the callback. writeChunk() sends the same bytes in two writes (a
// string chunk of up to JOIN_MAX chars joined to its size line, then the CRLF
// Buffer, as Node's) or three (a Uint8Array, not copied, or a longer string, then a
// CRLF Buffer), on the same cork; the tick's uncork joins the strings
// waiting there first (joinWaiting()). Node's Writable counts what it holds
// by the length of each write (chars for a string), so writableLength,
// needDrain, 'drain', bytesWritten and the write's return value read the
// same; the callback rides the last write, as in Node; and at least two
// writes wait on the cork, so the tick's uncork writes them with writev as
// Node's four.

// String chunks up to this many chars are joined to the size line (or to
// each other): a longer one goes as it is. A joined string is a cons
// string that V8 flattens, a copy of the whole, before the socket can
// write it, and for large chunks that copy costs more than the write it
// saves (benchmark/compare.js, bytes of 64 KiB in 4 chunks with
// chunkedEnc=1; benchmark/RESULTS.md).
const JOIN_MAX = 1024

// write_()'s CRLF, a Buffer of its own: never handed to user code.
const CRLF_BUF = Buffer.from('\r\n', 'latin1')
const numberToString = Number.prototype.toString
// A header block Node rendered may hold latin1 chars, which a UTF-8 write
// would encode differently.
// eslint-disable-next-line no-control-regex -- every char below 0x80 is ASCII
const NON_ASCII = /[^\x00-\x7f]/
const kNeedDrain = internals === null ? null : internals.kNeedDrain

// write_()'s connectionCorkNT, with the tick's writes joined first when
// this uncork writes them.
function uncorkSocket (socket) {
  if (socket._writableState.corked === 1) joinWaiting(socket)
  socket.uncork()
}

/**
 * Sends one chunk of a chunked response, as write_() does once
 * lib/decide.js writeReason() said yes, and returns what write() returns.
 * @param {http.ServerResponse} res
 * @param {string|Uint8Array} chunk a non-empty chunk
 * @param {string|null|undefined} encoding 'utf8', 'latin1' or none
 * @param {Function|undefined} callback
 * @returns {boolean}
 */
function writeChunk (res, chunk, encoding, callback) {
  const socket = res.socket
  const isString = typeof chunk === 'string'
  const latin1 = encoding === 'latin1'
  const len = isString ? (latin1 ? chunk.length : byteLength(chunk, 'utf8')) : chunk.byteLength
  if (!socket.writableCorked) {
    socket.cork()
    processObject.nextTick(uncorkSocket, socket)
  }
  let line = numberToString.call(len, 16) + '\r\n'
  let merged = false
  if (!res._headerSent) {
    line = res._header + line
    res._headerSent = true
    merged = true
  }
  const cb = typeof callback === 'function' ? callback : nop
  let ret
  if (!isString || chunk.length > JOIN_MAX) {
    socket.write(line, 'latin1')
    socket.write(chunk, isString ? (latin1 ? 'latin1' : 'utf8') : undefined)
    ret = socket.write(CRLF_BUF, cb)
  } else {
    // A UTF-8 chunk with as many bytes as chars is ASCII: as latin1, the
    // same bytes, which the socket copies instead of encoding, whatever
    // latin1 chars the header holds.
    const charset = latin1 || len === chunk.length ? 'latin1' : 'utf8'
    if (charset === 'latin1' || !merged || !NON_ASCII.test(line)) {
      // The size line is ASCII (and so is the header, for UTF-8 text).
      socket.write(line + chunk, charset)
    } else {
      socket.write(line, 'latin1')
      socket.write(chunk, 'utf8')
    }
    // The closing CRLF is Node's form of it, a Buffer, which the callback
    // sees as its entry's chunk; joinWaiting() joins it as text.
    ret = socket.write(CRLF_BUF, cb)
  }
  if (!ret) res[kNeedDrain] = true
  return ret
}

// --- end() after write() ------------------------------------------------------
//
// Once write() sent the header, Node 20's end(chunk) corks the socket and
// writes the chunk as write_() does: with chunked framing the size line, a
// CRLF, the chunk and a CRLF; else the chunk alone. Then it writes the last
// chunk ('0', the trailers, CRLF) or, without chunked framing, an empty
// string, carrying 'finish', and uncorks the socket fully: one writev of
// those and of the writes still waiting on the cork. endAfterWrites() sends
// the same bytes in fewer writes once lib/decide.js tailReason() said yes:
// a string chunk of up to JOIN_MAX chars joined to its framing and the last
// chunk (without trailers, whose latin1 chars a UTF-8 write would encode
// otherwise), else the size line, the chunk as it is and the rest; without
// chunked framing, the chunk alone. The last write carries 'finish'. The
// socket counts each write by its length, so writableLength, needDrain and
// 'drain', bytesWritten and the callbacks read the same; and at least two
// writes go out in that writev, as Node's would (one write would be a plain
// write, which counts a failed string write's bytes otherwise).
//
// Node 24.22's end() (26.10's alike; internals.chunkedUncork) differs in
// two ways. A chunk of a chunked response whose own cork count is not 0
// joins the chunks held there (kChunkedBuffer), which end() then sends as
// one chunk through the response's uncork() (flushChunks() below), before
// the last chunk; end() without a chunk does the same with what is held.
// And without chunked framing the chunk itself carries 'finish' (no empty
// write). endAfterWrites() sends the held chunks with the last chunk joined
// to their closing CRLF (one write fewer, the same chars and callbacks in
// the same order).
//
// Before the final uncork, joinWaiting() joins runs of strings waiting on
// the socket's cork into one write each (Node's C++ writev converts every
// string of an array on its own, which costs more than the joining).

// Whether a write is waiting on the socket's cork (a Writable state without
// the buffered array Node 20 to 26 keep answers no: the last chunk then
// goes as a write of its own).
function writeWaiting (state) {
  const buffered = state.buffered
  return Array.isArray(buffered) && buffered.length > state.bufferedIndex
}

// A run of waiting strings is joined up to this many chars: the joined
// string is flattened (copied) before the write, and a longer copy costs
// more than the entries it saves.
const JOIN_TOTAL = 16 * 1024

// The handle's writev, learnt with its class (learnHandle()).
let tcpWritev = null

// The callback of the write that ends `res`: the protocol's onFinish. A
// pending write's _writableState.writecb shows it as Node's would be: where
// Node's end() hands the socket one string (`single`), its own onFinish
// bound to the response; where it writes several chunks at once, the
// Writable's unnamed callback of the writev. (A function of its own: a
// closure created in send() would make every call of send() allocate a
// context for `res`, written directly or not.)
function finishCallback (res, single) {
  if (single) return protocol.onFinish.bind(undefined, res)
  return (err) => protocol.onFinish(res, err)
}

// The writes one joined write stands for. The Writable calls each write's
// callback after a writev as a method of its buffered entry
// (`buffered[n].callback(err)`: its `this` is the entry, its chunk,
// encoding and callback), in order; the joined write calls theirs so, on
// the entries themselves.
// Refs: test/fixtures/responses.js "chunked write callbacks, their this and arguments"
function joinedCallback (entries) {
  return (err) => {
    for (let i = 0; i < entries.length; i++) entries[i].callback(err)
  }
}

// The text class a waiting write joins with: its encoding for a string of
// 'utf8' or 'latin1', 'ascii' (either) for writeChunk()'s closing CRLF,
// else null (written as it is).
function waitingClass (entry) {
  const chunk = entry.chunk
  if (chunk === CRLF_BUF) return 'ascii'
  if (typeof chunk !== 'string') return null
  const encoding = entry.encoding
  return encoding === 'utf8' || encoding === 'latin1' ? encoding : null
}

// The entry standing for buffered[i..j) joined as one string of `cls`.
function joinEntries (buffered, i, j, cls) {
  let chunk = ''
  const entries = []
  for (let k = i; k < j; k++) {
    const entry = buffered[k]
    chunk += entry.chunk === CRLF_BUF ? '\r\n' : entry.chunk
    entries.push(entry)
  }
  const ascii = cls !== 'utf8' || byteLength(chunk, 'utf8') === chunk.length
  return { chunk, encoding: ascii ? 'latin1' : 'utf8', callback: joinedCallback(entries) }
}

/**
 * Joins runs of string writes of one encoding ('utf8' or 'latin1') that wait
 * on the cork of `socket`, just before the uncork that writes them all with
 * one writev: the same chars in the same order, so the socket's counts
 * (writableLength, the bytes the handle writes) stay, and the pending
 * callback count drops by the writes joined away, as the writev drops it by
 * the writes it took. The last waiting write stays as it is, so at least
 * two go out (a writev, as Node's). A run that turns out to be ASCII is
 * written as latin1, the same bytes. When every waiting write is then a
 * Buffer or a string whose chars are its bytes, the strings become Buffers
 * (state.allBuffers, which Node's writev reads, set as for a writev of
 * Buffers): a writev counts its bytes on failure whatever it holds, so
 * only the per-entry cost changes. Nothing changes with fewer than two
 * writes waiting, nor unless the uncork writes at once: the socket idle
 * (no write in progress), of net.Socket's own class with its own writev
 * and the handle's.
 * @param {net.Socket} socket
 */
function joinWaiting (socket) {
  const state = socket._writableState
  const buffered = state.buffered
  const from = state.bufferedIndex
  const last = buffered.length - 1
  if (last - from < 1 || state.writing || state.objectMode || state.destroyed ||
      PlainSocket === null || socket.constructor !== PlainSocket || socket._writev !== socketWritev) {
    return
  }
  // Until a socket was seen, the handle through net.Socket's getter.
  const handle = learned.kHandle !== null ? socket[learned.kHandle] : socket._handle
  if (handle === null || (handle.constructor !== TCP && (TCP !== null || !learnHandle(handle))) ||
      handle.writev !== tcpWritev) {
    return
  }
  let out = from
  let i = from
  while (i < last) {
    let cls = waitingClass(buffered[i])
    let size = cls === null ? 0 : buffered[i].chunk.length
    let j = i + 1
    while (cls !== null && j < last) {
      const next = waitingClass(buffered[j])
      const length = buffered[j].chunk.length
      if (next === null || (next !== 'ascii' && cls !== 'ascii' && next !== cls) ||
          length > JOIN_TOTAL - size) {
        break
      }
      if (cls === 'ascii') cls = next
      size += length
      j++
    }
    buffered[out++] = j - i === 1 ? buffered[i] : joinEntries(buffered, i, j, cls)
    i = j
  }
  buffered[out++] = buffered[last]
  state.pendingcb -= buffered.length - out
  buffered.length = out
  if (latin1Only(buffered, from)) {
    // Bytes that are their chars go as Buffers: the writev then reads
    // each one's memory, where a string costs an encoding-name parse and a
    // copy per entry (the writable-state counts, in chars, are the bytes).
    for (let k = from; k < out; k++) {
      const entry = buffered[k]
      // In place: a write's callback runs on its own entry (joinedCallback()).
      if (typeof entry.chunk === 'string') {
        entry.chunk = BufferClass.from(entry.chunk, 'latin1')
        entry.encoding = 'buffer'
      }
    }
    state.allBuffers = true
  }
}

// Whether each write waiting from `from` on is a Buffer or a string whose
// chars are its bytes: latin1, or UTF-8 of ASCII text up to JOIN_TOTAL
// chars.
function latin1Only (buffered, from) {
  for (let k = from; k < buffered.length; k++) {
    const entry = buffered[k]
    const encoding = entry.encoding
    if (encoding === 'buffer' || encoding === 'latin1') continue
    const chunk = entry.chunk
    if (encoding !== 'utf8' || typeof chunk !== 'string' || chunk.length > JOIN_TOTAL ||
        byteLength(chunk, 'utf8') !== chunk.length) {
      return false
    }
  }
  return true
}

/**
 * end([chunk][, encoding][, callback]) on a response whose body went out, or
 * waits, with earlier write() calls: the writes, then what Node's end()
 * does after them (lib/decide.js tailReason() said which apply).
 * @param {http.ServerResponse} res
 * @param {string|Uint8Array|null|undefined} chunk a non-empty chunk, or
 *   none where end() sends the chunks the response holds
 * @param {string|null|undefined} encoding 'utf8', 'latin1' or none
 * @param {Function|undefined} callback
 * @returns {number} the held chunks sent (write() calls, end()'s chunk
 *   among them when it joined them)
 */
function endAfterWrites (res, chunk, encoding, callback) {
  const socket = res.socket
  const onWrite = finishCallback(res, false)
  let flushed = 0
  if (chunk) socket.cork()
  if (res.chunkedEncoding && heldChunks && res[kCorked] !== 0) {
    const held = res[kChunkedBuffer]
    if (chunk) {
      held.push(chunk, encoding, nop)
      res[kChunkedLength] += typeof chunk === 'string' ? byteLength(chunk, encoding || 'utf8') : chunk.byteLength
    }
    if (typeof callback === 'function') protocol.queueEndCallback(res, callback)
    socket.cork()
    res[kCorked] = 1
    flushed = flushChunks(res, '\r\n0\r\n' + res._trailer + '\r\n', onWrite)
  } else if (res.chunkedEncoding && !chunk) {
    // Node 20's end() without a chunk: the last chunk, joined below with
    // the writes waiting on the cork.
    if (typeof callback === 'function') protocol.queueEndCallback(res, callback)
    socket.write('0\r\n' + res._trailer + '\r\n', 'latin1', onWrite)
  } else if (res.chunkedEncoding) {
    const isString = typeof chunk === 'string'
    const latin1 = encoding === 'latin1'
    const len = isString ? (latin1 ? chunk.length : byteLength(chunk, 'utf8')) : chunk.byteLength
    const line = numberToString.call(len, 16) + '\r\n'
    const trailer = res._trailer
    const last = '\r\n0\r\n' + trailer + '\r\n'
    if (isString && chunk.length <= JOIN_MAX) {
      // ASCII text as latin1 (writeChunk()).
      const charset = latin1 || len === chunk.length ? 'latin1' : 'utf8'
      if (trailer === '' && writeWaiting(socket._writableState)) {
        socket.write(line + chunk + last, charset, onWrite)
      } else {
        socket.write(line + chunk, charset)
        socket.write(last, 'latin1', onWrite)
      }
    } else {
      socket.write(line, 'latin1')
      socket.write(chunk, isString ? (latin1 ? 'latin1' : 'utf8') : undefined)
      socket.write(last, 'latin1', onWrite)
    }
    if (typeof callback === 'function') protocol.queueEndCallback(res, callback)
  } else {
    // lib/decide.js tailReason() found a write waiting on the cork (Node
    // 20), or end() is Node 24.22's, whose chunk carries 'finish'.
    socket.write(chunk, encoding, onWrite)
    if (typeof callback === 'function') protocol.queueEndCallback(res, callback)
  }
  joinWaiting(socket)
  socket._writableState.corked = 1
  socket.uncork()
  // Node's end() sets the response's cork count to 1 and calls its
  // uncork(), which takes it to 0 and finds no chunks held.
  res[kCorked] = 0
  res.finished = true
  finishSent(res)
  return flushed
}

// --- uncork() of a response holding chunks (Node 24.22+, 26.10+) -----------
//
// There write_() corks the response (and its socket) and holds each chunk
// of a chunked response on it: kChunkedBuffer (chunk, encoding, callback
// per write) and kChunkedLength (their bytes). The response's uncork(), on
// the tick after the first write or from end(), sends them as one chunk:
// the size line (with the header in front while it is unsent), a CRLF,
// each held chunk and a CRLF whose callback calls each write's, all on the
// corked socket, then uncorks it. flushChunks() sends the same bytes with
// the size line and runs of string chunks joined into one write per run
// (chunks of one encoding class: UTF-8, or latin1, with the ASCII size
// line joining either), a Uint8Array, a string of another encoding or one
// above JOIN_MAX chars as it is, then the same CRLF: the socket's buffer counts (chars of each
// string), its writev and the callbacks are those of Node's writes.

// The encoding class a held chunk joins with: 'utf8', 'latin1', or null
// for one written on its own (a Uint8Array, a string of another encoding,
// or one above JOIN_MAX chars).
function joinClass (chunk, encoding) {
  if (typeof chunk !== 'string' || chunk.length > JOIN_MAX) return null
  if (!encoding || encoding === 'utf8') return 'utf8'
  return encoding === 'latin1' ? 'latin1' : null
}

// Whether the strings among held chunks (chunk, encoding, callback each)
// are all UTF-8 or latin1, with every UTF-8 one ASCII: then their bytes,
// which write_() added up in `bytes`, number their chars (a UTF-8 string
// has more bytes than chars as soon as one char is not ASCII).
function asciiHeld (held, bytes) {
  let chars = 0
  for (let n = 0; n < held.length; n += 3) {
    const chunk = held[n]
    if (typeof chunk !== 'string') {
      chars += chunk.byteLength
      continue
    }
    const encoding = held[n + 1]
    if (encoding && encoding !== 'utf8' && encoding !== 'latin1') return false
    chars += chunk.length
  }
  return chars === bytes
}

/**
 * Node 24.22's OutgoingMessage#uncork() for a response whose cork count
 * this call takes to 0 and which holds chunks, once lib/decide.js
 * uncorkReason() said yes. Returns the number of chunks sent.
 * From end() (endAfterWrites()), `last` is the last chunk end() writes
 * next, with `onLast` its callback: it is joined to the closing CRLF.
 * One function, longer than the rest, because it follows Node's uncork()
 * step for step (the cork count, the held chunks, the socket's uncork in
 * `finally`, then 'drain'), so the two can be read side by side.
 * @param {http.ServerResponse} res
 * @param {string} [last]
 * @param {Function} [onLast]
 * @returns {number}
 */
function flushChunks (res, last, onLast) {
  res[kCorked]--
  const socket = res.socket
  const held = res[kChunkedBuffer]
  const count = held.length / 3
  try {
    const callbacks = []
    const ascii = asciiHeld(held, res[kChunkedLength])
    // The run of strings waiting to go out, and its class ('ascii' joins
    // either: the size line, and a header block of ASCII). Where every
    // UTF-8 chunk is ASCII, all go out as latin1, header included (Node
    // writes it as latin1 with the size line).
    let run = numberToString.call(res[kChunkedLength], 16) + '\r\n'
    let runClass = ascii ? 'latin1' : 'ascii'
    if (!res._headerSent) {
      run = res._header + run
      res._headerSent = true
      if (!ascii && byteLength(run, 'utf8') !== run.length) runClass = 'latin1'
    }
    for (let n = 0; n < held.length; n += 3) {
      const chunk = held[n]
      const encoding = held[n + 1]
      let cls = joinClass(chunk, encoding)
      if (ascii && cls !== null) cls = 'latin1'
      if (cls !== null && (runClass === 'ascii' || runClass === cls)) {
        run += chunk
        runClass = cls
      } else {
        if (run !== '') socket.write(run, runClass === 'utf8' ? 'utf8' : 'latin1')
        if (cls === null) {
          socket.write(chunk, encoding)
          run = ''
          runClass = 'ascii'
        } else {
          run = chunk
          runClass = cls
        }
      }
      callbacks.push(held[n + 2])
    }
    if (run !== '') socket.write(run, runClass === 'utf8' ? 'utf8' : 'latin1')
    const onWrite = (err) => {
      for (const callback of callbacks) {
        callback(err)
      }
    }
    if (last === undefined) {
      socket.write(CRLF_BUF, onWrite)
    } else {
      // The closing CRLF and end()'s last chunk, whose callback the
      // writev would call next.
      callbacks.push(onLast)
      socket.write(last, 'latin1', onWrite)
    }
    held.length = 0
    res[kChunkedLength] = 0
  } finally {
    // The tick's uncork: this one writes them.
    if (socket._writableState.corked === 1) joinWaiting(socket)
    socket.uncork()
  }
  if (res[kNeedDrain] && res.writableLength === 0) {
    res[kNeedDrain] = false
    res.emit('drain')
  }
  return count
}

// --- end() after write()s with Content-Length framing --------------------
//
// write() with Content-Length framing (hapi, h3, send and serve-static,
// koa-send, pipe() with a known length) stays Node's own: write_() corks
// the socket until the next tick and hands it the header joined to the
// first chunk (a string chunk merged into it, a Uint8Array after it), then
// each chunk as it is. When end() comes in the same tick, Node's end()
// adds an empty write carrying 'finish' (Node 24.21+: end()'s chunk carries
// it) and uncorks the socket fully: one writev of everything, completed at
// once on an idle socket, whose callback runs on the next tick and calls
// each write's callback as a method of its buffered entry, then 'finish'.
// sendWaiting() sends the same bytes in one direct write instead, the
// cached header block and the body taken from the waiting writes, and
// leaves the socket as that writev leaves it (lib/decide.js
// streamedReason() says when). What the kernel does not take goes to
// socket.write() as one write whose callback calls the same callbacks.
// Refs: test/fixtures/responses.js "streamed CL: ..."

// A body of several waiting writes is copied into one, up to this size:
// beyond it Node's writev, which copies nothing, costs less.
const JOIN_BODY_MAX = COPY_MAX_BODY

// The text class of a waiting write ('latin1', 'utf8' or 'buffer'), or
// null for another encoding (Node's own end() then).
function partClass (chunk, encoding) {
  if (typeof chunk !== 'string') return 'buffer'
  if (encoding === 'latin1') return 'latin1'
  return encoding === 'utf8' || !encoding ? 'utf8' : null
}

/**
 * Fills `m.body`, `m.bodyLength` and `m.flags` with the body of the writes
 * waiting on the socket's cork (`buffered`, from a first entry that holds
 * the header `head`, joined to a string chunk or alone) and end()'s own
 * chunk. One part is taken as it is; several are joined, as one string
 * where all are text of one class, else copied into one Buffer.
 * @returns {number} 0, ENONASCII (UTF-8 text that is not ASCII, found by
 *   copying it), SEND_TOO_LARGE (several parts above JOIN_BODY_MAX),
 *   SEND_ENCODING (a write of another encoding) or SEND_HEADER_GONE
 */
function waitingBody (buffered, head, chunk, encoding, m) {
  const first = buffered[0].chunk
  const last = chunk ? buffered.length + 1 : buffered.length
  let body = first === head ? null : stringSlice.call(first, head.length)
  // The header went out on an earlier tick: the first write is body only.
  if (body !== null && stringSlice.call(first, 0, head.length) !== head) return SEND_HEADER_GONE
  let cls = body === null ? null : partClass(body, buffered[0].encoding)
  let length = body === null ? 0 : body.length
  let parts = body === null ? 0 : 1
  for (let i = 1; i < last; i++) {
    const part = i < buffered.length ? buffered[i].chunk : chunk
    const partCls = partClass(part, i < buffered.length ? buffered[i].encoding : encoding)
    if (partCls === null) return SEND_ENCODING
    if (part.length === 0) continue
    length += part.length
    if (parts++ === 0) {
      body = part
      cls = partCls
    } else if (partCls !== cls || cls === 'buffer') {
      cls = 'copy'
    }
  }
  if (parts > 1 && length > JOIN_BODY_MAX) return SEND_TOO_LARGE
  if (cls === 'copy') {
    body = copyParts(buffered, head, chunk, encoding, length)
    if (body === null) return ENONASCII
  } else if (parts > 1) {
    body = joinParts(buffered, head, chunk)
  }
  m.body = body
  m.bodyLength = length
  // A cached block is ASCII; latin1 text and bytes go as they are, UTF-8
  // text only if it is ASCII (C checks before it writes anything).
  if (cls === 'latin1') {
    m.flags = FLAGS.BODY_LATIN1
  } else {
    m.flags = cls === 'utf8' ? FLAGS.HEAD_UTF8 | FLAGS.ASCII_ONLY | FLAGS.HEAD_ONE_BYTE : FLAGS.HEAD_ONE_BYTE
  }
  return 0
}

// The text of the waiting writes after the header, and end()'s chunk, as
// one string (all of one class).
function joinParts (buffered, head, chunk) {
  const first = buffered[0].chunk
  let body = first === head ? '' : stringSlice.call(first, head.length)
  for (let i = 1; i < buffered.length; i++) body += buffered[i].chunk
  return chunk ? body + chunk : body
}

// The same parts copied into one Buffer of `length` bytes, or null when a
// UTF-8 part is not ASCII (its bytes would outnumber its chars).
function copyParts (buffered, head, chunk, encoding, length) {
  const out = allocUnsafe(length)
  let at = 0
  const last = chunk ? buffered.length + 1 : buffered.length
  for (let i = 0; i < last; i++) {
    let part = i < buffered.length ? buffered[i].chunk : chunk
    const enc = i < buffered.length ? buffered[i].encoding : encoding
    if (i === 0) {
      if (part === head) continue
      part = stringSlice.call(part, head.length)
    }
    if (typeof part !== 'string') {
      out.set(part, at)
      at += part.length
    } else {
      // ASCII text is its latin1 bytes.
      if (enc !== 'latin1' && byteLength(part, 'utf8') !== part.length) return null
      at += out.latin1Write(part, at)
    }
  }
  return out
}

/**
 * end() after write()s with Content-Length framing, all waiting on the
 * socket's cork, once lib/decide.js streamedReason() said yes: the cached
 * header block `m.slot` with the body of those writes and of `chunk`, in
 * one direct write to `m.handle`.
 * @param {http.ServerResponse} res
 * @param {Message} m slot, contentLength and handle filled by the caller
 * @param {string|Uint8Array|null|undefined} chunk end()'s chunk
 * @param {string|null|undefined} encoding
 * @param {Function|undefined} callback end()'s callback
 * @returns {number} 0 when sent (whole or in part); SEND_TOO_LARGE,
 *   SEND_BUSY (the kernel took nothing), SEND_ENCODING, or the core's
 *   rejection: nothing was sent or changed; or SEND_REPORT when a pending
 *   socket error failed the write: Node's own end() must then run inside
 *   reportingWrites()
 */
function sendWaiting (res, m, chunk, encoding, callback) {
  const socket = res.socket
  const state = socket._writableState
  const buffered = state.buffered
  const head = res._header
  const code = waitingBody(buffered, head, chunk, encoding, m)
  if (code !== 0) return code
  const body = m.body === null || m.bodyLength === 0 ? undefined : m.body
  const contentLength = m.contentLength
  const repeat = typeof contentLength === 'number' && contentLength === -1
  const key = m.slot | m.flags << KEY_SHIFT | (repeat ? KEY_REPEAT : 0) |
    (body === undefined ? KEY_EMPTY : typeof body === 'string' ? KEY_STRING : KEY_BYTES)
  const result = binding.sendCached(m.handle.fd, key, contentLength, body)
  const outcome = sendOutcome(result)
  if (outcome === REJECTED) return sendDetail(result)
  if (outcome === FAILED) {
    m.failed = sendDetail(result)
    return SEND_REPORT
  }
  const total = head.length + m.bodyLength
  const written = outcome === WHOLE ? total : sendDetail(result)
  if (written === 0) return SEND_BUSY
  // What Node's end() adds to the writes waiting: end()'s chunk.
  const chars = state.length + (chunk ? chunk.length : 0)
  takeWaiting(socket, state, buffered.length)
  if (typeof callback === 'function') protocol.queueEndCallback(res, callback)
  countDirect(m.handle, written)
  if (written === total) {
    directStats.direct++
    state.pendingcb++
    socket._unrefTimer()
    markNeedDrain(socket, chars)
    processObject.nextTick(afterWaitingWrite, socket, res, buffered)
  } else {
    directStats.partial++
    writeRest(socket, res, m, written, total, buffered)
    markNeedDrain(socket, chars)
  }
  res[kCorked] = 0
  res.finished = true
  return 0
}

// The socket's Writable state as the uncork of Node's end() leaves it once
// its writev of `count` waiting writes (and end()'s own) went out: no
// cork, nothing buffered, their pending callbacks dropped but the writev's.
// The last uncork is the Writable's own, with nothing buffered left to
// write: it clears the cork where the state keeps it twice (a count and a
// bit, Node 20.19+).
function takeWaiting (socket, state, count) {
  state.length = 0
  state.buffered = null
  state.bufferedIndex = 0
  state.allBuffers = true
  state.allNoop = true
  state.pendingcb -= count
  state.corked = 1
  socket.uncork()
  if (state.sync) state.sync = false
}

// The rest of a message the kernel took `written` bytes of, through
// socket.write(), with the counts Node's writev of the whole would show
// (as send() does for a message of its own).
function writeRest (socket, res, m, written, total, entries) {
  const restLength = total - written
  const head = res._header
  const body = m.body
  let rest
  if (written >= head.length) {
    rest = bodyRest(body, written - head.length, m.bodyLength)
  } else {
    // (Rare: the kernel took part of the header block.) Every char of the
    // block and of a text body is one byte.
    const headRest = stringSlice.call(head, written)
    if (body === null || typeof body === 'string') {
      rest = body === null ? headRest : headRest + body
    } else {
      rest = BufferClass.concat([BufferClass.from(headRest, 'latin1'), body])
    }
  }
  writeRestCounted(socket, rest, restCallback(res, entries), restLength, written, written)
}

// The callback of writeRest()'s write: the writev's of Node's end(), an
// unnamed function (the pending write's _writableState.writecb shows it),
// calling each waiting write's callback on its entry, then onFinish.
function restCallback (res, entries) {
  return (err) => {
    for (let i = 0; i < entries.length; i++) entries[i].callback(err)
    protocol.onFinish(res, err)
  }
}

// The tick after sendWaiting()'s direct write: Node's afterWrite() for its
// writev, whose callback calls each waiting write's callback on its entry,
// then the protocol's onFinish ('finish').
function afterWaitingWrite (socket, res, entries) {
  const state = socket._writableState
  if (needDrain(state) && !state.ending && !state.destroyed && state.length === 0) {
    state.needDrain = false
    socket.emit('drain')
  }
  state.pendingcb--
  for (let i = 0; i < entries.length; i++) entries[i].callback(null)
  protocol.onFinish(res, null)
}

/**
 * Runs `run` (Node's own end()) with the handle of `socket` answering its
 * one write with the error a direct write met (a libuv code, -errno), as
 * its own methods answer a write that fails at once, counting the bytes of
 * the writev that fails as Node's does.
 * @param {object} handle
 * @param {number} errno
 * @param {number} bytes the message's bytes
 * @param {() => *} run
 * @returns {*} what `run` returned
 */
function reportingWrites (handle, errno, bytes, run) {
  const fail = () => {
    countDirect(handle, bytes)
    return -errno
  }
  handle.writev = fail
  handle.writeBuffer = fail
  handle.writeLatin1String = () => -errno
  handle.writeUtf8String = () => -errno
  try {
    return run()
  } finally {
    delete handle.writev
    delete handle.writeBuffer
    delete handle.writeLatin1String
    delete handle.writeUtf8String
  }
}

module.exports = {
  Message,
  COPY_MAX_BODY,
  SEND_TOO_LARGE,
  countLines,
  send,
  finishSent,
  sendEnd,
  writeChunk,
  endAfterWrites,
  joinWaiting,
  flushChunks,
  tcpHandle,
  sendWaiting,
  reportingWrites,
  SEND_BUSY,
  SEND_REPORT,
  SEND_ENCODING,
  SEND_HEADER_GONE,
  directStats,
  directCounts,
  resetDirectStats
}
