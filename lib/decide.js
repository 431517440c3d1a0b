'use strict'

// The one place that picks a path: fallbackReason() returns null for the
// native path or the reason Node's own end() must run. Each check says which
// part of lib/_http_outgoing.js or lib/_http_server.js (Node v20) it mirrors.

const { Buffer } = require('node:buffer')
const util = require('node:util')
const binding = require('./binding.js')
const internals = require('./internals.js')
const {
  FALLBACK, WRITE, DEFAULT_MAX_BODY, httpDebug, INVALID_HEADER_CHAR, valueReason, isBodylessStatus
} = require('./rules.js')
const { currentWriteHead } = require('./write-head.js')

// The cap on a body's byte length that install({ maxBodySize }) sets
// (rules.js DEFAULT_MAX_BODY: none), read by fallbackReason() and, through
// maxBodySize(), by lib/shim.js nativeEnd(), which checks the exact byte
// length. Only this file reads or writes it: setMaxBodySize() is its one
// writer (lib/index.js install()).
const options = { maxBodySize: DEFAULT_MAX_BODY }

/**
 * Sets the cap on a body's byte length (install({ maxBodySize })).
 * @param {number} max a non-negative safe integer, checked by the caller
 */
function setMaxBodySize (max) {
  options.maxBodySize = max
}

/**
 * The cap on a body's byte length. Small enough for V8 to inline into its
 * caller: a read of the field, as the caller's own read was.
 * @returns {number}
 */
function maxBodySize () {
  return options.maxBodySize
}

const { isUint8Array } = util.types
const typedArrayProto = Object.getPrototypeOf(Uint8Array.prototype)
const intrinsic = name => Object.getOwnPropertyDescriptor(typedArrayProto, name).get
const viewBuffer = intrinsic('buffer')
const viewByteOffset = intrinsic('byteOffset')
const viewByteLength = intrinsic('byteLength')
const viewLength = intrinsic('length')

/**
 * Whether Node's Writable would turn `chunk`, a Uint8Array it writes, into
 * the same bytes C reads. A Buffer is written as it is. Any other
 * Uint8Array becomes a Buffer first (Stream._uint8ArrayToBuffer(): a
 * FastBuffer over chunk.buffer, chunk.byteOffset and chunk.byteLength, read
 * as lookups, as here), which throws a TypeError for a view whose
 * ArrayBuffer was detached (transferred), from inside end() or write().
 * Such views, and views whose three properties do not read as the view's
 * own bytes, are Node's to write.
 * @param {Uint8Array} chunk
 * @returns {boolean}
 */
function writtenAsIs (chunk) {
  if (chunk instanceof Buffer) return true
  const buffer = viewBuffer.call(chunk)
  if (chunk.buffer !== buffer || chunk.byteOffset !== viewByteOffset.call(chunk) ||
      chunk.byteLength !== viewByteLength.call(chunk)) {
    return false
  }
  if (viewLength.call(chunk) !== 0) return true
  // An empty view: empty, or detached (ArrayBuffer#detached is Node 22+).
  try {
    return new Uint8Array(buffer, 0, 0).length === 0
  } catch {
    return false
  }
}

const { kOutHeaders, kCorked, kRejectNonStandardBodyWrites, kChunkedBuffer, Socket } =
  internals === null ? {} : internals
// A writable socket of exactly net.Socket's class is not destroyed, and its
// handle is under a symbol (lib/internals.js, learnWritableState() and
// learn()): its `destroyed` and `_handle` getters, three megamorphic loads,
// are read only for other sockets.
const socketState = internals === null ? null : internals.socketState
const PlainSocket = socketState === null ? null : socketState.Socket
const learned = internals === null ? null : internals.learned
let resImplicitHeader, resSend, resWriteRaw, resFlushOutput, resUncork
let socketWrite, socketCork, socketUncork, socketWrite_, socketWritev, socketWriteGeneric
if (internals !== null) {
  const r = internals.resMethods
  const k = internals.socketMethods
  resImplicitHeader = r._implicitHeader
  resSend = r._send
  resWriteRaw = r._writeRaw
  resFlushOutput = r._flushOutput
  resUncork = internals.uncork
  socketWrite = k.write
  socketCork = k.cork
  socketUncork = k.uncork
  socketWrite_ = k._write
  socketWritev = k._writev
  socketWriteGeneric = k._writeGeneric
}

