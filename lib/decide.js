'use strict'

// The one place that picks end()'s path; checks name what of Node's _http_outgoing.js they mirror.

const { Buffer } = require('node:buffer')
const { isUint8Array } = require('node:util/types')
const binding = require('./binding.js')
const internals = require('./internals.js')
const {
  REASON, DEFAULT_MAX_BODY, httpDebug, INVALID_HEADER_CHAR, valueReason, isBodylessStatus
} = require('./rules.js')
const { currentWriteHead } = require('./write-head.js')

const options = { maxBodySize: DEFAULT_MAX_BODY }

function setMaxBodySize (max) {
  options.maxBodySize = max
}

// Inlined: docs/architecture.md, "The inlining budget".
function maxBodySize () {
  return options.maxBodySize
}

const typedArrayProto = Object.getPrototypeOf(Uint8Array.prototype)
const intrinsic = name => Object.getOwnPropertyDescriptor(typedArrayProto, name).get
const viewBuffer = intrinsic('buffer')
const viewByteOffset = intrinsic('byteOffset')
const viewByteLength = intrinsic('byteLength')
const viewLength = intrinsic('length')

// Whether Stream._uint8ArrayToBuffer() gives the bytes C reads: it reads buffer, byteOffset
// and byteLength as lookups (a subclass may misread) and throws for a detached view.
function writtenAsIs (chunk) {
  if (chunk instanceof Buffer) return true
  const buffer = viewBuffer.call(chunk)
  if (chunk.buffer !== buffer || chunk.byteOffset !== viewByteOffset.call(chunk) ||
      chunk.byteLength !== viewByteLength.call(chunk)) {
    return false
  }
  if (viewLength.call(chunk) !== 0) return true
  // Empty, or detached (ArrayBuffer#detached is Node 22+).
  try {
    return new Uint8Array(buffer, 0, 0).length === 0
  } catch {
    return false
  }
}

const {
  kOutHeaders, kCorked, kRejectNonStandardBodyWrites, Socket, socketState = null, learned = null, uncork: resUncork
} = internals === null ? {} : internals
// A writable plain net.Socket is not destroyed; its handle under a symbol saves three getter loads.
const PlainSocket = socketState === null ? null : socketState.Socket
const {
  _implicitHeader: resImplicitHeader, _send: resSend, _writeRaw: resWriteRaw, _flushOutput: resFlushOutput
} = internals === null ? {} : internals.resMethods
const {
  write: socketWrite, cork: socketCork, uncork: socketUncork, _write: socketWrite_, _writev: socketWritev,
  _writeGeneric: socketWriteGeneric
} = internals === null ? {} : internals.socketMethods

// end() writes a string body and its header as one string (24.21+, 26.8+): after Node's block,
// a latin1 string sliced from C's Buffer, dearer than Node's end() (benchmark/instructions.js hono).
const slicedString = internals !== null && internals.protocol.oneStringWrite('x', false)

function nodeRenderedString (res, chunk, block) {
  return slicedString && block === null && typeof chunk === 'string' && chunk.length !== 0 &&
    res._hasBody === true && res.chunkedEncoding !== true
}

// Node's, or lib/write-head.js's beneath a writeHead wrapper.
let endStoreHeader = internals === null ? null : internals.resMethods._storeHeader

function headerMethodsPatched (res) {
  return res.writeHead !== currentWriteHead() || res._implicitHeader !== resImplicitHeader ||
    res._storeHeader !== endStoreHeader
}

// 22+'s end() calls this.uncork(): Node's, or the shim's.
let endUncork = resUncork
const outgoingProto = require('node:http').OutgoingMessage.prototype

function setEndMethods (uncork, storeHeader) {
  endUncork = uncork
  endStoreHeader = storeHeader
}

// Unrolled: this runs for every response.
function writeMethodsPatched (res, socket) {
  return res._send !== resSend || res._writeRaw !== resWriteRaw || res._flushOutput !== resFlushOutput ||
    res.uncork !== endUncork || outgoingProto.uncork !== resUncork || socket.write !== socketWrite ||
    socket.cork !== socketCork || socket.uncork !== socketUncork || socket._write !== socketWrite_ ||
    socket._writev !== socketWritev || socket._writeGeneric !== socketWriteGeneric
}

function methodsPatched (res, socket) {
  return headerMethodsPatched(res) || writeMethodsPatched(res, socket)
}

// What may wait before the shim's write: nothing, the socket's cork, or chunks held (24.22+).
const WAIT_NONE = 0
const WAIT_SOCKET = 1
const WAIT_HELD = 2

