'use strict'

const http = require('node:http')
const util = require('node:util')
const shim = require('./shim.js')
const build = require('./build.js')

const debug = util.debuglog('http-oneshot')

/**
 * Reads the operator's kill switch: HTTP_ONESHOT=0, off, false or no
 * leaves Node untouched.
 * @returns {boolean}
 */
function disabledByEnv () {
  const value = process.env.HTTP_ONESHOT
  if (value === undefined) return false
  return /^(?:0|off|false|no)$/i.test(value.trim())
}

/**
 * Patches http.ServerResponse.prototype.end so that common responses go out
 * as one Buffer in one socket write. Idempotent.
 * @param {{ maxBodySize?: number }} [options]
 * @returns {() => void} uninstall
 */
function install (options = {}) {
  if (options === null || typeof options !== 'object') {
    throw new TypeError('The "options" argument must be of type object')
  }
  // Every call sets every option: what install() was last given holds.
  let max = shim.DEFAULT_MAX_BODY
  if (options.maxBodySize !== undefined) {
    max = options.maxBodySize
    if (typeof max !== 'number' || !Number.isSafeInteger(max) || max < 0) {
      const err = new RangeError('The "options.maxBodySize" argument must be a non-negative safe integer. Received ' + util.inspect(max))
      err.code = 'ERR_OUT_OF_RANGE'
      throw err
    }
  }
  shim.options.maxBodySize = max
  if (disabledByEnv()) {
    debug('not installed: HTTP_ONESHOT=%s', process.env.HTTP_ONESHOT)
    return uninstall
  }
  if (!shim.isInstalled() && Object.hasOwn(http.ServerResponse.prototype, 'end')) {
    // Another agent already defined ServerResponse#end: stay out of its way.
    debug('not installed: http.ServerResponse.prototype.end was already replaced')
    process.emitWarning('http-oneshot was not installed: http.ServerResponse.prototype.end ' +
      'was already replaced by another module', { code: 'HM_NOT_INSTALLED' })
    return uninstall
  }
  shim.install()
  return uninstall
}

/**
 * Restores the exact original ServerResponse#end. Idempotent.
 */
function uninstall () {
  shim.uninstall()
}

/**
 * Counters since load or the last resetStats().
 * @returns {{ native: number, fallback: number, reasons: Record<string, number> }}
 */
function stats () {
  return {
    native: shim.stats.native,
    fallback: shim.stats.fallback,
    reasons: Object.assign({}, shim.stats.reasons)
  }
}

function resetStats () {
  shim.stats.native = 0
  shim.stats.fallback = 0
  for (const key of Object.keys(shim.stats.reasons)) delete shim.stats.reasons[key]
}

module.exports = {
  buildHttpMessage: build.buildHttpMessage,
  isNative: build.isNative,
  loadError: build.loadError,
  install,
  uninstall,
  isInstalled: shim.isInstalled,
  stats,
  resetStats,
  fallbackReason: shim.fallbackReason,
  FALLBACK: shim.FALLBACK
}
