'use strict'

// end() in the tick of write()s with Content-Length framing (hapi, h3, send, pipe()): the
// writes waiting on the cork in one direct write (docs/architecture.md, "Streamed responses").
// Refs: test/fixtures/responses.js "streamed CL: ..."

const binding = require('../binding.js')
const internals = require('../internals.js')
const { FLAGS, KEY, RESULT, DETAIL } = require('../codes.js')
const { COPY_MAX_BODY, REASON } = require('../rules.js')
const { WAIT_HELD, writtenAsIs, socketReason, methodsPatched, chunkReason } = require('../decide.js')
const { rejected, countDirect, markNeedDrain, afterDirectWrite, writeUnsent, bodyRest, directStats } = require('../send.js')

const processObject = process
const BufferClass = Buffer
const { allocUnsafe, byteLength } = Buffer
const stringSlice = String.prototype.slice
const { protocol, kCorked, Socket } = internals === null ? {} : internals
const { SHIFT: KEY_SHIFT, REPEAT: KEY_REPEAT, STRING: KEY_STRING, BYTES: KEY_BYTES, EMPTY: KEY_EMPTY } = KEY
const { REJECTED, FAILED } = RESULT

function partClass (chunk, encoding) {
  if (typeof chunk !== 'string') return 'buffer'
  if (encoding === 'latin1') return 'latin1'
  return encoding === 'utf8' || !encoding ? 'utf8' : null
}

// The body of the writes waiting (the first holds `head`) and end()'s chunk into `m`: one part
// as it is, text of one class joined, else copied into one Buffer.
function waitingBody (buffered, head, chunk, encoding, m) {
  const first = buffered[0].chunk
  const last = chunk ? buffered.length + 1 : buffered.length
  let body = first === head ? null : stringSlice.call(first, head.length)
  if (body !== null && stringSlice.call(first, 0, head.length) !== head) return REASON.HEADERS_SENT
  let cls = body === null ? null : partClass(body, buffered[0].encoding)
  let length = body === null ? 0 : body.length
  let parts = body === null ? 0 : 1
  for (let i = 1; i < last; i++) {
    const part = i < buffered.length ? buffered[i].chunk : chunk
    const partCls = partClass(part, i < buffered.length ? buffered[i].encoding : encoding)
    if (partCls === null) return REASON.ENCODING
    if (part.length === 0) continue
    length += part.length
    if (parts++ === 0) {
      body = part
      cls = partCls
    } else if (partCls !== cls || cls === 'buffer') {
      cls = 'copy'
    }
  }
  // Beyond this, Node's writev, which copies nothing, costs less.
  if (parts > 1 && length > COPY_MAX_BODY) return REASON.BODY_TOO_LARGE
  if (parts > 1) {
    body = flattenParts(buffered, head, chunk, encoding, cls === 'copy' ? allocUnsafe(length) : null)
    if (body === null) return REASON.NON_ASCII
  }
  m.body = body
  m.bodyLength = length
  // UTF-8 text only if ASCII (C checks before it writes anything).
  m.flags = cls === 'latin1'
    ? FLAGS.BODY_LATIN1
    : cls === 'utf8' ? FLAGS.HEAD_UTF8 | FLAGS.ASCII_ONLY | FLAGS.HEAD_ONE_BYTE : FLAGS.HEAD_ONE_BYTE
  return null
}

// The parts after the header as one string, or copied into `out` (null: a UTF-8 part not ASCII).
function flattenParts (buffered, head, chunk, encoding, out) {
  let body = ''
  let at = 0
  const last = chunk ? buffered.length + 1 : buffered.length
  for (let i = 0; i < last; i++) {
    let part = i < buffered.length ? buffered[i].chunk : chunk
    if (i === 0) {
      if (part === head) continue
      part = stringSlice.call(part, head.length)
    }
    if (out === null) {
      body += part
    } else if (typeof part !== 'string') {
      out.set(part, at)
      at += part.length
    } else {
      const enc = i < buffered.length ? buffered[i].encoding : encoding
      if (enc !== 'latin1' && byteLength(part, 'utf8') !== part.length) return null
      at += out.latin1Write(part, at)
    }
  }
  return out === null ? body : out
}

