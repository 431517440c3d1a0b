'use strict'

// The one owner of the methods the package puts on ServerResponse.prototype
// and of what was there before each: the preload's stand-ins, which hold
// the shim's place until it loads and then hand over (below), and put() /
// takeBack(), with which lib/shim.js (end, write, uncork),
// lib/write-head.js (writeHead) and lib/headers.js (setHeader) install and
// uninstall. Loads nothing at load: the preload uses it before http is
// loaded.
//
// A method put here looks like the one it shadows to code that walks the
// prototype (for-in over a response): a property of its own, writable and
// configurable, enumerable as Node's methods are (they are assigned).
// takeBack() restores the property that was there (or none) while the
// package's method is still in place: a wrapper another module put on
// since stays, and may still call the package's method, which then defers
// to what it replaced.
//
// Stand-ins for the methods lib/shim.js may put on ServerResponse.prototype
// (end, writeHead, setHeader, write, uncork), put there by the preload when
// the application loads http, in place of the shim itself: loading the
// shim, the addon and the probe's answer costs a process tens of
// milliseconds of CPU (benchmark/startup.js), which a process that loads
// http and never serves (a test runner, a build tool, an HTTP client)
// should not pay. The load (lib/index.js) runs when a server starts
// listening (diagnostics_channel, published by net.Server#listen() before
// it binds, so before any request can arrive), at the first call of a
// stand-in where that channel is not published, or when the package's
// state is asked for (isInstalled(), isActive(), stats(), the exit report),
// whichever comes first.
//
// The stand-ins hold the shim's place: a module that wraps
// ServerResponse#end (an APM agent) after http loaded wraps the stand-in,
// as it would have wrapped the shim's end() had the shim been installed
// then. settle() puts the shim (or Node's own method) where each stand-in
// was, and a stand-in that a wrapper holds forwards from then on to what
// settle() put there: the chain is the one an install at http load would
// have made (test/stand-in.test.js).
//
// Until settle() a stand-in runs the load (which may settle at once) and
// then the method it replaced: Node's own path.

// ServerResponse.prototype and its prototype, read by defer(): requiring
// http here would let the preload's watch see it load (lib/preload.js).
let proto = null
let parent = null

// Per method: the own descriptor a stand-in replaced (undefined where the
// method was inherited), and after settle() the method to forward to
// (null: the inherited one, looked up per call).
const previous = new Map()
const targets = new Map()
let placed = false
let settled = false
// The load, while it has not run (lib/index.js).
let deferred = null

// Published by net.Server#listen() before it binds.
const LISTEN = 'tracing:net.server.listen:asyncStart'

// The method a stand-in forwards to.
function target (name) {
  if (!settled) runDeferred()
  const fn = settled ? targets.get(name) : original(name)
  return fn === null || fn === undefined ? parent[name] : fn
}

function original (name) {
  const desc = previous.get(name)
  return desc === undefined ? null : desc.value
}

// One function per method, with the method's name and parameters (and, as
// Node's, a function that has a prototype): each is what a wrapper put on
// over it calls. The arguments go on as they came, their number included:
// a wrapper beneath sees the call it would see without the stand-in.
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
const NAMES = Object.keys(STAND_INS)

// Defines `desc` as `owner[name]`, or deletes the own property where
// `desc` is undefined (the method was inherited).
function restore (owner, name, desc) {
  if (desc === undefined) {
    delete owner[name]
  } else {
    Object.defineProperty(owner, name, desc)
  }
}

function putBack (name, desc) {
  restore(proto, name, desc)
}

// node:http without a require(): an agent loaded first (dd-trace) wraps
// ServerResponse#end when http is required, from a hook around require().
// A require() here would have it wrap Node's end() before the stand-ins are
// in place, which then stay off; without one, it wraps the stand-in when
// the application requires http, as it does when loaded after the package
// (test/agents.test.js).
function httpModule () {
  return typeof process.getBuiltinModule === 'function'
    ? process.getBuiltinModule('node:http')
    : require('node:http')
}

/**
 * Defers `load` to the first listen(), the first call of a stand-in or
 * runDeferred(), and puts the stand-ins on ServerResponse.prototype, unless
 * another module defined ServerResponse#end there first (the load then
 * says so). Methods defined there as accessors are left alone. Once.
 * @param {() => void} load
 */
