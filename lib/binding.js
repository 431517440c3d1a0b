'use strict'

// Loads the native addon once. Exports the addon object, or null when it
// cannot be used; never throws, because every caller has a pure JS path that
// sends the same bytes.
//
// Environment:
//   HTTP_ONESHOT=0         The kill switch (lib/env.js): nothing of the
//                          package runs, and the addon is not loaded either.
//   HTTP_ONESHOT_NATIVE=0  Do not load the addon at all and export null, so
//                          the JS fallback runs. Meant for testing that path
//                          and for ruling the addon out when debugging.
//
// Without the addon the shim stays inactive: every response takes Node's own
// path (buildHttpMessage() alone has a JS implementation). Why the addon is
// missing is kept as `loadError`, and what the user can do about it as
// `loadAdvice` (see the end of this file); both are logged with
// NODE_DEBUG=http-oneshot.

const path = require('node:path')
const util = require('node:util')

const { disabledByEnv } = require('./env.js')

const debug = util.debuglog('http-oneshot')

// The properties lib/ relies on; an addon built from another version of
// src/binding.c would lack some of them and is treated as missing.
const REQUIRED = ['fill', 'fillFromHead', 'checkHead', 'cacheSet', 'fillCached', 'flags', 'errors',
  'send', 'key']

let binding = null
let loadError = null

// The loadError of an addon turned off on purpose: nothing to advise.
function disabled (message) {
  const err = new Error(message)
  err.code = 'HTTP_ONESHOT_DISABLED'
  return err
}

if (disabledByEnv()) {
  loadError = disabled(`disabled by HTTP_ONESHOT=${process.env.HTTP_ONESHOT}`)
} else if (process.env.HTTP_ONESHOT_NATIVE === '0') {
  loadError = disabled('disabled by HTTP_ONESHOT_NATIVE=0')
} else {
  try {
    // node-gyp-build looks in prebuilds/<platform>-<arch>/ first, then in
    // build/Release and build/Debug, relative to the package root.
    const addon = require('node-gyp-build')(path.join(__dirname, '..'))
    const missing = REQUIRED.filter((key) => addon == null || addon[key] === undefined)
    if (missing.length > 0) {
      throw new Error(`the addon lacks ${missing.join(', ')}`)
    }
    binding = addon
  } catch (err) {
    loadError = err
  }
}

/**
 * What the user can do about a load error, in words for a message; null
 * when the addon was turned off on purpose.
 * @param {Error|null} err the loadError
 * @param {{ permission?: object }} [proc] the process (its permission model)
 * @returns {string|null}
 */
function loadAdvice (err, proc = process) {
  if (err === null || err.code === 'HTTP_ONESHOT_DISABLED') return null
  if (err.code === 'ERR_DLOPEN_DISABLED') {
    // Node throws this code both under the permission model without
    // --allow-addons and with --no-addons; process.permission exists only
    // under the former.
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

// The export is the addon itself or null. null cannot carry a property, so
// why it is null is recorded on this module record: `loadError`, next to
// `loadAdvice`, the words for any message that tells the user what to do
// (null when loaded or turned off on purpose), and `adviceFor`, which makes
// them.
module.loadError = loadError
module.loadAdvice = loadAdviceText
module.adviceFor = loadAdvice
module.exports = binding
