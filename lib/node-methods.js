'use strict'

// Which of the methods the package replaces, calls or compares with are
// Node's own in this process. An APM agent loaded first wraps them before
// the package installs (Elastic's ServerResponse#writeHead, New Relic's
// #end): a wrapper found there must run as it would without the
// package, so it can never be taken for Node's method (issue 44;
// docs/architecture.md, "Wrappers put on before install").
//
// Node's own are known by their source text: the probe child, a process of
// the same binary with no preload (lib/protocol/probe.js), reports a hash of
// each method's Function.prototype.toString(), and the answer is stored per
// binary (lib/protocol/cache.js). A wrapper has its own source; a bound
// function or a native one prints `[native code]`. Function.prototype.toString
// is called directly, so that a wrapper's own toString() is not asked.

const { hash } = require('./protocol/cache.js')

const toString = Function.prototype.toString

// The methods, by the prototype they are read from. A ServerResponse method
// is read as a response resolves it (most are OutgoingMessage's).
const METHODS = {
  ServerResponse: ['end', 'writeHead', 'write', 'uncork', 'setHeader', '_implicitHeader',
    '_storeHeader', '_send', '_writeRaw', '_flushOutput', '_finish', '_isLenientHeaderValidation'],
  OutgoingMessage: ['end', 'write', 'uncork', 'setHeader', '_storeHeader', '_isLenientHeaderValidation'],
  Socket: ['write', 'cork', 'uncork', '_write', '_writev', '_writeGeneric']
}

// The wrappers lib/internals.js found in Node's place when it resolved
// ({ key, fn } each): written there once, read for stats(), NODE_DEBUG and
// the exit report (lib/index.js).
const found = []

function fingerprint (fn) {
  return typeof fn === 'function' ? hash(toString.call(fn)) : null
}

function prototypes () {
  const http = require('node:http')
  return {
    ServerResponse: http.ServerResponse.prototype,
    OutgoingMessage: http.OutgoingMessage.prototype,
    Socket: require('node:net').Socket.prototype
  }
}

/**
 * The fingerprint of every method of METHODS as this process has it: what
 * the probe child reports of its own, untouched http module.
 * @returns {Record<string, string|null>} keyed `ServerResponse.writeHead`
 */
function sources () {
  const protos = prototypes()
  const out = {}
  for (const owner of Object.keys(METHODS)) {
    for (const name of METHODS[owner]) out[owner + '.' + name] = fingerprint(protos[owner][name])
  }
  return out
}

/**
 * Whether `fn`, read as `owner.name` (`ServerResponse.writeHead`), is Node's
 * own method. `known` is the probe's sources(); null where the probe ran
 * in this process (no child could run), which has no other copy to compare
 * with: what is there then counts as Node's.
 * @param {Record<string, string|null>|null} known
 * @param {string} key
 * @param {Function} fn
 * @returns {boolean}
 */
function isNodes (known, key, fn) {
  if (known === null) return true
  const expected = known[key]
  return typeof expected === 'string' && fingerprint(fn) === expected
}

/**
 * Where a wrapper stands, for stats(), NODE_DEBUG and the exit report: the
 * method and the wrapper's function name (its file: locate()).
 * @param {string} key `ServerResponse.writeHead`
 * @param {Function} fn
 * @returns {{ method: string, wrapper: string }}
 */
function describe (key, fn) {
  const dot = key.indexOf('.')
  return {
    method: key.slice(0, dot) + '.prototype.' + key.slice(dot + 1),
    wrapper: typeof fn === 'function' && fn.name ? fn.name : '(anonymous)'
  }
}

/**
 * `key` named by the prototype that holds the method now: a wrapper of
 * OutgoingMessage's _send() is read as ServerResponse's.
 * @param {string} key
 * @returns {string}
 */
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

/**
 * The file and line `fn` was defined at, from the inspector, or null. Slow
 * (the inspector lists every script): for the report and NODE_DEBUG only.
 * @param {Function} fn
 * @returns {string|null}
 */
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

module.exports = { METHODS, sources, isNodes, describe, holder, locate, found }