// Whether end() hands the socket a message with a string body as one
// string (the protocol of 24.21+ and 26.8+, lib/protocol/node24.js): there
// a block Node rendered, which never goes out in a direct write, would
// leave as a latin1 string sliced from the Buffer C filled, through
// socket.write(), which costs more than Node's own end()
// (benchmark/instructions.js, shapes hono and honojson; docs/fallbacks.md
// "node-rendered"). Where end() writes the body apart (Node 20's protocol)
// the native path costs less, and such responses stay native.
const slicedString = internals !== null && internals.protocol.oneStringWrite('x', false)

/**
 * Whether end(chunk) would send a block Node's writeHead() rendered, or
 * will render (`block` null: not the renderer's), with a non-empty string
 * body as one latin1 string: where slicedString, Node's end() is cheaper.
 * @param {http.ServerResponse} res
 * @param {*} chunk the chunk as end() received it, after argument shuffling
 * @param {object|null} block lib/render.js blockOf() for `res`
 * @returns {boolean}
 */
function nodeRenderedString (res, chunk, block) {
  return slicedString && block === null && typeof chunk === 'string' && chunk.length !== 0 &&
    res._hasBody === true && res.chunkedEncoding !== true
}

// What writeHead() calls as this._storeHeader(): Node's own, or where
// lib/write-head.js put its _storeHeader() beneath a writeHead wrapper,
// that one (setEndMethods()).
let endStoreHeader = internals === null ? null : internals.resMethods._storeHeader

// The methods that render the header: end() calls them only while
// res._header is not set (write_(): _implicitHeader(), which calls
// writeHead(), which calls _storeHeader()).
function headerMethodsPatched (res) {
  return res.writeHead !== currentWriteHead() || res._implicitHeader !== resImplicitHeader ||
    res._storeHeader !== endStoreHeader
}

// What end() (22+) calls as this.uncork(): Node's own, or where lib/shim.js
// put its uncork() (setEndMethods()), that one, which passes the call on to
// OutgoingMessage#uncork. A wrapper of either is one end() calls.
let endUncork = resUncork
const outgoingProto = require('node:http').OutgoingMessage.prototype

/**
 * The uncork() and _storeHeader() install() left on
 * ServerResponse.prototype.
 * @param {Function|null} uncork
 * @param {Function|null} storeHeader
 */
function setEndMethods (uncork, storeHeader) {
  endUncork = uncork
  endStoreHeader = storeHeader
}

// The methods end() writes with, whatever the header. Unrolled: this runs
// for every response.
function writeMethodsPatched (res, socket) {
  return res._send !== resSend || res._writeRaw !== resWriteRaw ||
    res._flushOutput !== resFlushOutput ||
    res.uncork !== endUncork || outgoingProto.uncork !== resUncork ||
    socket.write !== socketWrite || socket.cork !== socketCork ||
    socket.uncork !== socketUncork || socket._write !== socketWrite_ ||
    socket._writev !== socketWritev || socket._writeGeneric !== socketWriteGeneric
}

function methodsPatched (res, socket) {
  return headerMethodsPatched(res) || writeMethodsPatched(res, socket)
}

// What may wait before a write of the shim's, for socketReason(): nothing
// anywhere (end()'s one write must be the socket's next: no cork on the
// response or the socket, nothing queued on either); nothing on the
// response (write() and end() after write() on Node 20, which add to what
// waits on the socket's cork, as Node's writes do); or chunks held on the
// response's own cork (uncork() and end() after write() on Node 24.22+,
// which send them).
const WAIT_NONE = 0
const WAIT_SOCKET = 1
const WAIT_HELD = 2

/**
 * The socket checks every path of the shim makes before it writes, in
 * Node's order (_writeRaw() writes directly only to the current, writable
 * socket; write_() and _send() queue in outputData otherwise): a net.Socket
 * the response owns, writable, with a handle; nothing waiting that `wait`
 * does not allow; the socket's default encoding.
 * @param {http.ServerResponse} res
 * @param {net.Socket|null|undefined} socket res.socket
 * @param {number} wait WAIT_NONE, WAIT_SOCKET or WAIT_HELD
 * @returns {string|null} null when the socket is ready, else the FALLBACK
 */