// In Node's order: _writeRaw() writes only to the current, writable socket, else queues.
function socketReason (res, socket, wait) {
  if (!socket || !(socket instanceof Socket)) return REASON.NO_SOCKET
  if (socket._httpMessage !== res) return REASON.NOT_SOCKET_OWNER
  if (socket.constructor === PlainSocket && learned.kHandle !== null
    ? !socket.writable || !socket[learned.kHandle]
    : socket.destroyed || !socket.writable || !socket._handle) {
    return REASON.SOCKET_UNWRITABLE
  }
  if (wait === WAIT_NONE
    ? res[kCorked] !== 0 || socket.writableCorked !== 0 || socket.writableLength !== 0 ||
      res.outputData.length !== 0 || res.outputSize !== 0
    : res.outputData.length !== 0 || (wait === WAIT_SOCKET && res[kCorked] !== 0)) {
    return REASON.SOCKET_BUSY
  }
  if (socket._writableState.defaultEncoding !== 'utf8') return REASON.ENCODING
  return null
}

// Written out in fallbackReason() and streamedReason(), as measured.
function writeReadyReason (res, socket, wait) {
  const reason = socketReason(res, socket, wait)
  if (reason !== null) return reason
  return methodsPatched(res, socket) ? REASON.PATCHED : null
}

/**
 * Whether res.end() may take the native path, cheapest check first; one unit (docs/architecture.md,
 * "The inlining budget"). `block`: lib/render.js blockOf().
 * @returns {string|null} null, BODY_DROPPED (native, Node drops the chunk), or a FALLBACK value
 */
function fallbackReason (res, chunk, encoding, block) {
  if (binding === null) return REASON.NO_BINDING
  if (internals === null) return REASON.UNSUPPORTED_NODE
  if (httpDebug) return REASON.DEBUG
  if (res.finished) return REASON.FINISHED
  if (res.destroyed) return REASON.DESTROYED
  if (res._headerSent) return REASON.HEADERS_SENT
  // write_: only strings and Uint8Arrays are chunks; anything else throws.
  if (chunk) {
    if (typeof chunk === 'string') {
      // _send merges the header into utf8/latin1 strings only (exact names).
      if (encoding && encoding !== 'utf8' && encoding !== 'latin1') return REASON.ENCODING
    } else if (!isUint8Array(chunk)) {
      return REASON.CHUNK_TYPE
    }
  }
  // Before the socket is read, so this fallback costs little more than Node's end().
  if (typeof res._header === 'string' && nodeRenderedString(res, chunk, block)) return REASON.NODE_RENDERED
  const socket = res.socket
  const socketFailure = socketReason(res, socket, WAIT_NONE)
  if (socketFailure !== null) return socketFailure
  // A replaced writeHead() matters only while end() renders the header (then headerFirst()).
  if (writeMethodsPatched(res, socket) || (!res._header && headerMethodsPatched(res))) return REASON.PATCHED
  const req = res.req
  if (!versionKnown(res, req)) return REASON.HTTP_VERSION
  // False for HEAD; a value Node would read by truthiness only is left to Node.
  const hasBody = res._hasBody
  if (hasBody !== true && hasBody !== false) return noBodyReason(req)
  if (res._expect_continue) return REASON.EXPECT
  if (res.strictContentLength) return REASON.STRICT_CONTENT_LENGTH
  if (res._trailer !== '') return REASON.TRAILERS
  if (!framingKnown(res, block, hasBody)) return REASON.CHUNKED
  const dropped = bodyDropped(res)
  if (chunk) {
    if (dropped) {
      // Node throws ERR_HTTP_BODY_NOT_ALLOWED, from a rendered header and a corked socket.
      if (kRejectNonStandardBodyWrites === null || res[kRejectNonStandardBodyWrites] !== false) {
        return noBodyReason(req)
      }
    } else if (chunk.length > options.maxBodySize) {
      // A string's byte length is at least its length; nativeEnd() checks the exact one.
      return REASON.BODY_TOO_LARGE
    }
  }

  let reason
  if (res._header === null) {
    reason = freshReason(res, dropped)
  } else if (typeof res._header !== 'string') {
    return REASON.INVALID
  } else {
    const headers = res[kOutHeaders]
    reason = headers ? headersReason(headers) : null
  }
  if (reason !== null || !chunk) return reason
  // Last: it reads the chunk's properties, once, where Node's write would.
  if (dropped) return REASON.BODY_DROPPED
  return typeof chunk !== 'string' && !writtenAsIs(chunk) ? REASON.CHUNK_TYPE : null
}

// Node reads useChunkedEncodingByDefault only (false for HTTP/1.0 unless TE names chunked).
function versionKnown (res, req) {
  return !!req && req.httpVersionMajor === 1 && (req.httpVersionMinor === 1 || req.httpVersionMinor === 0) &&
    typeof res.useChunkedEncodingByDefault === 'boolean'
}

