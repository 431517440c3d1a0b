'use strict'

// Random response scripts (test/fixtures/random-scripts.js) on both paths:
// the raw bytes, the response state at each step and the events must be
// the same, as in test/dual-path.test.js, for calls no fixture there was
// written for. The seed and count default to a fixed set; set
// HTTP_ONESHOT_RANDOM_SEED and HTTP_ONESHOT_RANDOM_COUNT to run others (a
// failure names its seed and index, which reproduce it).

const t = require('tap')

const { capture } = require('./helpers/dual-path.js')
const { randomFixtures } = require('./fixtures/random-scripts.js')
const shim = require('../lib/index.js')

t.jobs = 1
// 150 fixtures run both paths in about 50 s, more than .taprc's timeout
// allows on a loaded machine.
t.setTimeout(300000)

const seed = Number(process.env.HTTP_ONESHOT_RANDOM_SEED || 20261202)
const count = Number(process.env.HTTP_ONESHOT_RANDOM_COUNT || 150)

t.test(`${count} random fixtures of seed ${seed}`, async t => {
  let native = 0
  for (const fx of randomFixtures(seed, count)) {
    const legacy = await capture(fx, { patched: false })
    const patched = await capture(fx, { patched: true })
    const about = { fixture: fx.name, calls: fx.describe(), path: patched.path }
    t.equal(patched.bytes, legacy.bytes, `${fx.name}: same bytes on the wire`, about)
    t.strictSame(patched.state, legacy.state, `${fx.name}: same response state`, about)
    // Each event with the AsyncLocalStorage store it ran in.
    t.strictSame(patched.contexts, legacy.contexts, `${fx.name}: same events in the same order and context`, about)
    t.equal(patched.timedOut, legacy.timedOut, `${fx.name}: both runs settled the same way`, about)
    native += patched.path.native || 0
  }
  // The scripts reach the native path, where parity is at stake, whenever
  // the shim is active on this line.
  const uninstall = shim.install()
  const active = shim.isActive()
  uninstall()
  if (active) {
    t.ok(native >= count / 2, `the native path answered ${native} responses`)
  } else {
    t.equal(native, 0, 'an inactive shim answers nothing natively')
  }
})
