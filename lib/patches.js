'use strict'

// The one owner of what the package puts on Node's prototypes (the preload's stand-ins, install(),
// uninstall()) and of what was there before. Requires neither http nor the shim at load: the
// stand-ins hold the shim's place until the first listen(), stand-in call or look at the package's
// state (benchmark/startup.js; docs/architecture.md, "Patchers and APM agents").

let proto = null
let parent = null

// Per method: the own descriptor a stand-in replaced (undefined: inherited),
// and after settle() the method to forward to (null: the inherited one).
const previous = new Map()
const targets = new Map()
let placed = false
let settled = false
// The load, while it has not run.
let deferred = null

// Published by net.Server#listen() before it binds.
const LISTEN = 'tracing:net.server.listen:asyncStart'

function target (name) {
  if (!settled) runDeferred()
  const fn = settled ? targets.get(name) : previous.get(name)?.value
  return fn === null || fn === undefined ? parent[name] : fn
}

// Named and shaped as Node's methods; the arguments go on as they came,
// their number included, as a wrapper beneath would see them.
const STAND_INS = {
  end: function end (chunk, encoding, callback) {
    return target('end').apply(this, arguments)
  },
  writeHead: function writeHead (statusCode, reason, obj) {
    return target('writeHead').apply(this, arguments)
  },
  setHeader: function setHeader (name, value) {
    return target('setHeader').apply(this, arguments)
  },
  write: function write (chunk, encoding, callback) {
    return target('write').apply(this, arguments)
  },
  uncork: function uncork () {
    return target('uncork').apply(this, arguments)
  }
}

/** The object on `obj`'s prototype chain (`obj` included) that owns `name`, or null. */
function ownerOf (obj, name) {
  let p = obj
  while (p !== null && !Object.hasOwn(p, name)) p = Object.getPrototypeOf(p)
  return p
}

/** Puts `desc` as `owner`'s own `name` (undefined: deletes it); returns the own one it replaced. */
function swap (owner, name, desc) {
  const own = Object.getOwnPropertyDescriptor(owner, name)
  if (desc === undefined) delete owner[name]
  else Object.defineProperty(owner, name, desc)
  return own
}

// Enumerable as the method it shadows (Node's are assigned), for for-in.
function define (owner, name, fn) {
  const holder = ownerOf(owner, name)
  const enumerable = holder === null || Object.getOwnPropertyDescriptor(holder, name).enumerable
  return swap(owner, name, { value: fn, writable: true, enumerable, configurable: true })
}

// Without a require(): an agent's hook around it (dd-trace) would wrap
// Node's end() before the stand-ins are in place (test/agents.test.js).
function httpModule () {
  return typeof process.getBuiltinModule === 'function'
    ? process.getBuiltinModule('node:http')
    : require('node:http')
}

/**
 * Defers `load` to the first listen() and puts the stand-ins in place,
 * unless another module defined ServerResponse#end first (the load then
 * says so). Methods defined as accessors are left alone.
 */
function defer (load) {
  if (deferred !== null || placed) return
  deferred = load
  proto = httpModule().ServerResponse.prototype
  parent = Object.getPrototypeOf(proto)
  require('node:diagnostics_channel').subscribe(LISTEN, onListen)
  if (Object.hasOwn(proto, 'end')) return
  for (const name of Object.keys(STAND_INS)) {
    const own = Object.getOwnPropertyDescriptor(proto, name)
    if (own !== undefined && (!Object.hasOwn(own, 'value') || !own.configurable)) continue
    previous.set(name, define(proto, name, STAND_INS[name]))
  }
  placed = true
}

function onListen () {
  try {
    runDeferred()
  } catch (err) {
    // Not the application's error: listen() goes on, on Node's own path.
    require('node:util').debuglog('http-oneshot')('load failed: %s', err && err.stack)
  }
}

function runDeferred () {
  const load = deferred
  if (load === null) return
  cancel()
  load()
}

/** Forgets the deferred load: install() or uninstall() ran. */
function cancel () {
  if (deferred === null) return
  deferred = null
  require('node:diagnostics_channel').unsubscribe(LISTEN, onListen)
}

