'use strict'

// buildHttpMessage(): one HTTP/1.1 response (status line, header fields,
// body) as one Buffer, byte for byte what Node's ServerResponse puts on the
// wire for `res.writeHead(statusCode, reason, headers)` + `res.end(body)`
// when `headers` already holds every line Node would send (Content-Length,
// Connection, ...): nothing is added.
//
// The native addon does the work when it loaded; otherwise a JS version
// produces the same bytes. Inputs are checked as writeHead() and end() check
// them, in the same order, and the errors carry Node's class, code and
// message.

const { STATUS_CODES } = require('node:http')
const { isUint8Array } = require('node:util/types')

const binding = require('./binding.js')
const errors = require('./errors.js')

// lib/binding.js exports the addon or null; why it is null is kept on its
// module record, read here once while that record is the one just loaded.
const bindingRecord = require.cache[require.resolve('./binding.js')]
const loadError = (bindingRecord && bindingRecord.loadError) || null

// The bits of the addon's `flags` argument; the values are fixed by
// src/binding.c and repeated here for the JS fallback.
const CHUNKED = 1
const BODY_LATIN1 = 2
const HEAD_UTF8 = 4

// The default reason phrases, copied once so that a later change to
// http.STATUS_CODES cannot make the JS fallback differ from the addon's
// built-in table (src/http_message.c hm_default_reason()).
const DEFAULT_REASONS = Object.freeze({ ...STATUS_CODES })

