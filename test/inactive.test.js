'use strict'

// Saying when the package does nothing: install() warns once, with code
// HTTP_ONESHOT_INACTIVE, where the native path can never run, and isActive()
// tells the application; the kill switch does not even load the addon.

const childProcess = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')

const t = require('tap')

const { shimActive } = require('./helpers/expect-path.js')

const LIB = path.join(__dirname, '..', 'lib', 'index.js')

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
setImmediate(() => console.log(JSON.stringify({
  before,
  active: oneshot.isActive(),
  installed: oneshot.isInstalled(),
  isNative: oneshot.isNative,
  dlopens,
  warnings: warnings.filter((w) => /^HTTP_ONESHOT|^HM_/.test(w.code))
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
  t.equal(out.warnings.length, 1, 'one warning for two install() calls')
  t.equal(out.warnings[0].code, 'HTTP_ONESHOT_INACTIVE')
  t.match(out.warnings[0].message, /the native addon did not load \(No native build was found.*\); run "npm rebuild http-oneshot --foreground-scripts"/)
})

t.test('the addon loads: no warning where the line is supported', async t => {
  const out = run({})
  t.equal(out.before, false, 'not active before install()')
  t.equal(out.isNative, true)
  t.equal(out.active, shimActive, 'isActive() follows lib/internals.js')
  if (shimActive) {
    t.strictSame(out.warnings, [], 'no warning')
  } else {
    t.equal(out.warnings.length, 1)
    t.match(out.warnings[0].message, /is not a line whose http internals http-oneshot reproduces/)
  }
})

t.test('HTTP_ONESHOT_NATIVE=0 is chosen, not a failure: no warning', async t => {
  const out = run({ HTTP_ONESHOT_NATIVE: '0' })
  t.equal(out.active, false)
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
})