function socketReason (res, socket, wait) {
  if (!socket || !(socket instanceof Socket)) return FALLBACK.NO_SOCKET
  if (socket._httpMessage !== res) return FALLBACK.NOT_SOCKET_OWNER
  if (socket.constructor === PlainSocket && learned.kHandle !== null
    ? !socket.writable || !socket[learned.kHandle]
    : socket.destroyed || !socket.writable || !socket._handle) {
    return FALLBACK.SOCKET_UNWRITABLE
  }
  if (wait === WAIT_NONE
    ? res[kCorked] !== 0 || socket.writableCorked !== 0 || socket.writableLength !== 0 ||
      res.outputData.length !== 0 || res.outputSize !== 0
    : res.outputData.length !== 0 || (wait === WAIT_SOCKET && res[kCorked] !== 0)) {
    return FALLBACK.SOCKET_BUSY
  }
  if (socket._writableState.defaultEncoding !== 'utf8') return FALLBACK.ENCODING
  return null
}

/**
 * Decides whether res.end(chunk, encoding) may take the native path.
 * Checks run cheapest first and have no side effects.
 * Long: one ordered list, since the first check that fails names the
 * reason stats() counts (test/shim.test.js asserts those reasons); each
 * step says which part of Node's end() it mirrors. One compilation unit,
 * its helpers within its budget (docs/architecture.md, "The inlining budget").
 * @param {http.ServerResponse} res
 * @param {*} chunk the chunk as end() received it, after argument shuffling
 * @param {*} encoding the encoding, after argument shuffling
 * @param {object|null} block what the renderer put on `res` (lib/render.js
 *   blockOf()): null when the header is not one it rendered
 * @returns {string|null} null for the native path, BODY_DROPPED for the
 *   native path without the chunk (Node drops it), else a FALLBACK value
 */
function fallbackReason (res, chunk, encoding, block) {
  if (binding === null) return FALLBACK.NO_BINDING
  if (internals === null) return FALLBACK.UNSUPPORTED_NODE
  if (httpDebug) return FALLBACK.DEBUG
  // OutgoingMessage#end: a finished response reports or queues, per chunk.
  if (res.finished) return FALLBACK.FINISHED
  if (res.destroyed) return FALLBACK.DESTROYED
  if (res._headerSent) return FALLBACK.HEADERS_SENT
  // write_: only strings and Uint8Arrays are chunks; anything else throws.
  if (chunk) {
    if (typeof chunk === 'string') {
      // _send merges the header into utf8/latin1 strings only (exact names).
      if (encoding && encoding !== 'utf8' && encoding !== 'latin1') return FALLBACK.ENCODING
    } else if (!isUint8Array(chunk)) {
      return FALLBACK.CHUNK_TYPE
    }
  }
  // Decided before the socket is read: the fallback then costs Node's own
  // end() and little more. A header still to render is decided in
  // lib/shim.js nativeEnd(), once the renderer says it is Node's.
  if (typeof res._header === 'string' && nodeRenderedString(res, chunk, block)) return FALLBACK.NODE_RENDERED
  const socket = res.socket
  const socketFailure = socketReason(res, socket, WAIT_NONE)
  if (socketFailure !== null) return socketFailure
  // A replaced writeHead() (on-headers: morgan, compression,
  // express-session) matters only while end() has the header to render,
  // and then headerFirst() may let end() render it as Node's would.
  if (writeMethodsPatched(res, socket) || (!res._header && headerMethodsPatched(res))) {
    return FALLBACK.PATCHED
  }
  const req = res.req
  if (!versionKnown(res, req)) return FALLBACK.HTTP_VERSION
  // ServerResponse sets _hasBody = false for HEAD; a value Node would read
  // by truthiness only is left to Node.
  const hasBody = res._hasBody
  if (hasBody !== true && hasBody !== false) return noBodyReason(req)
  if (res._expect_continue) return FALLBACK.EXPECT
  if (res.strictContentLength) return FALLBACK.STRICT_CONTENT_LENGTH
  if (res._trailer !== '') return FALLBACK.TRAILERS
  if (!framingKnown(res, block, hasBody)) return FALLBACK.CHUNKED
  const dropped = bodyDropped(res)
  if (chunk) {
    if (dropped) {
      // write_: with rejectNonStandardBodyWrites a body Node would drop
      // throws ERR_HTTP_BODY_NOT_ALLOWED instead, from a rendered header
      // and a corked socket.
      if (kRejectNonStandardBodyWrites === null || res[kRejectNonStandardBodyWrites] !== false) {
        return noBodyReason(req)
      }
    } else if (chunk.length > options.maxBodySize) {
      // A string's byte length is at least its length; the native end
      // checks the exact byte length before it changes anything.
      return FALLBACK.BODY_TOO_LARGE
    }
  }

  let reason
  if (res._header === null) {
    reason = freshReason(res, dropped)
  } else if (typeof res._header !== 'string') {
    // writeHead() rendered the header: its framing is already decided.
    return FALLBACK.INVALID
  } else {
    const headers = res[kOutHeaders]
    reason = headers ? headersReason(headers) : null
  }
  if (reason !== null || !chunk) return reason
  // Last: it reads the chunk's properties, once, where Node's write would.
  if (dropped) return BODY_DROPPED
  return typeof chunk !== 'string' && !writtenAsIs(chunk) ? FALLBACK.CHUNK_TYPE : null
}

