'use strict'

// The addon's results (src/napi.h): undefined when an entry point
// finished, else a binding.result value with its detail in
// binding.detail[0].

const binding = require('../../lib/binding.js')

/**
 * A result as the rejection code it stands for.
 * @param {*} result what fill(), fillFromHead(), checkHead(), cacheSet() or
 *   fillCached() returned
 * @returns {number} 0 for undefined, the record's code for REJECTED
 * @throws {Error} for any other result
 */
function codeOf (result) {
  if (result === undefined) return 0
  if (result !== binding.result.REJECTED) throw new Error(`neither undefined nor REJECTED: ${String(result)}`)
  return binding.detail[0]
}

module.exports = { codeOf }
