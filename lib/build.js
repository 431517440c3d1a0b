'use strict'

// buildHttpMessage() (docs/build-http-message.md): the addon where it loaded, else JS with the
// same bytes; inputs checked as writeHead() and end() check them, in order, with Node's errors.

// Buffer from its module: the global is an accessor, one call per use.
const { Buffer } = require('node:buffer')
const { STATUS_CODES } = require('node:http')
const { isUint8Array } = require('node:util/types')

const binding = require('./binding.js')
const errors = require('./errors.js')
const { RESULT: { REJECTED }, DETAIL } = require('./codes.js')
const { TOKEN, INVALID_HEADER_CHAR } = require('./header-rules.js')
const { statusLine, fieldLine, LINE_END } = require('./head.js')

// Why lib/binding.js exports null (tests load this file afresh).
const loadError = require.cache[require.resolve('./binding.js')]?.loadError || null

const { CHUNKED, BODY_LATIN1, HEAD_UTF8 } = binding === null
  ? { CHUNKED: 1, BODY_LATIN1: 2, HEAD_UTF8: 4 }
  : binding.flags

// Copied once: a later change to http.STATUS_CODES must not make the JS
// fallback differ from src/http_message.c hm_default_reason().
const DEFAULT_REASONS = Object.freeze({ ...STATUS_CODES })

function phraseOf (code, reason) {
  return reason !== undefined ? reason : (DEFAULT_REASONS[code] || 'unknown')
}

// Results are views into a slab, as Buffer.allocUnsafe() hands out Node's pool: an ArrayBuffer
// per message costs more than serializing a small one and, up to POOL_MAX bytes, more than the
// slab's page faults; a UTF-8 body up to POOL_MAX chars goes in uncounted. Every byte is written
// before it is handed out. Refs: benchmark/build-message.js, benchmark/RESULTS.md
const POOL_SIZE = 64 * 1024
const POOL_MAX = 32 * 1024

const fill = binding === null ? null : binding.fill
// `ab`: the ArrayBuffer under `buf`, as the addon takes it.
const slab = { buf: null, ab: null, offset: 0 }

// The header block cache, most recently used first, keyed on private copies compared === afresh
// on every call: nothing differing from a validated value skips validation. A block is rendered
// into `spare`, an entry's only once complete.
const CACHE_SIZE = 8
const BLOCK_MAX = 8 * 1024
const cache = []
let spare = null
let hits = 0
let misses = 0

// After MISS_STREAK misses in a row (a Content-Length per body) about 1 in 16 is cached, picked
// by xorshift so that a set repeating on any period still gets in.
const MISS_STREAK = 32
let streak = 0
let seed = 0x2545f491

function admit () {
  if (streak < MISS_STREAK) return true
  seed ^= seed << 13
  seed ^= seed >>> 17
  seed ^= seed << 5
  return (seed & 15) === 0
}

// Taken once: a later patch cannot run while a message is half written.
const { utf8Write, latin1Write } = Buffer.prototype
const typedArraySet = Uint8Array.prototype.set
const typedArrayCopyWithin = Uint8Array.prototype.copyWithin
// A Uint8Array subclass may redefine byteLength; the intrinsic getter cannot lie.
const byteLengthOf = Object.getOwnPropertyDescriptor(
  Object.getPrototypeOf(Uint8Array.prototype), 'byteLength').get

// RFC 9112 section 7.1.
const CHUNK_END = Buffer.from('\r\n0\r\n\r\n', 'latin1')
const LAST_CHUNK = Buffer.from('0\r\n\r\n', 'latin1')

// Up to this many chars JS writes a string faster than Buffer's writer.
const SHORT_STRING = 48

