'use strict'

// Renders the header block as ServerResponse#writeHead and OutgoingMessage#_storeHeader do, side
// effects included, and keeps the last few in C (binding.cacheSet), keyed on all their bytes depend
// on (stateOf(), the Date's second). Its Content-Length value is a hole each response fills with
// digits C checks: validation is not repeated, never skipped.

const http = require('node:http')
const { isProxy } = require('node:util/types')
const binding = require('./binding.js')
const internals = require('./internals.js')
const { FAST_MAX, observe, isWide, forgetWide } = require('./headers.js')
const { KEY } = require('./codes.js')
const { REASON, INVALID_HEADER_CHAR, isBodylessStatus, valueReason } = require('./rules.js')
const { TOKEN } = require('./header-rules.js')
const { statusLine, fieldLine, fieldStart, LINE_END } = require('./head.js')

// One block of the header-block cache: its key, its C slot and the one memory of its Content-Length.
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
  this.connection = 0 // a user Connection header's lines: KEEPS_ALIVE, CLOSES
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

const { STATUS_CODES } = http
const ObjectPrototype = Object.prototype
// hasOwnProperty.call(obj, key) inside for-in is an enumeration-cache check.
const { hasOwnProperty } = ObjectPrototype

// RE_TE_CHUNKED and RE_CONN_CLOSE, lib/_http_outgoing.js.
const TE_CHUNKED = /(?:^|\W)chunked(?:$|\W)/i
const CONN_CLOSE = /(?:^|\W)close(?:$|\W)/i
// What matchHeader() does per user Connection line besides _removedConnection = false.
const KEEPS_ALIVE = 1 // shouldKeepAlive = true
const CLOSES = 2 // a close token: _last = true

const CONNECTION_CLOSE = fieldLine('Connection', 'close')
const CONNECTION_KEEP_ALIVE = fieldLine('Connection', 'keep-alive')
const CHUNKED_FRAMING = fieldLine('Transfer-Encoding', 'chunked')
const LENGTH_START = fieldStart('Content-Length')

let kOutHeaders, kLenientCache, nodeDate, learned
if (internals !== null) ({ kOutHeaders, kLenientCache, nodeDate, learned } = internals)

// Node's utcDate(), asked again whenever this copy may be stale: Node keeps
// one string per second, reset by a timer (a clock set back included).
let dateValue = ''
let dateExpires = 0
function currentDate () {
  const now = Date.now()
  if (now < dateExpires && now >= dateExpires - 1000) return dateValue
  const value = nodeDate()
  const second = now - (now % 1000)
  if (Date.parse(value) === second) {
    dateValue = value
    dateExpires = second + 1000
  } else {
    dateExpires = 0
  }
  return value
}

// The block being rendered: prefix + value + head past the Content-Length hole.
const tail = { head: '', prefix: null, lines: 0, last: null, cacheable: true, date: '', connection: 0 }

// Digits only (C checks them again), no longer than a safe integer's.
function lengthCacheable (value) {
  if (typeof value === 'number') {
    return value >= 0 && value <= Number.MAX_SAFE_INTEGER && Math.floor(value) === value &&
      !Object.is(value, -0)
  }
  if (typeof value !== 'string') return false
  const n = value.length
  if (n === 0 || n > 16) return false
  for (let i = 0; i < n; i++) {
    const c = value.charCodeAt(i)
    if (c < 48 || c > 57) return false
  }
  return true
}

// _storeHeader()'s state.contLen: without it HTTP/1.0 (no TE: chunked) gets
// Connection: close and a close-delimited body, left to Node.
function userLength (headers) {
  return !!headers && headers['content-length'] !== undefined
}

// The Date and keep-alive lines _storeHeader() appends (none after a user Connection header);
// shouldSendKeepAlive is shouldKeepAlive here (HTTP/1.1, or a user Content-Length). null: _last kept.
function renderTail (res, hasDate) {
  let head = tail.head
  let lines = tail.lines
  let last = null
  tail.date = ''
  if (res.sendDate && !hasDate) {
    tail.date = currentDate()
    head += fieldLine('Date', tail.date)
    lines++
  }
  if (tail.connection !== 0) last = (tail.connection & CLOSES) !== 0 || null
  else if (res._removedConnection) {
    last = !res.shouldKeepAlive
  } else if (res.shouldKeepAlive && res.maxRequestsOnConnectionReached) {
    head += CONNECTION_CLOSE
    lines++
  } else if (res.shouldKeepAlive) {
    head += CONNECTION_KEEP_ALIVE
    lines++
    if (res._keepAliveTimeout && res._defaultKeepAlive) {
      const max = ~~res._maxRequestsPerSocket > 0 ? ', max=' + res._maxRequestsPerSocket : ''
      head += fieldLine('Keep-Alive', 'timeout=' + Math.floor(res._keepAliveTimeout / 1000) + max)
      lines++
    }
  } else {
    last = true
    head += CONNECTION_CLOSE
    lines++
  }
  tail.head = head
  tail.lines = lines
  tail.last = last
}