// fallbackReason()'s answer for the native path when Node drops the chunk
// end() was given (HEAD, 1xx, 204, 304: bodyDropped()): the write sends the
// header block alone. Not a FALLBACK value; the public fallbackReason()
// (lib/shim.js) reports it as null.
const BODY_DROPPED = 'body-dropped'

// HTTP/1.0 and 1.1 alike: _storeHeader() and end() never read the
// version, only useChunkedEncodingByDefault (the constructor sets it false
// for HTTP/1.0, unless TE names chunked), which the renderers
// (lib/render.js) follow.
function versionKnown (res, req) {
  return !!req && req.httpVersionMajor === 1 &&
    (req.httpVersionMinor === 1 || req.httpVersionMinor === 0) &&
    typeof res.useChunkedEncodingByDefault === 'boolean'
}

// Whether C can frame the body as the response says. Chunked framing goes
// out natively after a header block the renderer cached as chunked
// (writeHead() without Content-Length), or one Node's own writeHead()
// rendered (stored headers, array values, ...): C adds the chunk around
// the body and the last chunk, as write_() and end() do. A block the
// renderer rendered whose response no longer says what it rendered
// (chunkedEncoding changed by hand), and a header end() would render, are
// left to Node. Without a body (HEAD) end() neither frames nor sends the
// chunk, whatever chunkedEncoding says, once the header is rendered.
// `block`: lib/render.js blockOf(); `hasBody`: res._hasBody, a boolean.
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

// The checks writeHead() and _storeHeader() would make on a fresh response,
// for the cases the native renderer does not reproduce.
function freshReason (res, dropped) {
  // ToInt32 of an object would run user code, once per renderer.
  const status = res.statusCode
  if (typeof status !== 'number' && typeof status !== 'string') return FALLBACK.INVALID
  const code = status | 0
  if (code < 100 || code > 999) return FALLBACK.INVALID
  // Keep-Alive's max: the number on Node 20 to 26.10, its ToInt32 on 26.12+.
  const max = res._maxRequestsPerSocket
  if (typeof max === 'number' && max !== (max | 0)) return FALLBACK.KEEP_ALIVE_MAX
  const message = res.statusMessage
  if (message && (typeof message !== 'string' || INVALID_HEADER_CHAR.test(message))) {
    return FALLBACK.INVALID
  }
  const headers = res[kOutHeaders]
  if (headers) {
    if (headers['transfer-encoding'] !== undefined) return FALLBACK.TRANSFER_ENCODING
    if (headers.trailer !== undefined) return FALLBACK.TRAILERS
    if (headers.expect !== undefined) return FALLBACK.EXPECT
    // Without a body _storeHeader() adds no framing, removed or not.
    if (res._removedContLen && !dropped && headers['content-length'] === undefined) {
      return FALLBACK.CHUNKED
    }
  } else if (res._removedContLen && !dropped) {
    return FALLBACK.CHUNKED
  }
  return null
}

