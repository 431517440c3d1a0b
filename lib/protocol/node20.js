'use strict'

// The end() protocol of Node 20 and 22 (also 24.0-24.19 and 26.0-26.6):
// what happens after the one write, as lib/_http_outgoing.js of Node
// v20.20 does it.

/**
 * Queues end()'s callback: OutgoingMessage#end adds it as a 'finish'
 * listener, after the server's own.
 * @param {import('node:http').ServerResponse} res
 * @param {Function} callback
 */
function queueEndCallback (res, callback) {
  res.once('finish', callback)
}

/**
 * The write's callback, onFinish(outmsg): the error is ignored, and only a
 * socket the client marked with _hadError keeps 'finish' back.
 * @param {import('node:http').ServerResponse} res
 */
function onFinish (res) {
  if (res && res.socket && res.socket._hadError) return
  res.emit('finish')
}

/**
 * Whether end() hands the socket one string and nothing else: only without
 * a body (none, an empty string, or one Node drops), when the header rides
 * the empty write that carries 'finish'. With a body, that empty write
 * follows it, and the socket writes both at once (writev).
 * @param {string|Uint8Array|null|undefined} chunk the body end() sends
 * @returns {boolean}
 */
function oneStringWrite (chunk) {
  return !chunk
}

module.exports = { name: 'node20', queueEndCallback, onFinish, oneStringWrite }