// One header as processHeader() renders it: cookie and uniqueHeaders arrays join with '; '.
function renderEntry (res, key, name, value, isLength) {
  if (Array.isArray(value)) {
    tail.cacheable = false
    if (key === null) key = name.toLowerCase()
    // A response without the symbol reads undefined, as Node's does.
    const unique = learned.kUniqueHeaders === null ? undefined : res[learned.kUniqueHeaders]
    if ((value.length < 2 || key !== 'cookie') && (!unique || !unique.has(key))) {
      let head = tail.head
      for (let i = 0; i < value.length; i++) head += fieldLine(name, value[i])
      if (key === 'connection') value.forEach(userConnection)
      tail.head = head
      tail.lines += value.length
      return
    }
    value = value.join('; ')
  } else if (Number.isNaN(value)) {
    tail.cacheable = false // NaN never equals itself: no key could match
  }
  if (name.length === 10 && (key ?? name.toLowerCase()) === 'connection') userConnection(value)
  if (isLength && tail.prefix === null && lengthCacheable(value)) {
    tail.prefix = tail.head + fieldStart(name)
    tail.head = LINE_END
  } else {
    if (isLength) tail.cacheable = false
    tail.head += fieldLine(name, value)
  }
  tail.lines++
}

function userConnection (value) {
  tail.connection |= CONN_CLOSE.test(value) ? CLOSES : KEEPS_ALIVE
}

const entries = []
for (let i = 0; i < KEY.SLOT_COUNT; i++) {
  const e = new Entry()
  e.slot = i
  entries.push(e)
}
// A block C rejected, or with a value not to key on: no slot.
const uncached = new Entry()
// Round robin: up to SLOT_COUNT alternating blocks never evict each other.
let nextSlot = 0

const names = []
const values = []
const keys = []

// _hasBody: a HEAD block has no Content-Length, never a GET's.
function stateOf (res) {
  return (res.sendDate ? 1 : 0) | (res._removedConnection ? 2 : 0) |
    (res.shouldKeepAlive ? 4 : 0) | (res.maxRequestsOnConnectionReached ? 8 : 0) |
    (res._defaultKeepAlive ? 16 : 0) | (res._hasBody ? 0 : 32)
}

// n -1: at least `upTo` names. Content-Length is matched by shape only.
function matches (e, code, message, n, upTo) {
  if (e.code !== code || (n >= 0 ? e.n !== n : e.n < upTo) || e.message !== message) return false
  const en = e.names
  const count = n >= 0 ? n : upTo
  for (let i = 0; i < count; i++) if (en[i] !== names[i]) return false
  const ev = e.values
  for (let i = 0; i < upTo; i++) {
    if (i === e.lengthAt
      ? values[i] !== e.lastValue && !lengthCacheable(values[i])
      : ev[i] !== values[i]) {
      return false
    }
  }
  return true
}

function stateMatches (e, res, state) {
  return e.state === state && e.keepAliveTimeout === res._keepAliveTimeout &&
    e.maxRequests === res._maxRequestsPerSocket &&
    ((state & 1) === 0 || e.hasDate || e.date === currentDate())
}

// findEntry()'s `shape`: FRESH (end(), never chunked) or WRITE_HEAD, with
// CHUNKABLE chunked framing or APPENDABLE a length set by hand (handLength()).
const FRESH = 0
const CHUNKABLE = 1
const APPENDABLE = 2
const WRITE_HEAD = 4

function findEntry (code, message, n, upTo, shape) {
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i]
    if (e.slot !== -1 && e.lines !== 0 &&
        (shape !== FRESH ? e.lengthAt >= 0 || (shape & (e.chunked ? CHUNKABLE : APPENDABLE)) !== 0 : !e.chunked) &&
        matches(e, code, message, n, upTo)) {
      return e
    }
  }
  return null
}

