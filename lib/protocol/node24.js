'use strict'

// The end() protocol of Node 24.21+ and 26.8+: end callbacks wait in
// res[kEndCallbacks] and run before 'finish' with null, or with the flush
// error instead of 'finish' (lib/_http_outgoing.js: queueEndCallback,
// onFinish, flushEndCallbacks).

/**
 * @param {{kEndCallbacks: symbol, kWritableFinished: symbol,
 *   kFlushError: symbol, kErrored: symbol, destroyedError: () => Error}} k
 */
function create (k) {
  const { kEndCallbacks, kWritableFinished, kFlushError, kErrored, destroyedError } = k

  // Native end() runs only on a response that is not finished, so Node's
  // early answers (already finished, an earlier flush error) never apply.
  function queueEndCallback (res, callback) {
    const callbacks = res[kEndCallbacks]
    if (callbacks === null || callbacks === undefined) {
      res[kEndCallbacks] = [callback]
    } else {
      callbacks.push(callback)
    }
  }

  // The array is taken away before any callback runs, and each runs as
  // Node calls it, as an element of that array (its `this`), so a throwing
  // callback stops the rest as in Node.
  // Refs: test/fixtures/responses.js "end callbacks: their this"
  function flushEndCallbacks (res, err) {
    const callbacks = res[kEndCallbacks]
    if (callbacks === null || callbacks === undefined) return
    res[kEndCallbacks] = null
    for (let i = 0; i < callbacks.length; i++) {
      callbacks[i](err)
    }
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

  // end() hands the socket one string without a body, or with a string
  // body that needs no framing (the header rides it, with 'finish'); a
  // Uint8Array body, or chunk framing, makes it write several chunks.
  function oneStringWrite (chunk, chunked) {
    return !chunk || (typeof chunk === 'string' && !chunked)
  }

  return { name: 'node24', queueEndCallback, onFinish, oneStringWrite }
}

module.exports = { create }
