'use strict'

// The addon's flags, keys and results, named, and read from lib/binding.js
// in this one place (src/binding.c states what each entry point returns).
// Without the addon nothing reads them: the zeros let this file load.

const binding = require('./binding.js')

const loaded = binding !== null

const FLAGS = loaded ? binding.flags : Object.freeze({})

// The core's rejection codes (ENONASCII: not the ASCII the flags promised).
const ERRORS = loaded ? binding.errors : Object.freeze({})

// sendCached()/fillCached()'s key: slot | flags << SHIFT | REPEAT (the
// slot's last Content-Length digits) | CHECK (a pending socket error first)
// | STRING, BYTES or EMPTY (spares C asking V8). SLOT_COUNT: cache slots.
const KEY = loaded ? binding.key : Object.freeze({})

// sendCached()'s results below 0: NOT_READY (nothing written), -(REJECT_BASE
// + code) (rejected), -(FAILED_BASE + errno) (the write failed).
const SEND = loaded ? binding.send : Object.freeze({ NOT_READY: -1, REJECT_BASE: 100, FAILED_BASE: 1000 })

const SENT = Object.freeze({
  WHOLE: 0, // the whole message went out
  PART: 1, // sendDetail(): the bytes written, 0 or more; the rest is the caller's
  REJECTED: 2, // sendDetail(): the core's rejection code; nothing written
  FAILED: 3 // sendDetail(): the errno; nothing written
})

const REJECT_BASE = SEND.REJECT_BASE
const FAILED_BASE = SEND.FAILED_BASE
const { WHOLE, PART, REJECTED, FAILED } = SENT

// A sendCached() result's SENT value: with sendDetail(), the one place its
// packing by sign is read.
function sendOutcome (result) {
  if (result === undefined) return WHOLE
  if (result > -REJECT_BASE) return PART
  return result > -FAILED_BASE ? REJECTED : FAILED
}

// The bytes written (NOT_READY: none), the rejection code, or the errno.
function sendDetail (result) {
  if (result > -REJECT_BASE) return result < 0 ? 0 : result
  return result > -FAILED_BASE ? -result - REJECT_BASE : -result - FAILED_BASE
}

module.exports = { FLAGS, ERRORS, KEY, SENT, sendOutcome, sendDetail }
