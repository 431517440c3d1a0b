'use strict'

// The probe's answer as this process knows it: remembered here, or stored
// by an earlier process. Apart from probe.js so that a process whose answer
// is stored never loads the probe (docs/protocols.md, "Where the probe
// runs"; benchmark/RESULTS.md, static files).

const cache = require('./cache.js')

// How lib/headers.js prints a header store and the probe printed Node's
// (shape.storeShown): spelt out, so that util.inspect.defaultOptions
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

// Always undefined under HTTP_ONESHOT_PROBE=inline, which neither reads nor
// stores an answer.
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

function remember (answer) {
  known = answer
}

// An answer from a child, in the form probeIsolated() returns.
function asProbed (answer, cached) {
  const { protocol, shape, write, sources } = answer
  return { protocol, shape, write, sources, isolated: true, cached }
}

// The stored answer in the form probeIsolated() returns, or null.
function storedAnswer () {
  const stored = knownAnswer()
  return stored === undefined ? null : asProbed(stored, true)
}

// A private symbol of Node's by its description, or null (lib/internals.js and the probe).
function findSymbol (obj, description) {
  for (const sym of Object.getOwnPropertySymbols(obj)) {
    if (sym.description === description) return sym
  }
  return null
}

module.exports = { knownAnswer, remember, storedAnswer, asProbed, INSPECT, findSymbol }
