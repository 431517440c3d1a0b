'use strict'

// The end() protocol of Node 20 and 22 (also 24.0-24.19 and 26.0-26.6), as
// lib/_http_outgoing.js of Node v20.20 has it.

// A 'finish' listener, after the server's own.
function queueEndCallback (res, callback) {
  res.once('finish', callback)
}

// The write's error is ignored; a socket marked _hadError keeps 'finish'.
function onFinish (res) {
  if (res && res.socket && res.socket._hadError) return
  res.emit('finish')
}

// Only without a body: the header rides the empty write carrying 'finish'.
function oneStringWrite (chunk) {
  return !chunk
}

module.exports = { name: 'node20', queueEndCallback, onFinish, oneStringWrite }