// A block C rejects is sent uncached: C rejects it again, Node's end() runs.
function store (res, miss) {
  const { code, message, n, lengthAt, chunked } = miss
  if (!tail.cacheable || (tail.prefix === null) !== chunked) return null
  const e = entries[nextSlot]
  nextSlot = (nextSlot + 1) % KEY.SLOT_COUNT
  e.lines = 0 // empty while C holds no block for it
  e.keyed = false
  if (lastFresh === e) lastFresh = null
  if (lastStored === e) lastStored = null
  const suffix = tail.head + LINE_END
  if (binding.cacheSet(e.slot, tail.prefix, suffix, tail.lines) !== undefined) return null
  e.code = code
  e.message = message
  e.n = n
  for (let i = 0; i < n; i++) {
    e.names[i] = names[i]
    e.values[i] = i === lengthAt ? undefined : values[i]
  }
  e.names.length = n
  e.values.length = n
  e.teAt = miss.teAt
  e.state = stateOf(res)
  e.keepAliveTimeout = res._keepAliveTimeout
  e.maxRequests = res._maxRequestsPerSocket
  e.hasDate = miss.hasDate
  e.date = tail.date
  return setRendered(e, miss, suffix, tail.last)
}

function setRendered (e, miss, suffix, last) {
  e.setBlock(tail.prefix, suffix)
  e.lengthAt = miss.lengthAt
  e.chunked = miss.chunked
  e.last = last
  e.connection = tail.connection
  e.lines = tail.lines
  return e
}

// What writeHead() and _storeHeader() leave on `res`.
function applyBlock (res, code, message, ownMessage, block, value) {
  block.fill(value)
  if (ownMessage || !res.statusMessage) res.statusMessage = message
  res.statusCode = code
  // isBodylessStatus(), written out (docs/architecture.md, "The inlining budget").
  if (code === 204 || code === 304 || (code >= 100 && code <= 199)) res._hasBody = false
  if (block.lengthAt !== -1) {
    res._contentLength = +block.lastValue
    res._removedContLen = false
  }
  if (block.chunked) res.chunkedEncoding = true
  const last = block.last
  if (last !== null) res._last = last
  if (block.connection !== 0) res._removedConnection = false
  if ((block.connection & KEEPS_ALIVE) !== 0) res.shouldKeepAlive = true
  res._header = block.lastHead
  res._headerSent = false
  // 26.12+ keeps _isLenientHeaderValidation()'s answer once a block is
  // rendered. (C validates strictly: where Node is lenient, Node's end() runs.)
  if (kLenientCache !== null && res[kLenientCache] === null) res._isLenientHeaderValidation()
}

// Found by its _header, not the response: docs/architecture.md, "The block writeHead() hands to end()".
let handed = null

/**
 * @param {http.ServerResponse} res
 * @returns {Entry|null} handed while `res._header` is its block
 */
function blockOf (res) {
  return handed !== null && handed.lastHead === res._header ? handed : null
}

/**
 * blockOf(res) for end(), which takes it.
 * @param {http.ServerResponse} res
 * @returns {Entry|null}
 */
function takeBlock (res) {
  const block = blockOf(res)
  if (block !== null) handed = null
  return block
}

function applyRendered (res, miss, value, entry) {
  const block = entry ?? setRendered(uncached, miss, tail.head + LINE_END, tail.last)
  applyBlock(res, miss.code, miss.message, miss.ownMessage, block, value)
  return block
}

function clearScratch (n) {
  for (let i = 0; i < n; i++) values[i] = undefined
  tail.head = ''
  tail.prefix = null
}

/**
 * Renders as writeHead(statusCode) and _storeHeader() do for a fresh
 * response, or, having changed nothing, answers RENDER_BY_NODE or another reason.
 * @param {number} length the body's byte length
 * @returns {Entry|string}
 */
function renderFresh (res, length) {
  const headers = res[kOutHeaders]
  if (res.useChunkedEncodingByDefault !== true && !userLength(headers)) return REASON.RENDER_BY_NODE
  const code = res.statusCode | 0
  let message = res.statusMessage
  if (!message) message = STATUS_CODES[code] || 'unknown'
  let n = 0
  let lengthAt = -1
  let hasDate = false
  if (headers) {
    const c = lastFresh
    if (c !== null && c.code === code && c.message === message &&
        storeAgain(res, c, headers, length, false)) {
      observe(c.n, headers)
      return c
    }
    n = collectStored(headers)
    lengthAt = found.lengthAt
    hasDate = found.hasDate
    observe(n, headers)
  }
  const e = findEntry(code, message, n, n, FRESH)
  if (e !== null && stateMatches(e, res, stateOf(res))) {
    const value = lengthAt === -1 ? length : values[lengthAt]
    clearScratch(n)
    if (e.keyed) lastFresh = e
    applyBlock(res, code, message, false, e, value)
    return e
  }
  const miss = {
    code, message, ownMessage: false, n, lengthAt, hasDate, chunked: false, teAt: -1, shape: FRESH, keyed: true
  }
  return renderMiss(res, miss, length)
}

