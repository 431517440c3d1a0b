'use strict'

// The replacements of ServerResponse#writeHead, or of #_storeHeader beneath
// another module's writeHead(): lib/render.js, else Node's.

const http = require('node:http')
const internals = require('./internals.js')
const render = require('./render.js')
const { httpDebug } = require('./rules.js')

const { OutgoingMessage } = http
const resWriteHead = internals === null ? null : internals.resMethods.writeHead
const kOutHeaders = internals === null ? null : internals.kOutHeaders
// Node's writeHead() renders through this._storeHeader(): a wrapper of it
// must run, so Node's writeHead() does.
const resStoreHeader = internals === null ? null : internals.resMethods._storeHeader

// Which of the two lib/patches.js put on. After uninstall() a wrapper that
// captured one still calls it: Node's then runs.
let installed = false
let storeInstalled = false

// Once values were read, Node's writeHead() gets ones that hand it those values.
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

// Where a wrapper was in writeHead()'s place at install (Elastic APM's): Node's writeHead(), which
// the wrapper calls, has checked and set the status and settled the headers, and hands them here
// with the status line; the renderers take them as writeHead()'s. Named as Node's.
function _storeHeader (firstLine, headers) {
  // What it shadows: a wrapper of OutgoingMessage#_storeHeader put on since install() runs.
  const shadowed = OutgoingMessage.prototype._storeHeader
  // The renderers read statusMessage, as Node's writeHead() without a reason does: an empty one is Node's.
  if (storeInstalled && shadowed === resStoreHeader && !httpDebug && this.statusMessage &&
      firstLine === 'HTTP/1.1 ' + this.statusCode + ' ' + this.statusMessage + '\r\n') {
    if (internals.learned.pending) internals.learn(this)
    const store = this[kOutHeaders]
    const done = store === null
      ? render.fastWriteHead(this, this.statusCode, undefined, headers)
      : headers === store && render.storedWriteHead(this, this.statusCode, undefined, undefined)
    if (done === true) return
    // Without a reason the headers Node's writeHead() would take over with come first.
    if (done !== false) return resStoreHeader.call(this, firstLine, done[0])
  }
  return shadowed.apply(this, arguments)
}

function currentWriteHead () {
  return installed ? writeHead : resWriteHead
}

function setInstalled (writeHeadPut, storeHeaderPut) {
  installed = writeHeadPut
  storeInstalled = storeHeaderPut
}

module.exports = { writeHead, _storeHeader, currentWriteHead, setInstalled }
