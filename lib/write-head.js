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

// Whether writeHead() below is ServerResponse.prototype's; whether
// _storeHeader() is, in its place.
let installed = false
let storeInstalled = false

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
 * ServerResponse#_storeHeader where a wrapper was in writeHead()'s place
 * when the package installed (an APM agent loaded first: Elastic APM's):
 * Node's writeHead(), which the wrapper calls, has checked and set the
 * status and settled the headers (the object given, or the store it merged
 * it into), and hands them here with the status line; the renderers take
 * them as they take writeHead()'s, and the block goes to end() as theirs
 * does. Anything else, and what they leave, is Node's _storeHeader().
 */
// Named as Node's, as the package's other methods are.
function _storeHeader (firstLine, headers) {
  // The renderers take the status message from statusMessage, as Node's
  // writeHead() without a reason does: an empty one is Node's.
  if (storeInstalled && !httpDebug && this.statusMessage && firstLine === statusLine(this)) {
    if (internals.learned.pending) internals.learn(this)
    const store = this[kOutHeaders]
    const done = store === null
      ? render.fastWriteHead(this, this.statusCode, undefined, headers)
      : headers === store && render.storedWriteHead(this, this.statusCode, undefined, undefined)
    if (done === true) return
    // Without a reason the headers Node's writeHead() would take over with
    // come first.
    if (done !== false) return resStoreHeader.call(this, firstLine, done[0])
  }
  return resStoreHeader.apply(this, arguments)
}

// The status line Node's writeHead() hands _storeHeader().
function statusLine (res) {
  return 'HTTP/1.1 ' + res.statusCode + ' ' + res.statusMessage + '\r\n'
}

/**
 * The writeHead a pristine response resolves to: this file's while it is
 * installed, else Node's.
 * @returns {Function}
 */
function currentWriteHead () {
  return installed ? writeHead : resWriteHead
}

// Puts writeHead() on ServerResponse.prototype where Node's own is there;
// where a wrapper another module put there first stays (as end() after it),
// _storeHeader() beneath it, where Node's own _storeHeader() is there.
function install () {
  if (installed || storeInstalled) return
  const proto = ServerResponse.prototype
  if (proto.writeHead === resWriteHead) {
    patches.put(proto, 'writeHead', writeHead)
    installed = true
  } else if (proto._storeHeader === resStoreHeader && resStoreHeader !== null) {
    patches.put(proto, '_storeHeader', _storeHeader)
    storeInstalled = true
  }
}

// Puts back what install() replaced while its method is still there: a
// wrapper another module installed since stays.
function uninstall () {
  if (installed) patches.takeBack('writeHead')
  if (storeInstalled) patches.takeBack('_storeHeader')
  installed = false
  storeInstalled = false
}

module.exports = { writeHead, _storeHeader, currentWriteHead, install, uninstall }