// Most responses repeat the one before: matched without copying the store.
let lastFresh = null
let lastStored = null

function keep (e, n) {
  for (let i = 0; i < n; i++) e.keys[i] = keys[i]
  e.keys.length = n
  e.keyed = true
}

const again = { value: 0 }

function sameHeader (c, i, key, entry) {
  if (key !== c.keys[i] || entry[0] !== c.names[i]) return false
  const v = entry[1]
  if (i !== c.lengthAt) return v === c.values[i]
  if (v !== c.lastValue && !lengthCacheable(v)) return false
  again.value = v
  return true
}

// A fast-mode store (FAST_MAX, a WideStore) is walked with for-in, read through the enumeration
// cache (a keyed load went megamorphic); a larger one is a dictionary, listed faster by
// Object.keys(). Refs: benchmark/instructions.js (express3, headers20), benchmark/RESULTS.md
function sameStore (c, headers, value) {
  const n = c.n
  let i = 0
  again.value = value
  if (n <= FAST_MAX || isWide(headers)) {
    for (const key in headers) {
      if (i === n || !sameHeader(c, i, key, headers[key])) return false
      i++
    }
    return i === n
  }
  const stored = Object.keys(headers)
  if (stored.length !== n) return false
  for (; i < n; i++) {
    const key = stored[i]
    if (!sameHeader(c, i, key, headers[key])) return false
  }
  return true
}

function storeAgain (res, c, headers, length, ownMessage) {
  if (!sameStore(c, headers, length) || !stateMatches(c, res, stateOf(res))) return false
  applyBlock(res, c.code, c.message, ownMessage, c, c.chunked ? undefined : again.value)
  return true
}

function renderStored (res, n, lengthAt) {
  let byNode = false
  for (let i = 0; i < n; i++) {
    const name = names[i]
    const value = values[i]
    const type = typeof value
    const key = keys[i]
    if (type !== 'string' && type !== 'number') {
      // setHeader() validated it, but an array can change since.
      const reason = valueReason(key, value)
      if (reason !== null) return reason
    }
    switch (key) {
      case 'content-length':
        if (type !== 'string' && type !== 'number') byNode = true
        break
      case 'content-disposition':
        if (type === 'number') return REASON.HEADER_VALUE
        byNode = true
        break
      case 'keep-alive':
        byNode = true
        break
    }
    if (!byNode) renderEntry(res, key, name, value, i === lengthAt)
  }
  return byNode ? REASON.RENDER_BY_NODE : null
}

const found = { lengthAt: -1, hasDate: false }
function collectStored (headers) {
  const stored = Object.keys(headers)
  const n = stored.length
  found.lengthAt = -1
  found.hasDate = false
  for (let i = 0; i < n; i++) {
    const key = stored[i]
    const entry = headers[key]
    names[i] = entry[0]
    keys[i] = key
    values[i] = entry[1]
    if (key.length >= 4 && key.length <= 19) {
      switch (key) {
        case 'content-length': found.lengthAt = i; break
        case 'date': found.hasDate = true; break
      }
    }
  }
  return n
}

// Node's writeHead() arguments once walkHeaders() stopped reading: values read as data, getters
// for the rest (`pending`'s throws `error` again), so each is read once. Values are assigned: a
// descriptor per key gives V8 a new map per property and response (benchmark/RESULTS.md, "a
// header only Node renders"); a key Object.prototype has (`__proto__`) would not become own so.
function handOver (obj, reason, read, count, pending, error) {
  const copy = {}
  const define = (key, desc) => Object.defineProperty(copy, key, {
    ...desc, enumerable: true, configurable: true
  })
  for (let i = 0; i < read; i++) {
    const key = names[i]
    if (hasOwnProperty.call(ObjectPrototype, key)) define(key, { value: values[i], writable: true })
    else copy[key] = values[i]
  }
  const rest = names.slice(read, count)
  clearScratch(count)
  for (let i = 0; i < rest.length; i++) {
    const key = rest[i]
    if (pending !== null && key === pending) {
      define(key, { get () { throw error } })
      continue
    }
    define(key, {
      get () {
        const value = obj[key]
        for (let j = i + 1; j < rest.length; j++) {
          if (!hasOwnProperty.call(obj, rest[j])) delete copy[rest[j]]
        }
        return value
      }
    })
  }
  return typeof reason === 'string' ? [reason, copy] : [copy, undefined]
}

