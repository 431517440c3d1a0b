'use strict'

// The main configurations, each through benchmark/compare.js, printed as a
// markdown table for the README:
//   node benchmark/run-main.js [rounds=6] [duration=5] [c=50] [warmup=1] [json=<file>]
// Three configurations x 6 rounds x 2 modes x 6 s: about 4 minutes.

const fs = require('node:fs')
const os = require('node:os')
const { parseArgs, runMain } = require('./lib/args.js')
const { SERVER_DEFAULTS, LOAD_DEFAULTS, checkConfig, describe } = require('./lib/config.js')
const { canPin } = require('./lib/cpu.js')
const { loadTool } = require('./lib/load.js')
const { compareConfig, printSummary, formatP, formatInt, COMPARE_DEFAULTS } = require('./compare.js')

// bytes/4/1 is Node core's simple.js default (writeHead + end(string));
// 20 setHeader() calls + end() is the fresh-response path where header
// rendering dominates; buffer/1024 is a typical small Buffer payload.
const MAIN_CONFIGS = [
  { label: 'writeHead + end(4-byte string)', overrides: {} },
  { label: '20 × setHeader + end(4-byte string)', overrides: { headers: 20 } },
  { label: 'writeHead + end(1 KiB Buffer)', overrides: { type: 'buffer', len: 1024 } }
]

async function main () {
  const opts = parseArgs(process.argv.slice(2), {
    ...LOAD_DEFAULTS,
    rounds: COMPARE_DEFAULTS.rounds,
    json: ''
  })
  const modes = ['legacy', 'native']
  const log = (line) => process.stderr.write(`${line}\n`)
  const results = []
  for (const { label, overrides } of MAIN_CONFIGS) {
    const config = checkConfig({ ...SERVER_DEFAULTS, ...opts, ...overrides })
    log(`${label}: ${describe(config)}`)
    const result = await compareConfig(config, { modes, rounds: opts.rounds, log })
    printSummary(result, log)
    log('')
    results.push({ label, ...result })
  }

  const cpus = os.cpus()
  const date = new Date().toISOString().slice(0, 10)
  // The table goes to stdout and the progress to stderr, so
  // `node benchmark/run-main.js > table.md` captures only the table.
  console.log(`Machine: ${cpus[0]?.model ?? 'unknown CPU'}, ${cpus.length} cores, Node ${process.version}, ${date}. ` +
    `${loadTool()} -t1 -c${opts.c} -d${opts.duration}s after ${opts.warmup} s warm-up` +
    `${canPin() ? ', server and load generator pinned to separate cores' : ''}; ` +
    `medians of ${opts.rounds} interleaved rounds, each in a fresh server process; p from Welch's t-test.`)
  console.log('')
  console.log('| configuration | legacy req/s | native req/s | ratio | CPU µs/req legacy / native | p |')
  console.log('|---|---|---|---|---|---|')
  for (const r of results) {
    const { legacy, native } = r.modes
    console.log(`| ${r.label} (${r.config}) | ${formatInt(legacy.median)} | ${formatInt(native.median)} | ` +
      `${r.ratio.toFixed(2)}× | ${legacy.cpuMedian.toFixed(1)} / ${native.cpuMedian.toFixed(1)} | ${formatP(r.welch)} |`)
  }
  if (opts.json !== '') {
    fs.writeFileSync(opts.json, JSON.stringify({ date, node: process.version, cpu: cpus[0]?.model, cores: cpus.length, results }, null, 2) + '\n')
    log(`results written to ${opts.json}`)
  }
}

runMain(main)