/**
 * Whether Node sends no body for `res`: write_() drops a chunk given to
 * end() and _storeHeader() adds no Content-Length or chunked framing. That
 * is a HEAD request (ServerResponse's constructor), or a header rendered
 * by writeHead() for a bodyless status, or a fresh response whose status
 * _implicitHeader() will render as one.
 * @param {http.ServerResponse} res
 * @returns {boolean}
 */
function bodyDropped (res) {
  if (res._hasBody === false) return true
  if (res._header !== null) return false
  // Anything else freshReason() refuses before ToInt32 could run user code.
  const status = res.statusCode
  if (typeof status !== 'number' && typeof status !== 'string') return false
  return isBodylessStatus(status | 0)
}

/**
 * What write_() checks of a chunk and the response before it writes, in
 * its order: the chunk's type and encoding, then a finished or destroyed
 * response, then strictContentLength (its length check is Node's).
 * @param {http.ServerResponse} res the response
 * @param {*} chunk the chunk, after argument shuffling ('' for none)
 * @param {*} encoding the encoding, after argument shuffling
 * @returns {string|null} the reason Node's own method runs, or null
 */
function chunkReason (res, chunk, encoding) {
  if (typeof chunk === 'string') {
    if (encoding && encoding !== 'utf8' && encoding !== 'latin1') return FALLBACK.ENCODING
  } else if (!isUint8Array(chunk)) {
    return FALLBACK.CHUNK_TYPE
  }
  if (res.finished) return FALLBACK.FINISHED
  if (res.destroyed) return FALLBACK.DESTROYED
  if (res.strictContentLength) return FALLBACK.STRICT_CONTENT_LENGTH
  return null
}

/**
 * Decides whether res.write(chunk, encoding) may send its chunk with fewer
 * socket writes (lib/send.js, writeChunk()): with chunked framing, on a
 * line where the probe found Node 20's write() (internals.chunkedWrite).
 * Checks write_() and _writeRaw() in their order, without side effects.
 * @param {http.ServerResponse} res
 * @param {*} chunk the chunk as write() received it
 * @param {*} encoding the encoding, after argument shuffling
 * @returns {string|null} null to send it, else why Node's write() runs
 */
function writeReason (res, chunk, encoding) {
  if (binding === null) return FALLBACK.NO_BINDING
  if (internals === null || !internals.chunkedWrite) return FALLBACK.UNSUPPORTED_NODE
  // NODE_DEBUG=http: write_() prints its result.
  if (httpDebug) return FALLBACK.DEBUG
  const early = chunkReason(res, chunk, encoding)
  if (early !== null) return early
  if (res._header === null) return WRITE.HEADER_PENDING
  if (typeof res._header !== 'string') return FALLBACK.INVALID
  if (res._hasBody !== true) return FALLBACK.NO_BODY_STATUS
  if (res.chunkedEncoding !== true) return WRITE.LENGTH_FRAMING
  if (chunk.length === 0) return WRITE.EMPTY_CHUNK
  const socket = res.socket
  const socketFailure = socketReason(res, socket, WAIT_SOCKET)
  if (socketFailure !== null) return socketFailure
  if (methodsPatched(res, socket)) return FALLBACK.PATCHED
  if (typeof chunk !== 'string' && !writtenAsIs(chunk)) return FALLBACK.CHUNK_TYPE
  return null
}

/**
 * Decides whether end(chunk) on a response whose header went out with an
 * earlier write() may send its chunk the shim's way, where Node's end() is
 * Node 20's (lib/shim.js, tailEnd), in fewer writes (lib/send.js,
 * endAfterWrites()): with chunked framing where write() would send the
 * chunk the shim's way (writeReason()), else while a write waits on the
 * socket's cork; and end() without a chunk, with chunked framing, while
 * writes wait on the cork. Checks write_() and end() in their order,
 * without side effects.
 * @param {http.ServerResponse} res a response whose _headerSent is true
 * @param {*} chunk the chunk as end() received it, after argument shuffling
 * @param {*} encoding the encoding, after argument shuffling
 * @returns {string|null} null to send it, else why Node's end() runs
 */
