'use strict'

// Node internals the shim reads, resolved once by feature detection; null when any is missing
// ('unsupported-node'). What this file builds is never an object of a class the server builds
// too, of a shape of its own: V8 would turn Node's shared stores megamorphic (benchmark/RESULTS.md,
// "what a response that falls back costs").

const http = require('node:http')
const net = require('node:net')
const stream = require('node:stream')
const util = require('node:util')
const { storedAnswer, findSymbol } = require('./protocol/answer.js')
const nodeMethodsOf = require('./node-methods.js')
const node20 = require('./protocol/node20.js')
const node24 = require('./protocol/node24.js')

const debug = util.debuglog('http-oneshot')

// Node's end() calls these through `this`, the native path does not: one replaced means a fallback.
const RES_METHODS = ['writeHead', '_implicitHeader', '_storeHeader', '_send', '_writeRaw', '_flushOutput']

// Socket methods whose calls the native path reshapes (one write instead of
// a corked pair): an instrumented socket sees Node's own call pattern.
const SOCKET_METHODS = ['write', 'cork', 'uncork', '_write', '_writev', '_writeGeneric']

// A ServerResponse's private symbols on Node 20 to 22; any other but the protocol's turns the shim off.
const KNOWN_SYMBOLS = [
  'shapeMode', 'kCapture', 'kBytesWritten', 'kNeedDrain', 'corked', 'kOutHeaders', 'errored',
  'kHighWaterMark', 'kRejectNonStandardBodyWrites', 'kChunkedBuffer', 'kChunkedLength', 'kSocket'
]
// Node 24.21+ and 26.8+ (lib/protocol/node24.js); kLenientCache from 26.12.
const NODE24_SYMBOLS = ['kWritableFinished', 'kEndCallbacks', 'kFlushError', 'kLenientCache']

// ERR_STREAM_DESTROYED('end')'s class: Node 24's onFinish() reports it for a socket gone quietly.
let DestroyedError = null
function learnDestroyedError () {
  const state = new stream.Writable.WritableState({}, null, false)
  state.ending = true
  state.destroyed = true
  stream.Writable.prototype.end.call({ _writableState: state }, (err) => {
    if (err && err.code === 'ERR_STREAM_DESTROYED') DestroyedError = err.constructor
  })
}

function destroyedError () {
  if (DestroyedError !== null) return new DestroyedError('end')
  const err = new Error('Cannot call end after a stream was destroyed')
  err.code = 'ERR_STREAM_DESTROYED'
  return err
}

function accessorOf (proto, key) {
  for (let p = proto; p !== null; p = Object.getPrototypeOf(p)) {
    const desc = Object.getOwnPropertyDescriptor(p, key)
    if (desc !== undefined) return desc.get
  }
  return undefined
}

// The Writable state's bit field and its needDrain bit, which the shim reads instead of Node's
// getters (megamorphic loads); null unless a plain net.Socket reads `destroyed`, `writable` and
// `writableNeedDrain` through Duplex's accessors, so that the needDrain bit says all.
function learnWritableState () {
  const state = new stream.Writable.WritableState({}, null, false)
  const kState = findSymbol(state, 'kState')
  if (kState === null || typeof state[kState] !== 'number' || state.needDrain !== false) return null
  const before = state[kState]
  state.needDrain = true
  const needDrain = state[kState] ^ before
  const seen = state.needDrain
  state.needDrain = false
  if (!seen || needDrain === 0 || (needDrain & (needDrain - 1)) !== 0 || state[kState] !== before) {
    return null
  }
  const proto = net.Socket.prototype
  const duplex = stream.Duplex.prototype
  const handleAccessor = Object.getOwnPropertyDescriptor(proto, '_handle')
  if (handleAccessor === undefined || typeof handleAccessor.get !== 'function') return null
  const plainSocket = accessorOf(proto, 'destroyed') === accessorOf(duplex, 'destroyed') &&
    accessorOf(proto, 'writable') === accessorOf(duplex, 'writable') &&
    accessorOf(proto, 'writableNeedDrain') === accessorOf(duplex, 'writableNeedDrain') &&
    typeof accessorOf(duplex, 'destroyed') === 'function'
  if (!plainSocket || proto.constructor !== net.Socket) return null
  return Object.freeze({ kState, needDrain, Socket: net.Socket, handleGetter: handleAccessor.get })
}

// Symbols learnt from the first real response and socket (see the top); until then the shim reads
// Node's getters and writes through socket.write(). kLastWriteQueueSize: kept by a partial direct write.
const learned = { pending: true, kUniqueHeaders: null, kHandle: null, kLastWriteQueueSize: null }

