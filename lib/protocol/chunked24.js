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

module.exports = { flushChunks, endHeld }