function readOptions (options) {
  if (options === undefined || options === null) return 0
  if (typeof options !== 'object') throw errors.invalidArgType('options', 'of type object', options, buildHttpMessage)
  let flags = 0
  const { encoding, chunked, headerEncoding } = options
  // 'ascii' writes the low byte of each char, as 'latin1' (Node's Buffer docs).
  if (encoding === 'latin1' || encoding === 'ascii') {
    flags |= BODY_LATIN1
  } else if (encoding !== undefined && encoding !== 'utf8' && encoding !== 'utf-8') {
    throw errors.invalidArgValue('options.encoding', encoding, buildHttpMessage)
  }
  if (chunked === true) {
    flags |= CHUNKED
  } else if (chunked !== undefined && chunked !== false) {
    throw errors.invalidArgType('options.chunked', 'of type boolean', chunked, buildHttpMessage)
  }
  if (headerEncoding === 'utf8' || headerEncoding === 'utf-8') {
    flags |= HEAD_UTF8
  } else if (headerEncoding !== undefined && headerEncoding !== 'latin1') {
    throw errors.invalidArgValue('options.headerEncoding', headerEncoding, buildHttpMessage)
  }
  return flags
}

function isCookie (name) {
  return name.length === 6 && name.toLowerCase() === 'cookie'
}

function isScalar (value) {
  return typeof value === 'string' || typeof value === 'number'
}

// False for a type validate() refuses.
function pushEntry (flat, name, value) {
  if (typeof name !== 'string') return false
  if (isScalar(value)) {
    flat.push(name, String(value))
    return true
  }
  if (!Array.isArray(value) || !value.every(isScalar)) return false
  // As processHeader().
  if (value.length >= 2 && isCookie(name)) {
    flat.push(name, value.join('; '))
  } else {
    for (let i = 0; i < value.length; i++) flat.push(name, String(value[i]))
  }
  return true
}

// `headers` read once into [name, value, ...] (null: a shape validate()
// refuses): a getter runs once, and what is checked is what is written.
function snapshot (headers) {
  if (headers === undefined || headers === null) return []
  if (Array.isArray(headers)) {
    const n = headers.length
    if (n % 2 !== 0) return null
    const snap = new Array(n)
    for (let i = 0; i < n; i++) snap[i] = headers[i]
    return snap
  }
  if (typeof headers !== 'object') return null
  const keys = Object.keys(headers)
  const snap = new Array(2 * keys.length)
  for (let i = 0; i < keys.length; i++) {
    snap[2 * i] = keys[i]
    snap[2 * i + 1] = headers[keys[i]]
  }
  return snap
}

// One entry per line, or null for a wrong type.
function flatten (snap) {
  let i = 0
  while (i < snap.length && typeof snap[i] === 'string' && isScalar(snap[i + 1])) i += 2
  if (i === snap.length) return snap
  const flat = snap.slice(0, i)
  for (; i < snap.length; i += 2) {
    let value = snap[i + 1]
    if (Array.isArray(value)) {
      // Read once too: validate() checks the copy.
      const items = new Array(value.length)
      for (let j = 0; j < items.length; j++) items[j] = value[j]
      snap[i + 1] = value = items
    }
    if (!pushEntry(flat, snap[i], value)) return null
  }
  return flat
}

// One string into the addon, not one per field: a Node-API string read costs more than it copies.
function joinFields (flat) {
  let fields = ''
  for (let i = 0; i < flat.length; i += 2) fields += flat[i] + '\0' + flat[i + 1] + '\r\n'
  return fields
}

// Moved to the front. NaN never matches: a miss.
function lookup (code, reason, utf8, flat) {
  const n = flat.length
  for (let e = 0; e < cache.length; e++) {
    const entry = cache[e]
    if (entry.code !== code || entry.reason !== reason || entry.utf8 !== utf8) continue
    const key = entry.flat
    if (key.length !== n) continue
    let i = 0
    while (i < n && key[i] === flat[i]) i++
    if (i !== n) continue
    for (; e > 0; e--) cache[e] = cache[e - 1]
    cache[0] = entry
    return entry
  }
  return null
}