function learn (res) {
  const socket = res.socket
  if (learned.kUniqueHeaders === null) {
    // A served response without it: this line has no such option, and a
    // symbol no response carries reads undefined as Node's would.
    const k = findSymbol(res, 'kUniqueHeaders')
    if (k !== null) learned.kUniqueHeaders = k
    else if (socket) learned.kUniqueHeaders = Symbol('http-oneshot no uniqueHeaders')
  }
  if (learned.kHandle === null && internals !== null && internals.socketState !== null &&
      socket && socket.constructor === net.Socket) {
    const handle = internals.socketState.handleGetter.call(socket)
    const kHandle = findSymbol(socket, 'kHandle')
    if (handle && kHandle !== null && socket[kHandle] === handle) {
      learned.kLastWriteQueueSize = findSymbol(socket, 'lastWriteQueueSize')
      learned.kHandle = kHandle
    }
  }
  learned.pending = learned.kUniqueHeaders === null || learned.kHandle === null
  if (!learned.pending) Object.freeze(learned)
}

// Whether the probe's responseShape() is one of a line the shim reproduces.
function shapeKnown (shape, protocolName) {
  const known = new Set(KNOWN_SYMBOLS)
  if (protocolName === 'node24') for (const name of NODE24_SYMBOLS) known.add(name)
  if (shape === null || !Array.isArray(shape.symbols) || !Array.isArray(shape.missing)) return false
  for (const name of shape.symbols) {
    if (!known.has(name)) return false
  }
  return shape.headersMap === true && shape.corked === 0 && shape.missing.length === 0
}

// `names` of `proto`, null if one is missing; a wrapper as null (PATCHED).
function methodsOf (proto, owner, names, own) {
  const methods = {}
  for (const name of names) {
    const fn = proto[name]
    if (typeof fn !== 'function') return null
    methods[name] = own(owner + '.' + name, fn)
  }
  return Object.freeze(methods)
}

// own(key, fn): `fn` where it is Node's own, else null, the wrapper then
// recorded in `found`. Every method node-methods.js lists is checked now.
function ownCheck (known, found) {
  const checked = new Map()
  function own (key, fn) {
    if (checked.has(key)) return checked.get(key) === fn ? fn : null
    const nodes = nodeMethodsOf.isNodes(known, key, fn)
    checked.set(key, nodes ? fn : null)
    // Once per wrapper: OutgoingMessage's, read as ServerResponse's too.
    if (!nodes && typeof fn === 'function' && !found.some((w) => w.fn === fn)) {
      found.push({ key: nodeMethodsOf.holder(key), fn })
    }
    return nodes ? fn : null
  }
  const protos = nodeMethodsOf.prototypes()
  for (const owner of Object.keys(nodeMethodsOf.METHODS)) {
    for (const name of nodeMethodsOf.METHODS[owner]) own(owner + '.' + name, protos[owner][name])
  }
  return own
}

// Node's module-private utcDate(), the one line _storeHeader renders on
// `dateProbe`. statusMessage first, as writeHead() sets it (see the top).
function dateReader (storeHeader, dateProbe) {
  dateProbe.statusMessage = 'OK'
  dateProbe._removedConnection = true
  dateProbe._hasBody = false
  return function nodeDate () {
    storeHeader.call(dateProbe, '', null)
    const h = dateProbe._header
    return h.slice(6, h.length - 4)
  }
}

// The end() adapter for the found protocol; null when a symbol is missing.
function protocolOf (protocolName, probe) {
  if (protocolName !== 'node24') return node20
  const k = { destroyedError }
  for (const name of ['kEndCallbacks', 'kWritableFinished', 'kFlushError', 'kErrored']) {
    k[name] = findSymbol(probe, name === 'kErrored' ? 'errored' : name)
    if (k[name] === null) return null
  }
  learnDestroyedError()
  return node24.create(k)
}

// The found chunked write() protocol, or null where a symbol is missing.
function writeProtocolOf (probedWrite, { kNeedDrain, kChunkedBuffer, kChunkedLength }) {
  const OM = http.OutgoingMessage
  if (kNeedDrain === null || typeof OM.prototype.write !== 'function') return null
  if (probedWrite === 'node20') return 'node20'
  if (probedWrite === 'node24' && kChunkedBuffer !== null && kChunkedLength !== null &&
      typeof OM.prototype.uncork === 'function') {
    return 'node24'
  }
  return null
}

// The probe's answer, or null for an end() protocol or shape the shim does not know.
function probedNode (SR, OM) {
  const probed = storedAnswer() ?? require('./protocol/probe.js').probeIsolated({
    end: OM.prototype.end,
    writeHead: SR.prototype.writeHead,
    write: OM.prototype.write,
    uncork: OM.prototype.uncork
  })
  debug('end() protocol: %s, chunked write(): %s (probed in %s)', probed.protocol, probed.write,
    probed.cached ? 'a child process, answer stored' : probed.isolated ? 'a child process' : 'this process')
  if (probed.protocol === null || !shapeKnown(probed.shape, probed.protocol)) return null
  return probed
}

