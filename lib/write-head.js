'use strict'

// ServerResponse#writeHead while the shim is installed: lib/render.js,
// else Node's. lib/decide.js asks it which writeHead a pristine response has.

const http = require('node:http')
const internals = require('./internals.js')
const render = require('./render.js')
const patches = require('./patches.js')
const { httpDebug } = require('./rules.js')

const { ServerResponse } = http
// Null keeps the load safe where lib/internals.js did not resolve.
const resWriteHead = internals === null ? null : internals.resMethods.writeHead
const kOutHeaders = internals === null ? null : internals.kOutHeaders
// Node's writeHead() renders through this._storeHeader(): a wrapper of it
// must run, so Node's writeHead() does.
const resStoreHeader = internals === null ? null : internals.resMethods._storeHeader

let installed = false

// lib/render.js, else Node's writeHead with the same arguments or, once
// values were read, ones that hand Node those values. After uninstall() a
// wrapper that captured it still calls it: Node's then runs.
function writeHead (statusCode, reason, obj) {
  if (installed && !httpDebug && this._storeHeader === resStoreHeader) {
    if (internals.learned.pending) internals.learn(this)
    const done = this[kOutHeaders] === null
      ? render.fastWriteHead(this, statusCode, reason, obj)
      : render.storedWriteHead(this, statusCode, reason, obj)
    if (done === true) return this
    if (done !== false) return resWriteHead.call(this, statusCode, done[0], done[1])
  }
  return resWriteHead.apply(this, arguments)
}

function currentWriteHead () {
  return installed ? writeHead : resWriteHead
}

// Only over Node's own: a method another module put there first stays.
function install () {
  if (installed || ServerResponse.prototype.writeHead !== resWriteHead) return
  patches.put(ServerResponse.prototype, 'writeHead', writeHead)
  installed = true
}

// A wrapper another module installed since stays.
function uninstall () {
  if (!installed) return
  patches.takeBack('writeHead')
  installed = false
}

module.exports = { currentWriteHead, install, uninstall }
