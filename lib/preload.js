'use strict'

// What `-r http-oneshot/register` and `--import http-oneshot/register` do:
// nothing at startup but watch for the application's first load of Node's
// HTTP server (http, https, or _http_server itself), and install() then,
// before the application's code sees the module. Loading this file loads
// neither http nor the addon, so a process that never serves HTTP (npm, a
// build tool started under NODE_OPTIONS) runs exactly as without it.
//
// How the load is seen, as APM agents see it:
//   require()        a wrapper of Module._load (as require-in-the-middle
//                    does)
//   import           module.registerHooks where module.register is
//                    deprecated (26), else module.register (20.6 and
//                    later), whose resolve hook, in Node's hooks
//                    thread, sends http imports to a wrapper module that
//                    requires the builtin, which the Module._load wrapper
//                    sees (lib/esm-hooks.mjs). Starting that thread costs
//                    tens of milliseconds, so the CommonJS preload uses it
//                    only for an ESM entry point.
//   anything else    the first request a server receives
//                    (diagnostics_channel http.server.request.start, which
//                    http publishes before the 'request' event), so that no
//                    server runs unpatched
// Each watcher is removed, or turned into a pass-through when another module
// wrapped it since, once install() ran.

const dc = require('node:diagnostics_channel')
const fs = require('node:fs')
const Module = require('node:module')
const path = require('node:path')
const { pathToFileURL } = require('node:url')

const { disabledByEnv } = require('./env.js')

// The specifiers whose loading loads _http_server, which defines
// ServerResponse.
const TRIGGERS = new Set([
  'http', 'node:http', 'https', 'node:https', '_http_server', 'node:_http_server'
])
const START = 'http.server.request.start'

let hooked = false
let done = false
let originalLoad = null
let hooks = null

// Whether module.register() would print DEP0205 (its first statement
// emits the deprecation on the lines that deprecate it).
function registerDeprecated () {
  if (typeof Module.register !== 'function') return true
  return /Deprecation|DEP0205/.test(Function.prototype.toString.call(Module.register).slice(0, 200))
}

function httpLoaded () {
  const list = process.moduleLoadList
  return Array.isArray(list) && list.includes('NativeModule _http_server')
}

// Runs install() once, after removing the watchers.
function fire () {
  if (done) return
  done = true
  unhook()
  require('./index.js').install()
}

function onRequestStart () {
  fire()
}

function load (request, parent, isMain) {
  const exports = originalLoad.apply(this, arguments)
  if (!done && TRIGGERS.has(request)) fire()
  return exports
}

function unhook () {
  // A wrapper added over ours by another module keeps ours in its chain;
  // done makes ours a pass-through.
  if (originalLoad !== null && Module._load === load) Module._load = originalLoad
  if (hooks !== null) hooks.deregister()
  hooks = null
  dc.unsubscribe(START, onRequestStart)
}

// Whether Node will run `file` as an ES module (its own rules, minus flags).
function isESMEntry (file) {
  if (typeof file !== 'string') return false
  const ext = path.extname(file)
  if (ext === '.mjs') return true
  if (ext !== '.js' && ext !== '') return false
  let dir = path.dirname(path.resolve(file))
  for (;;) {
    try {
      return JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')).type === 'module'
    } catch (err) {
      if (err.code !== 'ENOENT' && err.code !== 'ENOTDIR') return false
    }
    const parent = path.dirname(dir)
    if (parent === dir) return false
    dir = parent
  }
}

/**
 * Watches for the application's first load of http and installs then.
 * Does nothing under HTTP_ONESHOT=0, and installs at once when http is
 * already loaded. Idempotent.
 * @param {{ esm?: boolean }} [options] esm: the preload was --import, so
 *   ESM imports are watched even where that needs Node's hooks thread
 */
function hook (options = {}) {
  if (hooked || disabledByEnv()) return
  hooked = true
  if (httpLoaded()) {
    fire()
    return
  }
  originalLoad = Module._load
  Module._load = load
  dc.subscribe(START, onRequestStart)
  // module.register where calling it does not print a deprecation (up to
  // Node 24): there module.registerHooks is not safe, since on Node 22 a
  // synchronous resolve hook that passes an import on to an asynchronous
  // loader (tsx, ts-node, an APM agent's, tap's) throws
  // ERR_METHOD_NOT_IMPLEMENTED. Where module.register is deprecated
  // (DEP0205, Node 26), module.registerHooks chains with such loaders.
  const esm = options.esm === true || isESMEntry(process.argv[1])
  if (typeof Module.registerHooks === 'function' && registerDeprecated()) {
    hooks = Module.registerHooks({
      resolve (specifier, context, nextResolve) {
        if (!done && TRIGGERS.has(specifier)) fire()
        return nextResolve(specifier, context)
      }
    })
  } else if (typeof Module.register === 'function' && esm) {
    Module.register(pathToFileURL(path.join(__dirname, 'esm-hooks.mjs')))
  }
}

module.exports = { hook, installNow: fire, isESMEntry }
