'use strict'

// Start-up without waiting for the behaviour probe: its answer is stored per
// Node binary (lib/protocol/cache.js) and read by the next process; an
// entry that does not carry this binary's key is never used; the preload
// starts the probe without waiting for it, and the responses before its
// answer take Node's own path (stats() reason 'probe-pending').

const fs = require('node:fs')
const path = require('node:path')

const t = require('tap')

const { shimActive } = require('./helpers/expect-path.js')
const cache = require('../lib/protocol/cache.js')
const { PROBED, STORED, cacheDirs, node, lastJSON, entryFile } = require('./helpers/probe-child.js')

const ROOT = path.join(__dirname, '..')
const LIB = path.join(ROOT, 'lib', 'index.js')
const INTERNALS = path.join(ROOT, 'lib', 'internals.js')
const REGISTER_CJS = path.join(ROOT, 'register.js')
const REGISTER_ESM = path.join(ROOT, 'register.mjs')
const EMPTY_ESM = path.join(ROOT, 'benchmark', 'lib', 'empty.mjs')

const { dir, emptyCache } = cacheDirs(t, 'http-oneshot-startup-')

t.test('the answer is stored for this binary and read by the next process', async t => {
  const cacheDir = emptyCache()
  const { key, file } = entryFile(cacheDir)
  const first = node(['-e', `require(${JSON.stringify(INTERNALS)})`], { HTTP_ONESHOT_CACHE_DIR: cacheDir, NODE_DEBUG: 'http-oneshot' })
  t.match(first.stderr, PROBED, 'the first process runs the probe child')
  const entry = JSON.parse(fs.readFileSync(file, 'utf8'))
  t.equal(entry.key, key, 'the entry carries the key of the binary that made it')
  t.ok(cache.validAnswer(entry.answer))
  t.equal((fs.statSync(file).mode & 0o777), 0o600, 'readable by its owner only')
  t.strictSame(fs.readdirSync(cacheDir).filter((f) => f.endsWith('.tmp')), [], 'no temporary file left')
  const second = node(['-e', `require(${JSON.stringify(INTERNALS)})`], { HTTP_ONESHOT_CACHE_DIR: cacheDir, NODE_DEBUG: 'http-oneshot' })
  t.match(second.stderr, STORED, 'the second reads the stored answer')
})

// What a server under the preload has loaded of lib/ once it answered
// requests: the probe (lib/protocol/probe.js) only where no answer was
// stored, and no file the native path does not use, since every file
// loaded stays in the heap for the life of the process
// (benchmark/RESULTS.md, static files).
const LOADED_APP = `
const http = require('node:http')
const oneshot = require(${JSON.stringify(LIB)})
const server = http.createServer((req, res) => res.end('hello'))
server.listen(0, '127.0.0.1', async () => {
  const url = 'http://127.0.0.1:' + server.address().port + '/'
  const started = Date.now()
  await (await fetch(url)).text()
  while (!oneshot.isActive() && Date.now() - started < 10000) {
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  await (await fetch(url)).text()
  server.close()
  const loaded = Object.keys(require.cache).filter((f) => f.includes(${JSON.stringify(path.join(ROOT, 'lib') + path.sep)}))
  console.log(JSON.stringify({ active: oneshot.isActive(), loaded: loaded.map((f) => f.slice(${JSON.stringify(path.join(ROOT, 'lib') + path.sep)}.length)) }))
})
`

