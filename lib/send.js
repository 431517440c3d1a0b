'use strict'

// The one write of the native path and what OutgoingMessage#end leaves behind it
// (docs/architecture.md, "What a direct write must leave").

const binding = require('./binding.js')
const internals = require('./internals.js')
const { FLAGS, ERRORS, KEY, RESULT, DETAIL } = require('./codes.js')
const { COPY_MAX_BODY, REASON } = require('./rules.js')
const { ownerOf } = require('./patches.js')

// The globals are getters; nextTick is still looked up per call, as in Node's own modules.
const processObject = process
const BufferClass = Buffer
const { allocUnsafe, byteLength } = Buffer
const stringSlice = String.prototype.slice
const { latin1Slice } = Buffer.prototype
// Intrinsic: a Uint8Array subclass cannot intercept the view of a body's unwritten rest.
const typedArrayProto = Object.getPrototypeOf(Uint8Array.prototype)
const getBuffer = Object.getOwnPropertyDescriptor(typedArrayProto, 'buffer').get
const getByteOffset = Object.getOwnPropertyDescriptor(typedArrayProto, 'byteOffset').get
// Constants of this file: read per response.
const { SHIFT: KEY_SHIFT, REPEAT: KEY_REPEAT, CHECK: KEY_CHECK } = KEY
const { STRING: KEY_STRING, BYTES: KEY_BYTES, EMPTY: KEY_EMPTY } = KEY
const { REJECTED, FAILED } = RESULT
const { ENONASCII } = ERRORS

function rejected (code) {
  return code === ENONASCII ? REASON.NON_ASCII : REASON.INVALID
}

const directStats = { direct: 0, partial: 0 }

function resetDirectStats () {
  directStats.direct = 0
  directStats.partial = 0
}

function directCounts () {
  return { direct: directStats.direct, partial: directStats.partial }
}

// Learnt from the first TCP handle seen (a listening server's is one too).
let TCP = null
let tcpWriteBuffer = null
let tcpWritev = null
let tcpBytesWritten = null

function learnHandle (handle) {
  const ctor = handle.constructor
  if (typeof ctor !== 'function' || ctor.name !== 'TCP') return false
  const owner = ownerOf(handle, 'bytesWritten')
  const desc = owner === null ? undefined : Object.getOwnPropertyDescriptor(owner, 'bytesWritten')
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

// A private field (a symbol key showed in console.log(socket)) on a handle it did not create.
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
    // On the instance (Node's, on LibuvStreamWrap.prototype, cannot be redefined), so that
    // socket.bytesWritten, and its copy after destroy(), reads what Node's write would leave.
    Object.defineProperty(handle, 'bytesWritten', { get: bytesWrittenGetter, enumerable: false, configurable: true })
  }

  static add (handle, n) {
    if (#bytes in handle) handle.#bytes += n
    else new DirectBytes(handle, n) // eslint-disable-line no-new
  }

  static of (handle) {
    return #bytes in handle ? handle.#bytes : 0
  }
}

function bytesWrittenGetter () {
  return tcpBytesWritten.call(this) + DirectBytes.of(this)
}

const countDirect = DirectBytes.add

const { protocol, kNeedDrain } = internals === null ? {} : internals
const socketWritev = internals === null ? null : internals.socketMethods._writev
const direct = binding !== null && binding.canSend === true && internals !== null && internals.socketState !== null

// Read here instead of through Node's getters.
const socketState = internals === null ? null : internals.socketState
const kState = socketState === null ? null : socketState.kState
const NEED_DRAIN = socketState === null ? 0 : socketState.needDrain
const PlainSocket = socketState === null ? null : socketState.Socket
const learned = internals === null ? null : internals.learned

function needDrain (state) {
  return (state[kState] & NEED_DRAIN) !== 0
}

// The socket is writable (fallbackReason()): writableNeedDrain is the needDrain flag itself.
function directHandle (socket) {
  const handle = tcpHandle(socket)
  return handle === null || needDrain(socket._writableState) ? null : handle
}

