'use strict'

// The replacement for ServerResponse#end. One function, fallbackReason(),
// decides between the native path and Node's own end(); everything here
// mirrors lib/_http_outgoing.js and lib/_http_server.js of Node v20.

const http = require('node:http')
const util = require('node:util')
const binding = require('./binding.js')
const internals = require('./internals.js')

const debug = util.debuglog('http-oneshot')

const FALLBACK = Object.freeze({
  NO_BINDING: 'no-binding', // the addon did not load
  UNSUPPORTED_NODE: 'unsupported-node', // lib/internals.js missed an internal
  DEBUG: 'debug', // NODE_DEBUG=http: Node prints lines from end()
  FINISHED: 'finished', // end() after end(): Node reports the error
  DESTROYED: 'destroyed', // res.destroy() ran: write_ drops the data
  HEADERS_SENT: 'headers-sent', // write()/flushHeaders() already sent _header
  NO_SOCKET: 'no-socket', // no net.Socket: fake sockets, standalone responses
  NOT_SOCKET_OWNER: 'not-socket-owner', // pipelined: Node queues in outputData
  SOCKET_UNWRITABLE: 'socket-unwritable', // destroyed, ended or handle-less socket
  SOCKET_BUSY: 'socket-busy', // corked, or data queued or in flight
  PATCHED: 'patched', // a method end() relies on was replaced
  HTTP_VERSION: 'http-version', // not HTTP/1.1: close-delimited framing
  HEAD: 'head', // HEAD: body dropped, no automatic Content-Length
  NO_BODY_STATUS: 'no-body-status', // 1xx, 204, 304
  EXPECT: 'expect', // 100-continue handling or a user Expect header
  STRICT_CONTENT_LENGTH: 'strict-content-length', // private byte accounting
  TRAILERS: 'trailers', // addTrailers() or a Trailer header
  TRANSFER_ENCODING: 'transfer-encoding', // user-set Transfer-Encoding
  CHUNKED: 'chunked', // Node's framing decision is chunked
  ENCODING: 'encoding', // not utf8/latin1: separate header write, estimates
  CHUNK_TYPE: 'chunk-type', // not a string or Uint8Array: Node throws
  BODY_TOO_LARGE: 'body-too-large', // joining would copy a large body
  HEADER_VALUE: 'header-value', // a value whose stringification runs user code
  NON_ASCII: 'non-ascii', // a UTF-8 message whose chars and bytes differ
  INVALID: 'invalid' // Node would throw, or the core rejected the message
})

// Messages up to half of Buffer.poolSize come from Node's shared pool;
// larger ones need an allocation of their own plus a copy of the body,
// which costs more than Node's own path saves: 16 KiB string bodies ran at
// 0.59x of Node's path (p=0.006), 1 KiB bodies at parity or better.
// Refs: benchmark/compare.js matrix=1
const DEFAULT_MAX_BODY = 4 * 1024

const stats = { native: 0, fallback: 0, reasons: Object.create(null) }
const options = { maxBodySize: DEFAULT_MAX_BODY }

const { STATUS_CODES, ServerResponse, OutgoingMessage } = http
const { isUint8Array } = util.types
const legacyEnd = OutgoingMessage.prototype.end
const httpDebug = util.debuglog('http').enabled

