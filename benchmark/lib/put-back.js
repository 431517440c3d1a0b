'use strict'

// Preloaded before register.js by benchmark/gc-count.js (mode=putback), or
// with flags=-r,<this file> by benchmark/instructions.js: once the server
// has seen PUT_BACK_AFTER requests (default 100), the package is
// uninstalled and Node's own methods are back. Its modules stay loaded, so
// the process keeps the package's heap and does none of its work per
// response: what separates the two in a count.

const dc = require('node:diagnostics_channel')
const path = require('node:path')

const CHANNEL = 'http.server.request.start'
const after = Number(process.env.PUT_BACK_AFTER ?? 100)
let seen = 0

function onRequest () {
  if (++seen !== after) return
  dc.unsubscribe(CHANNEL, onRequest)
  require(path.join(__dirname, '..', '..', 'lib', 'index.js')).uninstall()
}

dc.subscribe(CHANNEL, onRequest)
