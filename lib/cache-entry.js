'use strict'

// One entry of the header-block cache (lib/render.js): the key a response's
// header is matched on, the C slot holding its checked bytes, its line
// count, the Content-Length value of the last response that took it and
// the one whose digits C keeps for the slot. lib/render.js fills and
// matches entries and hands one to end() with the response's block;
// lib/send.js asks it for the Content-Length argument of the write
// (lengthArgument()) and has it forget that value when the write stopped
// before C read it (forgetLength()): `sentValue` is touched only by these
// two methods. Loads nothing.

// One rendered block. Key: code, message, names, values (the Content-Length
// value excluded), the response state behind the automatic lines and the
// Date value. Output: slot (the bytes in C), prefix and suffix around the
// Content-Length value, lines, last (what _last becomes; null keeps it).
function Entry () {
  this.slot = -1
  this.code = 0
  this.message = ''
  this.n = 0
  this.names = []
  this.values = []
  // The store's lowercase keys, for a block rendered from stored headers
  // (`keyed`), which renderAgain() and storedAgain() compare in place.
  this.keys = []
  this.keyed = false
  this.lengthAt = -1 // index of Content-Length in names, -1: appended by Node
  this.chunked = false // writeHead() without Content-Length: chunked framing
  this.teAt = -1 // index of a user Transfer-Encoding in names
  this.hasDate = false // a user Date header: no automatic one
  this.state = 0
  this.keepAliveTimeout = 0
  this.maxRequests = 0
  this.date = ''
  this.prefix = ''
  this.suffix = ''
  this.lines = 0
  this.last = null
  // The Content-Length value of the last response and its whole block:
  // most responses repeat both.
  this.lastValue = undefined
  this.lastHead = ''
  this.lastNumber = 0 // +lastValue: _contentLength
  // The Content-Length value whose digits C keeps for this slot: set by
  // lengthArgument() when a write passes C the value, cleared by
  // forgetLength() (a write that stopped before C read it, or store()
  // putting a new block in the slot). Only these methods touch it.
  this.sentValue = undefined
}

/**
 * The Content-Length argument of binding.sendCached()/fillCached() for the
 * response this entry's block was taken for (its `lastValue`): -1 when C
 * keeps the digits of that value from the slot's last response
 * (src/napi_cache.c, read_length()), which saves reading the string again;
 * else the value, now recorded as the one C keeps.
 * @returns {string|number}
 */
Entry.prototype.lengthArgument = function lengthArgument () {
  const value = this.lastValue
  if (value === this.sentValue) return -1
  this.sentValue = value
  return value
}

/**
 * Forgets which Content-Length value C keeps for this entry's slot: for a
 * write that stopped before C read its length, and for a new block in the
 * slot. The next write passes its value.
 */
Entry.prototype.forgetLength = function forgetLength () {
  this.sentValue = undefined
}

module.exports = { Entry }
