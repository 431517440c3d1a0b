'use strict'

// What the decision and the renderers share, loadable without the addon.

const util = require('node:util')
const { INVALID_HEADER_CHAR } = require('./header-rules.js')

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
  HTTP_VERSION: 'http-version', // not HTTP/1.0 or 1.1, or useChunkedEncodingByDefault not a boolean
  HEAD: 'head', // a body for HEAD under rejectNonStandardBodyWrites: Node throws
  NO_BODY_STATUS: 'no-body-status', // the same for 1xx, 204, 304
  EXPECT: 'expect', // 100-continue handling or a user Expect header
  STRICT_CONTENT_LENGTH: 'strict-content-length', // private byte accounting
  TRAILERS: 'trailers', // addTrailers() or a Trailer header
  TRANSFER_ENCODING: 'transfer-encoding', // user-set Transfer-Encoding
  CHUNKED: 'chunked', // chunked framing on a block the renderer did not cache
  ENCODING: 'encoding', // not utf8/latin1: separate header write, estimates
  CHUNK_TYPE: 'chunk-type', // not a string or Uint8Array: Node throws
  BODY_TOO_LARGE: 'body-too-large', // above maxBodySize, or above 4 KiB without a direct write
  HEADER_VALUE: 'header-value', // a value whose stringification runs user code
  NON_ASCII: 'non-ascii', // a UTF-8 message whose chars and bytes differ
  STREAMED: 'streamed', // end() after write()s with Content-Length framing, without a direct write
  NODE_RENDERED: 'node-rendered', // Node's block + a string body as one latin1 string (24.21+): dearer than Node's end()
  KEEP_ALIVE_MAX: 'keep-alive-max', // maxRequestsPerSocket not an int32: lines differ
  INVALID: 'invalid' // Node would throw, or the core rejected the message
})

const DEFAULT_MAX_BODY = Number.MAX_SAFE_INTEGER

// The largest body copied into one Buffer with the header; a larger one goes natively only in
// a direct write (sendmsg() gathers it uncopied): the copy costs more than Node's own path.
// Refs: benchmark/RESULTS.md ("bodies of every size"), docs/fallbacks.md
const COPY_MAX_BODY = 4 * 1024

// NODE_DEBUG=http: Node prints lines from end() and write_().
const httpDebug = util.debuglog('http').enabled

// A stored value that is not a string: numbers and arrays of valid strings and numbers render
// as Node's, except under Content-Disposition, which Node decodes as a string.
function valueReason (key, value) {
  if (typeof value === 'number') return key === 'content-disposition' ? FALLBACK.HEADER_VALUE : null
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

// Whether writeHead() sets _hasBody = false for `code` (after ToInt32).
function isBodylessStatus (code) {
  return code === 204 || code === 304 || (code >= 100 && code <= 199)
}

// FALLBACK (what stats().reasons counts), and the answers acted on without counting.
const REASON = Object.freeze({
  ...FALLBACK,
  BODY_DROPPED: 'body-dropped', // native: Node drops end()'s body (HEAD, 1xx, 204, 304)
  RENDER_BY_NODE: 'render-by-node', // native, once Node's _storeHeader() rendered the header
  REPORT: 'report', // native: Node's end() meets the error a direct write met
  // write() or uncork() leaves chunks to Node:
  LENGTH_FRAMING: 'length-framing', // Content-Length framing: one write already
  EMPTY_CHUNK: 'empty-chunk', // passed through unframed
  HEADER_PENDING: 'header-pending', // rendered as write_() does, then asked again
  NOTHING_HELD: 'nothing-held' // or the response stays corked
})

module.exports = {
  FALLBACK,
  REASON,
  DEFAULT_MAX_BODY,
  COPY_MAX_BODY,
  httpDebug,
  INVALID_HEADER_CHAR,
  valueReason,
  isBodylessStatus
}
