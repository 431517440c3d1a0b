'use strict'

// Chunked framing as Node 24.22 and 26.10 do it (docs/protocols.md): write_() holds chunks
// (kChunkedBuffer: chunk, encoding, callback; kChunkedLength: bytes) until the uncork().

const { byteLength } = Buffer
const internals = require('../internals.js')
const { CRLF_BUF, JOIN_MAX, nop, joinWaiting } = require('../send.js')
const { WAIT_HELD, writtenAsIs, writeReadyReason, sentHeaderReason } = require('../decide.js')
const { REASON } = require('../rules.js')
const { isUint8Array } = require('node:util/types')

const { protocol, kCorked, kChunkedBuffer, kChunkedLength, kNeedDrain } = internals === null ? {} : internals
const numberToString = Number.prototype.toString

function joinClass (chunk, encoding) {
  if (typeof chunk !== 'string' || chunk.length > JOIN_MAX) return null
  if (!encoding || encoding === 'utf8') return 'utf8'
  return encoding === 'latin1' ? 'latin1' : null
}

// Whether the held strings are latin1 or ASCII UTF-8, their bytes numbering their chars.
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

// Node 24.22's OutgoingMessage#uncork() step for step, runs of strings of one encoding joined.
// `last`, `onLast`: end()'s last chunk, joined to the closing CRLF, and its callback.
function flushChunks (res, last, onLast) {
  res[kCorked]--
  const socket = res.socket
  const held = res[kChunkedBuffer]
  const count = held.length / 3
  try {
    const callbacks = []
    const ascii = asciiHeld(held, res[kChunkedLength])
    // The run of strings to go out and its class ('ascii' joins either).
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
    const onWrite = (err) => { for (const callback of callbacks) callback(err) }
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

function endHeld (res, chunk, encoding, callback, onWrite) {
  const held = res[kChunkedBuffer]
  if (chunk) {
    held.push(chunk, encoding, nop)
    res[kChunkedLength] += typeof chunk === 'string' ? byteLength(chunk, encoding || 'utf8') : chunk.byteLength
  }
  if (typeof callback === 'function') protocol.queueEndCallback(res, callback)
  res.socket.cork()
  res[kCorked] = 1
  return flushChunks(res, '\r\n0\r\n' + res._trailer + '\r\n', onWrite)
}

// tailReason() where internals.chunkedUncork; the caller checked res.uncork() is the shim's.
function heldTailReason (res, chunk, encoding) {
  const early = sentHeaderReason(res, chunk, encoding)
  if (early !== null) return early
  const socket = res.socket
  const ready = writeReadyReason(res, socket, WAIT_HELD)
  if (ready !== null) return ready
  const held = res[kChunkedBuffer]
  const corked = res[kCorked]
  if (!Array.isArray(held) || held.length % 3 !== 0 || typeof corked !== 'number' || corked < 0) {
    return REASON.INVALID
  }
  if (res.chunkedEncoding === true) {
    // end() writes '0', the trailers and CRLF as one latin1 string.
    if (typeof res._trailer !== 'string') return REASON.TRAILERS
    if (corked !== 0) {
      // write_() holds end()'s chunk as a Buffer (a plain Uint8Array becomes a view).
      if (chunk) {
        if (isUint8Array(chunk) && !(chunk instanceof Buffer)) return REASON.CHUNK_TYPE
        // Alone, write_() sends an empty chunk (with the header) as a write of its own.
        return chunk.length === 0 && held.length === 0 ? REASON.EMPTY_CHUNK : null
      }
      return held.length === 0 || socket._writableState.corked === 0 ? REASON.NOTHING_HELD : null
    }
    // Uncorked: write_() sends it as it comes.
    if (!chunk || held.length !== 0 || res._headerSent !== true) return REASON.NOTHING_HELD
    if (chunk.length === 0) return REASON.EMPTY_CHUNK
    return typeof chunk !== 'string' && !writtenAsIs(chunk) ? REASON.CHUNK_TYPE : null
  }
  if (res.chunkedEncoding !== false) return REASON.INVALID
  // Without chunked framing write_() holds nothing; the chunk carries 'finish'.
  if (!chunk || held.length !== 0 || res._headerSent !== true) return REASON.NOTHING_HELD
  return typeof chunk !== 'string' && !writtenAsIs(chunk) ? REASON.CHUNK_TYPE : null
}

// Where Node's uncork() would send held chunks now, to the socket the response owns.
function uncorkReason (res) {
  const buffered = res[kChunkedBuffer]
  if (res[kCorked] !== 1 || !Array.isArray(buffered) || buffered.length === 0 || buffered.length % 3 !== 0) {
    return REASON.NOTHING_HELD
  }
  if (res.destroyed) return REASON.DESTROYED
  if (res.chunkedEncoding !== true || typeof res._header !== 'string') return REASON.INVALID
  return writeReadyReason(res, res.socket, WAIT_HELD)
}

module.exports = { uncorkReason, flushChunks, heldTailReason, endHeld }