function remember (code, reason, utf8, flat, len) {
  const block = Buffer.from(spare, 0, len)
  const entry = { code, reason, utf8, flat, block }
  spare = null
  let e = cache.length
  if (e >= CACHE_SIZE) {
    e = CACHE_SIZE - 1
    spare = cache[e].block.buffer
  }
  for (; e > 0; e--) cache[e] = cache[e - 1]
  cache[0] = entry
  return block
}

function getSpare () {
  if (spare === null) spare = Buffer.allocUnsafeSlow(BLOCK_MAX).buffer
  return spare
}

// A miss with a UTF-8 head; a number where the addon refuses.
function renderUtf8Native (code, reason, flat) {
  const r = fill(joinFields(flat), flat.length >>> 1, code, reason, undefined, HEAD_UTF8, getSpare(), 0)
  if (r === REJECTED) return DETAIL[0]
  return r !== undefined ? r : keep(code, reason, true, flat, DETAIL[0])
}

// The block of `len` bytes in `spare`, cached where admit() lets it.
function keep (code, reason, utf8, flat, len) {
  return admit() ? remember(code, reason, utf8, flat, len) : Buffer.from(spare, 0, len)
}

// A miss with a latin1 head: the whole message in one call (a string body costs less encoded by
// C than by assemble()), then its head cached, whose length is known: "HTTP/1.1 ddd " + reason +
// CRLF, per field one byte more than `name NUL value CR LF`, CRLF. Refs: benchmark/build-message.js
function buildNative (code, reason, flat, body, flags) {
  const phrase = phraseOf(code, reason)
  const fields = joinFields(flat)
  const numHeaders = flat.length >>> 1
  const head = 17 + phrase.length + fields.length + numHeaders
  let size = head
  if (typeof body === 'string') size += body.length
  else if (body !== undefined && body !== null) size += byteLengthOf.call(body)
  const pooled = size <= POOL_MAX
  const off = pooled ? reserve(size) : 0
  // A Buffer of its own where the message does not fit at `off`.
  const r = fill(fields, numHeaders, code, phrase, body, flags, pooled ? slab.ab : null, off)
  if (r === REJECTED) return DETAIL[0]
  const out = r === undefined ? take(off, DETAIL[0]) : r
  if (head <= BLOCK_MAX && head <= out.length && endsHead(out, head) && admit()) {
    const block = Buffer.from(out.buffer, out.byteOffset, head)
    typedArraySet.call(Buffer.from(getSpare()), block)
    remember(code, reason, false, flat, head)
  }
  return out
}

// The computed length is the head's before its bytes are cached.
function endsHead (buf, len) {
  return buf[len - 4] === 13 && buf[len - 3] === 10 && buf[len - 2] === 13 && buf[len - 1] === 10
}

function renderJs (code, reason, utf8, flat) {
  let head = statusLine(code, phraseOf(code, reason))
  for (let i = 0; i < flat.length; i += 2) head += fieldLine(flat[i], flat[i + 1])
  head += LINE_END
  if ((utf8 ? 2 * head.length : head.length) > BLOCK_MAX) return Buffer.from(head, utf8 ? 'utf8' : 'latin1')
  const buf = Buffer.from(getSpare())
  const len = (utf8 ? utf8Write : latin1Write).call(buf, head, 0, BLOCK_MAX)
  return keep(code, reason, utf8, flat, len)
}

// The offset of `len` bytes of room in the slab, handed out by take().
function reserve (len) {
  if (slab.buf === null || len > POOL_SIZE - slab.offset) {
    slab.buf = Buffer.allocUnsafeSlow(POOL_SIZE)
    slab.ab = slab.buf.buffer
    slab.offset = 0
  }
  return slab.offset
}

function take (off, len) {
  // 8-byte aligned, as Node's pool.
  slab.offset = (off + len + 7) & ~7
  return Buffer.from(slab.ab, off, len)
}