t.test('with the answer stored, the probe is never loaded', async t => {
  const cacheDir = emptyCache()
  const probe = path.join('protocol', 'probe.js')
  const cold = lastJSON(node(['-r', REGISTER_CJS, '-e', LOADED_APP], { HTTP_ONESHOT_CACHE_DIR: cacheDir }).stdout)
  t.ok(cold.loaded.includes(probe), 'no answer stored: the probe is loaded to start its child')
  const warm = lastJSON(node(['-r', REGISTER_CJS, '-e', LOADED_APP], { HTTP_ONESHOT_CACHE_DIR: cacheDir }).stdout)
  t.equal(warm.active, shimActive)
  t.notOk(warm.loaded.includes(probe), 'answer stored: the probe is not loaded')
  t.ok(warm.loaded.includes(path.join('protocol', 'answer.js')), 'the stored answer is read')
  t.notOk(warm.loaded.includes('build.js'), 'nor buildHttpMessage() (lib/build.js) and its slabs')
  t.notOk(warm.loaded.includes('report.js'), 'nor the exit report without HTTP_ONESHOT_REPORT')
  if (shimActive) t.ok(warm.loaded.includes('shim.js'), 'the shim is loaded and active')
  const explicit = lastJSON(node(['-e', `${LOADED_APP}; oneshot.install()`], { HTTP_ONESHOT_CACHE_DIR: cacheDir }).stdout)
  t.notOk(explicit.loaded.includes(probe), 'nor by an explicit install()')
})

t.test('a cache directory that cannot be written: the answer lives in memory', async t => {
  const blocker = path.join(dir, 'a-file')
  fs.writeFileSync(blocker, '')
  const cacheDir = path.join(blocker, 'cache')
  const res = node(['-e', `const o = require(${JSON.stringify(LIB)}); o.install(); console.log(JSON.stringify({ active: o.isActive() }))`],
    { HTTP_ONESHOT_CACHE_DIR: cacheDir })
  t.equal(lastJSON(res.stdout).active, shimActive)
  if (shimActive) t.equal(res.stderr, '', 'no warning, no error')
  else t.match(res.stderr, /^\(node:\d+\) \[HTTP_ONESHOT_INACTIVE\] Warning: http-oneshot is not installed: /, 'only the warning of an explicit install()')
  const answer = { protocol: null, shape: { symbols: [] }, write: null }
  t.equal(cache.store(cache.binaryKey(), answer, { HTTP_ONESHOT_CACHE_DIR: cacheDir }), null, 'store() reports memory only')
})

// A server under the preload with an empty cache: requests are sent until
// the shim turns active (or 10 s passed), then once more.
const PENDING_APP = `
const http = require('node:http')
const oneshot = require(${JSON.stringify(LIB)})
const server = http.createServer((req, res) => res.end('hello'))
const results = []
server.listen(0, '127.0.0.1', async () => {
  const url = 'http://127.0.0.1:' + server.address().port + '/'
  const started = Date.now()
  const sample = async () => {
    await (await fetch(url)).text()
    results.push({ active: oneshot.isActive(), stats: oneshot.stats() })
  }
  await sample()
  while (!oneshot.isActive() && Date.now() - started < 10000) {
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  await sample()
  server.close()
  console.log(JSON.stringify(results))
})
`

t.test('the preload does not wait for the probe: Node\'s own path until it answers', async t => {
  const cacheDir = emptyCache()
  const { file } = entryFile(cacheDir)
  const cold = lastJSON(node(['-r', REGISTER_CJS, '-e', PENDING_APP], { HTTP_ONESHOT_CACHE_DIR: cacheDir }).stdout)
  t.equal(cold[0].active, false, 'not active at the first response')
  t.equal(cold[0].stats.inactiveReason, 'probe-pending')
  t.equal(cold[0].stats.native, 0)
  t.ok(cold[0].stats.reasons['probe-pending'] >= 1, 'counted as probe-pending')
  t.equal(cold[0].stats.fallback, cold[0].stats.reasons['probe-pending'])
  t.equal(cold[1].active, shimActive, 'the answer installs the shim in the running process')
  t.equal(cold[1].stats.inactiveReason, shimActive ? null : 'unsupported-node')
  if (shimActive) t.equal(cold[1].stats.native, 1, 'the response after the answer is native')
  t.ok(fs.existsSync(file), 'the answer was stored')

  const warm = lastJSON(node(['-r', REGISTER_CJS, '-e', PENDING_APP], { HTTP_ONESHOT_CACHE_DIR: cacheDir }).stdout)
  t.equal(warm[0].active, shimActive, 'the next process is active at its first response')
  t.strictSame(warm[0].stats.reasons, {}, 'nothing pending')
  if (shimActive) t.equal(warm[0].stats.native, 1)
})

