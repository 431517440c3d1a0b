'use strict'

// The probe's stored answers (lib/protocol/cache.js): an entry carries the
// key of the binary that made it, and one that is not this binary's
// (another binary, version, build or probe), or is not an entry at all, is
// never used: the probe runs again and its answer replaces the entry.

const fs = require('node:fs')
const path = require('node:path')

const t = require('tap')

const { shimActive } = require('./helpers/expect-path.js')
const cache = require('../lib/protocol/cache.js')
const { PROBED, STORED, cacheDirs, node, lastJSON, entryFile } = require('./helpers/probe-child.js')

const ROOT = path.join(__dirname, '..')
const INTERNALS = path.join(ROOT, 'lib', 'internals.js')

const { emptyCache } = cacheDirs(t, 'http-oneshot-probe-cache-')

t.test('the key names the binary, its build and the probe', async t => {
  const key = JSON.parse(cache.binaryKey())
  t.equal(key.version, process.version)
  t.equal(key.execPath, process.execPath)
  const st = fs.statSync(process.execPath)
  t.equal(key.size, st.size)
  t.equal(key.mtimeMs, st.mtimeMs)
  t.equal(key.ino, st.ino)
  t.equal(key.config, cache.hash(JSON.stringify(process.config)))
  t.equal(key.versions, cache.hash(JSON.stringify(process.versions)))
  const probe = fs.statSync(path.join(ROOT, 'lib', 'protocol', 'probe.js'))
  t.equal(key.probe, [probe.size, probe.mtimeMs, probe.ctimeMs, probe.ino, probe.dev].join(':'),
    'probe.js as a file: a write to it changes its ctime')
  t.not(cache.binaryKey('/no/such/node'), cache.binaryKey(), 'another binary, another key')
})

// An answer the probe never gives on a line the shim serves: were it used,
// the shim would turn itself off ('unsupported-node').
const WRONG_ANSWER = { protocol: null, shape: { symbols: [] }, write: null }

function forged (key, change) {
  const fields = JSON.parse(key)
  Object.assign(fields, change)
  return JSON.stringify(fields)
}

t.test('an entry that is not this binary\'s is ignored, and the probe runs again', async t => {
  const variants = {
    corrupt: () => 'not json {',
    'another binary': (key) => JSON.stringify({ key: forged(key, { execPath: '/opt/other/bin/node' }), answer: WRONG_ANSWER }),
    'another version': (key) => JSON.stringify({ key: forged(key, { version: 'v99.0.0' }), answer: WRONG_ANSWER }),
    'a rebuilt binary': (key) => JSON.stringify({ key: forged(key, { mtimeMs: 1, size: 2 }), answer: WRONG_ANSWER }),
    'another build': (key) => JSON.stringify({ key: forged(key, { config: '0000000000000000' }), answer: WRONG_ANSWER }),
    'a changed probe': (key) => JSON.stringify({ key: forged(key, { probe: '0000000000000000' }), answer: WRONG_ANSWER }),
    'a malformed answer': (key) => JSON.stringify({ key, answer: { protocol: 'node99', shape: {}, write: null } }),
    'no key': () => JSON.stringify({ answer: WRONG_ANSWER })
  }
  for (const [name, make] of Object.entries(variants)) {
    const cacheDir = emptyCache()
    const { key, file } = entryFile(cacheDir)
    fs.writeFileSync(file, make(key))
    const res = node(['-e', `console.log(JSON.stringify({ active: require(${JSON.stringify(INTERNALS)}) !== null }))`],
      { HTTP_ONESHOT_CACHE_DIR: cacheDir, NODE_DEBUG: 'http-oneshot' })
    t.match(res.stderr, PROBED, `${name}: the probe ran`)
    t.notMatch(res.stderr, STORED, `${name}: the entry was not used`)
    t.equal(lastJSON(res.stdout).active, shimActive, `${name}: the shim follows the probe, not the entry`)
    t.equal(JSON.parse(fs.readFileSync(file, 'utf8')).key, key, `${name}: replaced by this binary's entry`)
  }
})

