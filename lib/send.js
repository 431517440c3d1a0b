'use strict'

// The one write of the native path and the bookkeeping around it: what
// OutgoingMessage#end (Node v20) leaves on the response and the socket once
// _send, _writeRaw and the forced uncork have run.

const binding = require('./binding.js')

const FLAGS = binding === null ? null : binding.flags

// Counts the header lines of a block Node rendered, for the core's
// line-count check.
function countLines (head) {
  let lines = -2
  let at = -1
  while ((at = head.indexOf('\r\n', at + 1)) !== -1) lines++
  return lines
}

function onFinish (res) {
  // OutgoingMessage's onFinish: the client sets _hadError, never the server.
  if (res && res.socket && res.socket._hadError) return
  res.emit('finish')
}

/**
 * Builds the response into one Buffer from Node's shared pool and writes it
 * with one socket.write() carrying the finish callback, then sets what
 * end() sets. The header block is either cached in C (`slot` >= 0, with
 * `length` the Content-Length value to fill in) or res._header itself
 * (`slot` -1, with `lines` header lines), checked again by C.
 * @returns {number} 0 when sent, else the core's rejection code (nothing
 *   was sent or changed; Node's own end() must continue)
 */
function send (res, slot, length, lines, chunk, len, flags, callback) {
  const head = res._header
  // Every char of an accepted head is one byte (latin1, or ASCII when the
  // block goes out as UTF-8), so the message size is known here and the
  // Buffer comes from Node's shared pool: a standalone allocation per
  // response costs more than everything else the native path does.
  // Refs: benchmark/build-message.js (buildFromHead vs pooled fill)
  const out = Buffer.allocUnsafe(head.length + len)
  const code = slot >= 0
    ? binding.fillCached(out, slot, length, chunk || undefined, flags)
    : binding.fillFromHead(out, head, lines, chunk || undefined, flags)
  if (code !== 0) return code

  const socket = res.socket
  res._headerSent = true
  if (chunk && typeof chunk !== 'string') {
    // Node queues the latin1 header in outputData and flushes it before a
    // Uint8Array body (_send, _flushOutput): its pending-data updates can
    // resume a paused socket and must happen here too.
    res._onPendingData(head.length)
    res.outputData = []
    res._onPendingData(-head.length)
  }
  if (typeof callback === 'function') res.once('finish', callback)
  socket.write(out, () => onFinish(res))
  res.finished = true
  if (res.outputData.length === 0 && res.socket && res.socket._httpMessage === res) {
    res._finish()
  }
  return 0
}

module.exports = { FLAGS, countLines, send }
