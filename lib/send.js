'use strict'

// The one write of the native path and the bookkeeping around it: what
// OutgoingMessage#end leaves on the response and the socket once _send,
// _writeRaw and the forced uncork have run. What follows the write differs
// per Node line (lib/protocol/).

const binding = require('./binding.js')
const internals = require('./internals.js')
const { FLAGS, ERRORS, KEY, RESULT, DETAIL } = require('./codes.js')
const { COPY_MAX_BODY } = require('./rules.js')

// Read once: the globals `process` and `Buffer` are getters. nextTick is
// still looked up on the process object per call, as Node's own modules do.
const processObject = process
const BufferClass = Buffer
const { allocUnsafe, byteLength } = Buffer
const stringSlice = String.prototype.slice
const { latin1Slice } = Buffer.prototype
// The intrinsic getters: a Uint8Array subclass cannot intercept the view
// of a body's unwritten rest.
const typedArrayProto = Object.getPrototypeOf(Uint8Array.prototype)
const getBuffer = Object.getOwnPropertyDescriptor(typedArrayProto, 'buffer').get
const getByteOffset = Object.getOwnPropertyDescriptor(typedArrayProto, 'byteOffset').get
// What send() and sendWaiting() return besides 0 and the core's rejection
// codes: a body above COPY_MAX_BODY that no direct write took (Node's own
// end() writes it without a copy); a write of an encoding but utf8 or
// latin1; a kernel buffer that took nothing; a pending socket error that
// failed the write; a first waiting write without the header block (it
// went out on an earlier tick).
const SEND_TOO_LARGE = -1
const SEND_ENCODING = -2
const SEND_BUSY = -3
const SEND_REPORT = -4
const SEND_HEADER_GONE = -5
// Constants of this file: read per response.
const {
  SHIFT: KEY_SHIFT, REPEAT: KEY_REPEAT, CHECK: KEY_CHECK, STRING: KEY_STRING, BYTES: KEY_BYTES,
  EMPTY: KEY_EMPTY
} = KEY
const { REJECTED, FAILED } = RESULT
const { ENONASCII } = ERRORS

// Responses whose bytes went to the descriptor directly: whole, or in part
// with the rest through socket.write().
const directStats = { direct: 0, partial: 0 }

function resetDirectStats () {
  directStats.direct = 0
  directStats.partial = 0
}

function directCounts () {
  return { direct: directStats.direct, partial: directStats.partial }
}

// A direct write leaves what socket.write(buffer, cb) leaves on an idle TCP
// socket whose kernel buffer takes the whole message (Node 20 to 26): the
// handle's byte counter grown, the idle timer refreshed, one pending
// callback until the next tick, which runs it, one TickObject and no
// WriteWrap (an init hook, Node 20.20 and 24.22); and, as Node's end()
// writes on a corked socket, needDrain set by a message of at least
// writableHighWaterMark bytes (chars, for a string: test/shim.test.js, "a
// non-ASCII UTF-8 message at the socket's high-water mark"), with 'drain'
// on the callback's tick.
// A pending socket error (a reset not read yet) fails the direct write and
// is consumed by it (later writes get EPIPE): the message then goes to
// socket.write() answered with that error (reportingWrites()), so that
// Node reports it. Only before a body above COPY_MAX_BODY, which would go
// to Node's end() uncopied, does C poll() for a pending error first: a
// system call costs a small response more than all else the kernel does.

// Learnt from the first TCP handle seen (a listening server's is one too).
let TCP = null
let tcpWriteBuffer = null
let tcpWritev = null
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

// The bytes a handle wrote directly, in a private field: a symbol key
// showed in console.log(socket). A base class whose constructor returns
// its argument puts the field on an object it did not create.
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

// On the handle instance (Node's, on LibuvStreamWrap.prototype, cannot be
// redefined), so that socket.bytesWritten, and the copy it keeps after
// destroy(), reads what Node's own write would have left.
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

