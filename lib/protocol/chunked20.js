'use strict'

// write(), and end() after it, as Node 20's (docs/protocols.md), in fewer writes on the same cork
// (docs/architecture.md, "Streamed responses").

const { byteLength } = Buffer
const internals = require('../internals.js')
const { CRLF_BUF, JOIN_MAX, nop, finishCallback, finishSent, writeWaiting, joinWaiting } = require('../send.js')
const { endHeld, heldTailReason } = require('./chunked24.js')
const { WAIT_SOCKET, writtenAsIs, writeReadyReason, chunkReason, sentHeaderReason } = require('../decide.js')
const { REASON } = require('../rules.js')

const processObject = process
// resUncork: Node's OutgoingMessage#uncork, which 22+'s end() calls.
const { protocol, kNeedDrain, kCorked, uncork: resUncork } = internals === null ? {} : internals
const heldChunks = internals !== null && internals.chunkedUncork === true

const numberToString = Number.prototype.toString
// A block Node rendered may hold latin1 chars, which a UTF-8 write would encode otherwise.
// eslint-disable-next-line no-control-regex -- every char below 0x80 is ASCII
const NON_ASCII = /[^\x00-\x7f]/

function uncorkSocket (socket) {
  if (socket._writableState.corked === 1) joinWaiting(socket)
  socket.uncork()
}

function chunkBytes (chunk, encoding) {
  if (typeof chunk !== 'string') return chunk.byteLength
  return encoding === 'latin1' ? chunk.length : byteLength(chunk, 'utf8')
}

// Joined where that does not re-encode the line (`merged`: after the header).
function writeSized (socket, line, chunk, encoding, len, merged) {
  const latin1 = encoding === 'latin1'
  if (typeof chunk !== 'string') {
    socket.write(line, 'latin1')
    socket.write(chunk)
  } else if (chunk.length > JOIN_MAX) {
    socket.write(line, 'latin1')
    socket.write(chunk, latin1 ? 'latin1' : 'utf8')
  } else {
    // ASCII text as latin1: the same bytes, copied instead of encoded.
    const charset = latin1 || len === chunk.length ? 'latin1' : 'utf8'
    if (charset === 'latin1' || !merged || !NON_ASCII.test(line)) {
      socket.write(line + chunk, charset)
    } else {
      socket.write(line, 'latin1')
      socket.write(chunk, 'utf8')
    }
  }
}

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

// Node 20's end(chunk) after write(): the chunk as write_() writes it, then the last chunk (or
// '') carrying 'finish', then one writev. Returns the held chunks sent.
function endAfterWrites (res, chunk, encoding, callback) {
  const socket = res.socket
  const onWrite = finishCallback(res, false)
  let flushed = 0
  if (chunk) socket.cork()
  if (res.chunkedEncoding && heldChunks && res[kCorked] !== 0) {
    flushed = endHeld(res, chunk, encoding, callback, onWrite)
  } else {
    endWritten(res, chunk, encoding, callback, onWrite)
  }
  joinWaiting(socket)
  socket._writableState.corked = 1
  socket.uncork()
  // Node's end() sets it to 1, and its uncork() to 0, finding no chunks held.
  res[kCorked] = 0
  res.finished = true
  finishSent(res)
  return flushed
}

// A short string joins its framing and the last chunk (not trailers: latin1) while a write
// waits, so a writev still goes out (a plain write counts a failed string's bytes otherwise).
function endWritten (res, chunk, encoding, callback, onWrite) {
  const socket = res.socket
  if (res.chunkedEncoding && !chunk) {
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
    // A write waits on the cork (Node 20), or 24.22's end(), whose chunk carries 'finish'.
    socket.write(chunk, encoding, onWrite)
    if (typeof callback === 'function') protocol.queueEndCallback(res, callback)
  }
}

function writeReason (res, chunk, encoding) {
  const early = chunkReason(res, chunk, encoding)
  if (early !== null) return early
  if (res._header === null) return REASON.HEADER_PENDING
  if (typeof res._header !== 'string') return REASON.INVALID
  if (res._hasBody !== true) return REASON.NO_BODY_STATUS
  if (res.chunkedEncoding !== true) return REASON.LENGTH_FRAMING
  if (chunk.length === 0) return REASON.EMPTY_CHUNK
  const ready = writeReadyReason(res, res.socket, WAIT_SOCKET)
  if (ready !== null) return ready
  if (typeof chunk !== 'string' && !writtenAsIs(chunk)) return REASON.CHUNK_TYPE
  return null
}

function corkHolds (state) {
  return state.corked !== 0 && Array.isArray(state.buffered) && state.buffered.length > state.bufferedIndex
}

// Only null matters: end() counts its own reason.
function tailReason (res, chunk, encoding) {
  if (internals.chunkedUncork) return heldTailReason(res, chunk, encoding)
  if (res.chunkedEncoding === true) {
    // end() writes '0', the trailers and CRLF as one latin1 string.
    const reason = chunk ? writeReason(res, chunk, encoding) : writeReason(res, '0', undefined)
    if (reason !== null) return reason
    if (typeof res._trailer !== 'string') return REASON.TRAILERS
    if (!chunk && !corkHolds(res.socket._writableState)) return REASON.NOTHING_HELD
    return res.uncork !== resUncork ? REASON.PATCHED : null
  }
  if (!chunk) return REASON.NOTHING_HELD
  const early = sentHeaderReason(res, chunk, encoding)
  if (early !== null) return early
  if (res.chunkedEncoding !== false) return REASON.INVALID
  const socket = res.socket
  const ready = writeReadyReason(res, socket, WAIT_SOCKET)
  if (ready !== null) return ready
  // With none waiting Node's end() writes plainly, which reports a failure otherwise.
  if (!corkHolds(socket._writableState)) return REASON.NOTHING_HELD
  // 22+'s end() calls the response's uncork().
  if (res.uncork !== resUncork) return REASON.PATCHED
  if (typeof chunk !== 'string' && !writtenAsIs(chunk)) return REASON.CHUNK_TYPE
  return null
}

module.exports = { writeReason, writeChunk, tailReason, endAfterWrites }
