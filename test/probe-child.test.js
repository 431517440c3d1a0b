'use strict'

// lib/protocol/probe.js runs Node's own end() on a fake response (and reads a
// fresh response's shape) in a child
// process of the same binary, so that this process's http code never sees
// the probe's objects. The child must give the answer the same probe gives
// here, must run no preload from NODE_OPTIONS, and any way the child cannot
// run leaves the probe in this process with the same answer.

const childProcess = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')

const t = require('tap')

const PROBE = path.join(__dirname, '..', 'lib', 'protocol', 'probe.js')

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'http-oneshot-probe-'))
t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }))

// Records each process that runs it, with its pid, in `log`.
const log = path.join(dir, 'preloads.log')
const preload = path.join(dir, 'preload.js')
fs.writeFileSync(preload, `require('node:fs').appendFileSync(${JSON.stringify(log)}, process.pid + '\\n')\n`)

const SCRIPT = `
const probe = require(${JSON.stringify(PROBE)})
const isolated = probe.probeIsolated()
const here = probe.probeProtocol()
const shape = probe.responseShape()
console.log(JSON.stringify({ pid: process.pid, isolated, here, shape }))
`

// An empty directory for the probe's stored answers (lib/protocol/cache.js),
// so that the probe runs rather than its answer being read.
function emptyCache () {
  return fs.mkdtempSync(path.join(dir, 'cache-'))
}

// Through sh, which sets NODE_OPTIONS itself: the test runner's coverage
// hooks put their own NODE_OPTIONS into every process spawned from here.
function run (env, args = []) {
  const out = childProcess.execFileSync('/bin/sh', ['-c', 'NODE_OPTIONS="$PROBE_NODE_OPTIONS" exec "$@"', 'sh',
    process.execPath, ...args, '-e', SCRIPT], {
    env: { ...process.env, PROBE_NODE_OPTIONS: '', HTTP_ONESHOT_CACHE_DIR: emptyCache(), ...env },
    encoding: 'utf8'
  })
  return JSON.parse(out.trim().split('\n').pop())
}

t.test('the probe runs in a child and answers as the probe here does', async t => {
  const r = run({ HTTP_ONESHOT_PROBE: undefined })
  t.equal(r.isolated.isolated, true, 'probed in a child process')
  t.equal(r.isolated.protocol, r.here, `same answer (${r.here})`)
  t.strictSame(r.isolated.shape, r.shape, 'the same response shape')
  t.equal(r.shape.headersMap, true)
  t.equal(r.shape.corked, 0)
  t.strictSame(r.shape.missing, [])
  t.ok(r.shape.symbols.includes('kOutHeaders'))
})

t.test('no NODE_OPTIONS preload runs in the child', async t => {
  fs.writeFileSync(log, '')
  const r = run({ PROBE_NODE_OPTIONS: `--require ${preload}` })
  t.equal(r.isolated.isolated, true, 'probed in a child process')
  const pids = fs.readFileSync(log, 'utf8').trim().split('\n')
  t.same(pids, [String(r.pid)], 'the preload ran once, in the probing process only')
  t.equal(r.isolated.protocol, r.here)
})

t.test('HTTP_ONESHOT_PROBE=inline probes in this process', async t => {
  const r = run({ HTTP_ONESHOT_PROBE: 'inline' })
  t.equal(r.isolated.isolated, false)
  t.equal(r.isolated.protocol, r.here)
  t.strictSame(r.isolated.shape, r.shape)
})

t.test('a probe child never starts another', async t => {
  const r = run({ HTTP_ONESHOT_PROBE_CHILD: '1' })
  t.equal(r.isolated.isolated, false)
  t.equal(r.isolated.protocol, r.here)
})

// The permission model (Node 20+) refuses child processes unless allowed:
// the probe then runs here, with the same answer.
t.test('where no child may run, the probe runs in this process', async t => {
  const major = Number(process.versions.node.split('.')[0])
  const flag = major >= 22 ? '--permission' : '--experimental-permission'
  const r = run({}, [flag, '--allow-fs-read=*'])
  t.equal(r.isolated.isolated, false, 'probed in this process')
  t.equal(r.isolated.protocol, r.here)
})

t.test('NODE_DEBUG=http-oneshot says where the probe ran', async t => {
  const internals = path.join(__dirname, '..', 'lib', 'internals.js')
  const cache = emptyCache()
  const debugRun = () => childProcess.spawnSync(process.execPath, ['-e', `require(${JSON.stringify(internals)})`], {
    env: { ...process.env, NODE_DEBUG: 'http-oneshot', HTTP_ONESHOT_CACHE_DIR: cache },
    encoding: 'utf8'
  }).stderr
  t.match(debugRun(), /end\(\) protocol: (node20|node24|null), chunked write\(\): (node20|node24|null) \(probed in a child process\)/)
  t.match(debugRun(), /\(probed in a child process, answer stored\)/, 'the next process reads the stored answer')
})
