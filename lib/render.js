'use strict'

// Header rendering and the header-block cache. Renders the block exactly as
// ServerResponse#writeHead and OutgoingMessage#_storeHeader (Node v20) do,
// with every side effect on the response, and remembers the last few blocks
// in C (binding.cacheSet) so that a response equal to an earlier one reuses
// its checked bytes: no string building, no regular expressions and no
// string flattening per response.
//
// A cached block is keyed on everything its bytes depend on:
// - the status code and the reason phrase (===);
// - every header name and value, in order (=== on strings, by value on
//   numbers; arrays and other objects are never cached);
// - the response fields behind the automatic lines (sendDate,
//   _removedConnection, shouldKeepAlive, maxRequestsOnConnectionReached,
//   _defaultKeepAlive, _keepAliveTimeout, _maxRequestsPerSocket, and
//   _hasBody, false for HEAD: no Content-Length line) and the Date value of
//   the current second.
// The Content-Length value is not part of the key: it is a hole in the block
// (the digit '0' in C) that each response fills with its own digits, which
// C checks. A value equal to a cached one was checked when the block was
// stored, so validation is never skipped, only not repeated. A block that
// writeHead() renders without Content-Length frames the body as chunked:
// it has no hole, and C puts the chunk and the last chunk after it.

const http = require('node:http')
const util = require('node:util')
const binding = require('./binding.js')
const internals = require('./internals.js')
const { FAST_MAX, observe, isWide, forgetWide } = require('./headers.js')
const { KEY } = require('./codes.js')
const {
  FALLBACK, INVALID_HEADER_CHAR, isBodylessStatus, valueReason
} = require('./rules.js')
const { TOKEN } = require('./header-rules.js')
const { statusLine, fieldLine, fieldStart, LINE_END } = require('./head.js')
const { Entry } = require('./cache-entry.js')

const { STATUS_CODES } = http
const { isProxy } = util.types
const ObjectPrototype = Object.prototype
// Called as hasOwnProperty.call(obj, key) inside for-in: V8 turns that
// shape into an enumeration-cache check instead of a call.
const { hasOwnProperty } = ObjectPrototype

// The Transfer-Encoding values after which Node frames the body as chunked
// (RE_TE_CHUNKED, lib/_http_outgoing.js).
const TE_CHUNKED = /(?:^|\W)chunked(?:$|\W)/i

// The automatic lines whose text never changes.
const CONNECTION_CLOSE = fieldLine('Connection', 'close')
const CONNECTION_KEEP_ALIVE = fieldLine('Connection', 'keep-alive')
const CHUNKED_FRAMING = fieldLine('Transfer-Encoding', 'chunked')
const LENGTH_START = fieldStart('Content-Length')

let kOutHeaders, kLenientCache, nodeDate, learned
if (internals !== null) ({ kOutHeaders, kLenientCache, nodeDate, learned } = internals)

const CACHE_SIZE = KEY.SLOT_COUNT

// Node's utcDate() value, asked of Node whenever this copy may be stale:
// Node caches one string per second, so a copy taken while the clock is
// still in that second is what Node would render until the second ends.
// A clock set back leaves that second too: Node's cache, reset by a timer,
// then renders the earlier time, and so must this.
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

// The block being rendered. `prefix` is set when the Content-Length line's
// value was reached: the block is then prefix + value + head. `lines` counts
// header lines; `cacheable` turns false for any value the cache must not
// key on.
const tail = { head: '', prefix: null, lines: 0, last: false, cacheable: true, date: '' }

function resetTail (statusLine) {
  tail.head = statusLine
  tail.prefix = null
  tail.lines = 0
  tail.cacheable = true
}

// The shape of a Content-Length value the cache holds a hole for: digits
// only, as C checks them again, no longer than a safe integer's.
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

/**
 * Whether every Node line renders this maxRequestsPerSocket alike in
 * Keep-Alive (20 to 26.10 write the number, 26.12+ its ToInt32): an int32.
 * @param {*} max res._maxRequestsPerSocket
 * @returns {boolean}
 */
function keepAliveMaxRenderable (max) {
  return typeof max !== 'number' || max === (max | 0)
}

/**
 * Whether a header store holds a user Content-Length, which _storeHeader()
 * reads as state.contLen. Where useChunkedEncodingByDefault is false (an
 * HTTP/1.0 request without TE: chunked) it renders a response as for
 * HTTP/1.1 only then: shouldSendKeepAlive is shouldKeepAlive once contLen
 * is set, and the body is framed by that length; without one Node sends
 * Connection: close and a close-delimited body, left to its renderer.
 * @param {object|null} headers res[kOutHeaders]
 * @returns {boolean}
 */
function userLength (headers) {
  return !!headers && headers['content-length'] !== undefined
}