t.test('an entry with this binary\'s key is used as it is', async t => {
  // The control for the test above: the same wrong answer under the right
  // key does turn the shim off, so what protects is the key check.
  const cacheDir = emptyCache()
  const { key, file } = entryFile(cacheDir)
  fs.writeFileSync(file, JSON.stringify({ key, answer: WRONG_ANSWER }))
  const res = node(['-e', `console.log(JSON.stringify({ active: require(${JSON.stringify(INTERNALS)}) !== null }))`],
    { HTTP_ONESHOT_CACHE_DIR: cacheDir, NODE_DEBUG: 'http-oneshot' })
  t.match(res.stderr, STORED)
  t.equal(lastJSON(res.stdout).active, false)
})

// Several processes starting at once with no answer stored each run the
// probe and store its answer: each writes a file of its own and renames it
// over the entry, so a reader finds no entry or a whole one, never a part.
t.test('concurrent stores and reads: every entry read is whole', async t => {
  const { spawn } = require('node:child_process')
  const cacheDir = emptyCache()
  const { file } = entryFile(cacheDir)
  const CACHE = JSON.stringify(path.join(ROOT, 'lib', 'protocol', 'cache.js'))
  // A long answer, so that a write is not one page.
  const answer = { protocol: 'node20', shape: { symbols: Array.from({ length: 4000 }, (_, i) => `kSymbol${i}`) }, write: 'node20' }
  const writer = `const c = require(${CACHE}); const key = c.binaryKey(); const answer = ${JSON.stringify(answer)}
for (let i = 0; i < 40; i++) if (c.store(key, answer) === null) throw new Error('not stored')`
  const reader = `const fs = require('node:fs'); let whole = 0; let torn = 0
const until = Date.now() + 1500
while (Date.now() < until) {
  let text
  try { text = fs.readFileSync(${JSON.stringify(file)}, 'utf8') } catch { continue }
  try { JSON.parse(text); whole++ } catch { torn++ }
}
console.log(JSON.stringify({ whole, torn }))`
  const env = { ...process.env, HTTP_ONESHOT_CACHE_DIR: cacheDir }
  const run = (script) => new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', script], { env, stdio: ['ignore', 'pipe', 'inherit'] })
    let out = ''
    child.stdout.on('data', (c) => { out += c })
    child.on('close', (code) => code === 0 ? resolve(out) : reject(new Error(`exit ${code}`)))
  })
  const results = await Promise.all([run(reader), run(reader), ...Array.from({ length: 6 }, () => run(writer))])
  const reads = results.slice(0, 2).map((out) => lastJSON(out))
  t.ok(reads.some((r) => r.whole > 0), 'the readers found the entry')
  t.strictSame(reads.map((r) => r.torn), [0, 0], 'and never a part of one')
  t.strictSame(fs.readdirSync(cacheDir), [path.basename(file)], 'one entry, no temporary file left')
  const entry = JSON.parse(fs.readFileSync(file, 'utf8'))
  t.strictSame(entry.answer, answer)
  t.equal(cache.load(entry.key, { HTTP_ONESHOT_CACHE_DIR: cacheDir }).answer.write, 'node20')
})

// The same with the whole preload: processes started together with an
// empty cache each run the probe child once, and the entry they leave is
// this binary's.
t.test('processes started together with no answer stored', async t => {
  const { spawn } = require('node:child_process')
  const cacheDir = emptyCache()
  const { key, file } = entryFile(cacheDir)
  const env = { ...process.env, HTTP_ONESHOT_CACHE_DIR: cacheDir }
  delete env.NODE_OPTIONS
  // Each process waits for its probe's answer, so that no child is left
  // to write into the directory after the test.
  const app = `const oneshot = require(${JSON.stringify(path.join(ROOT, 'lib', 'index.js'))})
require('node:http').createServer().listen(0, '127.0.0.1', function () {
  const started = Date.now()
  const wait = () => oneshot.stats().inactiveReason === 'probe-pending' && Date.now() - started < 20000
    ? setTimeout(wait, 20)
    : this.close()
  wait()
})`
  const run = () => new Promise((resolve) => {
    spawn(process.execPath, ['-r', path.join(ROOT, 'register.js'), '-e', app], { env, stdio: 'ignore' })
      .on('close', resolve)
  })
  const codes = await Promise.all(Array.from({ length: 4 }, run))
  t.strictSame(codes, [0, 0, 0, 0])
  t.strictSame(fs.readdirSync(cacheDir), [path.basename(file)], 'one entry, no temporary file left')
  t.equal(JSON.parse(fs.readFileSync(file, 'utf8')).key, key)
})
