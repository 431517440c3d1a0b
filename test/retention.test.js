'use strict'

// Nothing of a finished response is kept (issue 44): once a keep-alive
// response finished, its request, response and body can be collected
// while the connection stays open, and its socket once the connection
// closed, on every path (native, fallback, streamed, a block Node rendered,
// buildHttpMessage()). Module state of the package that still referred to
// the last response (lib/render.js's hand-off from writeHead() to end(),
// lib/send.js's Message record) kept it until the next response on any
// connection. Node's own path is the control: whatever it lets go, the
// shim must let go too. The cases run in a child with --expose-gc
// (test/fixtures/retention.js), once per path.

const childProcess = require('node:child_process')
const path = require('node:path')
const t = require('tap')

const { shimActive } = require('./helpers/expect-path.js')

const SCRIPT = path.join(__dirname, 'fixtures', 'retention.js')

function run (install) {
  const env = { ...process.env, HTTP_ONESHOT_TEST_INSTALL: install ? '1' : '0' }
  delete env.HTTP_ONESHOT
  delete env.NODE_OPTIONS
  const out = childProcess.spawnSync(process.execPath, ['--expose-gc', SCRIPT],
    { env, encoding: 'utf8', timeout: 60000 })
  if (out.status !== 0) throw new Error(`retention.js exited with ${out.status}: ${out.stderr}`)
  return JSON.parse(out.stdout)
}

const legacy = run(false)
const native = run(true)

t.test('Node\'s own path keeps nothing (the control)', async t => {
  t.ok(legacy.results.length > 0)
  for (const r of legacy.results) {
    t.equal(r.keepAlive, !r.closes, `${r.name}: kept alive ${!r.closes}`)
    t.strictSame(r.kept, [], `${r.name}: collected (${r.tracked.join(', ')})`)
  }
})

t.test('with the shim installed nothing is kept', async t => {
  t.equal(native.active, shimActive, 'the shim is active where the line allows')
  t.equal(native.results.length, legacy.results.length)
  for (const r of native.results) {
    t.equal(r.keepAlive, !r.closes, `${r.name}: kept alive ${!r.closes}`)
    t.strictSame(r.kept, [], `${r.name}: collected (${r.tracked.join(', ')})`)
    // The path the case is there for; a case that took another one would
    // test nothing of it.
    if (shimActive && r.expected !== null) t.equal(r.path, r.expected, `${r.name}: took its path`)
    else t.comment(`${r.name}: ${r.path}`)
  }
})
