'use strict'

// Interleaved rounds of legacy and native (and optionally limit) servers for
// one configuration, with medians, ranges and Welch's t-test:
//   node benchmark/compare.js [type=bytes] [len=4] [chunks=1] [chunkedEnc=0]
//     [headers=0] [status=200|204|304] [method=GET|HEAD] [c=50] [duration=5]
//     [warmup=1] [rounds=6]
//     [modes=legacy,native[,limit]] [gaps=0|1] [json=<file>]
// The default run (6 rounds x 2 modes x (1 s warm-up + 5 s)) takes about
// 80 s. matrix=1 runs type bytes/buffer x len 4/1024/16384/65536 x chunks 1/4
// x chunkedEnc 0/1 (32 configurations), then the bodyless rows (HEAD
// bytes/4/1 and bytes/1024/1, status=204 and status=304 bytes/4/1, each
// chunks=1 chunkedEnc=0), with rounds=3 duration=3 unless given, which takes
// about 17 minutes, and prints one markdown table row per configuration.
// The bodyless rows are loaded by lib/rawload.js, not wrk (see lib/load.js).
// gaps=1 also measures, in each server, the time between two requests on
// one connection (lib/gaps.js), and prints its percentiles next to wrk's
// latency: a tail in wrk's figures that the server's do not show is the
// client's.

const fs = require('node:fs')
const path = require('node:path')
const { parseArgs, runMain } = require('./lib/args.js')
const { SERVER_DEFAULTS, LOAD_DEFAULTS, checkConfig, parseModes, serverArgs, describe, bodyless } = require('./lib/config.js')
const { canPin } = require('./lib/cpu.js')
const { loadTool } = require('./lib/load.js')
const { runInterleaved, describeShim, formatRate, summarizeRate } = require('./lib/measure.js')
const { median, welch } = require('./lib/stats.js')

const COMPARE_DEFAULTS = Object.freeze({
  ...SERVER_DEFAULTS,
  ...LOAD_DEFAULTS,
  rounds: 6,
  modes: 'legacy,native',
  matrix: 0,
  gaps: 0,
  json: ''
})

const GAPS = path.join(__dirname, 'lib', 'gaps.js')

const MATRIX_ROUNDS = 3
const MATRIX_DURATION = 3

function summarize (runs) {
  return {
    ...summarizeRate(runs),
    p99Median: median(runs.map((r) => r.p99)),
    // The server's request-to-request time per connection (gaps=1), ms.
    gaps: runs.every((r) => r.shim !== null && r.shim.gaps !== undefined)
      ? Object.fromEntries(['p50', 'p99', 'p999', 'max'].map((k) => [k, median(runs.map((r) => r.shim.gaps[k]))]))
      : null,
    errors: runs.reduce((n, r) => n + r.errors + r.non2xx, 0),
    shim: runs.map((r) => r.shim)
  }
}

/**
 * Runs the interleaved rounds for one configuration and summarizes them.
 *
 * @param {object} config a checked configuration (see lib/config.js)
 * @param {object} options
 * @param {string[]} options.modes modes to run, the first is the baseline
 * @param {number} options.rounds rounds per mode
 * @param {(line: string) => void} [options.log] progress output
 * @returns {Promise<object>} per-mode summaries, ratios and the t-test
 */
async function compareConfig (config, { modes, rounds, log = () => {} }) {
  const gaps = config.gaps === 1
  const runs = await runInterleaved({
    modes,
    rounds,
    roundOptions: (mode) => ({
      nodeArgs: serverArgs(config, mode, gaps ? ['-r', GAPS] : []),
      gaps,
      connections: config.c,
      duration: config.duration,
      warmup: config.warmup,
      method: config.method,
      bodyless: bodyless(config.method, config.status)
    }),
    onResult: (mode, round, r) => {
      let line = `  round ${String(round + 1).padStart(2)} ${mode.padEnd(6)} ${formatRate(r.rps, r.cpuPerReq)}`
      if (r.errors > 0 || r.non2xx > 0) line += `  (${r.errors} socket errors, ${r.non2xx} non-2xx)`
      if (mode === 'native' && round === 0) line += `\n           ${describeShim(r.shim)}`
      log(line)
    }
  })
  const result = { config: describe(config), settings: { ...config }, modes: {} }
  for (const mode of modes) result.modes[mode] = summarize(runs[mode])
  const { legacy, native, limit } = result.modes
  if (legacy && native) {
    result.ratio = native.median / legacy.median
    result.cpuRatio = native.cpuMedian / legacy.cpuMedian
    result.welch = welch(native.rps, legacy.rps)
    result.cpuWelch = welch(native.cpu, legacy.cpu)
  }
  if (limit && native) result.limitRatio = native.median / limit.median
  if (limit && legacy) result.legacyLimitRatio = legacy.median / limit.median
  return result
}

function formatP (test) {
  if (test === null || test === undefined) return 'n/a'
  return test.p < 0.001 ? test.p.toExponential(1) : test.p.toFixed(3)
}

function formatInt (n) {
  return Math.round(n).toLocaleString('en-US')
}