function arrayRenderable (value) {
  for (let i = 0; i < value.length; i++) {
    const item = value[i]
    if (typeof item === 'string') {
      if (INVALID_HEADER_CHAR.test(item)) return false
    } else if (typeof item !== 'number') {
      return false
    }
  }
  return true
}

// The lowercase name where _storeHeader() treats it apart, else ''; the lengths are theirs.
// A switch, not a Set: a Set hashes (and V8 internalizes) each lowercased name
// (benchmark/RESULTS.md, "The switch in specialName()").
function specialName (key) {
  const length = key.length
  if (length !== 4 && length !== 6 && length !== 7 && length !== 10 && length !== 14 &&
      length !== 17 && length !== 19) {
    return ''
  }
  const lower = key.toLowerCase()
  switch (lower) {
    case 'content-length':
    case 'date':
    case 'connection':
    case 'keep-alive':
    case 'transfer-encoding':
    case 'trailer':
    case 'expect':
    case 'content-disposition':
      return lower
  }
  return ''
}

function nodeOnly (special) {
  return special !== '' && special !== 'content-length' && special !== 'transfer-encoding' &&
    special !== 'date' && special !== 'connection'
}

// From the keys alone: no read, no copy (benchmark/instructions.js fallbacknode).
function someKey (obj, test) {
  if (obj === undefined) return false
  const own = Object.keys(obj)
  for (let i = 0; i < own.length; i++) if (test(own[i])) return true
  return false
}

const nodeOnlyKey = key => nodeOnly(specialName(key))
// Without a key of Content-Length's length an unchunkable response is Node's.
const lengthLikeKey = key => key.length === 14

// The headers read so far: the entry holding them all (or null), the last that did, and whether
// they were checked (else they are its).
const scan = { lengthAt: -1, teAt: -1, entry: null, last: null, checked: false }

function startScan (first) {
  scan.entry = first
  scan.last = first
  scan.checked = first === null
  scan.lengthAt = -1
  scan.teAt = -1
}

function framingOfLast (n) {
  scan.lengthAt = scan.last.lengthAt < n ? scan.last.lengthAt : -1
  scan.teAt = scan.last.teAt < n ? scan.last.teAt : -1
}

// _storeHeader()'s checks on header `i`. False: Node renders (and may throw) from this header on.
function headerRenderable (i, key, value, chunkable) {
  const special = specialName(key)
  if (nodeOnly(special)) return false
  if (!TOKEN.test(key)) return false
  if (special === 'content-length') {
    // Two spellings: Node keeps the last value.
    if (scan.lengthAt !== -1 || scan.teAt !== -1) return false
    scan.lengthAt = i
  } else if (special === 'transfer-encoding') {
    if (!chunkable || scan.teAt !== -1 || scan.lengthAt !== -1 || typeof value !== 'string' ||
        !TE_CHUNKED.test(value)) {
      return false
    }
    scan.teAt = i
  }
  const type = typeof value
  if (type === 'string') return !INVALID_HEADER_CHAR.test(value)
  if (type === 'number') return true
  // Arrays render one line per value; not as Content-Length.
  return Array.isArray(value) && arrayRenderable(value) && i !== scan.lengthAt
}

// A getter calling writeHead() while the scratch arrays are in use gets Node's.
let walking = false

/**
 * writeHead(statusCode[, reason][, obj]) on a response without stored headers.
 * @returns {true|false|Array} true when rendered, else false or the
 *   arguments for Node's writeHead()
 */
function fastWriteHead (res, statusCode, reason, obj) {
  if (walking) return false
  walking = true
  try {
    const headers = typeof reason === 'string' ? obj : obj ?? reason
    return Array.isArray(headers)
      ? writeHeadArray(res, statusCode, reason, headers)
      : writeHeadObject(res, statusCode, reason, headers)
  } finally {
    walking = false
  }
}

// A body-carrying status (on any method: the user's Content-Length frames it, so a HEAD block is
// a GET block) and a plain object of string, number or array values, with Content-Length or chunked.
function writeHeadObject (res, statusCode, reason, obj) {
  const message = res[kOutHeaders] === null ? reasonPhrase(res, statusCode, reason) : null
  if (message === null ||
      (obj !== undefined && (obj === null || typeof obj !== 'object' || isProxy(obj)))) {
    return false
  }
  const code = statusCode | 0
  const shape = framingOf(res, code)
  if (shape === WRITE_HEAD && !someKey(obj, lengthLikeKey)) return false
  return walkHeaders(res, code, message, reason, obj, shape)
}