function tailReason (res, chunk, encoding) {
  if (internals !== null && internals.chunkedUncork) return heldTailReason(res, chunk, encoding)
  if (!chunk) {
    // end() writes '0', the trailers and CRLF, joined with the chunks
    // write() left waiting on the cork (nothing to join otherwise).
    if (res.chunkedEncoding !== true) return WRITE.NOTHING_HELD
    const reason = writeReason(res, '0', undefined)
    if (reason !== null) return reason
    if (typeof res._trailer !== 'string') return FALLBACK.TRAILERS
    const state = res.socket._writableState
    if (state.corked === 0 || !Array.isArray(state.buffered) || state.buffered.length <= state.bufferedIndex) {
      return WRITE.NOTHING_HELD
    }
    return res.uncork !== resUncork ? FALLBACK.PATCHED : null
  }
  if (res.chunkedEncoding === true) {
    const reason = writeReason(res, chunk, encoding)
    if (reason !== null) return reason
    // end() writes '0', the trailers and CRLF as one latin1 string.
    if (typeof res._trailer !== 'string') return FALLBACK.TRAILERS
    return res.uncork !== resUncork ? FALLBACK.PATCHED : null
  }
  if (httpDebug) return FALLBACK.DEBUG
  // Node's Writable checks the encoding of a Uint8Array chunk too.
  if (encoding && encoding !== 'utf8' && encoding !== 'latin1') return FALLBACK.ENCODING
  if (typeof chunk !== 'string' && !isUint8Array(chunk)) return FALLBACK.CHUNK_TYPE
  if (res.finished) return FALLBACK.FINISHED
  if (res.destroyed) return FALLBACK.DESTROYED
  if (res.strictContentLength) return FALLBACK.STRICT_CONTENT_LENGTH
  if (typeof res._header !== 'string' || res.chunkedEncoding !== false) return FALLBACK.INVALID
  if (res._hasBody !== true) return FALLBACK.NO_BODY_STATUS
  const socket = res.socket
  const socketFailure = socketReason(res, socket, WAIT_SOCKET)
  if (socketFailure !== null) return socketFailure
  const state = socket._writableState
  // Node's end() adds two writes (the chunk, then an empty one carrying
  // 'finish') to at least one still waiting on the cork, and the socket
  // writes them all with one writev; the one write joins them there too.
  // Alone it would be a plain write, which reports a failure otherwise
  // (bytesWritten).
  const buffered = state.buffered
  if (state.corked === 0 || !Array.isArray(buffered) || buffered.length <= state.bufferedIndex) {
    return WRITE.NOTHING_HELD
  }
  // Node 22's end() calls the response's uncork().
  if (methodsPatched(res, socket) || res.uncork !== resUncork) return FALLBACK.PATCHED
  if (typeof chunk !== 'string' && !writtenAsIs(chunk)) return FALLBACK.CHUNK_TYPE
  return null
}

/**
 * tailReason() where end() and write_() are Node 24.22's (26.10's alike;
 * internals.chunkedUncork): end(chunk) once write() sent the header or
 * holds chunks on the response's cork, and end() with chunks held. The
 * caller checked that res.uncork() is the shim's (flushChunks()).
 * @param {http.ServerResponse} res
 * @param {*} chunk
 * @param {*} encoding
 * @returns {string|null}
 */
