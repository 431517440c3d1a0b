'use strict'

// `-r` / `--import http-oneshot/register`: installs at the application's first load of Node's HTTP
// server, seen as APM agents see it (a wrapper of Module._load; module.registerHooks on 24+, else
// module.register for an ESM entry only, its hooks thread costing start-up: benchmark/startup.js;
// else the first request). Loads neither http nor the addon itself.

const dc = require('node:diagnostics_channel')
const Module = require('node:module')

// The specifiers whose loading loads _http_server (ServerResponse).
const TRIGGERS = new Set(['http', 'node:http', 'https', 'node:https', '_http_server', 'node:_http_server'])
const START = 'http.server.request.start'
const MAJOR = Number(process.versions.node.split('.')[0])

let hooked = false
let done = false
let originalLoad = null
let hooks = null

function httpLoaded () {
  const list = process.moduleLoadList
  return Array.isArray(list) && list.includes('NativeModule _http_server')
}

// Installs once, deferred behind the stand-ins unless a server is serving.
function fire (serving) {
  if (done) return
  done = true
  unhook()
  if (serving) loadPackage()
  else require('./patches.js').defer(loadPackage)
}

function loadPackage () {
  require('./index.js').installFromPreload()
}

const onRequestStart = () => fire(true)

// Fires before the load it sees: an agent's hook that patches http as it
// loads then wraps the stand-ins, as when it loads after the package.
function load (request, parent, isMain) {
  if (!done && TRIGGERS.has(request)) fire()
  return originalLoad.apply(this, arguments)
}

function unhook () {
  // A wrapper added over ours keeps ours in its chain, a pass-through once `done`.
  if (originalLoad !== null && Module._load === load) Module._load = originalLoad
  if (hooks !== null) hooks.deregister()
  hooks = null
  dc.unsubscribe(START, onRequestStart)
}

// Whether Node will run `file` as an ES module (its own rules, minus flags).
function isESMEntry (file) {
  if (typeof file !== 'string') return false
  const fs = require('node:fs')
  const path = require('node:path')
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

/** Installs at the application's first load of http (at once if loaded). Idempotent. */
function hook () {
  if (hooked) return
  hooked = true
  // lib/env.js only where either is set: each file loaded costs start-up.
  const env = process.env
  if (env.HTTP_ONESHOT !== undefined || env.HTTP_ONESHOT_REPORT !== undefined) {
    const { disabledByEnv, reportWanted } = require('./env.js')
    if (reportWanted()) require('./report.js').arm()
    if (disabledByEnv()) {
      done = true
      return
    }
  }
  if (httpLoaded()) {
    fire()
    return
  }
  originalLoad = Module._load
  Module._load = load
  dc.subscribe(START, onRequestStart)
  // From 24 only, where it chains with module.register loaders (tsx, tap; test/startup-cache.test.js,
  // "an asynchronous loader"); on 22 passing an import on to one throws ERR_METHOD_NOT_IMPLEMENTED.
  if (typeof Module.registerHooks === 'function' && MAJOR >= 24) {
    hooks = Module.registerHooks({
      resolve (specifier, context, nextResolve) {
        if (!done && TRIGGERS.has(specifier)) fire()
        return nextResolve(specifier, context)
      }
    })
  } else if (typeof Module.register === 'function' && isESMEntry(process.argv[1])) {
    const { pathToFileURL } = require('node:url')
    Module.register(pathToFileURL(require('node:path').join(__dirname, 'esm-hooks.mjs')))
  }
}

// http is loaded (lib/esm-hooks.mjs, or lib/index.js asked): fires if still watching.
function httpSeen () {
  if (hooked && !done) fire(false)
}

module.exports = { hook, httpLoaded, httpSeen }