function framingOf (res, code) {
  const chunkable = code !== 204 && code !== 304 && res._hasBody === true &&
    res._removedTE === false && typeof res._contentLength !== 'number' &&
    res.useChunkedEncodingByDefault === true
  return WRITE_HEAD | (chunkable ? CHUNKABLE : 0) | (handLength(res, code) ? APPENDABLE : 0)
}

// One pass in _storeHeader()'s order (for-in, as Node's: a Proxy on the chain sees the same), each
// value read once: headers equal to a cached entry's were checked when it was stored; from the
// first that differs each is checked before the next is read, as Node throws at the first bad one.
// names[]/values[] wait while they are the first entry's (`copied`). One function:
// docs/architecture.md, "The inlining budget".
function walkHeaders (res, code, message, reason, obj, shape) {
  let e = findEntry(code, message, -1, 0, shape)
  if (e === null && (INVALID_HEADER_CHAR.test(message) || someKey(obj, nodeOnlyKey))) return false
  let i = 0
  startScan(e)
  let read = -1
  let pending = null
  let error
  let copied = e === null
  let lengthValue
  for (const key in obj) {
    if (!hasOwnProperty.call(obj, key)) continue
    if (read !== -1) {
      names[i] = key
      i++
      continue
    }
    let value
    try {
      value = obj[key]
    } catch (err) {
      if (!copied) copied = copyEntry(e, i, lengthValue)
      names[i] = key
      read = i++
      pending = key
      error = err
      continue
    }
    if (!copied) {
      if (entryHas(e, i, key, value)) {
        if (i === e.lengthAt) lengthValue = value
        i++
        continue
      }
      copied = copyEntry(e, i, lengthValue)
    }
    names[i] = key
    values[i] = value
    if (!laterHeader(i, key, value, code, message, shape)) read = i + 1
    i++
  }
  const n = i
  if (read !== -1) return handOver(obj, reason, read, n, pending, error)
  if (copied) e = scan.entry
  if (e !== null && e.n !== n) {
    if (!copied) copied = copyEntry(e, n, lengthValue)
    e = findEntry(code, message, n, n, shape)
  }
  if (e === null && !missFramed(n, shape)) return handOver(obj, reason, n, n, null)
  const lengthAt = e !== null ? e.lengthAt : scan.lengthAt
  const chunked = lengthAt === -1 && (shape & APPENDABLE) === 0
  if (e !== null && stateMatches(e, res, stateOf(res))) {
    let value = lengthAt === -1 ? undefined : copied ? values[lengthAt] : lengthValue
    if (copied) clearScratch(n)
    if (!chunked && lengthAt === -1) value = res._contentLength
    applyBlock(res, code, message, typeof reason === 'string', e, value)
    handed = e
    return true
  }
  if (!copied) copyEntry(e, n, lengthValue)
  const ownMessage = typeof reason === 'string'
  const teAt = e !== null ? e.teAt : scan.teAt
  const miss = { code, message, ownMessage, n, lengthAt, hasDate: false, chunked, teAt, shape, keyed: false }
  renderMiss(res, miss, res._contentLength)
  return true
}

// Whether header `i` of `e` is `key: value`, its Content-Length matched by shape.
function entryHas (e, i, key, value) {
  return i < e.n && e.names[i] === key &&
    (i === e.lengthAt ? value === e.lastValue || lengthCacheable(value) : e.values[i] === value)
}

// Header `i` after the first entry's: matched, else checked.
function laterHeader (i, key, value, code, message, shape) {
  let e = scan.entry
  if (e !== null) {
    if (entryHas(e, i, key, value)) return true
    e = scan.entry = findEntry(code, message, -1, i + 1, shape)
    if (e !== null) {
      scan.last = e
      return true
    }
  }
  if (!scan.checked) {
    scan.checked = true
    framingOfLast(i)
  }
  return headerRenderable(i, key, value, (shape & CHUNKABLE) !== 0)
}

// False where Node would neither chunk nor append a Content-Length.
function missFramed (n, shape) {
  if (!scan.checked) framingOfLast(n)
  return scan.lengthAt !== -1 || shape !== WRITE_HEAD
}

