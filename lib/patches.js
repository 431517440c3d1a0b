'use strict'

// The one owner of the methods the package puts on ServerResponse.prototype
// and of what was there before: the preload's stand-ins, and put() /
// takeBack() for install() and uninstall().
//
// The stand-ins hold the shim's place from the load of http until the first
// listen(), the first call of a stand-in, or a look at the package's state:
// a process that loads http and never serves (a test runner, a build tool)
// does not pay tens of milliseconds of CPU for the shim, the addon and the
// probe's answer (benchmark/startup.js). An agent that wraps
// ServerResponse#end meanwhile wraps a stand-in, which then forwards to
// what settle() put in its place (docs/architecture.md, "Patchers and APM
// agents").

// Read by defer(): requiring http at load would let the preload see it load.
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
  const fn = settled ? targets.get(name) : original(name)
  return fn === null || fn === undefined ? parent[name] : fn
}

function original (name) {
  const desc = previous.get(name)
  return desc === undefined ? null : desc.value
}

// Each with the method's name and parameters (and, as Node's, a
// prototype). The arguments go on as they came, their number included: a
// wrapper beneath sees the call it would see without the stand-in.
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

// Defines `fn` as `owner[name]` as it looks to code that walks the
// prototype (for-in over a response): writable, configurable, and
// enumerable as the method it shadows (Node's are assigned).
function define (owner, name, fn) {
  let enumerable = true
  for (let p = owner; p !== null; p = Object.getPrototypeOf(p)) {
    const desc = Object.getOwnPropertyDescriptor(p, name)
    if (desc !== undefined) {
      enumerable = desc.enumerable === true
      break
    }
  }
  Object.defineProperty(owner, name, { value: fn, writable: true, enumerable, configurable: true })
}

// node:http without a require(): an agent loaded first (dd-trace) wraps
// ServerResponse#end from a hook around require(), and would wrap Node's
// end() before the stand-ins are in place, which then stay off
// (test/agents.test.js).
function httpModule () {
  return typeof process.getBuiltinModule === 'function'
    ? process.getBuiltinModule('node:http')
    : require('node:http')
}

// Defers `load` and puts the stand-ins in place, unless another module
// defined ServerResponse#end first (the load then says so). Methods defined
// as accessors are left alone.
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
    define(proto, name, STAND_INS[name])
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

// install() or uninstall() ran.
function cancel () {
  if (deferred === null) return
  deferred = null
  require('node:diagnostics_channel').unsubscribe(LISTEN, onListen)
}

// Runs `fn` with ServerResponse.prototype as it was before defer(): the
// stand-ins, and whatever another module put over them, are taken off while
// it runs, then put back, except a stand-in whose place `fn` took. With
// `settle`, each stand-in's place goes to what `fn` left there, and a
// wrapper put over a stand-in forwards from then on to that.
function bare (fn, settle) {
  if (!placed || settled) return fn()
  const held = []
  for (const [name, desc] of previous) {
    held.push([name, Object.getOwnPropertyDescriptor(proto, name)])
    restore(proto, name, desc)
  }
  try {
    return fn()
  } finally {
    for (const [name, own] of held) {
      const standIn = own !== undefined && own.value === STAND_INS[name]
      if (settle) targets.set(name, Object.hasOwn(proto, name) ? proto[name] : null)
      if (!settle || !standIn) restore(proto, name, own)
    }
    if (settle) settled = true
  }
}

function settle (fn) {
  return bare(fn, true)
}

// name -> { owner, fn, previous }: previous is the own descriptor put()
// replaced (undefined: the method was inherited).
const installed = new Map()

/** Puts `fn` as `owner[name]` and remembers what was there. */
function put (owner, name, fn) {
  const previous = Object.getOwnPropertyDescriptor(owner, name)
  define(owner, name, fn)
  installed.set(name, { owner, fn, previous })
}

/**
 * Restores what put() replaced under `name` if the package's method is
 * still there (a wrapper put on since stays, and may still call the
 * package's method, which then defers to what it replaced); forgets it
 * either way.
 */
function takeBack (name) {
  const p = installed.get(name)
  if (p === undefined) return
  installed.delete(name)
  const own = Object.getOwnPropertyDescriptor(p.owner, name)
  if (own !== undefined && own.value === p.fn) restore(p.owner, name, p.previous)
}

/** Whether put() put a method under `name` that takeBack() has not taken. */
function isPut (name) {
  return installed.has(name)
}

module.exports = { defer, runDeferred, cancel, bare, settle, STAND_INS, put, takeBack, isPut }
