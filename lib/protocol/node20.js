'use strict'

// end() as Node 20's lib/_http_outgoing.js has it (docs/protocols.md, node20).

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
