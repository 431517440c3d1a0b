'use strict'

// What the preload costs a process at start-up:
//   node benchmark/startup.js [nodes=20,22.23.5,24.22.3,26.12.1] [runs=11]
//     [cache=warm,cold] [scripts=none,http,listen] [root=<checkout>] [json=<file>]
//     [count=cpu|instructions]
// Each cell is a whole process, `node [preload] -e <script>`, where the
// script loads nothing (none), runs require('http') (http), or starts an
// HTTP server listening and closes it (listen), then prints the
// process's CPU time (process.cpuUsage(): user+sys of every thread so far)
// and its thread count (/proc/self/task). Cells are interleaved run by run,
// so that a change in the machine's load touches every cell alike; the
// table gives medians and the difference to plain Node.
// Preloads: none (plain), --import of an empty module (what the flag costs
// Node itself), -r register.js, --import register.mjs. Caches of
// the probe's answer (lib/protocol/cache.js): warm (one directory, filled
// before the runs) and cold (a new empty directory per run). A cold run
// starts the probe in a child process it does not wait for; that child's
// CPU time is not the measured process's and is printed apart
// (probe child).
// root: the package checkout whose register.js and register.mjs are
// measured (default: this one), to compare another version with the same
// script.
// count=instructions runs each cell once under callgrind instead (with
// V8's hash and random seeds fixed) and reports the user-space
// instructions of every thread of the process: a count that does not move
// with the machine's load, where CPU-time medians move by milliseconds.
// `node` names are resolved as /work/nodes/<v>/package/bin/node, or `20`
// for the node running this script, or taken as a path.

const childProcess = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { parseArgs, runMain } = require('./lib/args.js')
const { median } = require('./lib/stats.js')

let ROOT = path.join(__dirname, '..')

// CPU time of this process (every thread) plus that of the child processes
// it waited for (a probe child run with spawnSync), from /proc/self/stat's
// cutime and cstime (clock ticks, 100 per second on Linux).
const REPORT = 'const u = process.cpuUsage(); const fs = require("node:fs"); ' +
  'const tasks = fs.readdirSync("/proc/self/task").length; ' +
  'const st = fs.readFileSync("/proc/self/stat", "utf8"); ' +
  'const f = st.slice(st.lastIndexOf(")") + 2).split(" "); ' +
  'const children = (Number(f[13]) + Number(f[14])) * 10; ' +
  'process.stdout.write(JSON.stringify({ cpu: (u.user + u.system) / 1000 + children, tasks }))'
const SCRIPTS = {
  none: REPORT,
  http: 'require("node:http"); ' + REPORT,
  // A server that starts listening: the preload loads the shim, the addon
  // and the probe's answer then (lib/patches.js).
  listen: 'require("node:http").createServer().listen(0, "127.0.0.1", function () { this.close(); ' + REPORT + ' })'
}
const SCRIPT_NAMES = { none: 'nothing', http: "require('http')", listen: 'listen()' }
// An empty module, so that what `--import` costs Node itself (a module
// loader, on Node 20 a hooks thread too) stands apart from the preload's.
const EMPTY_ESM = path.join(__dirname, 'lib', 'empty.mjs')
function preloadArgs (name) {
  if (name === 'plain') return []
  if (name === '--import empty') return ['--import', EMPTY_ESM]
  if (name === '-r') return ['-r', path.join(ROOT, 'register.js')]
  return ['--import', path.join(ROOT, 'register.mjs')]
}

function resolveNode (name) {
  if (name === String(process.versions.node.split('.')[0]) || name === process.versions.node) {
    return process.execPath
  }
  const file = path.join('/work/nodes', name, 'package', 'bin', 'node')
  if (fs.existsSync(file)) return file
  if (fs.existsSync(name)) return name
  throw Object.assign(new Error(`no node binary for "${name}"`), { code: 'ERR_BENCH_USAGE' })
}

// Each process gets PATH, HOME and `extra` only: variables such as
// NODE_EXTRA_CA_CERTS (which has Node read a certificate file at start,
// tens of milliseconds) or NODE_OPTIONS would add the same cost to every
// cell and bury the preload's few milliseconds in their noise.
function cleanEnv (extra) {
  const env = { ...extra }
  for (const key of ['PATH', 'HOME']) {
    if (process.env[key] !== undefined) env[key] = process.env[key]
  }
  return env
}

let COUNT = 'cpu'

function runOnce (node, args, env) {
  if (COUNT === 'instructions') return countOnce(node, args, env)
  const start = process.hrtime.bigint()
  const out = childProcess.spawnSync(node, args, { env, encoding: 'utf8', timeout: 30000 })
  const wall = Number(process.hrtime.bigint() - start) / 1e6
  if (out.status !== 0) throw new Error(`${node} ${args.join(' ')} failed: ${out.stderr}`)
  return { ...JSON.parse(out.stdout), wall }
}

// One process under callgrind; `cpu` holds millions of instructions.
function countOnce (node, args, env) {
  const tool = ['--tool=callgrind', '--callgrind-out-file=/dev/null']
  const seeds = ['--hash-seed=1', '--random-seed=1']
  const out = childProcess.spawnSync('valgrind', [...tool, node, ...seeds, ...args],
    { env, encoding: 'utf8', timeout: 300000 })
  const found = /Collected : (\d+)/.exec(out.stderr ?? '')
  if (out.status !== 0 || found === null) {
    throw new Error(`valgrind ${node} ${args.join(' ')} failed: ${out.error ?? out.stderr}`)
  }
  return { ...JSON.parse(out.stdout), cpu: Number(found[1]) / 1e6, wall: 0 }
}