function heldTailReason (res, chunk, encoding) {
  if (httpDebug) return FALLBACK.DEBUG
  if (chunk) {
    // Node's Writable checks the encoding of a Uint8Array chunk too.
    if (encoding && encoding !== 'utf8' && encoding !== 'latin1') return FALLBACK.ENCODING
    if (typeof chunk !== 'string' && !isUint8Array(chunk)) return FALLBACK.CHUNK_TYPE
  }
  if (res.finished) return FALLBACK.FINISHED
  if (res.destroyed) return FALLBACK.DESTROYED
  if (res.strictContentLength) return FALLBACK.STRICT_CONTENT_LENGTH
  if (typeof res._header !== 'string') return FALLBACK.INVALID
  if (res._hasBody !== true) return FALLBACK.NO_BODY_STATUS
  const socket = res.socket
  const socketFailure = socketReason(res, socket, WAIT_HELD)
  if (socketFailure !== null) return socketFailure
  const state = socket._writableState
  if (methodsPatched(res, socket)) return FALLBACK.PATCHED
  const held = res[kChunkedBuffer]
  const corked = res[kCorked]
  if (!Array.isArray(held) || held.length % 3 !== 0 || typeof corked !== 'number' || corked < 0) {
    return FALLBACK.INVALID
  }
  if (res.chunkedEncoding === true) {
    // end() writes '0', the trailers and CRLF as one latin1 string.
    if (typeof res._trailer !== 'string') return FALLBACK.TRAILERS
    if (corked !== 0) {
      // write_() holds end()'s chunk as a Buffer (a plain Uint8Array
      // becomes a view); uncork() sends what is held. Without a chunk
      // end() sends it with the socket as corked as write_() left it.
      if (chunk) {
        if (isUint8Array(chunk) && !(chunk instanceof Buffer)) return FALLBACK.CHUNK_TYPE
        // An empty chunk joins held chunks only; alone write_() sends it
        // (with the header) as a write of its own.
        return chunk.length === 0 && held.length === 0 ? WRITE.EMPTY_CHUNK : null
      }
      return held.length === 0 || state.corked === 0 ? WRITE.NOTHING_HELD : null
    }
    // Sent by write_() as it comes, after everything before it.
    if (!chunk || held.length !== 0 || res._headerSent !== true) return WRITE.NOTHING_HELD
    if (chunk.length === 0) return WRITE.EMPTY_CHUNK
    return typeof chunk !== 'string' && !writtenAsIs(chunk) ? FALLBACK.CHUNK_TYPE : null
  }
  if (res.chunkedEncoding !== false) return FALLBACK.INVALID
  // Without chunked framing write_() holds nothing; the chunk carries
  // 'finish' (and end() without one writes an empty string or waits a tick).
  if (!chunk || held.length !== 0 || res._headerSent !== true) return WRITE.NOTHING_HELD
  return typeof chunk !== 'string' && !writtenAsIs(chunk) ? FALLBACK.CHUNK_TYPE : null
}

/**
 * Decides whether end(chunk) after write()s with Content-Length framing may
 * send what waits on the socket's cork in one direct write (lib/send.js,
 * sendWaiting()): every write of the response since its header waits
 * there, in the one cork write_() took this tick, with nothing else
 * pending on the socket; the header block is one the renderer cached.
 * Checks write_() and end() in their order, without side effects.
 * @param {http.ServerResponse} res a response whose _headerSent is true
 * @param {*} chunk the chunk as end() received it, after argument shuffling
 * @param {*} encoding the encoding, after argument shuffling
 * @param {object|null} block lib/render.js blockOf() for `res`
 * @returns {string|null} null to send it, else why Node's end() runs
 */
function streamedReason (res, chunk, encoding, block) {
  if (httpDebug) return FALLBACK.DEBUG
  const early = chunkReason(res, chunk || '', chunk ? encoding : undefined)
  if (early !== null) return early
  if (typeof res._header !== 'string' || res._hasBody !== true) return FALLBACK.HEADERS_SENT
  const socket = res.socket
  // (A fake socket, as fastify.inject()'s: the header went out there.)
  if (!socket || !(socket instanceof Socket)) return FALLBACK.HEADERS_SENT
  const waiting = waitingReason(res, socket._writableState)
  if (waiting !== null) return waiting
  // Before the socket's other checks: a block Node rendered (an array
  // value, a Connection header, pairs merged into headers set before) then
  // costs Node's own end() and little more.
  if (block === null || block.slot < 0 || block.chunked) return FALLBACK.STREAMED
  const socketFailure = socketReason(res, socket, WAIT_HELD)
  if (socketFailure !== null) return socketFailure
  // (Node 22+'s end() calls the response's uncork() too: the caller checks
  // it, which may be the shim's own.)
  if (methodsPatched(res, socket)) return FALLBACK.PATCHED
  if (chunk && typeof chunk !== 'string' && !writtenAsIs(chunk)) return FALLBACK.CHUNK_TYPE
  return null
}

