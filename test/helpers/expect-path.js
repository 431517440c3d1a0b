'use strict'

// The path a test may expect end() to take on the running Node line. The
// shim is active only where lib/internals.js recognises Node's internals;
// on any other line fallbackReason() answers 'unsupported-node' before any
// other check, so every end() call counts exactly that, and the counts a
// test states for an active shim collapse into one reason with the same
// total. The test itself still runs: both paths are Node's own there, and
// the harness still compares them.

const internals = require('../../lib/internals.js')

const UNSUPPORTED = 'unsupported-node'

// Whether the shim can take the native path on this Node line.
const shimActive = internals !== null

function total (counts) {
  let n = 0
  for (const key of Object.keys(counts)) n += counts[key]
  return n
}

/**
 * Maps an expectation written for an active shim to the running line.
 *
 * @param {string|string[]|object|undefined} expected 'native' or a reason for
 *   one end() call (undefined means 'native'); an array of acceptable
 *   outcomes for one call; or an object of exact counts ({} when end() is
 *   never called).
 * @returns {string|string[]|object} The same expectation when the shim is
 *   active, else the same shape with every outcome 'unsupported-node'.
 */
function expectedPath (expected) {
  if (shimActive) return expected === undefined ? 'native' : expected
  if (expected === undefined || typeof expected === 'string') return UNSUPPORTED
  if (Array.isArray(expected)) return [UNSUPPORTED]
  const n = total(expected)
  return n > 0 ? { [UNSUPPORTED]: n } : {}
}

/**
 * The same mapping for the object stats() returns.
 *
 * @param {{native: number, fallback: number, reasons: object}} stats
 * @returns {{native: number, fallback: number, reasons: object}}
 */
function expectedStats (stats) {
  if (shimActive) return stats
  const n = stats.native + stats.fallback
  return { native: 0, fallback: n, reasons: n > 0 ? { [UNSUPPORTED]: n } : {} }
}

/**
 * What fallbackReason() answers on this line for a response whose answer on
 * an active shim is `reason` (null: the native path).
 *
 * @param {string|null} reason
 * @returns {string|null}
 */
function expectedReason (reason) {
  return shimActive ? reason : UNSUPPORTED
}

/**
 * The path counts of a stats() result (native, fallback, reasons), without
 * the write counters (direct, partial), which depend on the kernel.
 *
 * @param {object} stats
 * @returns {{native: number, fallback: number, reasons: object}}
 */
function pathStats (stats) {
  return { native: stats.native, fallback: stats.fallback, reasons: stats.reasons }
}

module.exports = { UNSUPPORTED, expectedPath, expectedReason, expectedStats, pathStats, shimActive }