/**
 * Runs `fn` with ServerResponse.prototype as it was before defer(): the
 * stand-ins, and whatever another module put over them, are taken off while
 * it runs, then put back, except a stand-in whose place `fn` took. With
 * `settle`, each stand-in's place goes to what `fn` left there, and a
 * wrapper put over a stand-in forwards from then on to that.
 */
function bare (fn, settle) {
  if (!placed || settled) return fn()
  const held = []
  for (const [name, desc] of previous) held.push([name, swap(proto, name, desc)])
  try {
    return fn()
  } finally {
    for (const [name, own] of held) {
      const standIn = own !== undefined && own.value === STAND_INS[name]
      if (settle) targets.set(name, Object.hasOwn(proto, name) ? proto[name] : null)
      if (!settle || !standIn) swap(proto, name, own)
    }
    if (settle) settled = true
  }
}

function settle (fn) {
  return bare(fn, true)
}

// What install() put: name -> { owner, fn, previous } (as `previous` above).
const installed = new Map()
let active = false

function put (owner, name, fn) {
  installed.set(name, { owner, fn, previous: define(owner, name, fn) })
}

/**
 * Puts the package's methods on ServerResponse.prototype, each only over
 * Node's own (_storeHeader() beneath another module's writeHead(); write()
 * and uncork() where the probe found their chunked write; setHeader() per
 * lib/headers.js; assignSocket() and detachSocket() per lib/socket-close.js). Idempotent; a no-op
 * where the native path cannot run.
 */
function install () {
  if (active) return
  const internals = require('./internals.js')
  if (internals === null || require('./binding.js') === null) return
  const shim = require('./shim.js')
  const writeHead = require('./write-head.js')
  const headers = require('./headers.js')
  const res = httpModule().ServerResponse.prototype
  const { resMethods } = internals
  put(res, 'end', shim.end)
  if (res.writeHead === resMethods.writeHead) {
    put(res, 'writeHead', writeHead.writeHead)
  } else if (res._storeHeader === resMethods._storeHeader) {
    put(res, '_storeHeader', writeHead._storeHeader)
  }
  writeHead.setInstalled(installed.has('writeHead'), installed.has('_storeHeader'))
  if (internals.chunkedWrite && res.write === internals.write) put(res, 'write', shim.write)
  if (internals.chunkedUncork && res.uncork === internals.uncork) put(res, 'uncork', shim.uncork)
  require('./decide.js').setEndMethods(res.uncork, res._storeHeader)
  const socketClose = require('./socket-close.js')
  for (const name of socketClose.applies ? ['assignSocket', 'detachSocket'] : []) {
    if (res[name] === internals.closeMethods[name]) put(res, name, socketClose[name])
  }
  if (headers.applies) {
    const putSetHeader = () => {
      if (!installed.has('setHeader') && res.setHeader === internals.setHeader) {
        put(res, 'setHeader', headers.setHeader)
      }
    }
    headers.setOnWide(putSetHeader)
    if (headers.storeWanted()) putSetHeader()
  }
  shim.setInstalled(true)
  active = true
}

/**
 * Restores what install() put, and only that: a wrapper another module put
 * on since stays (dropping it would be silent), and what it calls of the
 * package's defers to what that replaced. Idempotent.
 */
function uninstall () {
  if (!active) return
  const internals = require('./internals.js')
  for (const [name, { owner, fn, previous }] of installed) {
    if (Object.getOwnPropertyDescriptor(owner, name)?.value === fn) swap(owner, name, previous)
  }
  installed.clear()
  require('./write-head.js').setInstalled(false, false)
  require('./decide.js').setEndMethods(internals.uncork, internals.resMethods._storeHeader)
  const headers = require('./headers.js')
  headers.setOnWide(null)
  headers.forgetWide()
  require('./shim.js').setInstalled(false)
  active = false
}

function isInstalled () {
  return active
}

module.exports = {
  defer, runDeferred, cancel, bare, settle, STAND_INS, install, uninstall, isInstalled, ownerOf, swap
}
