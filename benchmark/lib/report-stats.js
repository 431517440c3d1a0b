'use strict'

// On SIGTERM, prints one JSON line with http-oneshot's stats() and exits
// cleanly (so --cpu-prof can write its profile). Loaded by
// benchmark/http/server.js, and with `-r` into the framework apps after
// register.js, so the parent can check that the native variant really took
// the native path. It never loads lib/index.js itself: the legacy variant
// must stay untouched, so stats are read only if something else loaded it.

const fs = require('node:fs')
const path = require('node:path')

const STATS_EVENT = 'http-oneshot-bench-stats'
const indexPath = path.resolve(__dirname, '..', '..', 'lib', 'index.js')

function readStats () {
  const mod = require.cache[indexPath]
  if (mod === undefined) return { loaded: false, stats: null }
  if (typeof mod.exports.stats !== 'function') {
    return { loaded: true, stats: null, error: 'lib/index.js has no stats()' }
  }
  return { loaded: true, stats: mod.exports.stats() }
}

let extra = {}
const reporters = []

process.once('SIGTERM', () => {
  for (const report of reporters) extra = { ...extra, ...report() }
  const line = JSON.stringify({ event: STATS_EVENT, ...readStats(), ...extra })
  fs.writeSync(1, `${line}\n`)
  process.exit(0)
})

/**
 * Adds fields to the stats line (for example why the shim is not installed).
 *
 * @param {object} info JSON-serialisable fields
 */
function setInfo (info) {
  extra = { ...extra, ...info }
}

/**
 * Adds the fields `report()` returns at exit to the stats line (for
 * figures gathered while the server ran, as lib/gaps.js does).
 *
 * @param {() => object} report returns JSON-serialisable fields
 */
function onReport (report) {
  reporters.push(report)
}

module.exports = { setInfo, onReport }