// The handle of a connected net.Socket (no subclass) the addon may write to, else null.
function tcpHandle (socket) {
  if (!direct || socket.constructor !== PlainSocket || learned.kHandle === null ||
      learned.kLastWriteQueueSize === null) {
    return null
  }
  const handle = socket[learned.kHandle]
  if (handle === null || (handle.constructor !== TCP && (TCP !== null || !learnHandle(handle)))) return null
  if (handle.writeBuffer !== tcpWriteBuffer || socket.connecting || socket._pendingData !== null) return null
  return handle
}

// writeOrBuffer() on Node's end()'s corked socket, its queue empty (checked by fallbackReason()).
function markNeedDrain (socket, total) {
  const state = socket._writableState
  if (total >= state.highWaterMark) state.needDrain = true
}

// afterWriteTick()/afterWrite(); for sendWaiting(), of a writev calling each write's callback.
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

// A view, not a copy, as Node's writev holds the caller's bytes.
function bodyRest (chunk, from, len) {
  if (typeof chunk === 'string') return stringSlice.call(chunk, from)
  return Buffer.from(getBuffer.call(chunk), getByteOffset.call(chunk) + from, len - from)
}

function countLines (head) {
  let lines = -2
  let at = -1
  while ((at = head.indexOf('\r\n', at + 1)) !== -1) lines++
  return lines
}

function nop () {}

// The bytes chunked framing adds around a body of `len` bytes (src/http_message.h).
function chunkFraming (len) {
  if (len === 0) return 5
  let digits = 1
  for (let n = len; n > 15; n = Math.floor(n / 16)) digits++
  return digits + 2 + 2 + 5
}

class Message {
  constructor () {
    // `slot` >= 0: the block cached in C for `block`; -1: res._header, of `lines` lines.
    this.slot = -1
    this.contentLength = 0
    this.block = null
    this.lines = 0
    this.body = null
    this.bodyLength = 0
    this.flags = 0
    // A body Node drops (HEAD, 1xx, 204, 304): `body` is null, write_()'s tick is queued.
    this.dropped = false
    this.handle = null
    this.failed = 0 // the errno of a failed direct write (sendWaiting())
  }
}

// To the descriptor where `message.handle` is set, else from a pooled Buffer (an allocation of
// its own costs more: benchmark/build-message.js). Null when sent, else the reason, nothing
// sent. One unit: docs/architecture.md, "The inlining budget".
function send (res, message, callback) {
  // Read before user code can run: a response ended from within the write finds its own.
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
  // Node's state.length (in chars) where UTF-8 makes it differ from the size.
  let nodeLength = -1
  if ((flags & (FLAGS.HEAD_UTF8 | FLAGS.ASCII_ONLY)) === FLAGS.HEAD_UTF8) {
    // Chunked, Node writes the head as latin1, with the size line; so does C.
    if (slot < 0 && !chunked) size = byteLength(head, 'utf8')
    nodeLength = head.length + chunk.length + (chunked ? chunkFraming(bodyLength) : 0)
  }
  const total = chunked ? size + bodyLength + chunkFraming(bodyLength) : size + bodyLength
  // Above the high-water mark the two counts would disagree on 'drain'.
  if (nodeLength !== -1 && total >= socket.writableHighWaterMark) return REASON.NON_ASCII
  // -1 repeats the slot's digits C kept; typeof first, or comparing a number or string with -1 is a call.
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
    // undefined first, a comparison of references: a number compared first costs a StrictEqual call.
    if (result === undefined) {
      written = total
    } else if (result === REJECTED) {
      return rejected(DETAIL[0])
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
    const notify = socket._paused || res[kNeedDrain]
    if (notify) res._onPendingData(head.length)
    res.outputData = []
    if (notify) res._onPendingData(-head.length)
  }
  if (typeof callback === 'function') protocol.queueEndCallback(res, callback)
  directStats.direct++
  const state = socket._writableState
  state.pendingcb++
  // writeOrBuffer() leaves it false; a socket starts true.
  if (state.sync) state.sync = false
  socket._unrefTimer()
  countDirect(handle, total)
  markNeedDrain(socket, total)
  processObject.nextTick(afterDirectWrite, socket, res)
  res.finished = true
  return null
}

