'use strict'

// A preload for benchmark/instructions.js (flags=--require=<this file>) that
// leaves HTTP server sockets without an idle timer: their socket.setTimeout()
// without a callback only sets socket.timeout. What no timer at all would save
// per request, the bound for any change to the keep-alive idle timer; not a
// behaviour to run with (benchmark/RESULTS.md, "the keep-alive idle timer").

const net = require('node:net')

const nodeSetTimeout = net.Socket.prototype.setTimeout

net.Socket.prototype.setTimeout = function setTimeout (msecs, callback) {
  if (callback !== undefined || !this.server) return nodeSetTimeout.call(this, msecs, callback)
  this.timeout = msecs
  return this
}
