'use strict'

// Which methods the package replaces, calls or compares with are Node's own, by their source's hash
// (docs/architecture.md, "Patchers and APM agents"), read without asking a wrapper's own toString().

const { hash } = require('./protocol/cache.js')

const toString = Function.prototype.toString

// By the prototype they are read from, as a response resolves them.
const METHODS = {
  ServerResponse: ['end', 'writeHead', 'write', 'uncork', 'setHeader', '_implicitHeader',
    '_storeHeader', '_send', '_writeRaw', '_flushOutput', '_finish', '_isLenientHeaderValidation',
    'assignSocket', 'detachSocket'],
  OutgoingMessage: ['end', 'write', 'uncork', 'setHeader', '_storeHeader', '_isLenientHeaderValidation'],
  Socket: ['write', 'cork', 'uncork', '_write', '_writev', '_writeGeneric', 'on', 'removeListener'],
  // What a server socket's on() and removeListener() call: the legacy Stream's, EventEmitter's.
  Stream: ['on', 'removeListener']
}

// The wrappers ({ key, fn }) lib/internals.js found in Node's place.
const found = []

function fingerprint (fn) {
  return typeof fn === 'function' ? hash(toString.call(fn)) : null
}

/** The prototypes METHODS names, by name. */
function prototypes () {
  const http = require('node:http')
  return {
    ServerResponse: http.ServerResponse.prototype,
    OutgoingMessage: http.OutgoingMessage.prototype,
    Socket: require('node:net').Socket.prototype,
    Stream: require('node:stream').prototype
  }
}

/** What the probe child reports: each method's fingerprint, keyed `ServerResponse.writeHead`. */
function sources () {
  const protos = prototypes()
  const out = {}
  for (const owner of Object.keys(METHODS)) {
    for (const name of METHODS[owner]) out[owner + '.' + name] = fingerprint(protos[owner][name])
  }
  out['Socket.listenerWrap'] = fingerprint(serverSocketOn())
  return out
}

// The on() a server puts on each socket it serves (_http_server.js, connectionListenerInternal()),
// read from a socket never connected. Only in the probe child: an agent would see the 'connection'.
function serverSocketOn () {
  try {
    const socket = new (require('node:net').Socket)()
    require('node:http').createServer().emit('connection', socket)
    socket.destroy()
    return Object.hasOwn(socket, 'on') ? socket.on : null
  } catch {
    return null // the rest of the answer stands; lib/socket-close.js stays off
  }
}

/**
 * Whether `fn`, read as `key` (`ServerResponse.writeHead`), is Node's own.
 * @param {Record<string, string|null>|null} known the probe's sources();
 *   null where it ran in this process: what is there then counts as Node's
 * @returns {boolean}
 */
function isNodes (known, key, fn) {
  if (known === null) return true
  const expected = known[key]
  return typeof expected === 'string' && fingerprint(fn) === expected
}

/** Where a wrapper stands, for stats(), NODE_DEBUG and the exit report. */
function describe (key, fn) {
  const dot = key.indexOf('.')
  return {
    method: key.slice(0, dot) + '.prototype.' + key.slice(dot + 1),
    wrapper: typeof fn === 'function' && fn.name ? fn.name : '(anonymous)'
  }
}

// `key` named by the prototype that holds the method now: a wrapper of
// OutgoingMessage's _send() is read as ServerResponse's.
function holder (key) {
  const dot = key.indexOf('.')
  const name = key.slice(dot + 1)
  const protos = prototypes()
  if (key.slice(0, dot) === 'ServerResponse' && !Object.hasOwn(protos.ServerResponse, name) &&
      Object.hasOwn(protos.OutgoingMessage, name)) {
    return 'OutgoingMessage.' + name
  }
  return key
}

// Where `fn` was defined, or null. Slow (the inspector): report and NODE_DEBUG only.
function locate (fn) {
  let inspector
  try {
    inspector = require('node:inspector')
  } catch {
    return null
  }
  const session = new inspector.Session()
  const name = '__httpOneshotLocate' + process.pid
  let where = null
  try {
    session.connect()
    const scripts = new Map()
    session.on('Debugger.scriptParsed', (m) => scripts.set(m.params.scriptId, m.params.url))
    session.post('Debugger.enable')
    globalThis[name] = fn
    session.post('Runtime.evaluate', { expression: 'globalThis.' + name }, (err, res) => {
      if (err || !res.result.objectId) return
      session.post('Runtime.getProperties', { objectId: res.result.objectId, ownProperties: true }, (err2, props) => {
        if (err2) return
        const loc = (props.internalProperties || []).find((p) => p.name === '[[FunctionLocation]]')
        if (loc === undefined) return
        const { scriptId, lineNumber } = loc.value.value
        const url = scripts.get(scriptId)
        if (url) where = url + ':' + (lineNumber + 1)
      })
    })
    session.post('Debugger.disable')
  } catch {
    where = null
  } finally {
    delete globalThis[name]
    try {
      session.disconnect()
    } catch {}
  }
  return where
}

module.exports = { METHODS, prototypes, sources, isNodes, fingerprint, describe, holder, locate, found }
