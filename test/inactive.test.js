'use strict'

// Saying when the package does nothing: an explicit install() warns once
// per process, with code HTTP_ONESHOT_INACTIVE, where the native path can
// never run; the preload never warns. isActive(), stats().inactiveReason
// and NODE_DEBUG=http-oneshot tell why; the kill switch does not even load
// the addon.

const childProcess = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')

const t = require('tap')

const { shimActive } = require('./helpers/expect-path.js')

const LIB = path.join(__dirname, '..', 'lib', 'index.js')
const REGISTER = path.join(__dirname, '..', 'register.js')
const cache = require('../lib/protocol/cache.js')

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'http-oneshot-inactive-'))
t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }))

// Counts addon loads and warnings, installs twice, then reports.
const SCRIPT = `
'use strict'
let dlopens = 0
const dlopen = process.dlopen
process.dlopen = function () { dlopens++; return dlopen.apply(this, arguments) }
const warnings = []
process.on('warning', (w) => warnings.push({ code: w.code, message: w.message }))
const oneshot = require(${JSON.stringify(LIB)})
const before = oneshot.isActive()
oneshot.install()
oneshot.install()
require('node:http')
oneshot.install()
oneshot.install()
setImmediate(() => console.log(JSON.stringify({
  before,
  active: oneshot.isActive(),
  installed: oneshot.isInstalled(),
  inactiveReason: oneshot.stats().inactiveReason,
  isNative: oneshot.isNative,
  dlopens,
  warnings
})))
`

function run (env) {
  const childEnv = { ...process.env, ...env }
  delete childEnv.NODE_OPTIONS
  delete childEnv.NODE_DEBUG
  if (!('HTTP_ONESHOT' in env)) delete childEnv.HTTP_ONESHOT
  if (!('HTTP_ONESHOT_NATIVE' in env)) delete childEnv.HTTP_ONESHOT_NATIVE
  const res = childProcess.spawnSync(process.execPath, ['-e', SCRIPT], { env: childEnv, encoding: 'utf8', timeout: 20000 })
  return JSON.parse(res.stdout.trim().split('\n').pop())
}

t.test('the addon does not load: one warning, isActive() false', async t => {
  // node-gyp-build honours HTTP_ONESHOT_PREBUILD: an empty directory has no addon.
  const out = run({ HTTP_ONESHOT_PREBUILD: dir })
  t.equal(out.installed, false, 'end() and writeHead() are left as Node defines them')
  t.equal(out.isNative, false)
  t.equal(out.active, false, 'isActive() is false')
  t.equal(out.inactiveReason, 'addon-not-loaded')
  t.equal(out.warnings.length, 1, 'one warning for four install() calls')
  t.equal(out.warnings[0].code, 'HTTP_ONESHOT_INACTIVE')
  t.match(out.warnings[0].message, /^http-oneshot is not installed: the native addon did not load \(No native build was found.*\); .*run "npm rebuild http-oneshot --foreground-scripts"\. Every response takes Node.s own path\.$/)
})

t.test('the addon loads: no warning where the line is supported', async t => {
  const out = run({})
  t.equal(out.before, false, 'not active before install()')
  t.equal(out.isNative, true)
  t.equal(out.active, shimActive, 'isActive() follows lib/internals.js')
  if (shimActive) {
    t.strictSame(out.warnings, [], 'no warning')
    t.equal(out.inactiveReason, null)
  } else {
    t.equal(out.warnings.length, 1)
    t.match(out.warnings[0].message, /is not a line whose http internals http-oneshot reproduces/)
  }
})

t.test('HTTP_ONESHOT_NATIVE=0 is chosen, not a failure: no warning', async t => {
  const out = run({ HTTP_ONESHOT_NATIVE: '0' })
  t.equal(out.active, false)
  t.equal(out.inactiveReason, 'addon-disabled')
  t.strictSame(out.warnings, [])
  t.equal(out.dlopens, 0)
})

