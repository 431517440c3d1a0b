'use strict'

// The operator's switches. HTTP_ONESHOT=0, off, false or no, read by the
// preload, install() and the addon loader alike, leaves Node untouched, and
// the addon is not even loaded. HTTP_ONESHOT_REPORT=1 prints what the
// package did when the process exits.

/**
 * @param {NodeJS.ProcessEnv} [env]
 * @returns {boolean} true when HTTP_ONESHOT turns the package off
 */
function disabledByEnv (env = process.env) {
  const value = env.HTTP_ONESHOT
  if (value === undefined) return false
  return /^(?:0|off|false|no)$/i.test(value.trim())
}

/**
 * @param {NodeJS.ProcessEnv} [env]
 * @returns {boolean} true when HTTP_ONESHOT_REPORT asks for the exit report
 *   (lib/report.js): set, and not 0, off, false or no
 */
function reportWanted (env = process.env) {
  const value = env.HTTP_ONESHOT_REPORT
  if (value === undefined || value.trim() === '') return false
  return !/^(?:0|off|false|no)$/i.test(value.trim())
}

module.exports = { disabledByEnv, reportWanted }