function defer (load) {
  if (deferred !== null || placed) return
  deferred = load
  proto = httpModule().ServerResponse.prototype
  parent = Object.getPrototypeOf(proto)
  require('node:diagnostics_channel').subscribe(LISTEN, onListen)
  if (Object.hasOwn(proto, 'end')) return
  for (const name of NAMES) {
    const own = Object.getOwnPropertyDescriptor(proto, name)
    if (own !== undefined && (!Object.hasOwn(own, 'value') || !own.configurable)) continue
    previous.set(name, own)
    // As put() puts a method: enumerable as the one it shadows.
    Object.defineProperty(proto, name, {
      value: STAND_INS[name], writable: true, enumerable: enumerableAt(proto, name), configurable: true
    })
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

/** Runs the deferred load now, if it has not run. */
function runDeferred () {
  const load = deferred
  if (load === null) return
  cancel()
  load()
}

/** Drops the deferred load (install() or uninstall() ran). */
function cancel () {
  if (deferred === null) return
  deferred = null
  require('node:diagnostics_channel').unsubscribe(LISTEN, onListen)
}

/**
 * Runs `fn` with ServerResponse.prototype as it was before place(): the
 * stand-ins, and whatever another module put over them, are taken off
 * while it runs, then put back, except a stand-in whose place `fn` took.
 * With `settle`, every stand-in is replaced by what `fn` left there (the
 * shim's method, or the one it replaced), and each wrapper put over a
 * stand-in forwards from then on to that. Without stand-ins it just runs
 * `fn`.
 * @template T
 * @param {() => T} fn
 * @param {boolean} settle
 * @returns {T}
 */
function bare (fn, settle) {
  if (!placed || settled) return fn()
  const held = []
  for (const name of previous.keys()) {
    held.push([name, Object.getOwnPropertyDescriptor(proto, name)])
    putBack(name, previous.get(name))
  }
  try {
    return fn()
  } finally {
    for (const [name, own] of held) {
      const standIn = own !== undefined && own.value === STAND_INS[name]
      if (settle) targets.set(name, Object.hasOwn(proto, name) ? proto[name] : null)
      if (!settle || !standIn) putBack(name, own)
    }
    if (settle) settled = true
  }
}

/**
 * bare(fn, true): the stand-ins give their places to what `fn` installs.
 * @template T
 * @param {() => T} fn
 * @returns {T}
 */
function settle (fn) {
  return bare(fn, true)
}

/**
 * Whether stand-ins wait on ServerResponse.prototype for settle().
 * @returns {boolean}
 */
function waiting () {
  return placed && !settled
}

// name -> { owner, fn, previous }: previous is the own descriptor put()
// replaced (undefined: the method was inherited).
const installed = new Map()

// Whether the method `owner[name]` resolves to is enumerable.
function enumerableAt (owner, name) {
  for (let p = owner; p !== null; p = Object.getPrototypeOf(p)) {
    const desc = Object.getOwnPropertyDescriptor(p, name)
    if (desc !== undefined) return desc.enumerable === true
  }
  return true
}

/**
 * Puts `fn` as `owner[name]` and remembers what was there.
 * @param {object} owner
 * @param {string} name
 * @param {Function} fn
 * @returns {PropertyDescriptor|undefined} the own descriptor replaced
 */
function put (owner, name, fn) {
  const previous = Object.getOwnPropertyDescriptor(owner, name)
  Object.defineProperty(owner, name, {
    value: fn, writable: true, enumerable: enumerableAt(owner, name), configurable: true
  })
  installed.set(name, { owner, fn, previous })
  return previous
}

/**
 * Restores what put() replaced under `name`, if the package's method is
 * still there; forgets it either way.
 * @param {string} name
 */
function takeBack (name) {
  const p = installed.get(name)
  if (p === undefined) return
  installed.delete(name)
  const own = Object.getOwnPropertyDescriptor(p.owner, name)
  if (own !== undefined && own.value === p.fn) restore(p.owner, name, p.previous)
}

/**
 * Whether put() put a method under `name` that takeBack() has not taken.
 * @param {string} name
 * @returns {boolean}
 */
function isPut (name) {
  return installed.has(name)
}

module.exports = { defer, runDeferred, cancel, bare, settle, waiting, STAND_INS, put, takeBack, isPut }
