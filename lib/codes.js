'use strict'

// The addon's flags, keys and results, named, and read from lib/binding.js
// in this one place: src/binding.c states at its top what each entry point
// returns. The modules of the native path run only where the addon loaded
// (lib/shim.js installs nothing otherwise); the zeros below let this file
// load without it, where nothing reads them.

const binding = require('./binding.js')

const loaded = binding !== null

// The message flags of fill*()/sendCached(): CHUNKED, BODY_LATIN1,
// HEAD_UTF8, ASCII_ONLY, HEAD_ONE_BYTE.
const FLAGS = loaded ? binding.flags : Object.freeze({})

// The core's rejection codes by name (ENONASCII: a message that is not the
// ASCII its flags promised).
const ERRORS = loaded ? binding.errors : Object.freeze({})

// The key of sendCached()/fillCached(): slot | flags << SHIFT | REPEAT (the
// slot's last Content-Length digits again) | CHECK (a pending socket error
// first) | the body's kind, STRING, BYTES or EMPTY, which spares C asking V8.
// SLOT_COUNT: the slots of the header-block cache.
const KEY = loaded ? binding.key : Object.freeze({})

// sendCached()'s results below 0 (src/binding.c states them): NOT_READY,
// nothing written; -(REJECT_BASE + code), the core rejected the response;
// -(FAILED_BASE + errno), the write failed.
const SEND = loaded ? binding.send : Object.freeze({ NOT_READY: -1, REJECT_BASE: 100, FAILED_BASE: 1000 })

// What a sendCached() result means (sendOutcome()).
const SENT = Object.freeze({
  WHOLE: 0, // the whole message went out
  PART: 1, // sendDetail(): the bytes written, 0 or more; the rest is the caller's
  REJECTED: 2, // sendDetail(): the core's rejection code; nothing written
  FAILED: 3 // sendDetail(): the errno; nothing written
})

const REJECT_BASE = SEND.REJECT_BASE
const FAILED_BASE = SEND.FAILED_BASE
const { WHOLE, PART, REJECTED, FAILED } = SENT

/**
 * The outcome of a sendCached() result: the one place its packing by sign
 * is read (with sendDetail()).
 * @param {number|undefined} result
 * @returns {number} a SENT value
 */
function sendOutcome (result) {
  if (result === undefined) return WHOLE
  if (result > -REJECT_BASE) return PART
  return result > -FAILED_BASE ? REJECTED : FAILED
}

/**
 * The number a sendCached() result carries besides its outcome: the bytes
 * written (NOT_READY: none), the rejection code, or the errno.
 * @param {number} result a result other than undefined
 * @returns {number}
 */
function sendDetail (result) {
  if (result > -REJECT_BASE) return result < 0 ? 0 : result
  return result > -FAILED_BASE ? -result - REJECT_BASE : -result - FAILED_BASE
}

module.exports = { FLAGS, ERRORS, KEY, SENT, sendOutcome, sendDetail }
