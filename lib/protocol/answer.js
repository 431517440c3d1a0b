'use strict'

// The probe's answer as this process knows it: remembered here, or stored
// by an earlier process (lib/protocol/cache.js). A file apart from
// lib/protocol/probe.js so that a process whose answer is stored, as most
// are, never loads the probe: every file loaded stays in the heap for the
// life of the process (its source text and what V8 compiled of it), and a
// few hundred KiB more live heap can make V8 collect the old generation
// twice as often (benchmark/RESULTS.md, static files).

const cache = require('./cache.js')

// How the shim prints a header store to compare it with Node's
// (lib/headers.js) and how the probe printed Node's (the answer's
// shape.storeShown): options spelt out, so that util.inspect.defaultOptions
// changed in one process but not the other cannot make them differ.
const INSPECT = Object.freeze({
  showHidden: false,
  depth: 2,
  colors: false,
  customInspect: false,
  showProxy: false,
  maxArrayLength: 100,
  maxStringLength: 10000,
  breakLength: Infinity,
  compact: 3,
  sorted: false,
  getters: false,
  numericSeparator: false
})

// undefined: not known yet.
let known
let key = null

/**
 * The answer for this binary: remembered in this process, or stored by an
 * earlier one. undefined when not known yet, and always under
 * HTTP_ONESHOT_PROBE=inline (which neither reads nor stores an answer).
 * @returns {object|undefined}
 */
function knownAnswer () {
  if (known !== undefined || process.env.HTTP_ONESHOT_PROBE === 'inline') return known
  try {
    if (key === null) key = cache.binaryKey()
    const entry = cache.load(key)
    if (entry !== null) known = entry.answer
  } catch {
    known = undefined
  }
  return known
}

// Remembers an answer the probe gave in this process or in a child.
function remember (answer) {
  known = answer
}

/**
 * The stored answer in the form probeIsolated() (lib/protocol/probe.js)
 * returns, or null when none is known: the probe need not be loaded.
 * @returns {{protocol: 'node20'|'node24'|null, shape: object|null,
 *   write: 'node20'|'node24'|null, sources: object, isolated: true, cached: true} | null}
 */
function storedAnswer () {
  const stored = knownAnswer()
  if (stored === undefined) return null
  return { protocol: stored.protocol, shape: stored.shape, write: stored.write, sources: stored.sources, isolated: true, cached: true }
}

module.exports = { knownAnswer, remember, storedAnswer, INSPECT }