// The bytes written, as Buffer.from() encodes `s`.
function writeString (dst, off, s, latin1, max) {
  const n = s.length
  if (n <= SHORT_STRING) {
    let i = 0
    if (latin1) {
      for (; i < n; i++) dst[off + i] = s.charCodeAt(i)
      return n
    }
    for (; i < n; i++) {
      const c = s.charCodeAt(i)
      if (c >= 0x80) break
      dst[off + i] = c
    }
    if (i === n) return n
  }
  return latin1 ? latin1Write.call(dst, s, off, max) : utf8Write.call(dst, s, off, max)
}

// `block` and the body, framed; runs no user code (intrinsics only).
function assemble (block, body, flags) {
  const chunked = (flags & CHUNKED) !== 0
  if (typeof body === 'string') {
    if ((flags & BODY_LATIN1) !== 0) return place(block, body, body.length, chunked, true)
    if (body.length === 0) return place(block, null, 0, chunked, false)
    return assembleUtf8(block, body, chunked) ||
      place(block, body, Buffer.byteLength(body, 'utf8'), chunked, false)
  }
  if (body === undefined || body === null) return place(block, null, 0, chunked, false)
  return place(block, body, byteLengthOf.call(body), chunked, false)
}

// A UTF-8 body written uncounted into the slab's free part: Buffer's writers never write part of
// a char, so a write that left 4 bytes of room (or had 3 per char) wrote it all. Null, nothing
// handed out, where it may not fit.
function assembleUtf8 (block, body, chunked) {
  const head = block.length
  const n = body.length
  // n..3n bytes: the hex has at most one more digit.
  const line = chunked ? n.toString(16).length + 2 : 0
  const tail = chunked ? CHUNK_END.length : 0
  const min = head + line + n + tail
  if (min > POOL_MAX) return null
  const off = reserve(min)
  const pool = slab.buf
  const at = off + head + line
  const max = POOL_SIZE - at - tail - (chunked ? 1 : 0)
  if (max < n) return null
  const written = writeString(pool, at, body, false, max)
  if (written < n || (written > max - 4 && max < 3 * n)) return null
  let end = at + written
  typedArraySet.call(pool, block, off)
  if (chunked) {
    const sizeLine = written.toString(16) + '\r\n'
    if (sizeLine.length !== line) {
      typedArrayCopyWithin.call(pool, at + 1, at, end)
      end++
    }
    writeString(pool, off + head, sizeLine, true, sizeLine.length)
    typedArraySet.call(pool, CHUNK_END, end)
    end += tail
  }
  return take(off, end - off)
}

function place (block, body, len, chunked, latin1) {
  const head = block.length
  const sizeLine = chunked && len !== 0 ? len.toString(16) + '\r\n' : ''
  let total = head + len
  if (chunked) total += len === 0 ? LAST_CHUNK.length : sizeLine.length + CHUNK_END.length
  const pooled = total <= POOL_MAX
  const off = pooled ? reserve(total) : 0
  const dst = pooled ? slab.buf : Buffer.allocUnsafeSlow(total)
  typedArraySet.call(dst, block, off)
  let p = off + head
  if (sizeLine !== '') p += writeString(dst, p, sizeLine, true, sizeLine.length)
  if (typeof body === 'string') {
    p += writeString(dst, p, body, latin1, len)
  } else if (len !== 0) {
    typedArraySet.call(dst, body, p)
    p += len
  }
  if (chunked) typedArraySet.call(dst, len === 0 ? LAST_CHUNK : CHUNK_END, p)
  return pooled ? take(off, total) : dst
}

function validateValue (name, value) {
  if (value === undefined) throw errors.invalidHeaderValue(value, name, buildHttpMessage)
  if (!isScalar(value)) {
    throw errors.invalidArgType(`headers["${name}"]`, 'of type string or number, or an array of those',
      value, buildHttpMessage)
  }
  if (INVALID_HEADER_CHAR.test(String(value))) throw errors.invalidChar('header content', name, buildHttpMessage)
}