const protocol = internals === null ? null : internals.protocol
// Where write_() holds chunks on a corked response (Node 24.22+, 26.10+).
const heldChunks = internals !== null && internals.chunkedUncork === true
const kCorked = internals === null ? null : internals.kCorked
const kChunkedBuffer = internals === null ? null : internals.kChunkedBuffer
const kChunkedLength = internals === null ? null : internals.kChunkedLength
const kNeedDrain = internals === null ? null : internals.kNeedDrain
const socketWritev = internals === null ? null : internals.socketMethods._writev
const direct = binding !== null && binding.canSend === true && internals !== null &&
  internals.socketState !== null

// Read here instead of through Node's getters.
const socketState = internals === null ? null : internals.socketState
const kState = socketState === null ? null : socketState.kState
const NEED_DRAIN = socketState === null ? 0 : socketState.needDrain
const PlainSocket = socketState === null ? null : socketState.Socket
const learned = internals === null ? null : internals.learned

// For a socket of exactly net.Socket's class.
function needDrain (state) {
  return (state[kState] & NEED_DRAIN) !== 0
}

// fallbackReason() found the socket writable: writableNeedDrain is the
// needDrain flag itself.
function directHandle (socket) {
  const handle = tcpHandle(socket)
  return handle === null || needDrain(socket._writableState) ? null : handle
}

// The handle of a connected socket of net.Socket's own class whose writes
// the addon may make on the descriptor, else null.
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

// afterWriteTick()/afterWrite() for a direct write whose callback is the
// protocol's onFinish; for sendWaiting()'s, a writev whose callback first
// calls each waiting write's on its entry (`entries`).
function afterDirectWrite (socket, res, entries) {
  const state = socket._writableState
  if (needDrain(state) && !state.ending && !state.destroyed && state.length === 0) {
    state.needDrain = false
    socket.emit('drain')
  }
  state.pendingcb--
  if (entries !== undefined) {
    for (let i = 0; i < entries.length; i++) entries[i].callback(null)
  }
  protocol.onFinish(res, null)
}

// A view of a Uint8Array, as Node's writev holds the caller's bytes.
function bodyRest (chunk, from, len) {
  if (typeof chunk === 'string') return stringSlice.call(chunk, from)
  return Buffer.from(getBuffer.call(chunk), getByteOffset.call(chunk) + from, len - from)
}

// For the core's line-count check of a block Node rendered.
function countLines (head) {
  let lines = -2
  let at = -1
  while ((at = head.indexOf('\r\n', at + 1)) !== -1) lines++
  return lines
}

// The callback write_() hands a dropped body, on the next tick.
function nop () {}

// The bytes chunked framing adds around a body of `len` bytes: the
// chunk-size line and CRLF after a body, then the last chunk 0 CRLF CRLF
// (src/http_message.h).
function chunkFraming (len) {
  if (len === 0) return 5
  let digits = 1
  for (let n = len; n > 15; n = Math.floor(n / 16)) digits++
  return digits + 2 + 2 + 5
}

// The inputs of one write: end() keeps one and fills it for each call.
class Message {
  constructor () {
    // A block cached in C (`slot` >= 0, its Entry `block`) or res._header
    // (`slot` -1, with `lines` header lines, which C checks again).
    this.slot = -1
    this.contentLength = 0
    this.block = null
    this.lines = 0
    this.body = null
    this.bodyLength = 0
    this.flags = 0
    // end() was given a body that Node drops (HEAD, 1xx, 204, 304): `body`
    // is null, and write_()'s tick is queued.
    this.dropped = false
    this.handle = null
    // The errno of a direct write that failed (sendWaiting()).
    this.failed = 0
  }
}

/**
 * Writes the response once, to the descriptor when `message.handle` is
 * given, else (or what the kernel did not take) with one socket.write()
 * carrying the finish callback; then sets what end() sets. Every char of
 * an accepted head is one byte, so the size is known before the write, and
 * a Buffer for it comes from Node's shared pool: an allocation of its own
 * costs more than all else the native path does
 * (benchmark/build-message.js). One unit (docs/architecture.md, "The
 * inlining budget").
 * @returns {number} 0 when sent, SEND_TOO_LARGE, or the core's rejection
 *   code (nothing was sent or changed; Node's own end() must continue)
 */
