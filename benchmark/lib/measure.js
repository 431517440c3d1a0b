'use strict'

// One measured round: a fresh server process, a warm-up, a measured load
// window with the server's CPU time sampled around it, and shutdown.

const { startServer } = require('./child.js')
const { cpuTimeMicros } = require('./cpu.js')
const { runLoad } = require('./load.js')
const { median, min, max } = require('./stats.js')

/**
 * @param {object} options
 * @param {string[]} options.nodeArgs how to start the server (see startServer)
 * @param {Record<string, string>} [options.env] extra environment for it
 * @param {string} [options.urlPath] request path (default '/')
 * @param {number} options.connections
 * @param {number} options.duration measured seconds
 * @param {number} [options.warmup] warm-up seconds (default 1)
 * @param {string} [options.method] request method (default GET)
 * @param {boolean} [options.bodyless] the responses have no body (see runLoad)
 * @param {boolean} [options.gaps] the server preloads lib/gaps.js: it is
 *   told when the measured window starts
 * @returns {Promise<{rps: number, cpuPerReq: number, requests: number,
 *   p50: number, p99: number, errors: number, non2xx: number, tool: string,
 *   shim: object|null}>} cpuPerReq in µs of server CPU per completed request
 */
async function measureRound ({ nodeArgs, env, urlPath = '/', connections, duration, warmup = 1, method = 'GET', bodyless = false, gaps = false }) {
  const server = await startServer({ nodeArgs, env })
  let cpuBefore = 0
  let cpuAfter = 0
  let load
  try {
    load = await runLoad({
      url: `http://127.0.0.1:${server.port}${urlPath}`,
      connections,
      duration,
      warmup,
      method,
      bodyless,
      beforeMeasure: () => {
        if (gaps) process.kill(server.pid, 'SIGUSR2')
        cpuBefore = cpuTimeMicros(server.pid)
      },
      afterMeasure: () => { cpuAfter = cpuTimeMicros(server.pid) }
    })
  } catch (err) {
    await server.stop()
    throw err
  }
  const shim = await server.stop()
  return {
    ...load,
    cpuPerReq: load.requests > 0 ? (cpuAfter - cpuBefore) / load.requests : NaN,
    shim
  }
}

/**
 * One-line summary of how the shim ran in a native round, or a warning when
 * it did not run at all.
 *
 * @param {object|null} shim the stats line the server printed at exit
 * @returns {string}
 */
function describeShim (shim) {
  if (shim === null) return 'shim: no stats reported'
  if (shim.installed === false) return `WARNING: shim not installed, this ran as legacy (${shim.problem})`
  if (!shim.loaded) return 'WARNING: lib/index.js was never loaded, this ran as legacy'
  if (shim.stats === null) return `shim: ${shim.error || 'no stats()'}`
  const { native, fallback, reasons } = shim.stats
  const total = native + fallback
  let text = `shim: ${native} native, ${fallback} fallback`
  if (total > 0) text += ` (${(100 * native / total).toFixed(1)}% native)`
  const why = Object.entries(reasons || {}).filter(([, n]) => n > 0)
  if (why.length > 0) text += ` reasons: ${why.map(([r, n]) => `${r}=${n}`).join(', ')}`
  // Expected where the configuration writes before end() (chunks > 1), a
  // surprise anywhere else, so it is spelled out.
  if (total > 0 && native === 0) text = `every response fell back to Node's path; ${text}`
  return text
}

/**
 * Prints one round's line: rate, CPU per request, errors, and with
 * `withShim` the package's counts.
 * @param {string} mode
 * @param {number} round
 * @param {object} r the round's result
 * @param {boolean} withShim
 */
function printRound (mode, round, r, withShim) {
  let line = `  round ${String(round + 1).padStart(2)} ${mode.padEnd(6)} ${formatRate(r.rps, r.cpuPerReq)}`
  if (r.errors > 0 || r.non2xx > 0) line += `  (${r.errors} socket errors, ${r.non2xx} non-2xx)`
  if (withShim) line += `\n           ${describeShim(r.shim)}`
  console.log(line)
}

module.exports = { measureRound, describeShim, printRound }

/**
 * Runs `rounds` rounds of every mode, interleaved so that slow drift of the
 * machine (thermal state, other load) spreads over all modes: even rounds
 * go in the given order, odd rounds in reverse (ABBA), and every run uses a
 * fresh server process.
 *
 * @param {object} options
 * @param {string[]} options.modes for example ['legacy', 'native']
 * @param {number} options.rounds
 * @param {(mode: string) => object} options.roundOptions measureRound options for a mode
 * @param {(mode: string, round: number, result: object) => void} [options.onResult]
 * @returns {Promise<Record<string, object[]>>} results per mode, in round order
 */
async function runInterleaved ({ modes, rounds, roundOptions, onResult }) {
  const results = Object.fromEntries(modes.map((m) => [m, []]))
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? modes : [...modes].reverse()
    for (const mode of order) {
      const result = await measureRound(roundOptions(mode))
      results[mode].push(result)
      if (onResult) onResult(mode, round, result)
    }
  }
  return results
}

/**
 * The share of the measured window the server spent on the CPU: below
 * about 95% its req/s measure waiting (on the client, on the network), not
 * its CPU, and only its CPU per request compares.
 *
 * @param {number} rps
 * @param {number} cpuPerReq µs
 * @returns {number} 0 to about 1
 */
function busy (rps, cpuPerReq) {
  return rps * cpuPerReq / 1e6
}

/**
 * Formats one run or a median as "61,234 req/s  16.32 µs/req CPU  99% busy".
 *
 * @param {number} rps
 * @param {number} cpuPerReq
 * @returns {string}
 */
function formatRate (rps, cpuPerReq) {
  return `${Math.round(rps).toLocaleString('en-US').padStart(8)} req/s  ${cpuPerReq.toFixed(2).padStart(6)} µs/req CPU` +
    `  ${Math.round(100 * busy(rps, cpuPerReq)).toString().padStart(3)}% busy`
}

/**
 * The figures of one mode's rounds every table prints: req/s and CPU per
 * request, each round's and their medians, and the median busy share.
 *
 * @param {object[]} runs measureRound results
 * @returns {object}
 */
function summarizeRate (runs) {
  const rps = runs.map((r) => r.rps)
  const cpu = runs.map((r) => r.cpuPerReq)
  return {
    rps,
    cpu,
    median: median(rps),
    min: min(rps),
    max: max(rps),
    cpuMedian: median(cpu),
    busyMedian: median(rps.map((r, i) => busy(r, cpu[i])))
  }
}

module.exports.runInterleaved = runInterleaved
module.exports.summarizeRate = summarizeRate
module.exports.formatRate = formatRate
module.exports.busy = busy
