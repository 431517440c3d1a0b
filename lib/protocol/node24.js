'use strict'

// end() as Node 24.21+ and 26.8+ have it (docs/protocols.md, node24): lib/_http_outgoing.js
// queueEndCallback, onFinish, flushEndCallbacks.

function create (k) {
  const { kEndCallbacks, kWritableFinished, kFlushError, kErrored, destroyedError } = k

  // Native end() runs only on an unfinished response: Node's early answers never apply.
  function queueEndCallback (res, callback) {
    const callbacks = res[kEndCallbacks]
    if (callbacks === null || callbacks === undefined) {
      res[kEndCallbacks] = [callback]
    } else {
      callbacks.push(callback)
    }
  }

  // Each runs with the array as its `this`; a throwing callback stops the rest, as in Node.
  // Refs: test/fixtures/responses.js "end callbacks: their this"
  function flushEndCallbacks (res, err) {
    const callbacks = res[kEndCallbacks]
    if (callbacks === null || callbacks === undefined) return
    res[kEndCallbacks] = null
    for (let i = 0; i < callbacks.length; i++) callbacks[i](err)
  }

  function onFinish (res, err) {
    const socket = res.socket
    if (err || res[kErrored] || (socket && (socket.errored || socket._hadError))) {
      res[kFlushError] = err ?? res[kErrored] ?? (socket && socket.errored) ?? destroyedError()
      flushEndCallbacks(res, res[kFlushError])
      return
    }
    res[kWritableFinished] = true
    flushEndCallbacks(res, null)
    res.emit('finish')
  }

  // The header rides a string body without chunked framing, or none, with 'finish'.
  function oneStringWrite (chunk, chunked) {
    return !chunk || (typeof chunk === 'string' && !chunked)
  }

  return { name: 'node24', queueEndCallback, onFinish, oneStringWrite }
}

module.exports = { create }
