'use strict'

// The public API. Loading this file loads neither node:http nor the addon:
// lib/shim.js (which needs http) is loaded by install() and by what reads its
// state, lib/binding.js by isNative/loadError, lib/build.js by
// buildHttpMessage, so that the preload (lib/preload.js) can wait for the
// application to load http first, and the kill switch loads nothing.

const util = require('node:util')
const { disabledByEnv } = require('./env.js')

const debug = util.debuglog('http-oneshot')

let shim = null
function loadShim () {
  if (shim === null) shim = require('./shim.js')
  return shim
}

// lib/binding.js exports the addon or null; why it is null is kept on its
// module record (see the end of that file).
function bindingState () {
  const binding = require('./binding.js')
  const record = require.cache[require.resolve('./binding.js')]
  return { binding, loadError: (record && record.loadError) || null }
}

let warned = false

// Why the native path can never run in this process, or null. Called with
// the shim loaded.
function inactiveReason () {
  const { binding, loadError } = bindingState()
  if (binding === null) {
    if (process.env.HTTP_ONESHOT_NATIVE === '0') return 'the addon is disabled by HTTP_ONESHOT_NATIVE=0'
    const message = loadError ? String(loadError.message).split('\n')[0].trim() : 'unknown error'
    return `the native addon did not load (${message}); ` +
      'run "npm rebuild http-oneshot --foreground-scripts" to see why it was not built'
  }
  if (require('./internals.js') === null) {
    return `Node ${process.version} is not a line whose http internals http-oneshot reproduces`
  }
  return null
}

/**
 * Patches http.ServerResponse.prototype.end (and writeHead) so that common
 * responses go out as one Buffer in one socket write. Idempotent. Only the
 * options given are set: a later call without options keeps them.
 * @param {{ maxBodySize?: number }} [options]
 * @returns {() => void} uninstall
 */
function install (options = {}) {
  if (options === null || typeof options !== 'object') {
    throw new TypeError('The "options" argument must be of type object')
  }
  const max = options.maxBodySize
  if (max !== undefined &&
      (typeof max !== 'number' || !Number.isSafeInteger(max) || max < 0)) {
    const err = new RangeError('The "options.maxBodySize" argument must be a non-negative safe integer. Received ' + util.inspect(max))
    err.code = 'ERR_OUT_OF_RANGE'
    throw err
  }
  if (disabledByEnv()) {
    debug('not installed: HTTP_ONESHOT=%s', process.env.HTTP_ONESHOT)
    return uninstall
  }
  const s = loadShim()
  if (max !== undefined) s.options.maxBodySize = max
  const http = require('node:http')
  if (!s.isInstalled() && Object.hasOwn(http.ServerResponse.prototype, 'end')) {
    // Another agent already defined ServerResponse#end: stay out of its way.
    debug('not installed: http.ServerResponse.prototype.end was already replaced')
    process.emitWarning('http-oneshot was not installed: http.ServerResponse.prototype.end ' +
      'was already replaced by another module', { code: 'HM_NOT_INSTALLED' })
    return uninstall
  }
  s.install()
  if (!warned) {
    const why = inactiveReason()
    if (why !== null && process.env.HTTP_ONESHOT_NATIVE !== '0') {
      warned = true
      debug('inactive: %s', why)
      process.emitWarning(`http-oneshot is installed but inactive: ${why}. ` +
        'Every response takes Node\'s own path.', { code: 'HTTP_ONESHOT_INACTIVE' })
    }
  }
  return uninstall
}

/**
 * Restores what install() replaced, and only that: a wrapper another module
 * put on ServerResponse#end or #writeHead since stays in place. Idempotent.
 */
function uninstall () {
  if (shim !== null) shim.uninstall()
}

/**
 * Whether the patch is in place.
 * @returns {boolean}
 */
function isInstalled () {
  return shim !== null && shim.isInstalled()
}

/**
 * Whether responses can take the native path: installed, the addon loaded,
 * and the Node line is one the shim reproduces.
 * @returns {boolean}
 */
function isActive () {
  return isInstalled() && inactiveReason() === null
}

/**
 * Counters since load or the last resetStats().
 * @returns {{ native: number, fallback: number, direct: number, partial: number,
 *   reasons: Record<string, number>, writes: { native: number, fallback: number } }}
 */
function stats () {
  if (shim === null) {
    return { native: 0, fallback: 0, direct: 0, partial: 0, reasons: {}, writes: { native: 0, fallback: 0 } }
  }
  return {
    native: shim.stats.native,
    fallback: shim.stats.fallback,
    // Native responses written to the socket's descriptor by C: whole
    // (direct), or in part with the rest through socket.write() (partial).
    direct: shim.directStats.direct,
    partial: shim.directStats.partial,
    reasons: Object.assign({}, shim.stats.reasons),
    // write() calls of chunked responses sent in fewer socket writes
    // (native), and those Node's own write() handled (fallback).
    writes: { native: shim.stats.writes.native, fallback: shim.stats.writes.fallback }
  }
}

function resetStats () {
  if (shim === null) return
  shim.stats.native = 0
  shim.stats.fallback = 0
  shim.directStats.direct = 0
  shim.directStats.partial = 0
  shim.stats.writes.native = 0
  shim.stats.writes.fallback = 0
  // A fresh object: deleting its keys would turn it into a dictionary.
  shim.stats.reasons = shim.reasonCounts()
}

/**
 * The decision function: null when res.end(chunk, encoding) may take the
 * native path, else the FALLBACK reason.
 */
function fallbackReason (res, chunk, encoding) {
  return loadShim().fallbackReason(res, chunk, encoding)
}

module.exports = {
  install,
  uninstall,
  isInstalled,
  isActive,
  stats,
  resetStats,
  fallbackReason
}

// Values that need http or the addon are read on first use.
Object.defineProperties(module.exports, {
  buildHttpMessage: { enumerable: true, get: () => require('./build.js').buildHttpMessage },
  isNative: { enumerable: true, get: () => bindingState().binding !== null },
  loadError: { enumerable: true, get: () => bindingState().loadError },
  FALLBACK: { enumerable: true, get: () => loadShim().FALLBACK }
})