function printSummary (result, log) {
  log('')
  log('mode     median req/s   min-max req/s        CPU µs/req  busy  p99 ms')
  for (const [mode, s] of Object.entries(result.modes)) {
    log(`${mode.padEnd(8)} ${formatInt(s.median).padStart(12)}   ` +
      `${`${formatInt(s.min)}-${formatInt(s.max)}`.padEnd(19)}  ` +
      `${s.cpuMedian.toFixed(2).padStart(10)}  ${`${Math.round(100 * s.busyMedian)}%`.padStart(4)}  ` +
      `${s.p99Median.toFixed(2).padStart(6)}`)
  }
  if (Object.values(result.modes).every((s) => s.gaps !== null)) {
    log('')
    log('mode     server request-to-request ms per connection: p50    p99  p99.9    max')
    for (const [mode, s] of Object.entries(result.modes)) {
      const g = s.gaps
      log(`${mode.padEnd(8)} ${' '.repeat(41)}${[g.p50, g.p99, g.p999, g.max].map((v) => v.toFixed(2).padStart(6)).join(' ')}`)
    }
  }
  if (result.ratio !== undefined) {
    const w = result.welch
    log(`native/legacy: ${result.ratio.toFixed(3)}x req/s (ratio of medians), ` +
      `${result.cpuRatio.toFixed(3)}x CPU µs/req`)
    log(`Welch t-test on req/s: ${w ? `t=${w.t.toFixed(2)} df=${w.df.toFixed(1)} ` : ''}p=${formatP(w)}; ` +
      `on CPU µs/req: p=${formatP(result.cpuWelch)}`)
  }
  if (result.limitRatio !== undefined) log(`native/limit: ${result.limitRatio.toFixed(3)}x req/s`)
  if (result.legacyLimitRatio !== undefined) log(`legacy/limit: ${result.legacyLimitRatio.toFixed(3)}x req/s`)
}

function matrixConfigs (base) {
  const configs = []
  for (const type of ['bytes', 'buffer']) {
    for (const len of [4, 1024, 16384, 65536]) {
      for (const chunks of [1, 4]) {
        for (const chunkedEnc of [0, 1]) configs.push({ ...base, type, len, chunks, chunkedEnc })
      }
    }
  }
  // Responses without a body: Node sends the header block alone (HEAD keeps
  // the handler's Content-Length; so do 204 and 304 in Node 20).
  const bodylessRow = { ...base, type: 'bytes', chunks: 1, chunkedEnc: 0 }
  configs.push({ ...bodylessRow, len: 4, method: 'HEAD' })
  configs.push({ ...bodylessRow, len: 1024, method: 'HEAD' })
  configs.push({ ...bodylessRow, len: 4, status: 204 })
  configs.push({ ...bodylessRow, len: 4, status: 304 })
  return configs
}

function tableRow (result) {
  const { legacy, native } = result.modes
  const cell = (s) => (s ? formatInt(s.median) : 'n/a')
  const ratio = result.ratio !== undefined ? `${result.ratio.toFixed(3)}x` : 'n/a'
  return `| ${result.config} | ${cell(legacy)} | ${cell(native)} | ${ratio} | ${formatP(result.welch)} |`
}

function header (config, modes, rounds, matrix = false) {
  const tool = matrix
    ? `${loadTool()} (HEAD, 204 and 304 rows: ${loadTool(true)})`
    : loadTool(bodyless(config.method, config.status))
  return `${tool} -t1 -c${config.c} -d${config.duration}s after ${config.warmup} s warm-up, ` +
    `${rounds} interleaved rounds of ${modes.join(', ')}` +
    `${canPin() ? ', server on CPU 0, load on CPU 1' : ', unpinned'}; Node ${process.version}`
}

async function main () {
  const argv = process.argv.slice(2)
  const config = parseArgs(argv, COMPARE_DEFAULTS)
  const given = new Set(argv.map((a) => a.slice(0, a.indexOf('='))))
  if (config.matrix === 1) {
    if (!given.has('rounds')) config.rounds = MATRIX_ROUNDS
    if (!given.has('duration')) config.duration = MATRIX_DURATION
  }
  checkConfig(config)
  if (config.gaps !== 0 && config.gaps !== 1) {
    throw Object.assign(new Error(`gaps must be 0 or 1, got ${config.gaps}`), { code: 'ERR_BENCH_USAGE' })
  }
  if (!Number.isInteger(config.rounds) || config.rounds < 1) {
    throw Object.assign(new Error('rounds must be a positive integer'), { code: 'ERR_BENCH_USAGE' })
  }
  const modes = parseModes(config.modes)
  const log = (line) => console.log(line)
  const results = []

  if (config.matrix === 1) {
    const configs = matrixConfigs(config)
    log(`matrix: ${configs.length} configurations; ${header(config, modes, config.rounds, true)}`)
    const rows = []
    for (const cfg of configs) {
      log(`${describe(cfg)}`)
      const result = await compareConfig(cfg, { modes, rounds: config.rounds, log })
      results.push(result)
      rows.push(tableRow(result))
      log(rows[rows.length - 1])
    }
    log('')
    log('| configuration | legacy req/s | native req/s | ratio | p |')
    log('|---|---|---|---|---|')
    for (const row of rows) log(row)
  } else {
    log(`${describe(config)}; ${header(config, modes, config.rounds)}`)
    const result = await compareConfig(config, { modes, rounds: config.rounds, log })
    results.push(result)
    printSummary(result, log)
  }

  if (config.json !== '') {
    fs.writeFileSync(config.json, JSON.stringify({
      date: new Date().toISOString(),
      node: process.version,
      tool: loadTool(),
      pinned: canPin(),
      results
    }, null, 2) + '\n')
    log(`results written to ${config.json}`)
  }
}

if (require.main === module) runMain(main)

module.exports = { compareConfig, printSummary, formatP, formatInt, matrixConfigs, tableRow, COMPARE_DEFAULTS }
