'use strict'

// One block of the header-block cache (lib/render.js): its key, its C slot
// and the one memory of its Content-Length.
function Entry () {
  this.slot = -1
  this.code = 0
  this.message = ''
  this.n = 0
  this.names = []
  this.values = []
  this.keys = [] // lowercase, of a block rendered from a store (`keyed`)
  this.keyed = false
  this.lengthAt = -1 // index of Content-Length in names, -1: appended by Node
  this.chunked = false
  this.teAt = -1 // index of a user Transfer-Encoding in names
  this.hasDate = false // a user Date header: no automatic one
  this.state = 0
  this.keepAliveTimeout = 0
  this.maxRequests = 0
  this.date = ''
  this.prefix = '' // null: chunked, no Content-Length hole
  this.suffix = ''
  this.lines = 0
  this.last = null // what _last becomes; null keeps it
  // The Content-Length value of the block last rendered, and that block.
  this.lastValue = undefined
  this.lastHead = ''
  // Whether C's slot holds lastValue's digits: the write then sets the key's
  // REPEAT bit (src/napi_cache.c). A fact about C's copy, not a second one.
  this.digitsKept = false
}

Entry.prototype.setBlock = function setBlock (prefix, suffix) {
  this.prefix = prefix
  this.suffix = suffix
  this.lastValue = undefined
  this.lastHead = prefix === null ? suffix : ''
  this.digitsKept = false
}

// The block with `value` in its hole, rendered once per value.
Entry.prototype.fill = function fill (value) {
  if (value !== this.lastValue) {
    this.lastValue = value
    this.lastHead = this.prefix === null ? this.suffix : this.prefix + value + this.suffix
    this.digitsKept = false
  }
  return this.lastHead
}

// binding.sendCached()/fillCached()'s length: -1 where C kept the digits.
Entry.prototype.lengthArgument = function lengthArgument () {
  if (this.digitsKept) return -1
  this.digitsKept = true
  return this.lastValue
}

// For a write that stopped before C read its length.
Entry.prototype.forgetLength = function forgetLength () {
  this.digitsKept = false
}

module.exports = { Entry }