// CPU time of the probe child alone: the same script the preload starts.
function probeChildCpu (node, runs) {
  const script = 'const p = require(' + JSON.stringify(path.join(ROOT, 'lib', 'protocol', 'probe.js')) + '); p.probeProtocol(); p.responseShape(); ' +
    'p.probeWrite(); ' + REPORT
  const xs = []
  for (let i = 0; i < runs; i++) xs.push(runOnce(node, ['-e', script], cleanEnv({ HTTP_ONESHOT: '0' })).cpu)
  return median(xs)
}

function cells (caches, scripts) {
  const list = []
  for (const script of scripts) {
    list.push({ preload: 'plain', script, cache: '-' })
    list.push({ preload: '--import empty', script, cache: '-' })
    for (const preload of ['-r', '--import']) {
      for (const cache of caches) list.push({ preload, script, cache })
    }
  }
  return list
}

function measureNode (name, node, runs, caches, scripts, tmp) {
  const warmDir = fs.mkdtempSync(path.join(tmp, 'warm-'))
  // Fills the warm directory: an explicit install() probes and stores.
  childProcess.spawnSync(node, ['-e', `require(${JSON.stringify(path.join(ROOT, 'lib', 'index.js'))}).install()`],
    { env: cleanEnv({ HTTP_ONESHOT_CACHE_DIR: warmDir }) })
  const list = cells(caches, scripts)
  const results = list.map(() => ({ cpu: [], wall: [], tasks: [] }))
  for (let round = 0; round < runs; round++) {
    list.forEach((cell, i) => {
      const dir = cell.cache === 'cold' ? fs.mkdtempSync(path.join(tmp, 'cold-')) : warmDir
      const args = [...preloadArgs(cell.preload), '-e', SCRIPTS[cell.script]]
      const r = runOnce(node, args, cleanEnv({ HTTP_ONESHOT_CACHE_DIR: dir }))
      results[i].cpu.push(r.cpu)
      results[i].wall.push(r.wall)
      results[i].tasks.push(r.tasks)
    })
  }
  return list.map((cell, i) => ({
    node: name,
    ...cell,
    cpu: median(results[i].cpu),
    wall: median(results[i].wall),
    tasks: median(results[i].tasks)
  }))
}

function table (rows, probeCpu) {
  const unit = COUNT === 'instructions' ? 'M instructions' : 'CPU ms (median)'
  const lines = [`| node | script | preload | cache | ${unit} | over plain | wall ms | threads |`,
    '|---|---|---|---|---:|---:|---:|---:|']
  for (const row of rows) {
    const plain = rows.find((r) => r.node === row.node && r.script === row.script && r.preload === 'plain')
    const over = row.preload === 'plain' ? '' : (row.cpu - plain.cpu >= 0 ? '+' : '') + (row.cpu - plain.cpu).toFixed(1)
    lines.push(`| ${row.node} | ${SCRIPT_NAMES[row.script]} | ${row.preload} | ` +
      `${row.cache} | ${row.cpu.toFixed(1)} | ${over} | ${COUNT === 'cpu' ? row.wall.toFixed(1) : '-'} | ${row.tasks} |`)
  }
  lines.push('')
  for (const [name, cpu] of Object.entries(probeCpu)) {
    const unitShort = COUNT === 'instructions' ? 'M instructions' : 'ms CPU'
    lines.push(`probe child on ${name}: ${cpu.toFixed(1)} ${unitShort} (once per binary, cold cache only)`)
  }
  return lines.join('\n')
}

async function main () {
  const opts = parseArgs(process.argv.slice(2), {
    nodes: '20,22.23.5,24.22.3,26.12.1', runs: 11, cache: 'warm,cold', scripts: 'none,http,listen', root: '', json: '', count: 'cpu'
  })
  if (opts.count !== 'cpu' && opts.count !== 'instructions') {
    throw Object.assign(new Error(`count is cpu or instructions, not "${opts.count}"`), { code: 'ERR_BENCH_USAGE' })
  }
  COUNT = opts.count
  // A count under callgrind is the same from run to run.
  const runs = COUNT === 'instructions' ? 1 : opts.runs
  const scripts = opts.scripts.split(',').filter(Boolean)
  for (const script of scripts) {
    if (!(script in SCRIPTS)) throw Object.assign(new Error(`no script "${script}"`), { code: 'ERR_BENCH_USAGE' })
  }
  if (opts.root) ROOT = path.resolve(opts.root)
  const caches = opts.cache.split(',').filter(Boolean)
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'http-oneshot-startup-'))
  try {
    const rows = []
    const probeCpu = {}
    for (const name of opts.nodes.split(',').filter(Boolean)) {
      const node = resolveNode(name)
      rows.push(...measureNode(name, node, runs, caches, scripts, tmp))
      probeCpu[name] = probeChildCpu(node, Math.min(runs, 5))
    }
    process.stdout.write(table(rows, probeCpu) + '\n')
    if (opts.json) fs.writeFileSync(opts.json, JSON.stringify({ rows, probeCpu }, null, 2) + '\n')
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true })
  }
}

runMain(main)
