'use strict'

// The path a test may expect end() to take on the running Node line. The
// shim is active only where lib/internals.js recognises Node's internals;
// on any other line install() leaves Node's methods untouched, so no end()
// call reaches the shim and nothing is counted: the counts a test states
// for an active shim collapse to none. (fallbackReason(), called directly,
// answers 'unsupported-node' there before any other check.) The test itself
// still runs: both paths are Node's own there, and the harness still
// compares them.

const internals = require('../../lib/internals.js')

const UNSUPPORTED = 'unsupported-node'

// Whether the shim can take the native path on this Node line.
const shimActive = internals !== null

/**
 * Maps an expectation written for an active shim to the running line.
 *
 * @param {string|string[]|object|undefined} expected 'native' or a reason for
 *   one end() call (undefined means 'native'); an array of acceptable
 *   outcomes for one call; or an object of exact counts ({} when end() is
 *   never called).
 * @returns {string|string[]|object} The same expectation when the shim is
 *   active, else {}: nothing counted.
 */
function expectedPath (expected) {
  if (shimActive) return expected === undefined ? 'native' : expected
  return {}
}

/**
 * The same mapping for the object stats() returns.
 *
 * @param {{native: number, fallback: number, reasons: object}} stats
 * @returns {{native: number, fallback: number, reasons: object}}
 */
function expectedStats (stats) {
  if (shimActive) return stats
  return { native: 0, fallback: 0, reasons: {} }
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

// Whether end() after write() goes the shim's way where end() and write_()
// are Node 24.22's (lib/shim.js, heldTail): end(chunk) once the header went
// out or chunks are held on the response's cork, with or without chunked
// framing, and end() with chunks held.
const heldTail = shimActive && internals.chunkedUncork === true && internals.protocol.name === 'node24'

// Whether end(chunk) on a response whose header an earlier write() sent
// goes the shim's way on this line (lib/shim.js, tailEnd: Node 20's end()
// and write(), or heldTail), where it counts as native. (With
// Content-Length framing on Node 20 only while writes wait on the socket's
// cork: lib/protocol/chunked20.js, tailReason().)
const tailNative = heldTail ||
  (shimActive && internals.chunkedWrite === true && internals.protocol.name === 'node20')

/**
 * The path of such an end(chunk): 'native' where tailNative, else
 * `otherwise`, the path Node's own end() is counted under.
 *
 * @param {string|string[]} otherwise
 * @returns {string|string[]}
 */
function tailPath (otherwise) {
  return tailNative ? 'native' : otherwise
}

/**
 * The path of an end() after write() that only the Node 24.22 tail takes
 * (Content-Length framing with no write waiting, end() with chunks held):
 * 'native' where heldTail, else `otherwise`.
 *
 * @param {string|string[]} otherwise
 * @returns {string|string[]}
 */
function heldPath (otherwise) {
  return heldTail ? 'native' : otherwise
}

// Whether end() leaves a block Node rendered with a string body to Node on
// this line: where the native path would send it as one latin1 string
// sliced from a filled Buffer (lib/decide.js, slicedString; the 24.21+
// protocol), which costs more than Node's own end().
const nodeRendered = shimActive && require('../../lib/decide.js').slicedString === true

/**
 * The path of end(string) after a block Node rendered: 'node-rendered' (or
 * `rendered`, for a test whose end() calls differ) where nodeRendered, else
 * `otherwise`.
 *
 * @param {string|string[]|object} otherwise
 * @param {string|string[]|object} [rendered]
 * @returns {string|string[]|object}
 */
function renderedPath (otherwise, rendered = 'node-rendered') {
  return nodeRendered ? rendered : otherwise
}

module.exports = {
  UNSUPPORTED,
  expectedPath,
  expectedReason,
  expectedStats,
  pathStats,
  shimActive,
  heldTail,
  heldPath,
  nodeRendered,
  renderedPath,
  tailNative,
  tailPath
}
