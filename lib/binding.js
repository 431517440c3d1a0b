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
// Why the addon is missing is kept as `loadError` (see the end of this file)
// and logged with NODE_DEBUG=http-oneshot.

const path = require('node:path')
const util = require('node:util')

const { disabledByEnv } = require('./env.js')

const debug = util.debuglog('http-oneshot')

// The properties lib/ relies on; an addon built from another version of
// src/binding.c would lack some of them and is treated as missing.
const REQUIRED = ['build', 'fill', 'buildFromHead', 'fillFromHead', 'checkHead', 'cacheSet', 'fillCached',
  'flags', 'errors', 'slotCount', 'keyShift', 'keyRepeat', 'keyCheck',
  'keyString', 'keyBytes', 'keyEmpty', 'sendFailed', 'send', 'key']

let binding = null
let loadError = null

if (disabledByEnv()) {
  loadError = new Error(`disabled by HTTP_ONESHOT=${process.env.HTTP_ONESHOT}`)
} else if (process.env.HTTP_ONESHOT_NATIVE === '0') {
  loadError = new Error('disabled by HTTP_ONESHOT_NATIVE=0')
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

if (binding === null) {
  debug('native addon not loaded, using the JS fallback: %s', loadError && loadError.message)
} else {
  debug('native addon loaded')
}

// The export is the addon itself or null, as lib/shim.js tests it. null
// cannot carry a property, so the reason is recorded on this module record,
// where lib/build.js reads it and re-exports it as `loadError`.
module.loadError = loadError
module.exports = binding
