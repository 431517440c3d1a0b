'use strict'

// The operator's kill switch, read by the preload, install() and the addon
// loader alike: HTTP_ONESHOT=0, off, false or no leaves Node untouched, and
// the addon is not even loaded.

/**
 * @param {NodeJS.ProcessEnv} [env]
 * @returns {boolean} true when HTTP_ONESHOT turns the package off
 */
function disabledByEnv (env = process.env) {
  const value = env.HTTP_ONESHOT
  if (value === undefined) return false
  return /^(?:0|off|false|no)$/i.test(value.trim())
}

module.exports = { disabledByEnv }
