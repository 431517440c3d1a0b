'use strict'

// One block of the header-block cache (lib/render.js). Key: code, message,
// names, values (Content-Length excluded), the response state behind the
// automatic lines and the Date. Output: slot (the bytes in C), prefix and
// suffix around the Content-Length value, lines, last (what _last becomes;
// null keeps it).
function Entry () {
  this.slot = -1
  this.code = 0
  this.message = ''
  this.n = 0
  this.names = []
  this.values = []
  // The lowercase keys of a block rendered from a store (`keyed`).
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
  // The last response's Content-Length value and block: most repeat both.
  this.lastValue = undefined
  this.lastHead = ''
  this.lastNumber = 0 // +lastValue: _contentLength
  // The value whose digits C keeps for the slot; only the methods touch it.
  this.sentValue = undefined
}

// The Content-Length argument of binding.sendCached()/fillCached() for
// `lastValue`: -1 where C keeps its digits from the slot's last response
// (src/napi_cache.c, read_length()), which saves reading the string again.
Entry.prototype.lengthArgument = function lengthArgument () {
  const value = this.lastValue
  if (value === this.sentValue) return -1
  this.sentValue = value
  return value
}

// For a write that stopped before C read its length, and a new block.
Entry.prototype.forgetLength = function forgetLength () {
  this.sentValue = undefined
}

module.exports = { Entry }
