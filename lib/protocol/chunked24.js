'use strict'

// Chunked framing as Node 24.22 (26.10 alike; internals.chunkedUncork)
// does it: write_() holds each chunk of a chunked response on the corked
// response (kChunkedBuffer: chunk, encoding, callback; kChunkedLength: their
// bytes), and its uncork(), on the next tick or from end(), sends them as
// one chunk: the size line, a CRLF, each chunk, and a CRLF whose callback
// calls each write's. Without chunked framing end()'s chunk carries
// 'finish'. flushChunks() joins runs of string chunks of one encoding, and
// the last chunk to the closing CRLF.

const { byteLength } = Buffer
const internals = require('../internals.js')
const { CRLF_BUF, JOIN_MAX, nop, joinWaiting } = require('../send.js')
const { WAIT_HELD, writtenAsIs, writeReadyReason, sentHeaderReason } = require('../decide.js')
const { REASON } = require('../rules.js')
const { isUint8Array } = require('node:util/types')

const protocol = internals === null ? null : internals.protocol
const kCorked = internals === null ? null : internals.kCorked
const kChunkedBuffer = internals === null ? null : internals.kChunkedBuffer
const kChunkedLength = internals === null ? null : internals.kChunkedLength
const kNeedDrain = internals === null ? null : internals.kNeedDrain
const numberToString = Number.prototype.toString

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
 * once uncorkReason() said yes: one function, step for step
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

// end(chunk) of a response that holds chunks: `chunk` joins them, and the
// last chunk goes out with the closing CRLF, carrying 'finish'.
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

// tailReason() where end() and write_() are Node 24.22's and 26.10's
// (internals.chunkedUncork); the caller checked res.uncork() is the shim's.
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
      // write_() holds end()'s chunk as a Buffer (a plain Uint8Array
      // becomes a view); uncork() sends what is held. Without a chunk
      // end() sends it with the socket as corked as write_() left it.
      if (chunk) {
        if (isUint8Array(chunk) && !(chunk instanceof Buffer)) return REASON.CHUNK_TYPE
        // An empty chunk joins held chunks only; alone write_() sends it
        // (with the header) as a write of its own.
        return chunk.length === 0 && held.length === 0 ? REASON.EMPTY_CHUNK : null
      }
      return held.length === 0 || socket._writableState.corked === 0 ? REASON.NOTHING_HELD : null
    }
    // Sent by write_() as it comes, after everything before it.
    if (!chunk || held.length !== 0 || res._headerSent !== true) return REASON.NOTHING_HELD
    if (chunk.length === 0) return REASON.EMPTY_CHUNK
    return typeof chunk !== 'string' && !writtenAsIs(chunk) ? REASON.CHUNK_TYPE : null
  }
  if (res.chunkedEncoding !== false) return REASON.INVALID
  // Without chunked framing write_() holds nothing; the chunk carries
  // 'finish' (and end() without one writes an empty string or waits a tick).
  if (!chunk || held.length !== 0 || res._headerSent !== true) return REASON.NOTHING_HELD
  return typeof chunk !== 'string' && !writtenAsIs(chunk) ? REASON.CHUNK_TYPE : null
}

// Whether res.uncork() may send the chunks a response holds (kChunkedBuffer,
// where internals.chunkedUncork) in fewer socket writes: when Node's
// uncork() would send them now, straight to the socket it owns.
function uncorkReason (res) {
  const buffered = res[kChunkedBuffer]
  if (res[kCorked] !== 1 || !Array.isArray(buffered) || buffered.length === 0 ||
      buffered.length % 3 !== 0) {
    return REASON.NOTHING_HELD
  }
  if (res.destroyed) return REASON.DESTROYED
  if (res.chunkedEncoding !== true || typeof res._header !== 'string') return REASON.INVALID
  return writeReadyReason(res, res.socket, WAIT_HELD)
}

module.exports = { uncorkReason, flushChunks, heldTailReason, endHeld }