// A length set by hand before writeHead() (@hono/node-server), which _storeHeader() appends.
function handLength (res, code) {
  return code !== 204 && code !== 304 && res._hasBody === true && res._removedContLen === false &&
    res.useChunkedEncodingByDefault === true && typeof res._contentLength === 'number' &&
    lengthCacheable(res._contentLength)
}

function copyEntry (e, upTo, lengthValue) {
  const en = e.names
  const ev = e.values
  for (let j = 0; j < upTo; j++) {
    names[j] = en[j]
    values[j] = j === e.lengthAt ? lengthValue : ev[j]
  }
  return true
}

// The reason phrase, or null. A status object's ToInt32 would run user code
// twice; Keep-Alive's max renders alike on all lines only as an int32.
function reasonPhrase (res, statusCode, reason) {
  if ((typeof statusCode !== 'number' && typeof statusCode !== 'string') || res._header ||
      res.chunkedEncoding || typeof res.useChunkedEncodingByDefault !== 'boolean' ||
      typeof res._hasBody !== 'boolean' || (res._expect_continue && !res._sent100)) {
    return null
  }
  const code = statusCode | 0
  const max = res._maxRequestsPerSocket
  if (code < 200 || code > 999 || (typeof max === 'number' && max !== (max | 0))) return null
  const message = typeof reason === 'string' ? reason : res.statusMessage || STATUS_CODES[code] || 'unknown'
  return typeof message === 'string' ? message : null
}

// Transfer-Encoding, Trailer or Expect stored: Node frames the body (or expects one).
function framedByNode (headers) {
  return headers['transfer-encoding'] !== undefined || headers.trailer !== undefined ||
    headers.expect !== undefined
}

// Not kept as the last WideStore (test/retention.test.js).
function byNode () {
  forgetWide()
  return false
}

/**
 * writeHead(statusCode[, reason]) on a response with stored headers.
 * @returns {boolean} true when rendered
 */
function storedWriteHead (res, statusCode, reason, obj) {
  const message = obj === undefined && (reason === undefined || typeof reason === 'string')
    ? reasonPhrase(res, statusCode, reason)
    : null
  const headers = res[kOutHeaders]
  if (message === null || !headers || typeof headers !== 'object') return byNode()
  const code = statusCode | 0
  if (typeof res._contentLength === 'number' && reason === undefined && !userLength(headers)) {
    return lengthWriteHead(res, statusCode, message, headers)
  }
  return writeHeadStored(res, code, message, typeof reason === 'string', headers)
}

// end()'s implicit header through a writeHead wrapper, or a length set by
// hand: renderFresh() after lib/decide.js freshReason()'s checks.
function lengthWriteHead (res, statusCode, message, headers) {
  if (statusCode !== res.statusCode || res._removedContLen !== false || INVALID_HEADER_CHAR.test(message) ||
      framedByNode(headers)) {
    return byNode()
  }
  const block = renderFresh(res, res._contentLength)
  if (typeof block === 'string') return byNode()
  handed = block
  return true
}

function writeHeadStored (res, code, message, ownMessage, headers) {
  const bodyless = isBodylessStatus(code) || res._hasBody !== true
  const byDefault = res.useChunkedEncodingByDefault === true
  const chunkable = byDefault && !bodyless && res._removedTE === false &&
    typeof res._contentLength !== 'number'
  const c = lastStored
  if (c !== null && c.code === code && c.message === message &&
      (c.lengthAt >= 0 || (chunkable && c.chunked)) && storeAgain(res, c, headers, undefined, ownMessage)) {
    handed = c
    observe(c.n, headers)
    return true
  }
  if (framedByNode(headers)) return byNode()
  if ((!bodyless || !byDefault) && !chunkable && !userLength(headers)) return byNode()
  const n = collectStored(headers)
  const lengthAt = found.lengthAt
  observe(n, headers)
  const shape = chunkable ? WRITE_HEAD | CHUNKABLE : WRITE_HEAD
  const e = findEntry(code, message, n, n, shape)
  if (e !== null && stateMatches(e, res, stateOf(res))) {
    const value = e.chunked ? undefined : values[lengthAt]
    if (!e.keyed) keep(e, n)
    lastStored = e
    clearScratch(n)
    applyBlock(res, code, message, ownMessage, e, value)
    handed = e
    return true
  }
  if (e === null && INVALID_HEADER_CHAR.test(message)) {
    clearScratch(n)
    return false
  }
  const chunked = lengthAt === -1 && chunkable
  const miss = {
    code, message, ownMessage, n, lengthAt, hasDate: found.hasDate, chunked, teAt: -1, shape, keyed: true
  }
  return typeof renderMiss(res, miss, undefined) !== 'string'
}