t.test('HTTP_ONESHOT=0: nothing installed, the .node file is not loaded', async t => {
  const out = run({ HTTP_ONESHOT: '0' })
  t.equal(out.installed, false)
  t.equal(out.active, false)
  t.equal(out.isNative, false, 'isNative is false')
  t.equal(out.dlopens, 0, 'process.dlopen never ran')
  t.strictSame(out.warnings, [])
  t.equal(out.inactiveReason, 'disabled')
})

// A Node line whose internals the shim does not reproduce (24.20, 26.0 to
// 26.7), made on any line by storing, under this binary's own key, the
// answer the probe gives there (lib/protocol/cache.js).
function unsupportedLine () {
  const cacheDir = fs.mkdtempSync(path.join(dir, 'cache-'))
  const key = cache.binaryKey()
  const answer = { protocol: null, shape: { symbols: [] }, write: null }
  fs.writeFileSync(path.join(cacheDir, `probe-${cache.hash(key)}.json`), JSON.stringify({ key, answer }))
  return cacheDir
}

const PRELOADED_APP = `
const warnings = []
process.on('warning', (w) => warnings.push({ code: w.code, message: w.message }))
const http = require('node:http')
const oneshot = require(${JSON.stringify(LIB)})
const server = http.createServer((req, res) => res.end('hello'))
server.listen(0, '127.0.0.1', async () => {
  await (await fetch('http://127.0.0.1:' + server.address().port + '/')).text()
  server.close()
  setImmediate(() => console.log(JSON.stringify({
    active: oneshot.isActive(), installed: oneshot.isInstalled(), stats: oneshot.stats(), warnings
  })))
})
`

function preloaded (env) {
  const childEnv = { ...process.env, ...env }
  for (const key of ['NODE_OPTIONS', 'NODE_DEBUG', 'HTTP_ONESHOT', 'HTTP_ONESHOT_NATIVE', 'HTTP_ONESHOT_REPORT']) {
    if (!(key in env)) delete childEnv[key]
  }
  return childProcess.spawnSync(process.execPath, ['-r', REGISTER, '-e', PRELOADED_APP],
    { env: childEnv, encoding: 'utf8', timeout: 20000 })
}

t.test('the preload on an unsupported line: no warning, nothing on stderr', async t => {
  const res = preloaded({ HTTP_ONESHOT_CACHE_DIR: unsupportedLine() })
  t.equal(res.status, 0)
  t.equal(res.stderr, '', 'nothing on stderr')
  const out = JSON.parse(res.stdout.trim().split('\n').pop())
  t.strictSame(out.warnings, [], 'process.on(\'warning\') sees nothing')
  t.equal(out.active, false)
  t.equal(out.installed, false)
  t.equal(out.stats.inactiveReason, 'unsupported-node', 'stats() says why')
})

t.test('the preload on an unsupported line: NODE_DEBUG=http-oneshot says why', async t => {
  const res = preloaded({ HTTP_ONESHOT_CACHE_DIR: unsupportedLine(), NODE_DEBUG: 'http-oneshot' })
  t.match(res.stderr, /HTTP-ONESHOT \d+: inactive \(unsupported-node\): Node v[\d.]+ is not a line whose http internals http-oneshot reproduces/)
  t.notMatch(res.stderr, /Warning/)
})

t.test('the preload where the addon does not load: no warning either', async t => {
  const res = preloaded({ HTTP_ONESHOT_PREBUILD: dir })
  t.equal(res.stderr, '')
  const out = JSON.parse(res.stdout.trim().split('\n').pop())
  t.strictSame(out.warnings, [])
  t.equal(out.stats.inactiveReason, 'addon-not-loaded')
})

t.test('install() from the application on an unsupported line: one warning that agrees with isInstalled()', async t => {
  const out = run({ HTTP_ONESHOT_CACHE_DIR: unsupportedLine() })
  t.equal(out.installed, false)
  t.equal(out.active, false)
  t.equal(out.inactiveReason, 'unsupported-node')
  t.equal(out.warnings.length, 1, 'one warning for four install() calls')
  t.equal(out.warnings[0].code, 'HTTP_ONESHOT_INACTIVE')
  t.match(out.warnings[0].message, /^http-oneshot is not installed: Node v[\d.]+ is not a line whose http internals http-oneshot reproduces\. Every response takes Node's own path\.$/)
})