// The block, the writes' body and `chunk` in one direct write, leaving what Node's writev
// would; `m.slot`, `contentLength` and `handle` are filled. Null when sent, REPORT (Node's end()
// must run inside reportingWrites()), or the reason, nothing sent.
function sendWaiting (res, m, chunk, encoding, callback) {
  const socket = res.socket
  const state = socket._writableState
  const buffered = state.buffered
  const head = res._header
  const reason = waitingBody(buffered, head, chunk, encoding, m)
  if (reason !== null) return reason
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
    if (result === REJECTED) return rejected(DETAIL[0])
    if (result === FAILED) {
      m.failed = DETAIL[0]
      return REASON.REPORT
    }
    written = DETAIL[0]
  }
  if (written === 0) return REASON.SOCKET_BUSY
  // Node's end() adds its chunk to the writes waiting.
  const chars = state.length + (chunk ? chunk.length : 0)
  takeWaiting(socket, state, buffered.length)
  if (typeof callback === 'function') protocol.queueEndCallback(res, callback)
  if (written === total) {
    countDirect(m.handle, written)
    directStats.direct++
    state.pendingcb++
    socket._unrefTimer()
    processObject.nextTick(afterDirectWrite, socket, res, buffered)
  } else {
    writeRest(socket, res, m, written, total, buffered)
  }
  markNeedDrain(socket, chars)
  res[kCorked] = 0
  res.finished = true
  return null
}

// As Node's writev of `count` writes leaves it; the Writable's uncork clears the cork where it
// is kept twice (20.19+: count and bit).
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
  const head = res._header
  const body = m.body
  let rest
  if (written >= head.length) {
    rest = bodyRest(body, written - head.length, m.bodyLength)
  } else {
    // Rare: the kernel took part of the header block.
    const headRest = stringSlice.call(head, written)
    if (body === null) rest = headRest
    else if (typeof body === 'string') rest = headRest + body
    else rest = BufferClass.concat([BufferClass.from(headRest, 'latin1'), body])
  }
  const unsent = { written, failed: 0, total, nodeLength: -1 }
  writeUnsent(socket, m.handle, rest, restCallback(res, entries), unsent)
}

// Unnamed, as the writecb of Node's writev shows.
function restCallback (res, entries) {
  return (err) => {
    for (let i = 0; i < entries.length; i++) entries[i].callback(err)
    protocol.onFinish(res, err)
  }
}

// Whether every write since the header waits in write_()'s cork, nothing else pends, and the
// block is cached. `block`: lib/render.js blockOf().
function streamedReason (res, chunk, encoding, block) {
  const early = chunkReason(res, chunk || '', chunk ? encoding : undefined)
  if (early !== null) return early
  if (typeof res._header !== 'string' || res._hasBody !== true) return REASON.HEADERS_SENT
  const socket = res.socket
  // A fake socket (fastify.inject()): the header went out there.
  if (!socket || !(socket instanceof Socket)) return REASON.HEADERS_SENT
  const waiting = waitingReason(res, socket._writableState)
  if (waiting !== null) return waiting
  // Before the socket's other checks, so this fallback costs little more than Node's end().
  if (block === null || block.slot < 0 || block.chunked) return REASON.STREAMED
  const socketFailure = socketReason(res, socket, WAIT_HELD)
  if (socketFailure !== null) return socketFailure
  // The caller checks res.uncork(), which 22+'s end() calls.
  if (methodsPatched(res, socket)) return REASON.PATCHED
  if (chunk && typeof chunk !== 'string' && !writtenAsIs(chunk)) return REASON.CHUNK_TYPE
  return null
}

function waitingReason (res, state) {
  const buffered = state.buffered
  if (state.corked === 0 || !Array.isArray(buffered) || buffered.length === 0 || state.bufferedIndex !== 0) {
    return REASON.HEADERS_SENT
  }
  if (state.writing || state.objectMode || state.errored !== null || state.ending ||
      state.pendingcb !== buffered.length) {
    return REASON.SOCKET_BUSY
  }
  // waitingBody() checks the header starts a merged string (V8 reads a cons string char by char).
  const first = buffered[0].chunk
  const head = res._header
  if (first !== head && (typeof first !== 'string' || first.length <= head.length)) return REASON.HEADERS_SENT
  return null
}

module.exports = { streamedReason, sendWaiting }