// `unsent.written`: -1 where no direct write was tried; `failed`: its errno, else 0.
function sendRest (res, message, callback, unsent) {
  const { written, total, nodeLength } = unsent
  const { body: chunk, bodyLength, dropped, handle } = message
  const chunked = (message.flags & FLAGS.CHUNKED) !== 0
  const head = res._header
  let out = null
  let rest = null // the body's unwritten rest, sent without a copy
  if (bodyLength > COPY_MAX_BODY) {
    // Node's end() meets the same full buffer or error, without copying the body.
    if (written <= 0) return REASON.BODY_TOO_LARGE
    if (written >= head.length && !chunked && nodeLength === -1) {
      rest = bodyRest(chunk, written - head.length, bodyLength)
    }
  }
  if (rest === null && message.slot < 0 && !chunk && !chunked) {
    // Node's end() writes the string alone, and so does this.
    if (binding.checkHead(head, message.lines) !== undefined) return rejected(DETAIL[0])
  } else if (rest === null) {
    out = allocUnsafe(total)
    const result = message.slot >= 0
      ? binding.fillCached(out, unsent.key, message.contentLength, chunk || undefined)
      : binding.fillFromHead(out, head, message.lines, chunk || undefined, message.flags)
    if (result !== undefined) return rejected(DETAIL[0])
  }
  const socket = res.socket
  leaveEnded(res, chunk, chunked, dropped, callback)
  const oneString = protocol.oneStringWrite(chunk, chunked)
  const onWrite = finishCallback(res, oneString)
  if (written > 0) {
    writeUnsent(socket, handle, out !== null ? out.subarray(written) : rest, onWrite, unsent)
  } else {
    // As Node's end() hands it: a failed write counts a Buffer's bytes, not one string's.
    const data = out === null ? head : oneString ? latin1Slice.call(out) : out
    writeUnsent(socket, handle, data, onWrite, unsent)
  }
  markNeedDrain(socket, total)
  res.finished = true
  return null
}

// _send() queues the header before a Uint8Array body (a non-empty chunked one follows the size
// line, which carries the header instead). The server's pending-data updater acts only on a paused
// socket or awaited 'drain', else its two calls cancel out (benchmark/instructions.js, express3).
function leaveEnded (res, chunk, chunked, dropped, callback) {
  if (dropped) processObject.nextTick(nop)
  res._headerSent = true
  if (chunk && typeof chunk !== 'string' && (!chunked || chunk.length === 0)) {
    const notify = res.socket._paused || res[kNeedDrain]
    const headLength = res._header.length
    if (notify) res._onPendingData(headLength)
    res.outputData = []
    if (notify) res._onPendingData(-headLength)
  }
  if (typeof callback === 'function') protocol.queueEndCallback(res, callback)
}

/**
 * Hands `data` to socket.write() where a direct write sent `unsent.written` bytes (<= 0: none,
 * `unsent.failed` its errno); the counters then read as Node's write of all `unsent.total` bytes
 * (`nodeLength` chars, else -1) leaves them, unless it queued more.
 */
function writeUnsent (socket, handle, data, onWrite, unsent) {
  const { written, failed, total, nodeLength } = unsent
  const direct = written > 0 ? written : 0
  if (direct > 0) {
    directStats.partial++
    countDirect(handle, direct)
  }
  if (direct > 0 && typeof data !== 'string') {
    // A Buffer's rest goes on as a Buffer write does, without an encoding.
    socket.write(data, onWrite)
  } else if (failed === 0) {
    socket.write(data, 'latin1', onWrite)
  } else {
    reportingWrites(handle, failed, data.length, () => socket.write(data, 'latin1', onWrite))
  }
  const state = socket._writableState
  if (state.length === total - direct && state.writelen === total - direct) {
    const length = nodeLength === -1 ? total : nodeLength
    state.length = length
    state.writelen = length
    if (direct > 0) socket[learned.kLastWriteQueueSize] += direct
  }
}