// C frames chunked after a block cached as chunked or rendered by Node's writeHead(), with a
// body; a block whose chunkedEncoding changed by hand, or end()'s chunked render, is Node's.
function framingKnown (res, block, hasBody) {
  const ours = block !== null
  const chunkedBlock = ours && block.chunked
  if (res.chunkedEncoding
    ? !chunkedBlock && (res._header === null || (hasBody === true && ours))
    : chunkedBlock) {
    return false
  }
  return !chunkedBlock || hasBody === true
}

// Only arrays change after setHeader() validated; a CR or LF in one would break the line count.
function headersReason (headers) {
  for (const key in headers) {
    const value = headers[key][1]
    if (typeof value === 'string') continue
    const reason = valueReason(key, value)
    if (reason !== null) return reason
  }
  return null
}

// writeHead() and _storeHeader()'s checks the renderer does not reproduce.
function freshReason (res, dropped) {
  // ToInt32 of an object would run user code, once per renderer.
  const status = res.statusCode
  if (typeof status !== 'number' && typeof status !== 'string') return REASON.INVALID
  const code = status | 0
  if (code < 100 || code > 999) return REASON.INVALID
  // Keep-Alive's max: the number on Node 20 to 26.10, its ToInt32 on 26.12+.
  const max = res._maxRequestsPerSocket
  if (typeof max === 'number' && max !== (max | 0)) return REASON.KEEP_ALIVE_MAX
  const message = res.statusMessage
  if (message && (typeof message !== 'string' || INVALID_HEADER_CHAR.test(message))) return REASON.INVALID
  const headers = res[kOutHeaders]
  if (headers) {
    if (headers['transfer-encoding'] !== undefined) return REASON.TRANSFER_ENCODING
    if (headers.trailer !== undefined) return REASON.TRAILERS
    if (headers.expect !== undefined) return REASON.EXPECT
    // Without a body _storeHeader() adds no framing, removed or not.
    if (res._removedContLen && !dropped && headers['content-length'] === undefined) return REASON.CHUNKED
  } else if (res._removedContLen && !dropped) {
    return REASON.CHUNKED
  }
  return null
}

// write_() drops end()'s chunk and _storeHeader() adds no framing (HEAD, 1xx, 204, 304).
function bodyDropped (res) {
  if (res._hasBody === false) return true
  if (res._header !== null) return false
  // Anything else freshReason() refuses before ToInt32 could run user code.
  const status = res.statusCode
  if (typeof status !== 'number' && typeof status !== 'string') return false
  return isBodylessStatus(status | 0)
}

// write_()'s checks, in order ('' for no chunk), after NODE_DEBUG=http's.
function chunkReason (res, chunk, encoding) {
  if (httpDebug) return REASON.DEBUG
  if (typeof chunk === 'string') {
    if (encoding && encoding !== 'utf8' && encoding !== 'latin1') return REASON.ENCODING
  } else if (!isUint8Array(chunk)) {
    return REASON.CHUNK_TYPE
  }
  if (res.finished) return REASON.FINISHED
  if (res.destroyed) return REASON.DESTROYED
  if (res.strictContentLength) return REASON.STRICT_CONTENT_LENGTH
  return null
}

// end()'s after write() sent the header: the Writable checks a Uint8Array's encoding too.
function sentHeaderReason (res, chunk, encoding) {
  if (httpDebug) return REASON.DEBUG
  if (chunk && encoding && encoding !== 'utf8' && encoding !== 'latin1') return REASON.ENCODING
  const early = chunkReason(res, chunk || '', undefined)
  if (early !== null) return early
  if (typeof res._header !== 'string') return REASON.INVALID
  return res._hasBody !== true ? REASON.NO_BODY_STATUS : null
}

// end(), told PATCHED, may start as Node's (lib/shim.js renderFirst()) if only renderers were replaced.
function headerFirst (res) {
  return !res._header && !res.strictContentLength && !writeMethodsPatched(res, res.socket) &&
    headerMethodsPatched(res)
}

function noBodyReason (req) {
  return req.method === 'HEAD' ? REASON.HEAD : REASON.NO_BODY_STATUS
}

module.exports = {
  setMaxBodySize,
  maxBodySize,
  fallbackReason,
  headerFirst,
  WAIT_SOCKET,
  WAIT_HELD,
  writtenAsIs,
  socketReason,
  writeReadyReason,
  methodsPatched,
  chunkReason,
  sentHeaderReason,
  slicedString,
  nodeRenderedString,
  setEndMethods
}
