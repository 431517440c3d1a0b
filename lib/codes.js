'use strict'

// The addon's flags, keys and results, named, and read from lib/binding.js
// in this one place (src/binding.c states what each entry point returns).
// Without the addon nothing reads them: the empty values let this file load.

const binding = require('./binding.js')

const loaded = binding !== null

const FLAGS = loaded ? binding.flags : Object.freeze({})

// The rejection codes by name, and a code's name (errorName(code)), both
// from the addon's hm_err_name() (src/http_message.h).
const ERRORS = loaded ? binding.errors : Object.freeze({})
const errorName = loaded ? binding.errorName : () => 'UNKNOWN'

// sendCached()/fillCached()'s key: slot | flags << SHIFT | REPEAT (the
// slot's last Content-Length digits) | CHECK (a pending socket error first)
// | STRING, BYTES or EMPTY (spares C asking V8). SLOT_COUNT: cache slots.
const KEY = loaded ? binding.key : Object.freeze({})

// An entry point's result other than undefined (done): PART, NOT_READY, REJECTED or FAILED, the
// detail (bytes written, rejection code, errno) in DETAIL[0], which C writes (src/napi.h).
const RESULT = loaded ? binding.result : Object.freeze({})
const DETAIL = loaded ? binding.detail : new Int32Array(1)

module.exports = { FLAGS, ERRORS, errorName, KEY, RESULT, DETAIL }
