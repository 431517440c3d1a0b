'use strict'

// ServerResponse#writeHead while the shim is installed: the renderers of
// lib/render.js, else Node's own writeHead. A file of its own so that
// lib/decide.js can ask which writeHead a pristine response has
// (currentWriteHead()) from the file that installs it.

const http = require('node:http')
const internals = require('./internals.js')
const render = require('./render.js')
const patches = require('./patches.js')
const { httpDebug } = require('./rules.js')

const { ServerResponse } = http
// Loaded only by modules that run where lib/internals.js resolved
// (lib/shim.js installs nothing otherwise); null keeps the load safe.
const resWriteHead = internals === null ? null : internals.resMethods.writeHead
const kOutHeaders = internals === null ? null : internals.kOutHeaders
// Node's writeHead() renders through this._storeHeader(): a wrapper of it
// (null here: one was there before install) is called by Node's writeHead.
const resStoreHeader = internals === null ? null : internals.resMethods._storeHeader

// Whether writeHead() below is ServerResponse.prototype's.
let installed = false

/**
 * ServerResponse#writeHead replacement: the renderer of lib/render.js, else
 * Node's own writeHead with the same arguments (or, when some header values
 * were read already, an object that hands Node those values). After
 * uninstall() a wrapper that captured it still calls it: Node's then runs.
 */
function writeHead (statusCode, reason, obj) {
  if (installed && !httpDebug && this._storeHeader === resStoreHeader) {
    if (internals.learned.pending) internals.learn(this)
    // Headers stored by setHeader() take the other renderer.
    const done = this[kOutHeaders] === null
      ? render.fastWriteHead(this, statusCode, reason, obj)
      : render.storedWriteHead(this, statusCode, reason, obj)
    if (done === true) return this
    if (done !== false) return resWriteHead.call(this, statusCode, done[0], done[1])
  }
  return resWriteHead.apply(this, arguments)
}

/**
 * The writeHead a pristine response resolves to: this file's while it is
 * installed, else Node's.
 * @returns {Function}
 */
function currentWriteHead () {
  return installed ? writeHead : resWriteHead
}

// Puts writeHead() on ServerResponse.prototype where Node's own is there
// (a method another module put there first stays, as end() after it).
function install () {
  if (installed || ServerResponse.prototype.writeHead !== resWriteHead) return
  patches.put(ServerResponse.prototype, 'writeHead', writeHead)
  installed = true
}

// Puts back what install() replaced while writeHead() is still there: a
// wrapper another module installed since stays.
function uninstall () {
  if (!installed) return
  patches.takeBack('writeHead')
  installed = false
}

module.exports = { writeHead, currentWriteHead, install, uninstall }