// null where this Node has no such symbol.
function symbolsOf (probe) {
  return {
    kOutHeaders: findSymbol(probe, 'kOutHeaders'),
    kCorked: findSymbol(probe, 'corked'),
    // 26.12+: _isLenientHeaderValidation()'s answer, left as Node would.
    kLenientCache: findSymbol(probe, 'kLenientCache'),
    // The server's option: write_() throws for a body Node would drop.
    kRejectNonStandardBodyWrites: findSymbol(probe, 'kRejectNonStandardBodyWrites'),
    kNeedDrain: findSymbol(probe, 'kNeedDrain'),
    kChunkedBuffer: findSymbol(probe, 'kChunkedBuffer'),
    kChunkedLength: findSymbol(probe, 'kChunkedLength')
  }
}

// Node's methods the native path compares with; null when one is missing.
function nodeMethods (SR, OM, own) {
  const resMethods = methodsOf(SR.prototype, 'ServerResponse', RES_METHODS, own)
  const socketMethods = methodsOf(net.Socket.prototype, 'Socket', SOCKET_METHODS, own)
  if (resMethods === null || socketMethods === null) return null
  if (typeof OM.prototype.end !== 'function' || typeof SR.prototype._finish !== 'function') {
    return null
  }
  return { resMethods, socketMethods }
}

// What lib/socket-close.js stands in for (assignSocket(), detachSocket()) and what Node's would call
// (the socket's and the legacy Stream's on() and removeListener()), with the fingerprint of the on()
// a server puts on each socket; null unless all are Node's, as the probe child saw them.
function closeMethodsOf (known, own) {
  const res = http.ServerResponse.prototype
  const methods = {
    assignSocket: own('ServerResponse.assignSocket', res.assignSocket),
    detachSocket: own('ServerResponse.detachSocket', res.detachSocket),
    socketOn: own('Socket.on', net.Socket.prototype.on),
    socketRemoveListener: own('Socket.removeListener', net.Socket.prototype.removeListener),
    streamOn: own('Stream.on', stream.prototype.on),
    streamRemoveListener: own('Stream.removeListener', stream.prototype.removeListener),
    serverSocketOn: known?.['Socket.listenerWrap'] ?? null
  }
  return Object.values(methods).includes(null) ? null : Object.freeze(methods)
}

function resolve () {
  const SR = http.ServerResponse
  const OM = http.OutgoingMessage
  if (typeof SR !== 'function' || typeof OM !== 'function') return null
  const probed = probedNode(SR, OM)
  if (probed === null) return null
  // Wrappers found where Node's methods should be (an agent loaded first).
  const own = ownCheck(probed.sources ?? null, nodeMethodsOf.found)

  // Built as the server builds each response (see the top).
  const probe = new SR({ method: 'GET', httpVersionMajor: 1, httpVersionMinor: 1 })
  const symbols = symbolsOf(probe)
  if (symbols.kOutHeaders === null || symbols.kCorked === null) return null
  const methods = nodeMethods(SR, OM, own)
  if (methods === null) return null
  // A wrapper of _storeHeader() is not called on the package's behalf.
  const storeHeader = own('OutgoingMessage._storeHeader', OM.prototype._storeHeader)
  if (storeHeader === null) return null
  const nodeDate = dateReader(storeHeader, probe)
  if (!/^[A-Z][a-z]{2}, \d\d [A-Z][a-z]{2} \d{4} \d\d:\d\d:\d\d GMT$/.test(nodeDate())) return null
  const socketState = learnWritableState()
  const protocol = protocolOf(probed.protocol, probe)
  if (protocol === null) return null
  const writeProtocol = writeProtocolOf(probed.write, symbols)
  const shape = probed.shape

  return Object.freeze({
    protocol,
    ...symbols,
    // Node 20 to 24; 26 has a class of its own (lib/headers.js).
    nullProtoHeaders: shape.nullProtoHeaders === true,
    // How util.inspect() prints Node's store: the shim's must print alike.
    storeShown: typeof shape.storeShown === 'string' ? shape.storeShown : null,
    socketState,
    learned,
    learn,
    chunkedWrite: writeProtocol === 'node20',
    chunkedUncork: writeProtocol === 'node24',
    // Node's own OutgoingMessage methods (null: a wrapper is there).
    end: own('OutgoingMessage.end', OM.prototype.end),
    write: own('OutgoingMessage.write', OM.prototype.write),
    uncork: own('OutgoingMessage.uncork', OM.prototype.uncork),
    setHeader: own('OutgoingMessage.setHeader', OM.prototype.setHeader),
    isLenient: typeof OM.prototype._isLenientHeaderValidation === 'function'
      ? own('OutgoingMessage._isLenientHeaderValidation', OM.prototype._isLenientHeaderValidation)
      : undefined,
    ...methods,
    closeMethods: closeMethodsOf(probed.sources ?? null, own),
    Socket: net.Socket,
    nodeDate
  })
}

let internals = null
try {
  internals = resolve()
} catch {}

module.exports = internals