// processHeader() with validation on, plus our type rule for values.
function validateEntry (name, value) {
  if (typeof name !== 'string' || name === '' || !TOKEN.test(name)) {
    throw errors.invalidHttpToken(name, buildHttpMessage)
  }
  if (!Array.isArray(value)) {
    validateValue(name, value)
  } else if (value.length >= 2 && isCookie(name)) {
    // Node joins unchecked; our type rule applies to each first.
    for (let i = 0; i < value.length; i++) {
      if (!isScalar(value[i])) validateValue(name, value[i])
    }
    validateValue(name, value.join('; '))
  } else {
    for (let i = 0; i < value.length; i++) validateValue(name, value[i])
  }
}

// Throws Node's first error for writeHead(code, reason, headers), end(body); `snap`: `headers`' values.
function validate (statusCode, code, reason, headers, snap, body) {
  if (code < 100 || code > 999) throw errors.invalidStatusCode(statusCode, buildHttpMessage)
  if (reason !== undefined && reason !== null) {
    if (typeof reason !== 'string') throw errors.invalidArgType('reason', 'of type string', reason, buildHttpMessage)
    if (INVALID_HEADER_CHAR.test(reason)) throw errors.invalidChar('statusMessage', undefined, buildHttpMessage)
  }
  if (snap === null) {
    if (Array.isArray(headers)) throw errors.invalidArgValue('headers', headers, buildHttpMessage)
    throw errors.invalidArgType('headers', 'an array or an object', headers, buildHttpMessage)
  }
  for (let i = 0; i < snap.length; i += 2) validateEntry(snap[i], snap[i + 1])
  if (body !== undefined && body !== null && typeof body !== 'string' && !isUint8Array(body)) {
    throw errors.invalidArgType('body', 'of type string or an instance of Buffer or Uint8Array',
      body, buildHttpMessage)
  }
}

/**
 * One HTTP/1.1 response as one Buffer: the bytes Node sends for `res.writeHead(statusCode, reason,
 * headers)` then `res.end(body)` where `headers` lists every line Node would send (nothing is
 * added). Unlike Node, header values that are objects, booleans, null or symbols are refused
 * (ERR_INVALID_ARG_TYPE), not stringified. Options and types: docs/build-http-message.md, index.d.ts.
 */
function buildHttpMessage (statusCode, reason, headers, body, options) {
  const flags = readOptions(options)
  // ToInt32, as writeHead(): '404' -> 404, 200.9 -> 200.
  const code = statusCode | 0
  // The only reads of `headers`, before anything is looked up or written.
  const snap = snapshot(headers)
  const flat = snap === null ? null : flatten(snap)
  const why = typeof reason === 'string' ? reason : undefined
  const utf8 = (flags & HEAD_UTF8) !== 0
  if (flat !== null &&
      (reason === undefined || reason === null || typeof reason === 'string') &&
      (body === undefined || body === null || typeof body === 'string' || isUint8Array(body))) {
    const entry = lookup(code, why, utf8, flat)
    if (entry !== null) {
      hits++
      streak = 0
      return assemble(entry.block, body, flags)
    }
    misses++
    if (streak < MISS_STREAK) streak++
    if (binding !== null) {
      const out = utf8 ? renderUtf8Native(code, why, flat) : buildNative(code, why, flat, body, flags)
      if (typeof out !== 'number') return utf8 ? assemble(out, body, flags) : out
      // validate() throws Node's error by C's rules (test/build-errors.test.js); else nothing goes out.
      validate(statusCode, code, reason, headers, snap, body)
      throw errors.rejected(out, buildHttpMessage)
    }
  }
  validate(statusCode, code, reason, headers, snap, body)
  return assemble(renderJs(code, why, utf8, flat), body, flags)
}

// For tests: not part of the package's API.
function cacheInfo () {
  let bytes = 0
  for (const entry of cache) bytes += entry.block.length
  return { entries: cache.length, bytes, hits, misses, maxEntries: CACHE_SIZE, maxBlock: BLOCK_MAX }
}

module.exports = { buildHttpMessage, cacheInfo, isNative: binding !== null, loadError }
