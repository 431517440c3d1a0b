'use strict'

// Node internals the shim reads, resolved once by feature detection. When any
// of them is missing the export is null and every response takes Node's own
// path with the reason 'unsupported-node'.

const http = require('node:http')
const net = require('node:net')
const EventEmitter = require('node:events')

function findSymbol (obj, description) {
  for (const sym of Object.getOwnPropertySymbols(obj)) {
    if (sym.description === description) return sym
  }
  return null
}

const OWN_FIELDS = [
  'outputData', 'outputSize', '_last', 'chunkedEncoding', 'shouldKeepAlive',
  'maxRequestsOnConnectionReached', '_defaultKeepAlive',
  'useChunkedEncodingByDefault', 'sendDate', '_removedConnection',
  '_removedContLen', '_removedTE', 'strictContentLength', '_contentLength',
  '_hasBody', '_trailer', 'finished', '_headerSent', 'socket', '_header',
  '_keepAliveTimeout', '_onPendingData', 'req', '_sent100', '_expect_continue'
]

// Methods that Node's own end() reaches through `this` and that the native
// path does not call: if any of them was replaced (on the instance, by a
// subclass, or on the prototype after install), the response falls back.
const RES_METHODS = ['writeHead', '_implicitHeader', '_storeHeader', '_send',
  '_writeRaw', '_flushOutput']

// Socket methods whose calls the native path reshapes (one write instead of
// a corked pair): an instrumented socket sees Node's own call pattern.
const SOCKET_METHODS = ['write', 'cork', 'uncork', '_write', '_writev',
  '_writeGeneric']

// The private symbols a ServerResponse carries on the Node lines whose
// outgoing path this shim reproduces: Node 20, plus what Node 22 added
// (its socket accessor and cork buffering). Node 24 added end-callback and
// finish bookkeeping of its own (kEndCallbacks, kWritableFinished,
// kFlushError) that the native path does not reproduce, so any symbol
// outside this list turns the shim off ('unsupported-node').
const KNOWN_SYMBOLS = new Set([
  'shapeMode', 'kCapture', 'kBytesWritten', 'kNeedDrain', 'corked', 'kOutHeaders',
  'errored', 'kHighWaterMark', 'kRejectNonStandardBodyWrites',
  'kChunkedBuffer', 'kChunkedLength', 'kSocket'
])

function resolve () {
  const SR = http.ServerResponse
  const OM = http.OutgoingMessage
  if (typeof SR !== 'function' || typeof OM !== 'function') return null

  const probe = new SR({ method: 'GET', httpVersionMajor: 1, httpVersionMinor: 1, headers: {} })
  probe.setHeader('x-probe', '1')
  for (const sym of Object.getOwnPropertySymbols(probe)) {
    if (!KNOWN_SYMBOLS.has(sym.description)) return null
  }
  const kOutHeaders = findSymbol(probe, 'kOutHeaders')
  const kCorked = findSymbol(probe, 'corked')
  if (kOutHeaders === null || kCorked === null) return null
  const map = probe[kOutHeaders]
  if (map === null || typeof map !== 'object' || Object.getPrototypeOf(map) !== null ||
      !Array.isArray(map['x-probe']) || map['x-probe'][0] !== 'x-probe') return null
  if (probe[kCorked] !== 0) return null
  for (const field of OWN_FIELDS) {
    if (!(field in probe)) return null
  }

  // kUniqueHeaders is copied from the server onto each response.
  const server = new http.Server()
  const kUniqueHeaders = findSymbol(server, 'kUniqueHeaders')
  if (kUniqueHeaders === null) return null

  const resMethods = {}
  for (const name of RES_METHODS) {
    const fn = SR.prototype[name]
    if (typeof fn !== 'function') return null
    resMethods[name] = fn
  }
  const socketMethods = {}
  for (const name of SOCKET_METHODS) {
    const fn = net.Socket.prototype[name]
    if (typeof fn !== 'function') return null
    socketMethods[name] = fn
  }
  if (typeof OM.prototype.end !== 'function' || typeof SR.prototype._finish !== 'function') {
    return null
  }

  // Node's module-private utcDate() cache is reached through the original
  // _storeHeader on a minimal receiver: with no headers, _removedConnection
  // and no body it renders just the Date line.
  const storeHeader = OM.prototype._storeHeader
  const dateProbe = {
    sendDate: true,
    chunkedEncoding: false,
    _removedConnection: true,
    shouldKeepAlive: true,
    _hasBody: false,
    _header: null,
    _headerSent: false,
    _last: false
  }
  function nodeDate () {
    storeHeader.call(dateProbe, '', null)
    const h = dateProbe._header
    return h.slice(6, h.length - 4)
  }
  if (!/^[A-Z][a-z]{2}, \d\d [A-Z][a-z]{2} \d{4} \d\d:\d\d:\d\d GMT$/.test(nodeDate())) return null

  // The socket's record of its last asynchronous write (net.js), which a
  // direct write that the kernel took in part must keep as Node would.
  const kLastWriteQueueSize = findSymbol(new net.Socket(), 'lastWriteQueueSize')

  return Object.freeze({
    kOutHeaders,
    kLastWriteQueueSize,
    kCorked,
    kUniqueHeaders,
    resMethods: Object.freeze(resMethods),
    socketMethods: Object.freeze(socketMethods),
    Socket: net.Socket,
    emit: EventEmitter.prototype.emit,
    nodeDate
  })
}

let internals = null
try {
  internals = resolve()
} catch {
  internals = null
}

module.exports = internals
