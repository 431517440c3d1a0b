'use strict'

// CPU profile of the benchmark server under load, summarized by self time:
//   node benchmark/profile.js [mode=native|legacy|limit] [type=bytes] [len=4]
//     [chunks=1] [chunkedEnc=0] [headers=0] [c=50] [duration=5] [warmup=1]
//     [top=25] [out=<file.cpuprofile>]
// The server runs under `node --cpu-prof`; after the load it gets SIGTERM,
// exits cleanly, and V8 writes the profile. Self samples are summed per
// function name and script, and the top entries are printed with their share
// of all samples and of busy (non-idle) samples. Open the file given with
// out= in Chrome DevTools for the full call tree.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { parseArgs, runMain } = require('./lib/args.js')
const { SERVER_DEFAULTS, LOAD_DEFAULTS, checkConfig, parseModes, serverArgs, describe, bodyless } = require('./lib/config.js')
const { startServer } = require('./lib/child.js')
const { runLoad } = require('./lib/load.js')
const { describeShim } = require('./lib/measure.js')

/**
 * Sums self samples per function name and script URL.
 *
 * @param {{nodes: object[]}} profile a parsed .cpuprofile
 * @returns {{total: number, idle: number, entries: object[]}} entries sorted
 *   by self samples, largest first
 */
function selfTime (profile) {
  const byKey = new Map()
  let total = 0
  let idle = 0
  for (const node of profile.nodes) {
    const hits = node.hitCount || 0
    if (hits === 0) continue
    total += hits
    const { functionName, url, lineNumber } = node.callFrame
    if (functionName === '(idle)') idle += hits
    const key = `${functionName}\0${url}`
    let entry = byKey.get(key)
    if (entry === undefined) {
      entry = { name: functionName || '(anonymous)', url, line: lineNumber + 1, samples: 0 }
      byKey.set(key, entry)
    }
    entry.samples += hits
  }
  const entries = [...byKey.values()].sort((a, b) => b.samples - a.samples)
  return { total, idle, entries }
}

function where (entry) {
  if (!entry.url) return ''
  const url = entry.url.startsWith('file://') ? path.relative(process.cwd(), new URL(entry.url).pathname) : entry.url
  return `${url}:${entry.line}`
}

async function main () {
  const config = checkConfig(parseArgs(process.argv.slice(2), {
    ...SERVER_DEFAULTS,
    ...LOAD_DEFAULTS,
    mode: 'native',
    top: 25,
    out: ''
  }))
  const [mode] = parseModes(config.mode)
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'http-oneshot-prof-'))
  const server = await startServer({
    nodeArgs: serverArgs(config, mode, ['--cpu-prof', `--cpu-prof-dir=${dir}`])
  })
  let load
  try {
    load = await runLoad({
      url: `http://127.0.0.1:${server.port}/`,
      connections: config.c,
      duration: config.duration,
      warmup: config.warmup,
      method: config.method,
      bodyless: bodyless(config.method, config.status)
    })
  } finally {
    const shim = await server.stop()
    if (mode === 'native') console.log(describeShim(shim))
  }

  const file = fs.readdirSync(dir).find((f) => f.endsWith('.cpuprofile'))
  if (file === undefined) throw new Error(`no .cpuprofile written to ${dir}`)
  const profilePath = path.join(dir, file)
  const { total, idle, entries } = selfTime(JSON.parse(fs.readFileSync(profilePath, 'utf8')))
  const busy = total - idle

  console.log(`${mode} ${describe(config)}: ${Math.round(load.rps).toLocaleString('en-US')} req/s under the profiler ` +
    `(${load.tool} -c${config.c} -d${config.duration}s); ${total} samples, ${(100 * idle / total).toFixed(1)}% idle`)
  console.log('')
  console.log('  busy%   all%  samples  function  (script:line)')
  for (const entry of entries.slice(0, config.top)) {
    const busyShare = entry.name === '(idle)' ? '' : (100 * entry.samples / busy).toFixed(1)
    console.log(`${busyShare.padStart(7)} ${(100 * entry.samples / total).toFixed(1).padStart(6)} ` +
      `${String(entry.samples).padStart(8)}  ${entry.name}  ${where(entry)}`)
  }
  if (config.out !== '') {
    fs.copyFileSync(profilePath, config.out)
    console.log(`\nprofile written to ${config.out}`)
  }
  fs.rmSync(dir, { recursive: true, force: true })
}

if (require.main === module) runMain(main)

module.exports = { selfTime }