/**
 * Whether the writes waiting on the socket's cork are all of `res` since
 * its header, and nothing else is pending: the first may hold the header
 * (write_() joins a string chunk to it, or writes it alone before a
 * Uint8Array), no write is in flight and no callback waits but theirs.
 * @param {http.ServerResponse} res
 * @param {object} state the socket's Writable state
 * @returns {string|null} null, HEADERS_SENT (the header went out earlier)
 *   or SOCKET_BUSY
 */
function waitingReason (res, state) {
  const buffered = state.buffered
  if (state.corked === 0 || !Array.isArray(buffered) || buffered.length === 0 ||
      state.bufferedIndex !== 0) {
    return FALLBACK.HEADERS_SENT
  }
  if (state.writing || state.objectMode || state.errored !== null || state.ending ||
      state.pendingcb !== buffered.length) {
    return FALLBACK.SOCKET_BUSY
  }
  // (That a string begins with the header, lib/send.js waitingBody()
  // checks as it takes the body: a merged string is a cons string, whose
  // chars V8 reads one by one until it is flattened.)
  const first = buffered[0].chunk
  const head = res._header
  if (first !== head && (typeof first !== 'string' || first.length <= head.length)) {
    return FALLBACK.HEADERS_SENT
  }
  return null
}

/**
 * Decides whether res.uncork() may send the chunks a Node 24.22+/26.10+
 * response holds on its own cork (kChunkedBuffer) with fewer socket writes
 * (lib/send.js, flushChunks()), where the probe found that protocol
 * (internals.chunkedUncork). Yes only when Node's uncork() would send them
 * now, straight to the socket: this call takes the response's cork count
 * to 0, and _writeRaw() would write to the socket it owns.
 * @param {http.ServerResponse} res
 * @returns {string|null} null to send them, else why Node's uncork() runs
 */
function uncorkReason (res) {
  if (binding === null) return FALLBACK.NO_BINDING
  if (internals === null || !internals.chunkedUncork) return FALLBACK.UNSUPPORTED_NODE
  const buffered = res[kChunkedBuffer]
  if (res[kCorked] !== 1 || !Array.isArray(buffered) || buffered.length === 0 ||
      buffered.length % 3 !== 0) {
    return WRITE.NOTHING_HELD
  }
  if (res.destroyed) return FALLBACK.DESTROYED
  if (res.chunkedEncoding !== true || typeof res._header !== 'string') return FALLBACK.INVALID
  const socket = res.socket
  const socketFailure = socketReason(res, socket, WAIT_HELD)
  if (socketFailure !== null) return socketFailure
  if (methodsPatched(res, socket)) return FALLBACK.PATCHED
  return null
}

/**
 * Whether end(), told PATCHED by fallbackReason(), may make the calls Node's
 * end() starts with itself, in Node's order: socket.cork(), the body's
 * length in _contentLength, then _implicitHeader(), which runs the
 * replaced writeHead() (lib/shim.js, renderFirst()). Yes when only the
 * methods that render the header were replaced and nothing turns end()
 * from that start: no header yet and no strictContentLength
 * (fallbackReason() checked the rest before PATCHED: not finished or
 * destroyed, a string or Uint8Array chunk, a socket of the response).
 * What the wrapper leaves is then decided again, with the header set.
 * @param {http.ServerResponse} res
 * @returns {boolean}
 */
function headerFirst (res) {
  return !res._header && !res.strictContentLength && !writeMethodsPatched(res, res.socket) &&
    headerMethodsPatched(res)
}

// The reason a bodyless response falls back with.
function noBodyReason (req) {
  return req.method === 'HEAD' ? FALLBACK.HEAD : FALLBACK.NO_BODY_STATUS
}

module.exports = {
  FALLBACK,
  DEFAULT_MAX_BODY,
  setMaxBodySize,
  maxBodySize,
  fallbackReason,
  BODY_DROPPED,
  headerFirst,
  WRITE,
  writeReason,
  tailReason,
  streamedReason,
  uncorkReason,
  slicedString,
  nodeRenderedString,
  setEndMethods
}
