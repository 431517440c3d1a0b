'use strict'

// The end() protocol of Node 24.21+ and 26.8+: end callbacks wait in
// res[kEndCallbacks] and run before 'finish' with null, or with the flush
// error instead of 'finish' (lib/_http_outgoing.js: queueEndCallback,
// onFinish, flushEndCallbacks).

function create (k) {
  const { kEndCallbacks, kWritableFinished, kFlushError, kErrored, destroyedError } = k

  // Native end() runs only on a response not finished: Node's early
  // answers (finished, an earlier flush error) never apply.
  function queueEndCallback (res, callback) {
    const callbacks = res[kEndCallbacks]
    if (callbacks === null || callbacks === undefined) {
      res[kEndCallbacks] = [callback]
    } else {
      callbacks.push(callback)
    }
  }

  // Each runs as an element of the array taken away first (its `this`),
  // and a throwing callback stops the rest, as in Node.
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

  // Without a body, or with a string body and no chunked framing (the
  // header rides it, with 'finish').
  function oneStringWrite (chunk, chunked) {
    return !chunk || (typeof chunk === 'string' && !chunked)
  }

  return { name: 'node24', queueEndCallback, onFinish, oneStringWrite }
}

module.exports = { create }