// lib/_http_common.js checkIsHttpToken and checkInvalidHeaderChar.
const tokenRegExp = /^[\^_`a-zA-Z\-0-9!#$%&'*+.|~]+$/
const headerCharRegExp = /[^\t\x20-\x7e\x80-\xff]/

// Results are views into a slab of POOL_SIZE bytes, handed out in order as
// Buffer.allocUnsafe() hands out Node's pool: a standalone allocation per
// message (napi_create_buffer) costs more than serializing a small message.
// A message above POOL_MAX gets a Buffer of its own. Like a pooled Buffer, a
// result keeps its whole slab alive while it is referenced.
// Refs: benchmark/build-message.js (3 headers, 4 B body: 1326 ns before, 560 after)
const POOL_SIZE = 64 * 1024
const POOL_MAX = POOL_SIZE >>> 1

const fill = binding === null ? null : binding.fill
// The slab (an ArrayBuffer, as the addon takes it) and where its free part starts.
let pool = null
let poolOffset = 0

// The core's numeric codes by name, for ERR_HM_REJECTED.
const errorNames = binding === null
  ? {}
  : Object.fromEntries(Object.entries(binding.errors).map(([name, code]) => [code, name]))

/**
 * Reads `options` into the addon's flag bits.
 *
 * @param {object|undefined|null} options
 * @returns {number}
 */
function readOptions (options) {
  if (options === undefined || options === null) return 0
  if (typeof options !== 'object') {
    throw errors.invalidArgType('options', 'of type object', options, buildHttpMessage)
  }
  let flags = 0
  const { encoding, chunked, headerEncoding } = options
  // 'ascii' writes the low byte of each char, exactly like 'latin1', as
  // Buffer.from(str, 'ascii') does (doc section 3.5).
  if (encoding === 'latin1' || encoding === 'ascii') {
    flags |= BODY_LATIN1
  } else if (encoding !== undefined && encoding !== 'utf8' && encoding !== 'utf-8') {
    throw errors.invalidArgValue('options.encoding', encoding, undefined, buildHttpMessage)
  }
  if (chunked === true) {
    flags |= CHUNKED
  } else if (chunked !== undefined && chunked !== false) {
    throw errors.invalidArgType('options.chunked', 'of type boolean', chunked, buildHttpMessage)
  }
  if (headerEncoding === 'utf8' || headerEncoding === 'utf-8') {
    flags |= HEAD_UTF8
  } else if (headerEncoding !== undefined && headerEncoding !== 'latin1') {
    throw errors.invalidArgValue('options.headerEncoding', headerEncoding, undefined,
      buildHttpMessage)
  }
  return flags
}

function isCookie (name) {
  return name.length === 6 && name.toLowerCase() === 'cookie'
}

function isScalar (value) {
  return typeof value === 'string' || typeof value === 'number'
}

// Appends one header entry to `flat`. Returns false, having appended nothing
// useful, when a type is not one buildHttpMessage accepts; validate() then
// finds and throws the exact error.
function pushEntry (flat, name, value) {
  if (typeof name !== 'string') return false
  if (typeof value === 'string') {
    flat.push(name, value)
    return true
  }
  if (typeof value === 'number') {
    flat.push(name, String(value))
    return true
  }
  if (!Array.isArray(value)) return false
  for (let i = 0; i < value.length; i++) {
    if (!isScalar(value[i])) return false
  }
  // processHeader() joins a cookie array of 2 or more with '; ' and emits
  // every other array as one line per element.
  if (value.length >= 2 && isCookie(name)) {
    flat.push(name, value.join('; '))
  } else {
    for (let i = 0; i < value.length; i++) flat.push(name, String(value[i]))
  }
  return true
}

// Turns `headers` into the flat [name, value, ...] string array the addon
// takes, or returns null when any type is wrong (no character checks here:
// the addon makes those, and validate() explains a rejection).
function flatten (headers) {
  const flat = []
  if (headers === undefined || headers === null) return flat
  if (Array.isArray(headers)) {
    if (headers.length % 2 !== 0) return null
    for (let i = 0; i < headers.length; i += 2) {
      if (!pushEntry(flat, headers[i], headers[i + 1])) return null
    }
    return flat
  }
  if (typeof headers !== 'object') return null
  const keys = Object.keys(headers)
  for (let i = 0; i < keys.length; i++) {
    if (!pushEntry(flat, keys[i], headers[keys[i]])) return null
  }
  return flat
}

// Joins a [name, value, ...] array of string names and string or number
// values into the addon's `name NUL value CR LF` lines (a number as
// String(n)); null for any other shape, which flatten() then takes. One
// string crosses into the addon instead of one per field: reading a string
// through Node-API costs more than the bytes it copies.
function joinFields (flat) {
  if (!Array.isArray(flat) || flat.length % 2 !== 0) return null
  let fields = ''
  for (let i = 0; i < flat.length; i += 2) {
    const name = flat[i]
    const value = flat[i + 1]
    if (typeof name !== 'string' || (typeof value !== 'string' && typeof value !== 'number')) {
      return null
    }
    fields += name + '\0' + value + '\r\n'
  }
  return fields
}

// Builds with the addon into the slab. `size` is a lower bound of the
// message's size. Returns the result, or the core's rejection code.
function buildFromPool (code, reason, fields, numHeaders, body, flags, size) {
  const large = size > POOL_MAX
  if (!large && (pool === null || size > POOL_SIZE - poolOffset)) {
    // Uninitialised, like Buffer.allocUnsafe(): every byte handed out is
    // written by the addon first.
    pool = Buffer.allocUnsafeSlow(POOL_SIZE).buffer
    poolOffset = 0
  }
  // The addon writes only when the message fits at poolOffset; otherwise it
  // returns a Buffer of its own.
  const r = fill(fields, numHeaders, code, reason, body, flags, large ? null : pool, poolOffset)
  if (typeof r !== 'number') return r
  if (r < 0) return -r
  const out = Buffer.from(pool, poolOffset, r)
  // 8-byte aligned, as Node's own pool keeps its slices.
  poolOffset = (poolOffset + r + 7) & ~7
  return out
}

function validateValue (name, value) {
  if (value === undefined) {
    throw errors.invalidHeaderValue(value, name, buildHttpMessage)
  }
  if (!isScalar(value)) {
    throw errors.invalidArgType(`headers["${name}"]`, 'of type string or number, or an array of those',
      value, buildHttpMessage)
  }
  if (headerCharRegExp.test(String(value))) {
    throw errors.invalidChar('header content', name, buildHttpMessage)
  }
}

// lib/_http_outgoing.js processHeader() with validation on, plus our type
// rule for values.
function validateEntry (name, value) {
  if (typeof name !== 'string' || name === '' || !tokenRegExp.test(name)) {
    throw errors.invalidHttpToken(name, buildHttpMessage)
  }
  if (!Array.isArray(value)) {
    validateValue(name, value)
    return
  }
  if (value.length >= 2 && isCookie(name)) {
    // Node joins without looking at the elements; our type rule still
    // applies to each of them before the joined line is checked.
    for (let i = 0; i < value.length; i++) {
      if (!isScalar(value[i])) validateValue(name, value[i])
    }
    validateValue(name, value.join('; '))
  } else {
    // storeHeader() checks each line in turn.
    for (let i = 0; i < value.length; i++) validateValue(name, value[i])
  }
}

// Throws the error Node would throw first for writeHead(code, reason,
// headers) followed by end(body): status code, status message, headers in
// order, then the body. Returns normally when everything is acceptable.
function validate (statusCode, code, reason, headers, body) {
  // _http_server.js writeHead(): `statusCode |= 0`, then the range check.
  if (code < 100 || code > 999) {
    throw errors.invalidStatusCode(statusCode, buildHttpMessage)
  }
  if (reason !== undefined && reason !== null) {
    if (typeof reason !== 'string') {
      throw errors.invalidArgType('reason', 'of type string', reason, buildHttpMessage)
    }
    if (headerCharRegExp.test(reason)) {
      throw errors.invalidChar('statusMessage', undefined, buildHttpMessage)
    }
  }
  if (Array.isArray(headers)) {
    if (headers.length % 2 !== 0) {
      throw errors.invalidArgValue('headers', headers, undefined, buildHttpMessage)
    }
    for (let i = 0; i < headers.length; i += 2) validateEntry(headers[i], headers[i + 1])
  } else if (headers !== undefined && headers !== null) {
    if (typeof headers !== 'object') {
      throw errors.invalidArgType('headers', 'an array or an object', headers, buildHttpMessage)
    }
    const keys = Object.keys(headers)
    for (let i = 0; i < keys.length; i++) validateEntry(keys[i], headers[keys[i]])
  }
  if (body !== undefined && body !== null && typeof body !== 'string' && !isUint8Array(body)) {
    throw errors.invalidArgType('body', 'of type string or an instance of Buffer or Uint8Array',
      body, buildHttpMessage)
  }
}

// The JS fallback: the same bytes as src/http_message.c hm_write().
function buildInJs (code, reason, flat, body, flags) {
  let head = 'HTTP/1.1 ' + code + ' ' + (typeof reason === 'string'
    ? reason
    : (DEFAULT_REASONS[code] || 'unknown')) + '\r\n'
  for (let i = 0; i < flat.length; i += 2) head += flat[i] + ': ' + flat[i + 1] + '\r\n'
  head += '\r\n'
  const headBytes = Buffer.from(head, (flags & HEAD_UTF8) ? 'utf8' : 'latin1')

  let bodyBytes
  if (typeof body === 'string') {
    bodyBytes = Buffer.from(body, (flags & BODY_LATIN1) ? 'latin1' : 'utf8')
  } else if (body === undefined || body === null) {
    bodyBytes = Buffer.alloc(0)
  } else {
    bodyBytes = body
  }

  if (!(flags & CHUNKED)) {
    return Buffer.concat([headBytes, bodyBytes])
  }
  // RFC 9112 section 7.1: one chunk with the whole body, then the last
  // chunk; an empty body is only the last chunk.
  if (bodyBytes.length === 0) {
    return Buffer.concat([headBytes, Buffer.from('0\r\n\r\n', 'latin1')])
  }
  return Buffer.concat([
    headBytes,
    Buffer.from(bodyBytes.length.toString(16) + '\r\n', 'latin1'),
    bodyBytes,
    Buffer.from('\r\n0\r\n\r\n', 'latin1')
  ])
}

/**
 * Serializes one HTTP/1.1 response into a single Buffer.
 *
 * The bytes equal what Node sends for `res.writeHead(statusCode, reason,
 * headers)` then `res.end(body)`, given that `headers` lists every header
 * line Node would send (no Date, Content-Length or Connection is added) and
 * that `options.headerEncoding` matches how Node encodes the head for that
 * body (UTF-8 when merged with a utf8 string body, else latin1).
 *
 * Header values may be strings, numbers (as String(n)) or arrays of those
 * (one line per element; a `Cookie` array of two or more is joined with
 * '; ', as Node does). `undefined` throws ERR_HTTP_INVALID_HEADER_VALUE as
 * in Node; unlike Node, objects, booleans, null and symbols are refused with
 * ERR_INVALID_ARG_TYPE instead of being stringified.
 *
 * @param {number|string} statusCode Coerced with `| 0` like writeHead();
 *   must then be 100..999 (RangeError ERR_HTTP_INVALID_STATUS_CODE).
 * @param {string|undefined|null} reason The reason phrase; undefined or
 *   null picks the default for the code ('unknown' for unlisted codes).
 * @param {Array<string|number|Array<string|number>>|Object<string, *>|undefined|null} headers
 *   A flat [name, value, ...] array (even length) or an object whose own
 *   enumerable keys are taken in Object.keys() order.
 * @param {string|Uint8Array|undefined|null} body
 * @param {object} [options]
 * @param {'utf8'|'utf-8'|'latin1'|'ascii'} [options.encoding='utf8'] How a
 *   string body becomes bytes ('ascii' writes the low byte, like latin1).
 * @param {boolean} [options.chunked=false] Frame the body as one chunk plus
 *   the last chunk (the caller lists `Transfer-Encoding: chunked`).
 * @param {'latin1'|'utf8'} [options.headerEncoding='latin1'] How chars
 *   0x80..0xFF in the status line and header fields become bytes.
 * @returns {Buffer}
 * @throws {TypeError|RangeError} With Node's `code` and message for input
 *   Node would refuse.
 */
function buildHttpMessage (statusCode, reason, headers, body, options) {
  const flags = readOptions(options)
  // ToInt32, exactly as writeHead() coerces: '404' -> 404, 200.9 -> 200.
  const code = statusCode | 0
  if (binding !== null &&
      (reason === undefined || reason === null || typeof reason === 'string') &&
      (body === undefined || body === null || typeof body === 'string' || isUint8Array(body))) {
    // A flat array of strings and numbers is joined as it is.
    let flat = headers
    let fields = joinFields(headers)
    if (fields === null) {
      flat = flatten(headers)
      if (flat !== null) fields = joinFields(flat)
    }
    if (fields !== null) {
      const numHeaders = flat.length >>> 1
      // A lower bound of the size ("HTTP/1.1 200 \r\n", the lines with ": ",
      // "\r\n", the body): exact for latin1 text and a body without framing.
      let size = 17 + fields.length + numHeaders + (typeof reason === 'string' ? reason.length : 0)
      if (typeof body === 'string') size += body.length
      else if (body !== undefined && body !== null) size += body.byteLength
      const out = buildFromPool(code, reason, fields, numHeaders, body, flags, size)
      if (typeof out !== 'number') return out
      // The addon says no; the JS rules say why, with Node's error.
      validate(statusCode, code, reason, headers, body)
      throw errors.rejected(errorNames[out] || 'unknown', out, buildHttpMessage)
    }
  }

  validate(statusCode, code, reason, headers, body)
  return buildInJs(code, reason, flatten(headers), body, flags)
}

module.exports = {
  buildHttpMessage,
  isNative: binding !== null,
  // Why the addon did not load (an Error), or null when it did.
  loadError
}
