'use strict'

// Exports the addon, or null where it cannot be used (Node's own path, and buildHttpMessage()'s JS
// version); never throws.

const path = require('node:path')
const util = require('node:util')

const { disabledByEnv } = require('./env.js')

const debug = util.debuglog('http-oneshot')

// An addon built from another src/binding.c lacks some: treated as missing.
const REQUIRED = ['fill', 'fillFromHead', 'checkHead', 'cacheSet', 'fillCached', 'flags', 'errors',
  'errorName', 'result', 'detail', 'key']

let binding = null
let loadError = null

// Turned off on purpose: nothing to advise.
function disabled (message) {
  return Object.assign(new Error(message), { code: 'HTTP_ONESHOT_DISABLED' })
}

if (disabledByEnv()) {
  loadError = disabled(`disabled by HTTP_ONESHOT=${process.env.HTTP_ONESHOT}`)
} else if (process.env.HTTP_ONESHOT_NATIVE === '0') {
  loadError = disabled('disabled by HTTP_ONESHOT_NATIVE=0')
} else {
  try {
    const addon = require('node-gyp-build')(path.join(__dirname, '..'))
    const missing = REQUIRED.filter((key) => addon == null || addon[key] === undefined)
    if (missing.length > 0) throw new Error(`the addon lacks ${missing.join(', ')}`)
    binding = addon
  } catch (err) {
    loadError = err
  }
}

// What the user can do about a load error, in words; null when the addon
// loaded or was turned off on purpose. `proc`: the process, for tests.
function loadAdvice (err, proc = process) {
  if (err === null || err.code === 'HTTP_ONESHOT_DISABLED') return null
  if (err.code === 'ERR_DLOPEN_DISABLED') {
    // Without --allow-addons under the permission model (only it has process.permission), or --no-addons.
    return proc.permission !== undefined
      ? "Node's permission model refuses native addons: add --allow-addons to the node options"
      : 'native addons are turned off (--no-addons): remove that flag from the node options'
  }
  if (err.code === 'ERR_ACCESS_DENIED') {
    return `the permission model refused ${err.permission || 'access'}` +
      (err.resource ? ` of ${err.resource}` : '') +
      `: allow reading the package's directory (--allow-fs-read=${path.join(__dirname, '..')})`
  }
  if (/^No native build was found/.test(String(err.message))) {
    // Required here: a process whose addon loads never needs the list.
    const { prebuiltList } = require('./prebuilds.js')
    return `no prebuild matches this platform (prebuilds: ${prebuiltList()}) and the install ` +
      'built none: install a C toolchain (a C compiler, make, python3) and run ' +
      '"npm rebuild http-oneshot --foreground-scripts"'
  }
  return 'the addon found cannot be used here: build one from source with ' +
    '"npm rebuild http-oneshot --build-from-source --foreground-scripts"'
}

const loadAdviceText = loadAdvice(loadError)
if (binding === null) {
  debug('native addon not loaded (%s): the shim stays inactive, every response takes ' +
    "Node's own path%s", loadError && String(loadError.message).split('\n')[0].trim(),
  loadAdviceText ? '; ' + loadAdviceText : '')
} else {
  debug('native addon loaded')
}

// null cannot carry a property: why it is null is on the module record.
module.loadError = loadError
module.loadAdvice = loadAdviceText
module.adviceFor = loadAdvice
module.exports = binding