t.test('the stored answer outlives a process that exits before the probe answers', async t => {
  const cacheDir = emptyCache()
  const { file } = entryFile(cacheDir)
  // listen() starts the load, and the probe with it.
  node(['-r', REGISTER_CJS, '-e', 'require("node:http").createServer().listen(0, "127.0.0.1", function () { this.close() })'],
    { HTTP_ONESHOT_CACHE_DIR: cacheDir })
  // The child outlives its parent and stores the answer itself.
  const deadline = Date.now() + 15000
  while (!fs.existsSync(file) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50))
  t.ok(fs.existsSync(file), 'stored by the probe child')
})

// A response that wrote its header and a chunk on Node's own path, before
// the probe answered, ends after the shim was installed. Its end() comes
// 30 ms after the last check on both paths: Node 24.22 holds a chunk
// written just before end() and frames the two as one, so both must wait
// alike for the bytes to compare.
const MIDFLIGHT_APP = `
const http = require('node:http')
const net = require('node:net')
const oneshot = require(${JSON.stringify(LIB)})
const seen = {}
const server = http.createServer((req, res) => {
  res.sendDate = false
  res.writeHead(200, { 'content-type': 'text/plain' })
  seen.activeAtWrite = oneshot.isActive()
  res.write('first,')
  const started = Date.now()
  const wait = () => {
    if (process.env.HTTP_ONESHOT !== '0' && !oneshot.isActive() && Date.now() - started < 10000) return setTimeout(wait, 10)
    seen.activeAtEnd = oneshot.isActive()
    setTimeout(() => res.end('last', () => { seen.callback = true }), 30)
  }
  wait()
})
server.listen(0, '127.0.0.1', () => {
  const socket = net.connect(server.address().port, '127.0.0.1', () => {
    socket.write('GET / HTTP/1.1\\r\\nHost: x\\r\\nConnection: close\\r\\n\\r\\n')
  })
  const chunks = []
  socket.on('data', (c) => chunks.push(c))
  socket.on('close', () => {
    server.close()
    console.log(JSON.stringify({ seen, bytes: Buffer.concat(chunks).toString('latin1'), stats: oneshot.stats() }))
  })
})
`

t.test('a response begun before the answer ends with Node\'s bytes after it', async t => {
  const cold = lastJSON(node(['-r', REGISTER_CJS, '-e', MIDFLIGHT_APP], { HTTP_ONESHOT_CACHE_DIR: emptyCache() }).stdout)
  const legacy = lastJSON(node(['-r', REGISTER_CJS, '-e', MIDFLIGHT_APP], { HTTP_ONESHOT: '0' }).stdout)
  t.equal(cold.seen.activeAtWrite, false, 'write() ran before the shim was installed')
  t.equal(cold.seen.activeAtEnd, shimActive, 'end() ran after')
  t.equal(cold.seen.callback, true, 'the end() callback ran')
  t.equal(cold.bytes, legacy.bytes, 'the same bytes as Node\'s own path')
  t.match(cold.bytes, /^HTTP\/1\.1 200 OK\r\ncontent-type: text\/plain\r\nConnection: close\r\nTransfer-Encoding: chunked\r\n\r\n6\r\nfirst,\r\n4\r\nlast\r\n0\r\n\r\n$/)
})

