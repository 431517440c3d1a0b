'use strict'

// V8's full (mark-compact) collections and scavenges in the static-files
// app (benchmark/apps/static-files.js), outside callgrind:
//   node benchmark/gc-count.js [mode=legacy|native|inert|putback]
//     [retain=0] [seed=1] [path=/64k.bin] [warmup=4000] [requests=2000]
// The server runs as benchmark/instructions.js runs it (young generation
// fixed at 16 MiB, --hash-seed=<seed>) with --trace-gc; one keep-alive
// connection sends `warmup` then `requests` requests, and the collections
// of each phase are counted from the trace. Modes: legacy, Node's path;
// native, `-r register.js`; inert, the same with HTTP_ONESHOT=0 (the
// package never loaded); putback, the package uninstalled after 100
// requests (benchmark/lib/put-back.js: its heap, none of its work).
// `retain` is STATIC_RETAIN_KIB. Prints one JSON line.

const { spawn } = require('node:child_process')
const http = require('node:http')
const path = require('node:path')
const { parseArgs, runMain } = require('./lib/args.js')
const { getFreePort } = require('./lib/child.js')

const ROOT = path.join(__dirname, '..')
const MODES = ['legacy', 'native', 'inert', 'putback']

function preloads (mode) {
  if (mode === 'legacy') return []
  const register = ['-r', path.join(ROOT, 'register.js')]
  return mode === 'putback' ? ['-r', path.join(__dirname, 'lib', 'put-back.js'), ...register] : register
}

function get (port, agent, target) {
  return new Promise((resolve, reject) => {
    http.get({ host: '127.0.0.1', port, path: target, agent }, (res) => {
      if (res.statusCode !== 200) reject(new Error(`status ${res.statusCode}`))
      res.resume()
      res.on('end', resolve)
    }).on('error', reject)
  })
}

function collections (trace) {
  return {
    markCompacts: (trace.match(/Mark-Compact/g) || []).length,
    scavenges: (trace.match(/Scavenge/g) || []).length
  }
}

async function main () {
  const opts = parseArgs(process.argv.slice(2), {
    mode: 'legacy', retain: 0, seed: 1, path: '/64k.bin', warmup: 4000, requests: 2000
  })
  if (!MODES.includes(opts.mode)) {
    throw Object.assign(new Error(`mode must be ${MODES.join(', ')}`), { code: 'ERR_BENCH_USAGE' })
  }
  const port = await getFreePort()
  const env = { ...process.env, PORT: String(port), STATIC_RETAIN_KIB: String(opts.retain) }
  delete env.HTTP_ONESHOT
  if (opts.mode === 'inert') env.HTTP_ONESHOT = '0'
  const args = ['--trace-gc', '--min-semi-space-size=16', '--max-semi-space-size=16',
    `--hash-seed=${opts.seed}`, ...preloads(opts.mode), path.join(__dirname, 'apps', 'static-files.js')]
  const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'inherit'] })
  let trace = ''
  child.stdout.setEncoding('utf8').on('data', (d) => { trace += d })
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
  try {
    for (let tries = 0; ; tries++) {
      try {
        await get(port, agent, opts.path)
        break
      } catch (err) {
        if (tries > 100) throw err
        await new Promise((resolve) => setTimeout(resolve, 100))
      }
    }
    for (let i = 1; i < opts.warmup; i++) await get(port, agent, opts.path)
    const warm = trace.length
    for (let i = 0; i < opts.requests; i++) await get(port, agent, opts.path)
    // The trace line of a collection the last request started.
    await new Promise((resolve) => setTimeout(resolve, 200))
    console.log(JSON.stringify({
      mode: opts.mode,
      retain: opts.retain,
      seed: opts.seed,
      warmup: collections(trace.slice(0, warm)),
      measured: collections(trace.slice(warm))
    }))
  } finally {
    agent.destroy()
    child.kill('SIGTERM')
  }
}

runMain(main)