// Node's checkInvalidHeaderChar (lib/_http_common.js).
const INVALID_HEADER_CHAR = /[^\t\x20-\x7e\x80-\xff]/
// Node's checkIsHttpToken (lib/_http_common.js).
const TOKEN = /^[\^_`a-zA-Z\-0-9!#$%&'*+.|~]+$/

let kOutHeaders, kCorked, kUniqueHeaders, Socket, nodeDate
let resWriteHead, resImplicitHeader, resStoreHeader, resSend, resWriteRaw, resFlushOutput
let socketWrite, socketCork, socketUncork, socketWrite_, socketWritev, socketWriteGeneric
if (internals !== null) {
  ({ kOutHeaders, kCorked, kUniqueHeaders, Socket, nodeDate } = internals)
  const r = internals.resMethods
  const k = internals.socketMethods
  resWriteHead = r.writeHead
  resImplicitHeader = r._implicitHeader
  resStoreHeader = r._storeHeader
  resSend = r._send
  resWriteRaw = r._writeRaw
  resFlushOutput = r._flushOutput
  socketWrite = k.write
  socketCork = k.cork
  socketUncork = k.uncork
  socketWrite_ = k._write
  socketWritev = k._writev
  socketWriteGeneric = k._writeGeneric
}

const FLAGS = binding === null ? null : binding.flags

// Node's utcDate() value, asked of Node whenever this copy may be stale:
// Node caches one string per second, so a copy taken while the clock is
// still in that second is what Node would render until the second ends.
let dateValue = ''
let dateExpires = 0
function currentDate () {
  const now = Date.now()
  if (now < dateExpires) return dateValue
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

// Counts a fallback of `res`; under NODE_DEBUG=http-oneshot it also names
// the response (the line is built only then).
function count (reason, res) {
  stats.fallback++
  stats.reasons[reason] = (stats.reasons[reason] || 0) + 1
  if (debug.enabled) {
    const req = res.req
    debug('fallback: %s %s %s %s', reason, req ? req.method : '-', req ? req.url : '-', res.statusCode)
  }
}

// Unrolled: this runs for every response.
function methodsPatched (res, socket) {
  return res.writeHead !== currentWriteHead || res._implicitHeader !== resImplicitHeader ||
    res._storeHeader !== resStoreHeader || res._send !== resSend ||
    res._writeRaw !== resWriteRaw || res._flushOutput !== resFlushOutput ||
    socket.write !== socketWrite || socket.cork !== socketCork ||
    socket.uncork !== socketUncork || socket._write !== socketWrite_ ||
    socket._writev !== socketWritev || socket._writeGeneric !== socketWriteGeneric
}

function bodyLength (chunk, encoding) {
  if (typeof chunk === 'string') {
    return encoding === 'latin1' ? chunk.length : Buffer.byteLength(chunk, 'utf8')
  }
  return chunk.byteLength
}

/**
 * Decides whether res.end(chunk, encoding) may take the native path.
 * Checks run cheapest first and have no side effects.
 * @param {http.ServerResponse} res
 * @param {*} chunk the chunk as end() received it, after argument shuffling
 * @param {*} encoding the encoding, after argument shuffling
 * @returns {string|null} null for the native path, else a FALLBACK value
 */
function fallbackReason (res, chunk, encoding) {
  if (binding === null) return FALLBACK.NO_BINDING
  if (internals === null) return FALLBACK.UNSUPPORTED_NODE
  if (httpDebug) return FALLBACK.DEBUG
  // OutgoingMessage#end: a finished response reports or queues, per chunk.
  if (res.finished) return FALLBACK.FINISHED
  if (res.destroyed) return FALLBACK.DESTROYED
  if (res._headerSent) return FALLBACK.HEADERS_SENT
  // write_: only strings and Uint8Arrays are chunks; anything else throws.
  if (chunk && typeof chunk !== 'string' && !isUint8Array(chunk)) {
    return FALLBACK.CHUNK_TYPE
  }
  // _send merges the header into utf8/latin1 strings only (exact names).
  if (chunk && typeof chunk === 'string' && encoding && encoding !== 'utf8' &&
      encoding !== 'latin1') {
    return FALLBACK.ENCODING
  }
  // _writeRaw writes directly only to the current, writable socket.
  const socket = res.socket
  if (!socket || !(socket instanceof Socket)) return FALLBACK.NO_SOCKET
  if (socket._httpMessage !== res) return FALLBACK.NOT_SOCKET_OWNER
  if (socket.destroyed || !socket.writable || !socket._handle) {
    return FALLBACK.SOCKET_UNWRITABLE
  }
  if (res[kCorked] !== 0 || socket.writableCorked !== 0 || socket.writableLength !== 0 ||
      res.outputData.length !== 0 || res.outputSize !== 0) {
    return FALLBACK.SOCKET_BUSY
  }
  if (socket._writableState.defaultEncoding !== 'utf8') return FALLBACK.ENCODING
  if (methodsPatched(res, socket)) return FALLBACK.PATCHED
  const req = res.req
  if (!req || req.httpVersionMajor !== 1 || req.httpVersionMinor !== 1 ||
      res.useChunkedEncodingByDefault !== true) {
    return FALLBACK.HTTP_VERSION
  }
  if (req.method === 'HEAD' || res._hasBody !== true) {
    return req.method === 'HEAD' ? FALLBACK.HEAD : FALLBACK.NO_BODY_STATUS
  }
  if (res._expect_continue) return FALLBACK.EXPECT
  if (res.strictContentLength) return FALLBACK.STRICT_CONTENT_LENGTH
  if (res._trailer !== '') return FALLBACK.TRAILERS
  if (res.chunkedEncoding) return FALLBACK.CHUNKED
  // A string's byte length is at least its length; nativeEnd() checks the
  // exact byte length before it changes anything.
  if (chunk && chunk.length > options.maxBodySize) return FALLBACK.BODY_TOO_LARGE

  if (res._header === null) return freshReason(res)
  // writeHead() rendered the header: its framing is already decided.
  if (typeof res._header !== 'string') return FALLBACK.INVALID
  const headers = res[kOutHeaders]
  return headers ? headersReason(headers) : null
}

// Values stored by setHeader() were validated then and are rendered without
// validation; only arrays can change afterwards. A header-line count taken
// from a rendered block is exact only while no stored value holds CR or LF,
// so such responses (and values whose stringification runs user code) are
// left to Node.
function headersReason (headers) {
  for (const key in headers) {
    const value = headers[key][1]
    if (typeof value === 'string') continue
    const reason = valueReason(key, value)
    if (reason !== null) return reason
  }
  return null
}

// The check of headersReason() for one stored value that is not a string.
function valueReason (key, value) {
  if (typeof value === 'number') {
    return key === 'content-disposition' ? FALLBACK.HEADER_VALUE : null
  }
  if (!Array.isArray(value)) return FALLBACK.HEADER_VALUE
  for (let i = 0; i < value.length; i++) {
    const item = value[i]
    if (typeof item === 'string') {
      if (INVALID_HEADER_CHAR.test(item)) return FALLBACK.INVALID
    } else if (typeof item !== 'number' || key === 'content-disposition') {
      return FALLBACK.HEADER_VALUE
    }
  }
  return null
}

// The checks writeHead() and _storeHeader() would make on a fresh response,
// for the cases the native renderer does not reproduce.
function freshReason (res) {
  // ToInt32 of an object would run user code, once per renderer.
  const status = res.statusCode
  if (typeof status !== 'number' && typeof status !== 'string') return FALLBACK.INVALID
  const code = status | 0
  if (code < 100 || code > 999) return FALLBACK.INVALID
  if (code === 204 || code === 304 || code < 200) return FALLBACK.NO_BODY_STATUS
  const message = res.statusMessage
  if (message && (typeof message !== 'string' || INVALID_HEADER_CHAR.test(message))) {
    return FALLBACK.INVALID
  }
  const headers = res[kOutHeaders]
  if (headers) {
    if (headers['transfer-encoding'] !== undefined) return FALLBACK.TRANSFER_ENCODING
    if (headers.trailer !== undefined) return FALLBACK.TRAILERS
    if (headers.expect !== undefined) return FALLBACK.EXPECT
    if (res._removedContLen && headers['content-length'] === undefined) return FALLBACK.CHUNKED
    // The stored values are checked while the block is rendered
    // (renderHeader), in the same pass.
  } else if (res._removedContLen) {
    return FALLBACK.CHUNKED
  }
  return null
}

// The automatic lines _storeHeader() appends after the user's headers on an
// HTTP/1.1 response with a body and no user Connection, Keep-Alive,
// Transfer-Encoding or Trailer header: Date, then the keep-alive block
// (useChunkedEncodingByDefault is true, so shouldSendKeepAlive is
// shouldKeepAlive itself). `tail.head` and `tail.lines` grow; `tail.last` is
// the value _last takes. Nothing on `res` changes here.
const tail = { head: '', lines: 0, last: false }
function renderTail (res, hasDate) {
  let head = tail.head
  let lines = tail.lines
  let last = res._last
  if (res.sendDate && !hasDate) {
    head += 'Date: ' + currentDate() + '\r\n'
    lines++
  }
  if (res._removedConnection) {
    last = !res.shouldKeepAlive
  } else if (res.shouldKeepAlive && res.maxRequestsOnConnectionReached) {
    head += 'Connection: close\r\n'
    lines++
  } else if (res.shouldKeepAlive) {
    head += 'Connection: keep-alive\r\n'
    lines++
    if (res._keepAliveTimeout && res._defaultKeepAlive) {
      const max = ~~res._maxRequestsPerSocket > 0 ? ', max=' + res._maxRequestsPerSocket : ''
      head += 'Keep-Alive: timeout=' + Math.floor(res._keepAliveTimeout / 1000) + max + '\r\n'
      lines++
    }
  } else {
    last = true
    head += 'Connection: close\r\n'
    lines++
  }
  tail.head = head
  tail.lines = lines
  tail.last = last
}

// The header block last rendered here or checked, and its line count: the
// count is a function of the string, so a later end() on an equal _header
// needs no recount.
let lastHead = ''
let lastLines = 0

// Renders one header entry as processHeader()/storeHeader() do (`key` is
// the lowercase name, or null to compute it when needed; arrays
// expand to one line each, except cookie and uniqueHeaders, joined with
// '; '), appending to `tail`.
function renderEntry (res, key, name, value) {
  if (Array.isArray(value)) {
    if (key === null) key = name.toLowerCase()
    const unique = res[kUniqueHeaders]
    if ((value.length < 2 || key !== 'cookie') && (!unique || !unique.has(key))) {
      let head = tail.head
      for (let i = 0; i < value.length; i++) head += name + ': ' + value[i] + '\r\n'
      tail.head = head
      tail.lines += value.length
      return
    }
    value = value.join('; ')
  }
  tail.head += name + ': ' + value + '\r\n'
  tail.lines++
}

// What renderHeader() returns when it cannot render: Node's own renderer
// must run (nothing was changed), or the response falls back.
const RENDER_BY_NODE = -1
const RENDER_FALLBACK = -2

// Renders the header block as writeHead(statusCode) and _storeHeader() do
// for a fresh response, with every side effect, and returns the number of
// header lines. Before it changes anything it may instead return
// RENDER_BY_NODE, when a header needs Node's own renderer (Connection,
// Keep-Alive, Content-Disposition, user Content-Length arrays), or
// RENDER_FALLBACK with `renderFailure` set, when a stored value would make
// Node run user code (headersReason()). Preconditions: freshReason(res)
// returned null and res._contentLength holds the body length.
let renderFailure = null
function renderHeader (res) {
  const code = res.statusCode | 0
  let message = res.statusMessage
  if (!message) message = STATUS_CODES[code] || 'unknown'
  tail.head = 'HTTP/1.1 ' + code + ' ' + message + '\r\n'
  tail.lines = 0
  let contLen = false
  let contentLength = 0
  let hasDate = false
  let byNode = false
  const headers = res[kOutHeaders]
  if (headers) {
    for (const key in headers) {
      const entry = headers[key]
      const value = entry[1]
      const type = typeof value
      if (type !== 'string' && type !== 'number') {
        // Values stored by setHeader() were validated then, but an array
        // can change afterwards; see headersReason().
        const reason = valueReason(key, value)
        if (reason !== null) {
          renderFailure = reason
          tail.head = ''
          return RENDER_FALLBACK
        }
      }
      if (key.length >= 4 && key.length <= 19) {
        switch (key) {
          case 'content-length':
            if (type !== 'string' && type !== 'number') byNode = true
            contLen = true
            contentLength = +value
            break
          case 'date':
            hasDate = true
            break
          case 'content-disposition':
            if (type === 'number') {
              renderFailure = FALLBACK.HEADER_VALUE
              tail.head = ''
              return RENDER_FALLBACK
            }
            byNode = true
            break
          case 'connection':
          case 'keep-alive':
            byNode = true
            break
        }
      }
      if (!byNode) renderEntry(res, key, entry[0], value)
    }
  }
  if (byNode) {
    tail.head = ''
    return RENDER_BY_NODE
  }
  renderTail(res, hasDate)
  if (!contLen) {
    // freshReason() excluded _removedContLen without a user length, so the
    // body length is the framing.
    tail.head += 'Content-Length: ' + res._contentLength + '\r\n'
    tail.lines++
  }

  if (!res.statusMessage) res.statusMessage = message
  res.statusCode = code
  if (contLen) {
    res._contentLength = contentLength
    res._removedContLen = false
  }
  res._last = tail.last
  res._header = tail.head + '\r\n'
  res._headerSent = false
  tail.head = ''
  return tail.lines
}

const hasOwn = Object.hasOwn
const ObjectPrototype = Object.prototype

const { isProxy } = util.types

// The header values fastWriteHead() has read so far, in order: when it hands
// a response to Node's writeHead() after reading some, Node must not read
// them again (a getter would run twice), so it gets a copy holding those
// values, then getters that read the rest from the original when Node
// reaches them. Reused, and cleared after each call.
const readKeys = []
const readValues = []

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

// The arguments for Node's writeHead() after fastWriteHead() read `n`
// values: the original object when none was read, else a plain object with
// the same keys in the same order, the values already read as data, and
// getters for the rest (`pending` is the key being read when reading threw
// `error`: its getter throws that error again, at the point Node reads it).
function handOver (obj, reason, n, pending, threw, error) {
  tail.head = ''
  let args
  if (n === 0 && !threw) {
    args = typeof reason === 'string' ? [reason, obj] : [obj, undefined]
    return args
  }
  const copy = {}
  const define = (key, desc) => Object.defineProperty(copy, key, {
    ...desc, enumerable: true, configurable: true
  })
  for (let i = 0; i < n; i++) define(readKeys[i], { value: readValues[i], writable: true })
  readValues.fill(undefined, 0, n)
  let seen = 0
  for (const key in obj) {
    if (!hasOwn(obj, key) || seen++ < n) continue
    if (threw && key === pending) {
      define(key, { get () { throw error } })
    } else {
      define(key, { get () { return obj[key] } })
    }
  }
  args = typeof reason === 'string' ? [reason, copy] : [copy, undefined]
  return args
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

// writeHead(statusCode[, reason][, obj]) for the shape frameworks use
// (fastify, benchmark/http/simple.js): a fresh HTTP/1.1 response with no
// setHeader() calls, a body-carrying status and a plain object of string,
// number or array values that includes Content-Length. It renders what
// ServerResponse#writeHead and _storeHeader() would, with their checks,
// and sets the same fields. Anything else, including
// every input Node rejects, returns false before changing anything, and
// Node's own writeHead() runs and throws its own errors.
function fastWriteHead (res, statusCode, reason, obj) {
  // Only primitives: ToInt32 of an object would run user code twice when
  // Node's writeHead() takes over.
  if ((typeof statusCode !== 'number' && typeof statusCode !== 'string') ||
      res._header || res[kOutHeaders] !== null || res.chunkedEncoding ||
      res.useChunkedEncodingByDefault !== true || res._hasBody !== true ||
      (res._expect_continue && !res._sent100)) {
    return false
  }
  const code = statusCode | 0
  if (code < 200 || code > 999 || code === 204 || code === 304) return false
  let message
  if (typeof reason === 'string') {
    message = reason
  } else {
    message = res.statusMessage
    if (!message) message = STATUS_CODES[code] || 'unknown'
    obj ??= reason
  }
  if (typeof message !== 'string' || obj === null || typeof obj !== 'object' || isProxy(obj)) {
    return false
  }
  const proto = Object.getPrototypeOf(obj)
  if (proto !== ObjectPrototype && proto !== null) return false

  // writeHead() checks statusMessage, then _storeHeader() each name and
  // value, with these same expressions (lib/_http_common.js); the C core
  // checks the whole block again before it reaches the socket.
  if (INVALID_HEADER_CHAR.test(message)) return false
  // Names first, without reading a value: the common reasons to leave the
  // block to Node (no Content-Length, so chunked framing; a header Node
  // treats apart; a bad name) are known before any getter could run.
  let contLen = false
  for (const key in obj) {
    if (!hasOwn(obj, key)) continue
    if (!TOKEN.test(key)) return false
    const special = specialName(key)
    if (special === 'content-length') {
      contLen = true
    } else if (special !== '' && special !== 'date') {
      return false
    }
  }
  if (!contLen) return false
  contLen = false
  tail.head = 'HTTP/1.1 ' + code + ' ' + message + '\r\n'
  tail.lines = 0
  let contentLength = 0
  let hasDate = false
  let n = 0
  for (const key in obj) {
    if (!hasOwn(obj, key)) continue
    const special = specialName(key)
    let value
    try {
      value = obj[key]
    } catch (err) {
      return handOver(obj, reason, n, key, true, err)
    }
    readKeys[n] = key
    readValues[n] = value
    n++
    const type = typeof value
    if (type === 'string') {
      if (INVALID_HEADER_CHAR.test(value)) return handOver(obj, reason, n, null, false, undefined)
    } else if (type !== 'number') {
      if (!Array.isArray(value) || !arrayRenderable(value)) {
        return handOver(obj, reason, n, null, false, undefined)
      }
    }
    if (special === 'content-length') {
      if (type !== 'string' && type !== 'number') {
        return handOver(obj, reason, n, null, false, undefined)
      }
      contLen = true
      contentLength = +value
    } else if (special === 'date') {
      hasDate = true
    }
    renderEntry(res, null, key, value)
  }
  if (!contLen) return handOver(obj, reason, n, null, false, undefined)
  readValues.fill(undefined, 0, n)
  renderTail(res, hasDate)
  const head = tail.head + '\r\n'
  const lines = tail.lines
  tail.head = ''

  if (typeof reason === 'string' || !res.statusMessage) res.statusMessage = message
  res.statusCode = code
  res._contentLength = contentLength
  res._removedContLen = false
  res._last = tail.last
  res._header = head
  res._headerSent = false
  lastHead = head
  lastLines = lines
  return true
}

/**
 * ServerResponse#writeHead replacement: the fast renderer above, else
 * Node's own writeHead with the same arguments.
 */
function writeHead (statusCode, reason, obj) {
  if (binding !== null && internals !== null && !httpDebug) {
    const done = fastWriteHead(this, statusCode, reason, obj)
    if (done === true) return this
    if (done !== false) return resWriteHead.call(this, statusCode, done[0], done[1])
  }
  return resWriteHead.call(this, statusCode, reason, obj)
}

// Counts the header lines of a block Node rendered (writeHead() or the
// fallback renderer), for the core's line-count check.
function countLines (head) {
  let lines = -2
  let at = -1
  while ((at = head.indexOf('\r\n', at + 1)) !== -1) lines++
  return lines
}

function onFinish (res) {
  // OutgoingMessage's onFinish: the client sets _hadError, never the server.
  if (res && res.socket && res.socket._hadError) return
  res.emit('finish')
}

/**
 * The native end(): renders the header if needed, builds one Buffer in C and
 * writes it with one socket.write() carrying the finish callback.
 * @returns {boolean} false when Node's own end() must run instead (the
 * header may have been rendered, which legacy end() continues from)
 */
function nativeEnd (res, chunk, encoding, callback) {
  const hasChunk = !!chunk
  let flags = 0
  let body
  let len = 0
  if (hasChunk) {
    body = chunk
    if (typeof chunk === 'string') {
      flags = encoding === 'latin1' ? FLAGS.BODY_LATIN1 : FLAGS.HEAD_UTF8 | FLAGS.ASCII_ONLY
    }
    len = bodyLength(chunk, encoding)
    if (len > options.maxBodySize) {
      count(FALLBACK.BODY_TOO_LARGE, res)
      return false
    }
    // A UTF-8 string has as many bytes as chars only when it is ASCII.
    if ((flags & FLAGS.ASCII_ONLY) !== 0 && len !== chunk.length) {
      count(FALLBACK.NON_ASCII, res)
      return false
    }
  }

  // Blocks rendered here hold only validated chars up to 0xFF, so the C
  // side may copy them as latin1; a block Node rendered may not (its
  // Content-Disposition handling can decode UTF-8), so it is read in full.
  let lines
  if (res._header === null) {
    const previousLength = res._contentLength
    res._contentLength = len
    lines = renderHeader(res)
    if (lines === RENDER_FALLBACK) {
      res._contentLength = previousLength
      count(renderFailure, res)
      return false
    }
    if (lines === RENDER_BY_NODE) {
      res._implicitHeader()
      if (res.chunkedEncoding || res._headerSent || typeof res._header !== 'string') {
        count(FALLBACK.CHUNKED, res)
        return false
      }
      lines = countLines(res._header)
    } else {
      flags |= FLAGS.HEAD_ONE_BYTE
    }
  } else if (res._header === lastHead) {
    lines = lastLines
    flags |= FLAGS.HEAD_ONE_BYTE
  } else {
    lines = countLines(res._header)
  }
  const head = res._header

  // Every char of an accepted head is one byte (latin1, or ASCII when the
  // block goes out as UTF-8), so the message size is known here and the
  // Buffer comes from Node's shared pool: a standalone allocation per
  // response costs more than everything else the native path does.
  // Refs: benchmark/build-message.js (buildFromHead vs pooled fill)
  const out = Buffer.allocUnsafe(head.length + len)
  const code = binding.fillFromHead(out, head, lines, body, flags)
  if (code !== 0) {
    count(code === binding.errors.ENONASCII ? FALLBACK.NON_ASCII : FALLBACK.INVALID, res)
    return false
  }

  stats.native++
  const socket = res.socket
  res._headerSent = true
  if (hasChunk && typeof chunk !== 'string') {
    // Node queues the latin1 header in outputData and flushes it before a
    // Uint8Array body (_send, _flushOutput): its pending-data updates can
    // resume a paused socket and must happen here too.
    res._onPendingData(head.length)
    res.outputData = []
    res._onPendingData(-head.length)
  }
  if (typeof callback === 'function') res.once('finish', callback)
  socket.write(out, () => onFinish(res))
  res.finished = true
  if (res.outputData.length === 0 && res.socket && res.socket._httpMessage === res) {
    res._finish()
  }
  return true
}

/**
 * ServerResponse#end replacement. Arguments are shuffled exactly as
 * OutgoingMessage#end does before anything else.
 */
function end (chunk, encoding, callback) {
  let c = chunk
  let e = encoding
  let cb = callback
  if (typeof c === 'function') {
    cb = c
    c = null
    e = null
  } else if (typeof e === 'function') {
    cb = e
    e = null
  }
  // A wrapper of OutgoingMessage#end installed after this one is Node's
  // end() as far as this response is concerned.
  const nodeEnd = OutgoingMessage.prototype.end
  const reason = nodeEnd !== legacyEnd ? FALLBACK.PATCHED : fallbackReason(this, c, e)
  if (reason === null) {
    if (nativeEnd(this, c, e, cb)) return this
  } else {
    count(reason, this)
  }
  return nodeEnd.call(this, chunk, encoding, callback)
}

let installed = false
let previousEnd
let previousWriteHead
// The writeHead a pristine response resolves to: ours while installed.
let currentWriteHead = resWriteHead

function install () {
  if (installed) return
  previousEnd = Object.getOwnPropertyDescriptor(ServerResponse.prototype, 'end')
  Object.defineProperty(ServerResponse.prototype, 'end', {
    value: end, writable: true, enumerable: false, configurable: true
  })
  if (internals !== null && ServerResponse.prototype.writeHead === resWriteHead) {
    previousWriteHead = Object.getOwnPropertyDescriptor(ServerResponse.prototype, 'writeHead')
    Object.defineProperty(ServerResponse.prototype, 'writeHead', {
      ...previousWriteHead, value: writeHead
    })
    currentWriteHead = writeHead
  }
  installed = true
}

// The value of an own data property, without running a getter.
function ownValue (obj, key) {
  const desc = Object.getOwnPropertyDescriptor(obj, key)
  return desc === undefined ? undefined : desc.value
}

// Restores what install() replaced, and only that: a method another module
// replaced since (an APM agent wrapping ServerResponse#end, say) stays, since
// putting the original back would silently drop that module's wrapper. The
// wrapper may still call this shim's end() or writeHead(), which is what it
// wrapped.
function uninstall () {
  if (!installed) return
  const proto = ServerResponse.prototype
  if (ownValue(proto, 'end') === end) {
    if (previousEnd === undefined) {
      delete proto.end
    } else {
      Object.defineProperty(proto, 'end', previousEnd)
    }
  }
  previousEnd = undefined
  if (previousWriteHead !== undefined) {
    if (ownValue(proto, 'writeHead') === writeHead) {
      Object.defineProperty(proto, 'writeHead', previousWriteHead)
    }
    previousWriteHead = undefined
    currentWriteHead = resWriteHead
  }
  installed = false
}

module.exports = {
  FALLBACK,
  DEFAULT_MAX_BODY,
  fallbackReason,
  end,
  install,
  uninstall,
  isInstalled: () => installed,
  stats,
  options,
  legacyEnd
}