// The automatic lines _storeHeader() appends after the user's headers on a
// response (with a body or not) with no user Connection, Keep-Alive,
// Transfer-Encoding or Trailer header: Date, then the keep-alive block.
// shouldSendKeepAlive is shouldKeepAlive itself: useChunkedEncodingByDefault
// is true (HTTP/1.1), or the user's headers hold Content-Length
// (userLength(); HTTP/1.0 otherwise is Node's to render). `tail.head` and
// `tail.lines` grow; `tail.last` is the value _last takes. Nothing on `res`
// changes here.
function renderTail (res, hasDate) {
  let head = tail.head
  let lines = tail.lines
  let last = res._last
  tail.date = ''
  if (res.sendDate && !hasDate) {
    tail.date = currentDate()
    head += fieldLine('Date', tail.date)
    lines++
  }
  if (res._removedConnection) {
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

// Renders one header entry as processHeader()/storeHeader() do (`key` is
// the lowercase name, or null to compute it when needed; arrays expand to
// one line each, except cookie and uniqueHeaders, joined with '; '). The
// Content-Length entry (`isLength`) becomes the hole of a cacheable block.
function renderEntry (res, key, name, value, isLength) {
  if (Array.isArray(value)) {
    tail.cacheable = false
    if (key === null) key = name.toLowerCase()
    // Learnt from the first server response (lib/internals.js): a response
    // without the symbol reads undefined, as Node does.
    const unique = learned.kUniqueHeaders === null ? undefined : res[learned.kUniqueHeaders]
    if ((value.length < 2 || key !== 'cookie') && (!unique || !unique.has(key))) {
      let head = tail.head
      for (let i = 0; i < value.length; i++) head += fieldLine(name, value[i])
      tail.head = head
      tail.lines += value.length
      return
    }
    value = value.join('; ')
  } else if (Number.isNaN(value)) {
    tail.cacheable = false // NaN never equals itself: no key could match
  }
  if (isLength && tail.prefix === null && lengthCacheable(value)) {
    tail.prefix = tail.head + fieldStart(name)
    tail.head = LINE_END
  } else {
    if (isLength) tail.cacheable = false
    tail.head += fieldLine(name, value)
  }
  tail.lines++
}

// --- The cache --------------------------------------------------------------

// The block of entry `e` with `value` in its Content-Length hole.
function headOf (e, value) {
  if (value !== e.lastValue) {
    e.lastValue = value
    e.lastHead = e.prefix + value + e.suffix
    e.lastNumber = +value
  }
  return e.lastHead
}

const entries = []
for (let i = 0; i < CACHE_SIZE; i++) {
  const e = new Entry()
  e.slot = i
  entries.push(e)
}
// The block of a response whose rendered header was not cached (C
// rejected it, or a value is not cacheable): no slot, its head, lines and
// framing set by applyRendered().
const uncached = new Entry()
// Slots are reused round robin, so alternating blocks (up to CACHE_SIZE of
// them) never evict each other.
let nextSlot = 0

// Scratch arrays for the names and values of the response being matched
// (and, for stored headers, their lowercase keys).
const names = []
const values = []
const keys = []

// The fields of `res` behind the automatic lines, as one number. _hasBody
// is false for HEAD before rendering, and _storeHeader() then appends no
// Content-Length: a HEAD response must never find the block of a GET with
// the same status and headers. (A bodyless status is in the key through
// the status code.)
function stateOf (res) {
  return (res.sendDate ? 1 : 0) | (res._removedConnection ? 2 : 0) |
    (res.shouldKeepAlive ? 4 : 0) | (res.maxRequestsOnConnectionReached ? 8 : 0) |
    (res._defaultKeepAlive ? 16 : 0) | (res._hasBody ? 0 : 32)
}

// True when entry `e` has the status, the names and the first `upTo`
// values of `names`/`values` (n of them; n -1: at least upTo names, of
// which the first upTo are compared). The Content-Length value is matched
// by shape only.
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

// The entry whose key equals the response's state: the Date value and the
// keep-alive fields.
function stateMatches (e, res, state) {
  return e.state === state && e.keepAliveTimeout === res._keepAliveTimeout &&
    e.maxRequests === res._maxRequestsPerSocket &&
    ((state & 1) === 0 || e.hasDate || e.date === currentDate())
}

// The kind of block a lookup asks for (findEntry()'s `shape`), as bits:
// FRESH, the block end() renders for a fresh response, never chunked; or
// WRITE_HEAD, one writeHead() can render, with Content-Length from the
// headers, or, with CHUNKABLE, chunked framing, or, with APPENDABLE, the
// Content-Length line _storeHeader() appends for a length set by hand
// (handLength(); as end() does for a fresh response). writeHeadObject()
// and writeHeadArray() settle CHUNKABLE and APPENDABLE (framingOf()) and
// hand them on as one number.
const FRESH = 0
const CHUNKABLE = 1
const APPENDABLE = 2
const WRITE_HEAD = 4

// The first stored entry matching the status, names and `upTo` values, of
// the kind `shape` asks for.
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

/**
 * What a renderer that found no cached block rendered into `tail`, for
 * store() and applyRendered(): an options object, one per miss (a cached
 * response never makes one).
 * @typedef {object} Miss
 * @property {number} code the status code
 * @property {string} message the status message
 * @property {boolean} ownMessage the message came as writeHead()'s argument
 * @property {number} n the headers in names[]/values[]
 * @property {number} lengthAt the index of Content-Length among them, or -1
 * @property {boolean} hasDate a Date header among them
 * @property {boolean} chunked chunked framing (no Content-Length hole)
 * @property {number} teAt the index of a Transfer-Encoding, or -1
 */

// Stores the block just rendered into `tail` (with a Content-Length hole,
// or `chunked` without one) under the key in `names`/`values`. A block C
// rejects is not stored; the caller then sends it through the uncached
// path, where C rejects it again and Node's own end() runs (a chunked block
// falls back at once).
function store (res, miss) {
  const { code, message, n, lengthAt, chunked } = miss
  // A Date header the user set is in the key through its name.
  if (CACHE_SIZE === 0 || !tail.cacheable || (tail.prefix === null) !== chunked) return null
  const e = entries[nextSlot]
  nextSlot = (nextSlot + 1) % CACHE_SIZE
  e.lines = 0 // empty while C holds no block for it
  e.keyed = false
  if (lastFresh === e) lastFresh = null
  if (lastStored === e) lastStored = null
  const suffix = tail.head + LINE_END
  if (binding.cacheSet(e.slot, tail.prefix, suffix, tail.lines) !== 0) return null
  e.code = code
  e.message = message
  e.n = n
  for (let i = 0; i < n; i++) {
    e.names[i] = names[i]
    e.values[i] = i === lengthAt ? undefined : values[i]
  }
  e.names.length = n
  e.values.length = n
  e.lengthAt = lengthAt
  e.chunked = chunked
  e.teAt = miss.teAt
  e.state = stateOf(res)
  e.keepAliveTimeout = res._keepAliveTimeout
  e.maxRequests = res._maxRequestsPerSocket
  e.hasDate = miss.hasDate
  e.date = tail.date
  e.prefix = tail.prefix
  e.suffix = suffix
  // A chunked block is the same for every response: headOf() with an
  // undefined value returns it.
  e.lastValue = undefined
  e.lastHead = chunked ? suffix : ''
  e.forgetLength()
  // Keep-alive without a removed Connection header leaves _last as it was.
  e.last = (e.state & 6) === 4 ? null : tail.last
  e.lines = tail.lines
  return e
}

/**
 * Leaves on `res` what writeHead() and _storeHeader() leave, for `block`
 * (a cache entry, or `uncached`) whose last head (headOf()) is the block
 * just found or rendered: _contentLength from its Content-Length header's
 * value (`lastNumber`, when `lengthAt` says there is one), _last from
 * `last`. A block rendered by writeHead() is then handed to the response's
 * end() (handBlock()); one renderFresh() rendered goes to end() as its
 * return value.
 * @param {boolean} ownMessage the reason came as writeHead()'s argument
 * @param {Entry} block
 */
function applyBlock (res, code, message, ownMessage, block) {
  if (ownMessage || !res.statusMessage) res.statusMessage = message
  res.statusCode = code
  // isBodylessStatus(), written out: this runs on every rendered response,
  // and V8 did not inline the call here (Node 20).
  if (code === 204 || code === 304 || (code >= 100 && code <= 199)) res._hasBody = false
  if (block.lengthAt !== -1) {
    res._contentLength = block.lastNumber
    res._removedContLen = false
  }
  if (block.chunked) res.chunkedEncoding = true
  const last = block.last
  if (last !== null) res._last = last
  res._header = block.lastHead
  res._headerSent = false
  // 26.12+ keeps the answer of _isLenientHeaderValidation() once a block is
  // rendered. (The renderer itself always validates strictly: where Node
  // would be lenient, C rejects and Node's own end() takes over.)
  if (kLenientCache !== null && res[kLenientCache] === null) res._isLenientHeaderValidation()
}

// The hand-off from writeHead() to end(): the response writeHead() last
// rendered a block for, and the block. Kept here rather than on the
// response, where a key would show to Object.getOwnPropertySymbols() and
// util.inspect() (as lib/send.js says of a handle's byte count) and would
// give every rendered response a hidden class of its own. A response's
// end() follows its writeHead() with no other rendering in between in the
// common case; otherwise blockOf() answers null and end() treats the block
// as one Node rendered. Only writeHead() hands a block over, and every end()
// takes it (lib/shim.js, also after Node's own end() rendered through this
// writeHead()): a finished response is never kept here, where it would
// stay reachable, with its request and body, until the next rendering
// (test/retention.test.js).
let handedTo = null
let handed = null

// Hands `block`, just applied to `res` by writeHead(), to its end().
function handBlock (res, block) {
  handedTo = res
  handed = block
}

/**
 * The block the renderer put on `res`, while its _header is still that
 * block: a cache entry (slot >= 0) or `uncached`. Else null.
 * @param {http.ServerResponse} res
 * @returns {Entry|null}
 */
function blockOf (res) {
  return handedTo === res && handed.lastHead === res._header ? handed : null
}

/**
 * blockOf(res) for end(), which takes the block: the renderer keeps no
 * response once its end() began, whichever path then ends it. The block of
 * another response, rendered since, stays for that response's end().
 * @param {http.ServerResponse} res
 * @returns {Entry|null}
 */
function takeBlock (res) {
  if (handedTo !== res) return null
  handedTo = null
  return handed.lastHead === res._header ? handed : null
}

// applyBlock() for the block `miss` describes in `tail` (stored as
// `entry`, or null when it was not cached, and then described by
// `uncached`), with `value` in its Content-Length hole, then clears `tail`.
// (An entry store() just filled has the `last` of `tail`, or null where
// that is the response's own _last.) Returns the block.
function applyRendered (res, miss, value, entry) {
  let block = entry
  if (entry !== null) {
    headOf(entry, value)
  } else {
    block = uncached
    block.lastHead = tail.prefix === null
      ? tail.head + LINE_END
      : tail.prefix + value + tail.head + LINE_END
    block.lastValue = value
    block.lastNumber = +value
    block.lengthAt = miss.lengthAt
    block.last = tail.last
    block.lines = tail.lines
    block.chunked = miss.chunked
  }
  applyBlock(res, miss.code, miss.message, miss.ownMessage, block)
  tail.head = ''
  tail.prefix = null
  return block
}

function clearScratch (n) {
  for (let i = 0; i < n; i++) values[i] = undefined
}

// --- Fresh responses: end() renders what setHeader() stored ---------------

// What renderFresh() returns when Node's own renderer must run (nothing
// was changed); a FALLBACK value says the response falls back.
const RENDER_BY_NODE = 'render-by-node'

/**
 * Renders the header block as writeHead(statusCode) and _storeHeader() do
 * for a fresh response, with every side effect, and returns its block
 * (a cache entry or `uncached`). Before it changes anything it may instead
 * return RENDER_BY_NODE, when a header needs Node's own renderer
 * (Connection, Keep-Alive, Content-Disposition, user Content-Length
 * arrays, HTTP/1.0 without a user Content-Length), or the FALLBACK reason
 * the response falls back with. Preconditions: fallbackReason() returned
 * null; `length` is the body's byte length.
 * @returns {Entry|string}
 */
function renderFresh (res, length) {
  const headers = res[kOutHeaders]
  if (res.useChunkedEncodingByDefault !== true && !userLength(headers)) return RENDER_BY_NODE
  const code = res.statusCode | 0
  let message = res.statusMessage
  if (!message) message = STATUS_CODES[code] || 'unknown'
  let n = 0
  let lengthAt = -1
  let hasDate = false
  if (headers) {
    const c = lastFresh
    if (c !== null && c.code === code && c.message === message) {
      const hit = renderAgain(res, c, headers, length)
      if (hit !== null) {
        observe(c.n, headers)
        return hit
      }
    }
    // Object.keys() lists the keys in the order for-in would, in about two
    // thirds of its time on a dictionary-mode store and as fast on a
    // fast-mode one (lib/headers.js picks which the next response gets).
    // Refs: benchmark/instructions.js (headers=20, express3)
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
    headOf(e, value)
    applyBlock(res, code, message, false, e)
    return e
  }
  const miss = { code, message, ownMessage: false, n, lengthAt, hasDate, chunked: false, teAt: -1 }
  const block = renderFreshMiss(res, headers, miss, length)
  clearScratch(n)
  return block
}

// The entry renderFresh() found or stored last, and the one
// writeHeadStored() did: most responses repeat the one before, and
// renderAgain() and storedAgain() match them without copying the headers.
let lastFresh = null
let lastStored = null

// Records in entry `e` the `n` lowercase keys collectStored() copied.
function keep (e, n) {
  for (let i = 0; i < n; i++) e.keys[i] = keys[i]
  e.keys.length = n
  e.keyed = true
}

// What renderAgain() matched: the Content-Length value, or the body length
// when the store has none.
const again = { value: 0 }

// Whether header `i` of entry `c` has `key` and the stored `entry`; the
// Content-Length value is matched by shape and kept in `again`.
function sameHeader (c, i, key, entry) {
  if (key !== c.keys[i] || entry[0] !== c.names[i]) return false
  const v = entry[1]
  if (i !== c.lengthAt) return v === c.values[i]
  if (v !== c.lastValue && !lengthCacheable(v)) return false
  again.value = v
  return true
}

// Whether the headers in `headers` are those of entry `c`: compares each
// key, name and value straight from the store, in order, as findEntry()
// would compare the copies (the Content-Length value by shape, kept in
// `again.value`, which starts as `value`), without copying them. A
// fast-mode store (up to FAST_MAX headers, or a WideStore of
// lib/headers.js) is walked with for-in, in the order _storeHeader() walks
// it: V8 reads each value through the enumeration cache, where a keyed load
// per key went megamorphic. Any other larger store is a dictionary, whose
// keys Object.keys() lists faster than for-in does.
// Refs: benchmark/instructions.js (shapes express3 and headers20),
// benchmark/RESULTS.md
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

// renderFresh() for a response whose stored headers may be those of entry
// `c` (same status line): applies the block when the store and the state
// match. Returns null, having changed nothing, when any differs.
function renderAgain (res, c, headers, length) {
  if (!sameStore(c, headers, length) || !stateMatches(c, res, stateOf(res))) return null
  const value = again.value
  headOf(c, value)
  applyBlock(res, c.code, c.message, false, c)
  return c
}

// renderFresh() for stored headers no cached entry holds (`miss`, `length`
// the body's): renders, stores and applies the block, or returns
// RENDER_BY_NODE or the FALLBACK reason before it changed anything.
function renderFreshMiss (res, headers, miss, length) {
  const { code, n, lengthAt } = miss
  resetTail(statusLine(code, miss.message))
  const result = renderStored(res, n, lengthAt)
  if (result !== null) return result
  renderTail(res, miss.hasDate)
  // Without a body (HEAD, 1xx, 204, 304) _storeHeader() adds no framing: the
  // block has no Content-Length hole, and is not cached.
  if (lengthAt === -1 && res._hasBody && !isBodylessStatus(code)) {
    // freshReason() excluded _removedContLen without a user length, so the
    // body length is the framing.
    tail.prefix = tail.head + LENGTH_START
    tail.head = LINE_END
    tail.lines++
  }
  const e = store(res, miss)
  if (e !== null) {
    keep(e, n)
    lastFresh = e
  }

  const value = lengthAt === -1 ? length : values[lengthAt]
  return applyRendered(res, miss, value, e)
}

// Renders the `n` stored headers in names/keys/values into `tail` after the
// status line, as _storeHeader() does. Returns null, or before it changed
// anything on `res`, RENDER_BY_NODE (a header only Node's renderer
// reproduces) or the FALLBACK reason.
function renderStored (res, n, lengthAt) {
  let byNode = false
  for (let i = 0; i < n; i++) {
    const name = names[i]
    const value = values[i]
    const type = typeof value
    const key = keys[i]
    if (type !== 'string' && type !== 'number') {
      // Values stored by setHeader() were validated then, but an array
      // can change afterwards.
      const reason = valueReason(key, value)
      if (reason !== null) return reason
    }
    switch (key) {
      case 'content-length':
        if (type !== 'string' && type !== 'number') byNode = true
        break
      case 'content-disposition':
        if (type === 'number') return FALLBACK.HEADER_VALUE
        byNode = true
        break
      case 'connection':
      case 'keep-alive':
        byNode = true
        break
    }
    if (!byNode) renderEntry(res, key, name, value, i === lengthAt)
  }
  return byNode ? RENDER_BY_NODE : null
}

// Copies the stored headers into keys/names/values (Object.keys() lists
// them in the order for-in would). Returns their count; `found` tells where
// Content-Length is and whether a Date header is among them.
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

// --- writeHead(status, obj) ------------------------------------------------

// The arguments for Node's writeHead() once walkHeaders() stopped
// reading: a plain object with the `count` keys its for-in loop met, in
// that order (names[]), the first `read` values already read as data
// (values[]), and getters for the rest (`pending` is the key being read
// when reading threw `error`: its getter throws that error again, at the
// point Node reads it; null when no getter threw). A getter that deletes a
// later key from `obj` deletes it from the copy too, so Node's own loop
// skips it as it would have.
// The values already read are assigned, as an object literal's would be:
// a descriptor per key gives V8 a new map per property and response
// (benchmark/RESULTS.md, "a header only Node renders"). A key
// Object.prototype has (`__proto__`, a setter, a frozen method) would not
// become an own data property by assignment: it is defined.
function handOver (obj, reason, read, count, pending, error) {
  tail.head = ''
  tail.prefix = null
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

// The lowercase name of a header _storeHeader() treats apart, or ''. Only
// names of these lengths can be one.
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

// Whether a specialName() is one only Node's renderer writes (Connection,
// Keep-Alive, Trailer, Expect, Content-Disposition).
function nodeOnly (special) {
  return special !== '' && special !== 'content-length' && special !== 'transfer-encoding' &&
    special !== 'date'
}

// Whether `obj` has an own key only Node renders. Read from the keys
// alone, before any value: where no cached entry has the status line,
// walkHeaders() then leaves every value to Node's writeHead(), so an app
// whose responses all carry, say, a Connection header pays no read and no
// copy of its headers (benchmark/instructions.js, shape fallbacknode).
function nodeOnlyKey (obj) {
  if (obj === undefined) return false
  const own = Object.keys(obj)
  for (let i = 0; i < own.length; i++) if (nodeOnly(specialName(own[i]))) return true
  return false
}

// Whether `obj` has an own key of Content-Length's length: without one, a
// response that cannot be chunked is Node's to render (HEAD without a
// length, say), known before any value is read.
function lengthLike (obj) {
  if (obj === undefined) return false
  const own = Object.keys(obj)
  for (let i = 0; i < own.length; i++) if (own[i].length === 14) return true
  return false
}

// What walkHeaders() found for the header just read when no cached
// entry has it: the index of Content-Length and of Transfer-Encoding so
// far; and while laterHeader() reads: the entry holding every header so
// far (`entry`, or null), the last that held them (`last`), and whether
// the headers before the one read were checked (`checked`).
const scan = { lengthAt: -1, teAt: -1, entry: null, last: null, checked: false }

// The checks _storeHeader() makes on header `i` (name `key`, `value`),
// plus the shapes this renderer reproduces: Content-Length once, or
// (when `chunkable`) a Transfer-Encoding naming chunked, Date, and no other
// header _storeHeader() treats apart. Returns false when Node must render
// (and may throw) from this header on.
function headerRenderable (i, key, value, chunkable) {
  // The name first: a header only Node renders (Connection, say) then
  // costs no pattern test here, since Node's writeHead() tests it again.
  const special = specialName(key)
  if (nodeOnly(special)) return false
  if (!TOKEN.test(key)) return false
  if (special === 'content-length') {
    // Two spellings of Content-Length (Node keeps the last value), or one
    // with Transfer-Encoding.
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

// True while fastWriteHead() reads a headers object: a getter may call
// writeHead() on another response, which then goes to Node's writeHead()
// (the pass keeps its names and values in this file's scratch arrays).
let walking = false

/**
 * ServerResponse#writeHead(statusCode[, reason][, obj]) by the renderer:
 * writeHeadObject() on a response whose headers setHeader() left empty,
 * unless a pass over another headers object is running.
 * @returns {true|false|Array} true when rendered, false for Node's
 *   writeHead(), or the arguments Node's writeHead() takes over with
 */
function fastWriteHead (res, statusCode, reason, obj) {
  if (walking) return false
  walking = true
  try {
    // The headers argument as writeHead() picks it (`obj ??= reason`
    // without a string reason): an array of pairs has a renderer of its own.
    const headers = typeof reason === 'string' ? obj : obj ?? reason
    return Array.isArray(headers)
      ? writeHeadArray(res, statusCode, reason, headers)
      : writeHeadObject(res, statusCode, reason, obj)
  } finally {
    walking = false
  }
}

/**
 * writeHead(statusCode[, reason][, obj]) for the shape frameworks use
 * (fastify, benchmark/http/simple.js): a fresh HTTP/1.1 response with no
 * setHeader() calls, a body-carrying status (on any request method: the
 * user's Content-Length is the framing, so a HEAD block is a GET block)
 * and a plain object of string, number or array values that includes
 * Content-Length, or, on a response with a body, includes none (Node then
 * frames the body as chunked, adding Transfer-Encoding: chunked unless the
 * object has a Transfer-Encoding naming chunked). It renders what
 * ServerResponse#writeHead and _storeHeader() would, with their checks,
 * and sets the same fields; each value is read once. Anything else,
 * including every input Node rejects, returns false before changing
 * anything, or the arguments for Node's writeHead() when values were read.
 * This function settles the status line and the framing Node would pick;
 * walkHeaders() reads the headers.
 * @returns {true|false|Array} true when rendered
 */
function writeHeadObject (res, statusCode, reason, obj) {
  if (res[kOutHeaders] !== null || !writeHeadable(res, statusCode)) return false
  const code = statusCode | 0
  if (code < 200 || code > 999 || !keepAliveMaxRenderable(res._maxRequestsPerSocket)) {
    return false
  }
  let message
  if (typeof reason === 'string') {
    message = reason
  } else {
    message = res.statusMessage
    if (!message) message = STATUS_CODES[code] || 'unknown'
    obj ??= reason
  }
  // No object renders no header lines (writeHead(200)). An array of pairs
  // has its own renderer (writeHeadArray(), which fastWriteHead() picks):
  // one here came through another way in, Node's to render.
  if (typeof message !== 'string' || (obj !== undefined && (obj === null ||
      typeof obj !== 'object' || isProxy(obj) || Array.isArray(obj)))) {
    return false
  }
  const shape = framingOf(res, code)
  if (shape === WRITE_HEAD && !lengthLike(obj)) return false
  return walkHeaders(res, code, message, reason, obj, shape)
}

// The shape (findEntry()) of the block writeHead(`code`, headers) renders
// for `res`: WRITE_HEAD, with CHUNKABLE where, without Content-Length,
// _storeHeader() frames the body as chunked (the response has one and
// nothing turned that off; HEAD, 204 and 304, for which writeHead() sets
// _hasBody = false before _storeHeader(), as applyBlock() does, a removed
// Transfer-Encoding or a _contentLength set by hand are Node's to render),
// and APPENDABLE where it appends the length set by hand (handLength()).
function framingOf (res, code) {
  const chunkable = code !== 204 && code !== 304 && res._hasBody === true &&
    res._removedTE === false && typeof res._contentLength !== 'number' &&
    res.useChunkedEncodingByDefault === true
  return WRITE_HEAD | (chunkable ? CHUNKABLE : 0) | (handLength(res, code) ? APPENDABLE : 0)
}

/**
 * writeHeadObject() from its headers on: `code` and `message` the status
 * line, `reason` writeHead()'s second argument (a string when it is the
 * message), `obj` the headers, `shape` the block's kind (framingOf(): the
 * framing Node would add without a Content-Length header).
 * The headers are read in one pass in Node's order (_storeHeader(): for-in,
 * own keys, each value read once, then checked): while the names and
 * values equal a cached entry's they were checked when it was stored; from
 * the first that differs on, each is checked before the next is read, as
 * _storeHeader() throws at the first bad one. The prototype chain is walked
 * once, as on Node's path, so a Proxy on it sees what it sees there.
 * (for-in also lets V8 read obj[key] through the enumeration cache, where
 * a keyed load would go megamorphic.) While each header read is the first
 * entry's, names[] and values[] are left as they are (`copied` false): the
 * entry holds the same names and values (its Content-Length value matched
 * by shape, kept in `lengthValue`), and copyEntry() writes them there
 * before anything reads them. Once Node must take over, the loop only
 * collects the keys it has yet to meet (reading stopped after `read`
 * values, `pending` the key whose getter threw `error`).
 * Long: a cached response runs all of it, as one compilation unit with
 * the cache hit's helpers inlined; what a cached response never runs is
 * apart (laterHeader(), missFramed(), renderWriteHeadMiss(), handOver())
 (docs/architecture.md, "The inlining budget").
 * @returns {true|false|Array} true when rendered
 */
function walkHeaders (res, code, message, reason, obj, shape) {
  // The first cached entry for this status line: writeHead() checks
  // statusMessage before it reads any header, with the same expression.
  let e = findEntry(code, message, -1, 0, shape)
  if (e === null && (INVALID_HEADER_CHAR.test(message) || nodeOnlyKey(obj))) return false
  let i = 0
  scan.entry = e
  scan.last = e
  scan.checked = e === null
  scan.lengthAt = -1
  scan.teAt = -1
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
      if (i < e.n && e.names[i] === key) {
        if (i === e.lengthAt) {
          if (value === e.lastValue || lengthCacheable(value)) {
            lengthValue = value
            i++
            continue
          }
        } else if (e.values[i] === value) {
          i++
          continue
        }
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
  // No Content-Length header: _storeHeader() appends the length set by hand, else chunks.
  const chunked = lengthAt === -1 && (shape & APPENDABLE) === 0
  if (e !== null && stateMatches(e, res, stateOf(res))) {
    let value = lengthAt === -1 ? undefined : copied ? values[lengthAt] : lengthValue
    if (copied) clearScratch(n)
    if (!chunked && lengthAt === -1) value = res._contentLength
    headOf(e, value)
    applyBlock(res, code, message, typeof reason === 'string', e)
    handBlock(res, e)
    return true
  }
  if (!copied) copyEntry(e, n, lengthValue)
  const ownMessage = typeof reason === 'string'
  const teAt = e !== null ? e.teAt : scan.teAt
  renderWriteHeadMiss(res, { code, message, ownMessage, n, lengthAt, hasDate: false, chunked, teAt })
  return true
}

// A header read after the headers left the first cached entry's (header
// `i`, `key` and `value`, already in names[] and values[]; `code`,
// `message` and `shape` as walkHeaders() has them): matched against the entries
// for the status line, `scan.entry` the one holding every header so far,
// and checked as _storeHeader() would once none holds it. Apart from
// walkHeaders() as a cached response never calls it (see there).
// Returns false when Node must render (and may throw) from this header on.
function laterHeader (i, key, value, code, message, shape) {
  let e = scan.entry
  if (e !== null) {
    if (i < e.n && e.names[i] === key &&
        (i === e.lengthAt ? value === e.lastValue || lengthCacheable(value) : e.values[i] === value)) {
      return true
    }
    e = scan.entry = findEntry(code, message, -1, i + 1, shape)
    if (e !== null) {
      scan.last = e
      return true
    }
  }
  if (!scan.checked) {
    // The headers before this one are the last entry's: its framing
    // headers among them.
    scan.checked = true
    scan.lengthAt = scan.last.lengthAt < i ? scan.last.lengthAt : -1
    scan.teAt = scan.last.teAt < i ? scan.last.teAt : -1
  }
  return headerRenderable(i, key, value, (shape & CHUNKABLE) !== 0)
}

// The framing of `n` headers no cached entry holds, left in `scan`: those
// laterHeader() did not check are the last entry's. False when there is
// no Content-Length where Node would not frame the body as chunked
// (CHUNKABLE) nor append the length set by hand (APPENDABLE).
function missFramed (n, shape) {
  if (!scan.checked) {
    scan.lengthAt = scan.last.lengthAt < n ? scan.last.lengthAt : -1
    scan.teAt = scan.last.teAt < n ? scan.last.teAt : -1
  }
  return scan.lengthAt !== -1 || shape !== WRITE_HEAD
}

// Whether _storeHeader() would append `Content-Length: <res._contentLength>`
// after the automatic lines, for headers without Content-Length or
// Transfer-Encoding: a length set by hand before writeHead()
// (@hono/node-server sets it, then passes only Content-Type) on a response
// it frames by length. The block is then the one end() renders for a
// fresh response with that body length, and is cached as such.
function handLength (res, code) {
  return code !== 204 && code !== 304 && res._hasBody === true && res._removedContLen === false &&
    res.useChunkedEncodingByDefault === true && typeof res._contentLength === 'number' &&
    lengthCacheable(res._contentLength)
}

// Writes into names[] and values[] the first `upTo` headers of entry `e`,
// which walkHeaders() read and found equal to the entry's (the
// Content-Length value, matched by shape, is `lengthValue`). Returns true.
function copyEntry (e, upTo, lengthValue) {
  const en = e.names
  const ev = e.values
  for (let j = 0; j < upTo; j++) {
    names[j] = en[j]
    values[j] = j === e.lengthAt ? lengthValue : ev[j]
  }
  return true
}

// What writeHeadObject() and storedWriteHead() ask of the response before
// anything else. Only primitive statuses: ToInt32 of an object would run
// user code twice when Node's writeHead() takes over.
function writeHeadable (res, statusCode) {
  return (typeof statusCode === 'number' || typeof statusCode === 'string') &&
    !res._header && !res.chunkedEncoding && typeof res.useChunkedEncodingByDefault === 'boolean' &&
    typeof res._hasBody === 'boolean' && !(res._expect_continue && !res._sent100)
}

// storedWriteHead()'s answer where Node's writeHead() renders the stored
// headers. The store is rendered then, and never by this file: it is not
// kept as the last WideStore (lib/headers.js) past its response, as
// observe() does for the stores rendered here (test/retention.test.js).
function byNode () {
  forgetWide()
  return false
}

/**
 * writeHead(statusCode[, reason]) on a response with headers set by
 * setHeader() (lib/shim.js calls it where the store is not null): the
 * checks fastWriteHead() makes, then writeHeadStored(). An object argument
 * is merged into the stored headers by Node's writeHead(), with
 * setHeader(): false.
 * @returns {boolean} true when rendered
 */
function storedWriteHead (res, statusCode, reason, obj) {
  if (obj !== undefined || (reason !== undefined && typeof reason !== 'string') ||
      !writeHeadable(res, statusCode)) {
    return byNode()
  }
  const code = statusCode | 0
  if (code < 200 || code > 999 || !keepAliveMaxRenderable(res._maxRequestsPerSocket)) {
    return byNode()
  }
  const message = typeof reason === 'string' ? reason : res.statusMessage || STATUS_CODES[code] || 'unknown'
  const headers = res[kOutHeaders]
  if (typeof message !== 'string' || !headers || typeof headers !== 'object') return byNode()
  if (typeof res._contentLength === 'number' && reason === undefined && !userLength(headers)) {
    return lengthWriteHead(res, statusCode, message, headers)
  }
  return writeHeadStored(res, code, message, typeof reason === 'string', headers)
}

/**
 * storedWriteHead() where _contentLength was set before writeHead() and no
 * Content-Length header was: end()'s implicit header (_implicitHeader()
 * calls writeHead(this.statusCode), here through a writeHead wrapper an
 * agent put over the shim's) or a length set by hand. _storeHeader() then
 * frames the body with that length, as for a response end() renders
 * without writeHead(): renderFresh() renders it, its checks (lib/decide.js
 * freshReason()) made here. A helper no measured shape calls
 * (docs/architecture.md, "The inlining budget").
 * @returns {boolean} true when rendered
 */
function lengthWriteHead (res, statusCode, message, headers) {
  if (statusCode !== res.statusCode || res._removedContLen !== false || INVALID_HEADER_CHAR.test(message) ||
      headers['transfer-encoding'] !== undefined || headers.trailer !== undefined ||
      headers.expect !== undefined) {
    return byNode()
  }
  const block = renderFresh(res, res._contentLength)
  if (typeof block === 'string') return byNode()
  handBlock(res, block)
  return true
}

/**
 * writeHead(statusCode[, reason]) on a response with headers set by
 * setHeader(): renders them as _storeHeader() does, from a cached entry
 * when one has the status line, the names and values and the state, and
 * sets what writeHead() sets. Without Content-Length a response with a
 * body is framed as chunked (Node adds Transfer-Encoding: chunked after
 * the automatic lines); without a body (HEAD, 204, 304) there is no
 * framing. Returns false, having changed nothing, for what Node must
 * render: a stored Transfer-Encoding, Trailer or Expect, Connection,
 * Keep-Alive or Content-Disposition, a value that is not a string, number
 * or array of them, no Content-Length where Node would not frame as
 * chunked (a removed Transfer-Encoding, _contentLength set by hand).
 * @returns {boolean} true when rendered
 */
function writeHeadStored (res, code, message, ownMessage, headers) {
  const bodyless = isBodylessStatus(code) || res._hasBody !== true
  const byDefault = res.useChunkedEncodingByDefault === true
  const chunkable = byDefault && !bodyless && res._removedTE === false &&
    typeof res._contentLength !== 'number'
  // The headers of the entry the response before used: a block this
  // function stored or found, so the checks below hold for them (no
  // Transfer-Encoding, Trailer or Expect; a Content-Length unless chunked).
  const c = lastStored
  if (c !== null && c.code === code && c.message === message &&
      (c.lengthAt >= 0 || (chunkable && c.chunked)) && storedAgain(res, c, headers, ownMessage)) {
    observe(c.n, headers)
    return true
  }
  if (headers['transfer-encoding'] !== undefined || headers.trailer !== undefined ||
      headers.expect !== undefined) {
    return byNode()
  }
  // HTTP/1.0 renders as 1.1 only with a user Content-Length (userLength()).
  if ((!bodyless || !byDefault) && !chunkable && !userLength(headers)) return byNode()
  const n = collectStored(headers)
  const lengthAt = found.lengthAt
  observe(n, headers)
  const e = findEntry(code, message, n, n, chunkable ? WRITE_HEAD | CHUNKABLE : WRITE_HEAD)
  if (e !== null && stateMatches(e, res, stateOf(res))) {
    const value = e.chunked ? undefined : values[lengthAt]
    if (!e.keyed) keep(e, n)
    lastStored = e
    clearScratch(n)
    headOf(e, value)
    applyBlock(res, code, message, ownMessage, e)
    handBlock(res, e)
    return true
  }
  if (e === null && INVALID_HEADER_CHAR.test(message)) {
    clearScratch(n)
    return false
  }
  const miss = {
    code, message, ownMessage, n, lengthAt, hasDate: found.hasDate, chunked: lengthAt === -1 && chunkable, teAt: -1
  }
  return writeHeadStoredMiss(res, miss)
}

// writeHeadStored() for stored headers no cached entry holds (`miss`):
// renders them, stores the block and applies it; returns false, having
// changed nothing, for a header only Node's renderer reproduces. Apart
// from the cache-hit path (docs/architecture.md, "The inlining budget").
function writeHeadStoredMiss (res, miss) {
  const { n, lengthAt } = miss
  resetTail(statusLine(miss.code, miss.message))
  if (renderStored(res, n, lengthAt) !== null) {
    clearScratch(n)
    tail.head = ''
    tail.prefix = null
    return false
  }
  renderTail(res, miss.hasDate)
  if (miss.chunked) {
    tail.head += CHUNKED_FRAMING
    tail.lines++
  }
  const entry = store(res, miss)
  if (entry !== null) {
    keep(entry, n)
    lastStored = entry
  }
  const value = lengthAt === -1 ? undefined : values[lengthAt]
  clearScratch(n)
  handBlock(res, applyRendered(res, miss, value, entry))
  return true
}

// writeHeadStored() for a response whose stored headers may be those of
// entry `c` (same status line, a block writeHead() can take): applies the
// block when the store and the state match. Returns false, having changed
// nothing, when any differs.
function storedAgain (res, c, headers, ownMessage) {
  if (!sameStore(c, headers, undefined) || !stateMatches(c, res, stateOf(res))) return false
  const value = c.chunked ? undefined : again.value
  headOf(c, value)
  applyBlock(res, c.code, c.message, ownMessage, c)
  handBlock(res, c)
  return true
}

// walkHeaders() for headers no cached entry holds (`miss`; its hasDate is
// found here): renders them (the checks were made while reading), stores
// the block and applies it. Apart from the cache-hit path
// (docs/architecture.md, "The inlining budget").
function renderWriteHeadMiss (res, miss) {
  const { n, lengthAt, chunked } = miss
  resetTail(statusLine(miss.code, miss.message))
  let dated = false
  for (let i = 0; i < n; i++) {
    const key = names[i]
    if (key.length === 4 && key.toLowerCase() === 'date') dated = true
    renderEntry(res, null, key, values[i], i === lengthAt)
  }
  renderTail(res, dated)
  // After the automatic lines, as _storeHeader() adds them: chunked
  // framing, or the length set by hand (handLength()) as a hole.
  if (chunked && miss.teAt === -1) {
    tail.head += CHUNKED_FRAMING
    tail.lines++
  } else if (!chunked && lengthAt === -1) {
    tail.prefix = tail.head + LENGTH_START
    tail.head = LINE_END
    tail.lines++
  }
  miss.hasDate = dated
  const stored = store(res, miss)
  const value = chunked ? undefined : lengthAt === -1 ? res._contentLength : values[lengthAt]
  clearScratch(n)
  handBlock(res, applyRendered(res, miss, value, stored))
}

// --- writeHead(status, array) ----------------------------------------------

/**
 * writeHead(statusCode[, reason], headers) with the headers as an array,
 * flat `[name, value, ...]` or nested `[[name, value], ...]`, as srvx (h3's
 * Node adapter) passes them, on a response with no setHeader() calls. With
 * stored headers Node merges the pairs into the store first, by
 * setHeader() per pair (20, 22, 24) or removeHeader() and appendHeader()
 * (26): storedWriteHead() leaves that to Node. _storeHeader() reads
 * `headers.length && ArrayIsArray(headers[0])` to tell the forms apart,
 * throws ERR_INVALID_ARG_VALUE for a flat array of odd length, then renders
 * the pairs in index order as an object's entries, each validated,
 * duplicates kept (Set-Cookie twice is two lines). So a pair is rendered
 * here as writeHeadObject() renders an entry, and the block is cached
 * under the same key: the names and values in order. Anything
 * headerRenderable() does not take (an invalid or non-string name, a
 * header _storeHeader() treats apart, a second Content-Length) returns
 * false before anything on `res` changed, and Node's writeHead() renders
 * the same arguments. The elements read so far are then read again there:
 * the same values, unless an index of the array is an accessor.
 * Refs: test/array-headers.test.js
 * @returns {boolean} true when rendered
 */
function writeHeadArray (res, statusCode, reason, headers) {
  if (res[kOutHeaders] !== null || !writeHeadable(res, statusCode) || isProxy(headers)) return false
  const code = statusCode | 0
  if (code < 200 || code > 999 || !keepAliveMaxRenderable(res._maxRequestsPerSocket)) {
    return false
  }
  const message = typeof reason === 'string'
    ? reason
    : res.statusMessage || STATUS_CODES[code] || 'unknown'
  if (typeof message !== 'string') return false
  // As writeHeadObject() decides it.
  const shape = framingOf(res, code)
  // writeHead() checks statusMessage before _storeHeader() reads the array.
  const first = findEntry(code, message, -1, 0, shape)
  if (first === null && INVALID_HEADER_CHAR.test(message)) return false
  const nested = headers.length !== 0 && Array.isArray(headers[0])
  if (!nested && headers.length % 2 !== 0) return false
  const n = readPairs(headers, nested, code, message, first, shape)
  if (n === -1) return false
  return applyPairs(res, code, message, typeof reason === 'string', n, shape)
}

// What readPairs() leaves for applyPairs(): the cached entry whose headers
// equal every pair read, or null (the pairs' framing is then in `scan`).
const pairs = { entry: null }

// Reads the pairs of `headers` into names[] and values[] in _storeHeader()'s
// order (its loop reads `headers.length` each time round), matching them
// against the cached entries for the status line, and checks each pair no
// entry has before it reads the next, as Node throws at the first bad one.
// Returns the number of pairs, or -1 (scratch cleared) for Node's
// writeHead().
function readPairs (headers, nested, code, message, first, shape) {
  let e = first
  let last = first
  let checked = first === null
  scan.lengthAt = -1
  scan.teAt = -1
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
    if (e !== null) {
      if (i < e.n && e.names[i] === key &&
          (i === e.lengthAt ? value === e.lastValue || lengthCacheable(value) : e.values[i] === value)) {
        i++
        continue
      }
      e = findEntry(code, message, -1, i + 1, shape)
      if (e !== null) {
        last = e
        i++
        continue
      }
    }
    if (!checked) {
      // The pairs before this one are the last entry's, its framing
      // headers among them.
      checked = true
      scan.lengthAt = last.lengthAt < i ? last.lengthAt : -1
      scan.teAt = last.teAt < i ? last.teAt : -1
    }
    if (typeof key !== 'string' || !headerRenderable(i, key, value, (shape & CHUNKABLE) !== 0)) return giveUp(i + 1)
    i++
  }
  if (e !== null && e.n !== i) e = findEntry(code, message, i, i, shape)
  if (e === null && !checked) {
    scan.lengthAt = last.lengthAt < i ? last.lengthAt : -1
    scan.teAt = last.teAt < i ? last.teAt : -1
  }
  pairs.entry = e
  return i
}

// readPairs() handing the array to Node: the values read are let go.
function giveUp (count) {
  clearScratch(count)
  return -1
}

// The block for the `n` pairs readPairs() read: the cached entry's when the
// state matches too, else rendered and stored (renderWriteHeadMiss()).
// Returns false, having changed nothing, where Node would not frame the
// body (no Content-Length on a response it cannot chunk).
function applyPairs (res, code, message, ownMessage, n, shape) {
  const e = pairs.entry
  pairs.entry = null
  const lengthAt = e !== null ? e.lengthAt : scan.lengthAt
  const teAt = e !== null ? e.teAt : scan.teAt
  if (e === null && lengthAt === -1 && shape === WRITE_HEAD) {
    clearScratch(n)
    return false
  }
  // Without a Content-Length pair: the line _storeHeader() appends for the
  // length set by hand, else chunked framing.
  const chunked = lengthAt === -1 && (shape & APPENDABLE) === 0
  if (e !== null && stateMatches(e, res, stateOf(res))) {
    let value = lengthAt === -1 ? undefined : values[lengthAt]
    clearScratch(n)
    if (!chunked && lengthAt === -1) value = res._contentLength
    headOf(e, value)
    applyBlock(res, code, message, ownMessage, e)
    handBlock(res, e)
    return true
  }
  renderWriteHeadMiss(res, { code, message, ownMessage, n, lengthAt, hasDate: false, chunked, teAt })
  return true
}

module.exports = {
  RENDER_BY_NODE,
  renderFresh,
  fastWriteHead,
  storedWriteHead,
  blockOf,
  takeBlock
}