// The block for headers no entry holds: a store's (`keyed`), checked here, or those
// walkHeaders() and readPairs() checked.
function renderMiss (res, miss, length) {
  const { code, n, lengthAt, chunked } = miss
  tail.head = statusLine(code, miss.message)
  tail.prefix = null
  tail.lines = 0
  tail.cacheable = true
  tail.connection = 0
  if (miss.keyed) {
    const byNode = renderStored(res, n, lengthAt)
    if (byNode !== null) {
      clearScratch(n)
      return byNode
    }
  } else {
    for (let i = 0; i < n; i++) {
      const key = names[i]
      if (key.length === 4 && key.toLowerCase() === 'date') miss.hasDate = true
      renderEntry(res, null, key, values[i], i === lengthAt)
    }
  }
  renderTail(res, miss.hasDate)
  // No hole without a body (HEAD, 204, 304); freshReason() and handLength() excluded a removed one.
  if (chunked) {
    if (miss.teAt === -1) {
      tail.head += CHUNKED_FRAMING
      tail.lines++
    }
  } else if (lengthAt === -1 && res._hasBody && !isBodylessStatus(code)) {
    tail.prefix = tail.head + LENGTH_START
    tail.head = LINE_END
    tail.lines++
  }
  const e = store(res, miss)
  if (e !== null && miss.keyed) {
    keep(e, n)
    if (miss.shape === FRESH) lastFresh = e
    else lastStored = e
  }
  const value = lengthAt !== -1 ? values[lengthAt] : chunked ? undefined : length
  const block = applyRendered(res, miss, value, e)
  clearScratch(n)
  if (miss.shape !== FRESH) handed = block
  return block
}

// writeHead() with flat `[name, value, ...]` or nested `[[name, value]]` pairs (srvx, h3), rendered
// as _storeHeader() renders an object's entries, duplicates kept. A refusal leaves Node's
// writeHead() to read the elements again. Refs: test/array-headers.test.js
function writeHeadArray (res, statusCode, reason, headers) {
  if (res[kOutHeaders] !== null || isProxy(headers)) return false
  const message = reasonPhrase(res, statusCode, reason)
  if (message === null) return false
  const code = statusCode | 0
  const shape = framingOf(res, code)
  const first = findEntry(code, message, -1, 0, shape)
  if (first === null && INVALID_HEADER_CHAR.test(message)) return false
  const nested = headers.length !== 0 && Array.isArray(headers[0])
  if (!nested && headers.length % 2 !== 0) return false
  const n = readPairs(headers, nested, code, message, first, shape)
  if (n === -1) return false
  let e = scan.entry
  if (e !== null && e.n !== n) e = findEntry(code, message, n, n, shape)
  if (e === null && !missFramed(n, shape)) {
    clearScratch(n)
    return false
  }
  const lengthAt = e !== null ? e.lengthAt : scan.lengthAt
  const chunked = lengthAt === -1 && (shape & APPENDABLE) === 0
  const ownMessage = typeof reason === 'string'
  if (e !== null && stateMatches(e, res, stateOf(res))) {
    const value = lengthAt !== -1 ? values[lengthAt] : chunked ? undefined : res._contentLength
    clearScratch(n)
    applyBlock(res, code, message, ownMessage, e, value)
    handed = e
    return true
  }
  const teAt = e !== null ? e.teAt : scan.teAt
  const miss = { code, message, ownMessage, n, lengthAt, hasDate: false, chunked, teAt, shape, keyed: false }
  renderMiss(res, miss, res._contentLength)
  return true
}

// The pairs into names[]/values[] (`headers.length` read each time, as _storeHeader()); -1: Node's.
function readPairs (headers, nested, code, message, first, shape) {
  startScan(first)
  let i = 0
  for (let k = 0; k < headers.length; k += nested ? 1 : 2) {
    let key, value
    if (nested) {
      const entry = headers[k]
      if (!Array.isArray(entry)) return giveUp(i)
      key = entry[0]
      value = entry[1]
    } else {
      key = headers[k]
      value = headers[k + 1]
    }
    names[i] = key
    values[i] = value
    if (typeof key !== 'string' || !laterHeader(i, key, value, code, message, shape)) return giveUp(i + 1)
    i++
  }
  return i
}

function giveUp (count) {
  clearScratch(count)
  return -1
}

module.exports = {
  Entry,
  renderFresh,
  fastWriteHead,
  storedWriteHead,
  blockOf,
  takeBlock
}