function send (res, message, callback) {
  // Read before anything of the user's can run: a response ended from
  // within the write finds its own message.
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
  // -1 repeats the digits C kept for the slot. (The typeof first: a strict
  // comparison of a number or a string with -1 would otherwise be a call.)
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
    // undefined first: its test is a comparison of references, where a
    // result compared with a number first costs a call to StrictEqual.
    if (result === undefined) {
      written = total
    } else if (result === REJECTED) {
      return DETAIL[0]
    } else {
      // PART and NOT_READY leave the count in DETAIL, FAILED the errno.
      failed = result === FAILED ? DETAIL[0] : 0
      written = result === FAILED ? 0 : DETAIL[0]
    }
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
  directStats.direct++
  const state = socket._writableState
  state.pendingcb++
  // writeOrBuffer() leaves it false; a socket starts with true.
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

// send() where no direct write took the whole message. `unsent`: the
// bytes a direct write took (-1: none tried), the errno of one that failed
// (else 0), the message's bytes (`total`), Node's count of them where it
// differs (UTF-8 text; else -1), and fillCached()'s key.
function sendRest (res, message, callback, unsent) {
  const { written, total, nodeLength } = unsent
  const chunk = message.body
  const bodyLength = message.bodyLength
  const chunked = (message.flags & FLAGS.CHUNKED) !== 0
  const dropped = message.dropped
  const head = res._header
  let out = null
  // The body's unwritten rest, where it goes without a copy.
  let rest = null
  if (bodyLength > COPY_MAX_BODY) {
    // Node's own end() meets the same full buffer or pending error,
    // without copying the body first.
    if (written <= 0) return SEND_TOO_LARGE
    if (written >= head.length && !chunked && nodeLength === -1) {
      rest = bodyRest(chunk, written - head.length, bodyLength)
    }
  }
  if (rest === null && message.slot < 0 && !chunk && !chunked) {
    // Node's end() writes the string alone, and so does this.
    if (binding.checkHead(head, message.lines) !== undefined) return DETAIL[0]
  } else if (rest === null) {
    out = allocUnsafe(total)
    const result = message.slot >= 0
      ? binding.fillCached(out, unsent.key, message.contentLength, chunk || undefined)
      : binding.fillFromHead(out, head, message.lines, chunk || undefined, message.flags)
    if (result !== undefined) return DETAIL[0]
  }
  const socket = res.socket
  const handle = message.handle
  leaveEnded(res, chunk, chunked, dropped, callback)
  const oneString = protocol.oneStringWrite(chunk, chunked)
  const onWrite = finishCallback(res, oneString)
  if (written > 0) {
    writePartRest(socket, handle, out !== null ? out.subarray(written) : rest, unsent, onWrite)
  } else {
    // In the form Node's end() hands the socket: a failed write counts
    // the bytes of a Buffer or writev, not of one string.
    const data = out === null ? head : oneString ? latin1Slice.call(out) : out
    writeMessage(socket, handle, data, unsent, onWrite)
  }
  res.finished = true
  return 0
}

// What end() leaves on the response once its write is under way, in
// Node's order (write_()'s tick for a dropped body comes before the
// write's own).
function leaveEnded (res, chunk, chunked, dropped, callback) {
  if (dropped) processObject.nextTick(nop)
  res._headerSent = true
  // (A non-empty chunked chunk follows the size line, which carries the
  // header instead.)
  if (chunk && typeof chunk !== 'string' && (!chunked || chunk.length === 0)) headerThroughOutput(res)
  if (typeof callback === 'function') protocol.queueEndCallback(res, callback)
}

// Node queues the header in outputData and flushes it before a Uint8Array
// body (_send, _flushOutput), and its pending-data updates can resume a
// paused socket. The server's updater (a bound updateOutgoingData, Node 20
// to 26) acts only on a paused socket or a response waiting for 'drain':
// otherwise its two calls cancel out and are left out
// (benchmark/instructions.js, express3); telling it from a replacement
// would cost more (its name is computed on each read).
function headerThroughOutput (res) {
  const notify = res.socket._paused || res[kNeedDrain]
  const headLength = res._header.length
  if (notify) res._onPendingData(headLength)
  res.outputData = []
  if (notify) res._onPendingData(-headLength)
}

function writePartRest (socket, handle, rest, unsent, onWrite) {
  const { written, total, nodeLength } = unsent
  directStats.partial++
  countDirect(handle, written)
  const count = nodeLength === -1 ? written : written + nodeLength - total
  writeRestCounted(socket, rest, onWrite, total - written, count, written)
  markNeedDrain(socket, total)
}

// The counters then read as Node's write of the whole leaves them:
// `count` more in the length, `written` more in the handle's queue size;
// where the write did not queue exactly `rest`, they are Node's own.
function writeRestCounted (socket, rest, onWrite, restLength, count, written) {
  if (typeof rest === 'string') {
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

function writeMessage (socket, handle, data, unsent, onWrite) {
  const { failed, total, nodeLength } = unsent
  if (failed === 0) {
    socket.write(data, 'latin1', onWrite)
  } else {
    reportingWrites(handle, failed, data.length, () => socket.write(data, 'latin1', onWrite))
  }
  const state = socket._writableState
  if (nodeLength !== -1 && state.length === total && state.writelen === total) {
    state.length = nodeLength
    state.writelen = nodeLength
  }
  markNeedDrain(socket, total)
}

// What end() does last: _finish() ('prefinish').
function finishSent (res) {
  if (res.outputData.length === 0 && res.socket && res.socket._httpMessage === res) {
    res._finish()
  }
}

/**
 * The write of end(), `message` filled but for `handle` and
 * `contentLength`. The caller counts the response first: a 'prefinish'
 * listener may throw. Inlined into its caller (docs/architecture.md, "The
 * inlining budget").
 * @returns {number} as send(); when not 0 the slot's Content-Length digits
 *   are forgotten (C may have stopped before it read them)
 */
function sendEnd (res, message, callback) {
  const slot = message.slot
  // Copying a body above COPY_MAX_BODY into one Buffer with the header
  // costs more than Node's own path: it goes out only in a direct write.
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
  // The record outlives the response (test/retention.test.js); cleared
  // before 'prefinish', whose listener may throw.
  message.body = null
  message.handle = null
  finishSent(res)
  return 0
}

// --- write() with chunked framing -------------------------------------------
//
// Node 20's write_() frames a chunk with four writes on the socket, corked
// until the next tick: the size line (latin1, after the header on the
// first write), a CRLF Buffer, the chunk, a CRLF Buffer carrying the
// callback. writeChunk() sends the same chars in two writes (a short string
// joined to its size line) or three, on the same cork: the Writable counts
// each write by its length, so writableLength, needDrain, 'drain',
// bytesWritten and write()'s result read the same, and the tick's uncork
// still writes at least two with one writev.

// A joined string is flattened (copied) before the socket writes it: above
// this many chars the copy costs more than the write it saves
// (benchmark/compare.js, 64 KiB in 4 chunks, chunkedEnc=1; RESULTS.md).
const JOIN_MAX = 1024

// Never handed to user code.
const CRLF_BUF = Buffer.from('\r\n', 'latin1')
const numberToString = Number.prototype.toString
// A header block Node rendered may hold latin1 chars, which a UTF-8 write
// would encode differently.
// eslint-disable-next-line no-control-regex -- every char below 0x80 is ASCII
const NON_ASCII = /[^\x00-\x7f]/

// write_()'s connectionCorkNT.
function uncorkSocket (socket) {
  if (socket._writableState.corked === 1) joinWaiting(socket)
  socket.uncork()
}

// The bytes of a chunk given with 'utf8', 'latin1' or no encoding.
function chunkBytes (chunk, encoding) {
  if (typeof chunk !== 'string') return chunk.byteLength
  return encoding === 'latin1' ? chunk.length : byteLength(chunk, 'utf8')
}

// The size line `line` (after the header when `merged`) and the chunk of
// `len` bytes, joined where that does not re-encode the line.
function writeSized (socket, line, chunk, encoding, len, merged) {
  const latin1 = encoding === 'latin1'
  if (typeof chunk !== 'string') {
    socket.write(line, 'latin1')
    socket.write(chunk)
  } else if (chunk.length > JOIN_MAX) {
    socket.write(line, 'latin1')
    socket.write(chunk, latin1 ? 'latin1' : 'utf8')
  } else {
    // ASCII text as latin1: the same bytes, which the socket copies
    // instead of encoding.
    const charset = latin1 || len === chunk.length ? 'latin1' : 'utf8'
    if (charset === 'latin1' || !merged || !NON_ASCII.test(line)) {
      socket.write(line + chunk, charset)
    } else {
      socket.write(line, 'latin1')
      socket.write(chunk, 'utf8')
    }
  }
}

// write_() for one non-empty chunk of a chunked response, once
// lib/decide.js writeReason() said yes; returns what write() returns.
function writeChunk (res, chunk, encoding, callback) {
  const socket = res.socket
  const len = chunkBytes(chunk, encoding)
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
  writeSized(socket, line, chunk, encoding, len, merged)
  // The callback sees Node's CRLF Buffer as its entry's chunk.
  const ret = socket.write(CRLF_BUF, typeof callback === 'function' ? callback : nop)
  if (!ret) res[kNeedDrain] = true
  return ret
}

// --- end() after write() ------------------------------------------------------
//
// Once write() sent the header, Node 20's end(chunk) writes the chunk as
// write_() does, then the last chunk ('0', the trailers, CRLF) or, without
// chunked framing, an empty string, carrying 'finish', and uncorks the
// socket: one writev of those and of the writes still waiting. A short
// string chunk is joined here to its framing and to the last chunk (not to
// trailers, whose latin1 chars a UTF-8 write would encode otherwise); at
// least two writes still go out in that writev (a plain write counts a
// failed string write's bytes otherwise).
// Node 24.22 (26.10 alike; internals.chunkedUncork) holds each chunk of a
// chunked response on the corked response (kChunkedBuffer: chunk,
// encoding, callback; kChunkedLength: their bytes), and its uncork(), on
// the next tick or from end(), sends them as one chunk: the size line, a
// CRLF, each chunk, and a CRLF whose callback calls each write's. Without
// chunked framing end()'s chunk carries 'finish'. flushChunks() joins runs
// of string chunks of one encoding, and the last chunk to the closing CRLF.
// joinWaiting(), before the socket's final uncork: Node's C++ writev
// converts each string of an array on its own, which costs more than
// joining them.

// (A Writable state without the buffered array of Node 20 to 26 answers
// no: the last chunk then goes as a write of its own.)
function writeWaiting (state) {
  const buffered = state.buffered
  return Array.isArray(buffered) && buffered.length > state.bufferedIndex
}

// A longer copy (the flattening) costs more than the entries it saves.
const JOIN_TOTAL = 16 * 1024

// The protocol's onFinish, as a pending write's writecb shows Node's: bound
// where its end() hands the socket one string (`single`), else the
// writev's unnamed callback. (Not a closure in send(): every call would
// allocate a context for `res`.)
function finishCallback (res, single) {
  if (single) return protocol.onFinish.bind(undefined, res)
  return (err) => protocol.onFinish(res, err)
}

// After a writev the Writable calls each write's callback as a method of
// its buffered entry, in order.
// Refs: test/fixtures/responses.js "chunked write callbacks, their this and arguments"
function joinedCallback (entries) {
  return (err) => {
    for (let i = 0; i < entries.length; i++) entries[i].callback(err)
  }
}

// 'utf8' or 'latin1', 'ascii' (joins either) for writeChunk()'s CRLF, else
// null (written as it is).
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

// Joins runs of string writes of one encoding waiting on the socket's
// cork, before the uncork that writes them with one writev: the same chars
// in order, so writableLength and the bytes written stay, and pendingcb
// drops by the writes joined away, as the writev drops it. The last write
// stays, so at least two go out. Where every write is then a Buffer or a
// string whose chars are its bytes, the strings become Buffers (a failed
// writev counts its bytes whatever it holds). Only where the uncork writes
// at once: an idle socket of net.Socket's own class, with its own writev.
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
    // A string costs the writev an encoding-name parse and a copy.
    for (let k = from; k < out; k++) {
      const entry = buffered[k]
      // In place: a write's callback runs on its own entry.
      if (typeof entry.chunk === 'string') {
        entry.chunk = BufferClass.from(entry.chunk, 'latin1')
        entry.encoding = 'buffer'
      }
    }
    state.allBuffers = true
  }
}

// Whether each write from `from` on is a Buffer, latin1, or ASCII UTF-8
// of up to JOIN_TOTAL chars.
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
 * end() after write() calls, once lib/decide.js tailReason() said yes.
 * @param {string|Uint8Array|null|undefined} chunk non-empty, or none
 * @param {string|null|undefined} encoding 'utf8', 'latin1' or none
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
    // Node 20's end() without a chunk.
    if (typeof callback === 'function') protocol.queueEndCallback(res, callback)
    socket.write('0\r\n' + res._trailer + '\r\n', 'latin1', onWrite)
  } else if (res.chunkedEncoding) {
    const len = chunkBytes(chunk, encoding)
    const line = numberToString.call(len, 16) + '\r\n'
    const trailer = res._trailer
    const last = '\r\n0\r\n' + trailer + '\r\n'
    if (typeof chunk === 'string' && chunk.length <= JOIN_MAX && trailer === '' &&
        writeWaiting(socket._writableState)) {
      const charset = encoding === 'latin1' || len === chunk.length ? 'latin1' : 'utf8'
      socket.write(line + chunk + last, charset, onWrite)
    } else {
      writeSized(socket, line, chunk, encoding, len, false)
      socket.write(last, 'latin1', onWrite)
    }
    if (typeof callback === 'function') protocol.queueEndCallback(res, callback)
  } else {
    // tailReason() found a write waiting on the cork (Node 20), or end() is
    // Node 24.22's, whose chunk carries 'finish'.
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

// 'utf8', 'latin1', or null for a chunk written on its own.
function joinClass (chunk, encoding) {
  if (typeof chunk !== 'string' || chunk.length > JOIN_MAX) return null
  if (!encoding || encoding === 'utf8') return 'utf8'
  return encoding === 'latin1' ? 'latin1' : null
}

// Whether the held strings are all latin1 or ASCII UTF-8: then the bytes
// write_() added up (`bytes`) number their chars.
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
 * Node 24.22's OutgoingMessage#uncork() for a response that holds chunks,
 * once lib/decide.js uncorkReason() said yes: one function, step for step
 * as Node's, so the two read side by side.
 * @param {string} [last] from end(): the last chunk, joined to the closing
 *   CRLF
 * @param {Function} [onLast] its callback
 * @returns {number} the chunks sent
 */
function flushChunks (res, last, onLast) {
  res[kCorked]--
  const socket = res.socket
  const held = res[kChunkedBuffer]
  const count = held.length / 3
  try {
    const callbacks = []
    const ascii = asciiHeld(held, res[kChunkedLength])
    // The run of strings to go out and its class ('ascii' joins either);
    // all latin1 where every UTF-8 chunk is ASCII.
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
      callbacks.push(onLast)
      socket.write(last, 'latin1', onWrite)
    }
    held.length = 0
    res[kChunkedLength] = 0
  } finally {
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
// write() with Content-Length framing (hapi, h3, send, koa-send, pipe())
// stays Node's own: write_() corks the socket until the next tick and
// hands it the header joined to the first chunk, then each chunk. An end()
// in the same tick adds an empty write carrying 'finish' (24.21+: its
// chunk carries it) and uncorks: one writev, whose callback calls each
// write's on its entry, then 'finish'. sendWaiting() sends the same bytes
// in one direct write and leaves the socket as that writev does.
// Refs: test/fixtures/responses.js "streamed CL: ..."

// Beyond this, Node's writev, which copies nothing, costs less.
const JOIN_BODY_MAX = COPY_MAX_BODY

// null: an encoding Node's own end() must write.
function partClass (chunk, encoding) {
  if (typeof chunk !== 'string') return 'buffer'
  if (encoding === 'latin1') return 'latin1'
  return encoding === 'utf8' || !encoding ? 'utf8' : null
}

/**
 * Fills `m.body`, `m.bodyLength` and `m.flags` with the body of the writes
 * waiting on the cork (the first holds the header `head`) and end()'s
 * chunk: one part as it is, several as one string where all are text of
 * one class, else copied into one Buffer.
 * @returns {number} 0, ENONASCII (UTF-8 text that is not ASCII),
 *   SEND_TOO_LARGE, SEND_ENCODING or SEND_HEADER_GONE
 */
function waitingBody (buffered, head, chunk, encoding, m) {
  const first = buffered[0].chunk
  const last = chunk ? buffered.length + 1 : buffered.length
  let body = first === head ? null : stringSlice.call(first, head.length)
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
  // UTF-8 text only if ASCII (C checks before it writes anything).
  if (cls === 'latin1') {
    m.flags = FLAGS.BODY_LATIN1
  } else {
    m.flags = cls === 'utf8' ? FLAGS.HEAD_UTF8 | FLAGS.ASCII_ONLY | FLAGS.HEAD_ONE_BYTE : FLAGS.HEAD_ONE_BYTE
  }
  return 0
}

function joinParts (buffered, head, chunk) {
  const first = buffered[0].chunk
  let body = first === head ? '' : stringSlice.call(first, head.length)
  for (let i = 1; i < buffered.length; i++) body += buffered[i].chunk
  return chunk ? body + chunk : body
}

// null: a UTF-8 part is not ASCII.
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
      if (enc !== 'latin1' && byteLength(part, 'utf8') !== part.length) return null
      at += out.latin1Write(part, at)
    }
  }
  return out
}