t.test('no thread beyond what Node starts for the preload flag itself', async t => {
  const tasks = 'console.log(require("node:fs").readdirSync("/proc/self/task").length)'
  const count = (args) => Number(node([...args, '-e', tasks], { HTTP_ONESHOT_CACHE_DIR: emptyCache() }).stdout.trim())
  t.equal(count(['-r', REGISTER_CJS]), count([]), '-r: as plain Node')
  t.equal(count(['--import', REGISTER_ESM]), count(['--import', EMPTY_ESM]), '--import: as an empty module\'s --import')
  const withHttp = 'require("node:http"); ' + tasks
  t.equal(Number(node(['--import', REGISTER_ESM, '-e', withHttp], { HTTP_ONESHOT_CACHE_DIR: emptyCache() }).stdout.trim()),
    Number(node(['--import', EMPTY_ESM, '-e', withHttp], {}).stdout.trim()), 'and when http is loaded')
})

// A loader registered with module.register (asynchronous hooks, in Node's
// hooks thread, as tsx or an APM agent registers) that serves a module of
// its own, before or after the preload's in-thread module.registerHooks.
t.test('an asynchronous loader and the preload\'s hooks chain', async t => {
  const major = Number(process.versions.node.split('.')[0])
  const loader = path.join(dir, 'loader.mjs')
  fs.writeFileSync(loader, `
export async function resolve (specifier, context, next) {
  if (specifier === 'virtual:answer') return { url: 'virtual:answer', shortCircuit: true }
  return next(specifier, context)
}
export async function load (url, context, next) {
  if (url === 'virtual:answer') return { format: 'module', source: 'export default 42', shortCircuit: true }
  return next(url, context)
}
`)
  const registerLoader = path.join(dir, 'register-loader.mjs')
  fs.writeFileSync(registerLoader, `import { register } from 'node:module'
register(${JSON.stringify(require('node:url').pathToFileURL(loader).href)})
`)
  // Before Node 24 the preload registers no in-thread hook; the ESM entry
  // point makes it use module.register there.
  t.comment(`Node ${major}: ${major >= 24 ? 'module.registerHooks' : 'module.register'}`)
  const app = path.join(dir, 'chain-app.mjs')
  fs.writeFileSync(app, `import http from 'node:http'
import answer from 'virtual:answer'
import oneshot from ${JSON.stringify(require('node:url').pathToFileURL(LIB).href)}
console.log(JSON.stringify({ answer, own: Object.hasOwn(http.ServerResponse.prototype, 'end'), active: oneshot.isActive() }))
`)
  const cacheDir = emptyCache()
  node(['-e', `require(${JSON.stringify(LIB)}).install()`], { HTTP_ONESHOT_CACHE_DIR: cacheDir })
  for (const order of [[registerLoader, REGISTER_ESM], [REGISTER_ESM, registerLoader]]) {
    const res = node(['--no-deprecation', '--import', order[0], '--import', order[1], app], { HTTP_ONESHOT_CACHE_DIR: cacheDir })
    const out = lastJSON(res.stdout)
    t.equal(out.answer, 42, 'the loader\'s module loads')
    t.equal(out.own, true, 'the stand-ins in place at the import of http (lib/patches.js)')
    t.equal(out.active, shimActive)
  }
})

t.test('install() from the application while the preload\'s probe runs: installs at once', async t => {
  const app = `
const http = require('node:http')
const oneshot = require(${JSON.stringify(LIB)})
const pendingBefore = oneshot.stats().inactiveReason
oneshot.install()
const server = http.createServer((req, res) => res.end('hello'))
server.listen(0, '127.0.0.1', async () => {
  await (await fetch('http://127.0.0.1:' + server.address().port + '/')).text()
  await new Promise((resolve) => setTimeout(resolve, 50))
  server.close()
  console.log(JSON.stringify({ pendingBefore, active: oneshot.isActive(), stats: oneshot.stats() }))
})
`
  const out = lastJSON(node(['-r', REGISTER_CJS, '-e', app], { HTTP_ONESHOT_CACHE_DIR: emptyCache() }).stdout)
  t.equal(out.pendingBefore, 'probe-pending', 'the preload had started the probe')
  t.equal(out.active, shimActive, 'install() waited for an answer')
  t.equal(out.stats.reasons['probe-pending'], undefined, 'no response counted as pending')
  if (shimActive) t.equal(out.stats.native, 1)
})