function finishSent (res) {
  if (res.outputData.length === 0 && res.socket && res.socket._httpMessage === res) res._finish()
}

// end()'s write; the caller counts first, as a 'prefinish' listener may throw. On a reason the
// slot's digits are forgotten (C may have stopped before it read them). Inlined.
function sendEnd (res, message, callback) {
  const slot = message.slot
  // Copying a body above COPY_MAX_BODY costs more than Node's path.
  const handle = slot >= 0 ? directHandle(res.socket) : null
  if (message.bodyLength > COPY_MAX_BODY && handle === null) return REASON.BODY_TOO_LARGE
  message.handle = handle
  // C frames the body of a chunked block; it has no Content-Length.
  message.contentLength = slot >= 0 && (message.flags & FLAGS.CHUNKED) === 0 ? message.block.lengthArgument() : 0
  const reason = send(res, message, callback)
  if (reason !== null) {
    if (slot >= 0) message.block.forgetLength()
    return reason
  }
  // Cleared before 'prefinish', whose listener may throw (test/retention.test.js).
  message.body = null
  message.handle = null
  finishSent(res)
  return null
}

// write_()'s CRLF after a chunk; never handed to user code.
const CRLF_BUF = Buffer.from('\r\n', 'latin1')
// Above this many chars, flattening a joined string costs more than the write it saves
// (benchmark/compare.js, 64 KiB in 4 chunks, chunkedEnc=1; RESULTS.md).
const JOIN_MAX = 1024

// A state without Node 20-26's buffered array answers no: the last chunk goes on its own.
function writeWaiting (state) {
  const buffered = state.buffered
  return Array.isArray(buffered) && buffered.length > state.bufferedIndex
}

// A longer flattening costs more than the entries it saves.
const JOIN_TOTAL = 16 * 1024

// onFinish as Node's pending write shows it: bound for one string, else unnamed, as a writev's.
function finishCallback (res, single) {
  if (single) return protocol.onFinish.bind(undefined, res)
  return (err) => protocol.onFinish(res, err)
}

// Refs: test/fixtures/responses.js "chunked write callbacks, their this and arguments"
function joinedCallback (entries) {
  return (err) => { for (let i = 0; i < entries.length; i++) entries[i].callback(err) }
}

// 'ascii' (writeChunk()'s CRLF) joins either; null is not joined.
function waitingClass (entry) {
  const chunk = entry.chunk
  if (chunk === CRLF_BUF) return 'ascii'
  if (typeof chunk !== 'string') return null
  const encoding = entry.encoding
  return encoding === 'utf8' || encoding === 'latin1' ? encoding : null
}

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

// docs/architecture.md, "Streamed responses". The same chars in order, so writableLength
// stays; the last write stays, so a writev goes out. Only on an idle net.Socket's own writev.
function joinWaiting (socket) {
  const state = socket._writableState
  const buffered = state.buffered
  const from = state.bufferedIndex
  const last = buffered.length - 1
  if (last - from < 1 || state.writing || state.objectMode || state.destroyed ||
      PlainSocket === null || socket.constructor !== PlainSocket || socket._writev !== socketWritev) {
    return
  }
  // Until a socket was seen, through net.Socket's getter.
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
    // A string costs the writev an encoding parse and a copy.
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

// `run` with the handle's writes failing with the direct write's error, which Node then
// reports; as Node's, a failed Buffer write or writev counts `bytes`.
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
    for (const name of ['writev', 'writeBuffer', 'writeLatin1String', 'writeUtf8String']) delete handle[name]
  }
}

module.exports = {
  Message,
  CRLF_BUF,
  JOIN_MAX,
  rejected,
  countLines,
  finishSent,
  finishCallback,
  sendEnd,
  nop,
  writeWaiting,
  joinWaiting,
  tcpHandle,
  countDirect,
  markNeedDrain,
  afterDirectWrite,
  writeUnsent,
  bodyRest,
  reportingWrites,
  directStats,
  directCounts,
  resetDirectStats
}