/**
 * end() after write()s with Content-Length framing, all waiting on the
 * cork, once lib/decide.js streamedReason() said yes: the cached block with
 * their body and `chunk`'s in one direct write.
 * @param {Message} m slot, contentLength and handle filled by the caller
 * @returns {number} 0 when sent (whole or in part); SEND_TOO_LARGE,
 *   SEND_BUSY, SEND_ENCODING, or the core's rejection: nothing was sent or
 *   changed; or SEND_REPORT: Node's own end() must then run inside
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
  const total = head.length + m.bodyLength
  // undefined first, as in send().
  let written = total
  if (result !== undefined) {
    if (result === REJECTED) return DETAIL[0]
    if (result === FAILED) {
      m.failed = DETAIL[0]
      return SEND_REPORT
    }
    written = DETAIL[0]
  }
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
    processObject.nextTick(afterDirectWrite, socket, res, buffered)
  } else {
    directStats.partial++
    writeRest(socket, res, m, written, total, buffered)
    markNeedDrain(socket, chars)
  }
  res[kCorked] = 0
  res.finished = true
  return 0
}

// The state as Node's end() leaves it once its writev of `count` waiting
// writes went out. The Writable's own uncork, with nothing left to write,
// clears the cork where the state keeps it twice (a count and a bit, Node
// 20.19+).
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

function writeRest (socket, res, m, written, total, entries) {
  const restLength = total - written
  const head = res._header
  const body = m.body
  let rest
  if (written >= head.length) {
    rest = bodyRest(body, written - head.length, m.bodyLength)
  } else {
    // Rare: the kernel took part of the header block.
    const headRest = stringSlice.call(head, written)
    if (body === null || typeof body === 'string') {
      rest = body === null ? headRest : headRest + body
    } else {
      rest = BufferClass.concat([BufferClass.from(headRest, 'latin1'), body])
    }
  }
  writeRestCounted(socket, rest, restCallback(res, entries), restLength, written, written)
}

// Unnamed, as the writecb of Node's writev shows.
function restCallback (res, entries) {
  return (err) => {
    for (let i = 0; i < entries.length; i++) entries[i].callback(err)
    protocol.onFinish(res, err)
  }
}

// Runs `run` (Node's own end(), or a socket.write()) with the handle's
// write methods failing at once with the direct write's error (-errno, a
// libuv code); as Node's, a failed Buffer write or writev counts `bytes`.
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
