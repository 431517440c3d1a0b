'use strict'

// What a user installs: `npm pack` (whose prepack step makes the prebuilds)
// gives a tarball carrying prebuilds/<platform>-<arch>/ for every platform
// lib/prebuilds.js lists, and that tarball, installed into a fresh app with
// --ignore-scripts (no compiler runs), takes the native path. With
// --build-from-source the install compiles the addon anyway; without a
// compiler and without a prebuild it says that the package stays inactive.
// Nothing here uses the network: node-gyp-build, the one runtime
// dependency, is packed from this repository's node_modules and installed
// from that tarball with --offline.

const childProcess = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')

const t = require('tap')

const { expectedStats, pathStats } = require('./helpers/expect-path.js')
const { PREBUILT } = require('../lib/prebuilds.js')
const { elfHeader, ELF_MACHINE } = require('../scripts/prebuild.js')

const ROOT = path.join(__dirname, '..')
const PLATFORM = `${process.platform}-${process.arch}`

// Compiles and npm installs (and, for the emulated run, qemu) take
// minutes on a loaded machine.
t.setTimeout(300000)

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'http-oneshot-package-'))
t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }))

// npm, with the parent npm's per-run settings (npm test's own lifecycle
// variables) and NODE_OPTIONS left out.
function npm (args, cwd, extraEnv = {}) {
  const env = { ...process.env, ...extraEnv }
  for (const key of Object.keys(env)) {
    if (/^npm_(lifecycle|package|config_(global|prefix|offline|ignore_scripts))/i.test(key)) delete env[key]
  }
  delete env.NODE_OPTIONS
  delete env.HTTP_ONESHOT
  delete env.HTTP_ONESHOT_NATIVE
  const res = childProcess.spawnSync('npm', args, { cwd, env, encoding: 'utf8', timeout: 180000 })
  return { code: res.status, out: (res.stdout || '') + (res.stderr || '') }
}

function packInto (t, cwd) {
  const before = new Set(fs.readdirSync(dir))
  const res = npm(['pack', '--pack-destination', dir, cwd], ROOT)
  const made = fs.readdirSync(dir).filter((f) => f.endsWith('.tgz') && !before.has(f))
  if (res.code !== 0 || made.length !== 1) {
    t.fail(`npm pack ${cwd} failed:\n${res.out}`)
    return null
  }
  return path.join(dir, made[0])
}

function makeApp (name) {
  const app = path.join(dir, name)
  fs.mkdirSync(app)
  fs.writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name, private: true }))
  return app
}

// The app: one real response, then what the package says about itself.
const APP = `'use strict'
const http = require('node:http')
const net = require('node:net')
const oneshot = require('http-oneshot')
oneshot.install()
function addonFile () {
  try {
    return require('node-gyp-build').resolve(require('node:path').dirname(require.resolve('http-oneshot/package.json')))
  } catch {
    return null
  }
}
const server = http.createServer((req, res) => res.end('hello'))
server.listen(0, '127.0.0.1', () => {
  const socket = net.connect(server.address().port, '127.0.0.1', () => {
    socket.write('GET / HTTP/1.1\\r\\nHost: x\\r\\nConnection: close\\r\\n\\r\\n')
  })
  const chunks = []
  socket.on('data', (c) => chunks.push(c))
  socket.on('close', () => {
    server.close()
    console.log(JSON.stringify({
      isNative: oneshot.isNative,
      loadError: oneshot.loadError && oneshot.loadError.message,
      addon: addonFile(),
      stats: oneshot.stats(),
      response: Buffer.concat(chunks).toString('latin1')
    }))
  })
})
`

function runApp (t, app) {
  fs.writeFileSync(path.join(app, 'app.js'), APP)
  const env = { ...process.env }
  delete env.NODE_OPTIONS
  delete env.HTTP_ONESHOT
  delete env.HTTP_ONESHOT_NATIVE
  delete env.NODE_DEBUG
  const res = childProcess.spawnSync(process.execPath, ['app.js'], { cwd: app, env, encoding: 'utf8', timeout: 20000 })
  t.equal(res.status, 0, 'the app runs: ' + res.stderr)
  try {
    return JSON.parse(res.stdout.trim().split('\n').pop())
  } catch {
    t.fail('the app printed JSON: ' + res.stdout + res.stderr)
    return {}
  }
}

t.test('npm pack, then install with --ignore-scripts: the native path runs', async t => {
  const tarball = packInto(t, ROOT)
  if (tarball === null) return
  t.ok(fs.existsSync(path.join(ROOT, 'prebuilds', PLATFORM)), `prepack made prebuilds/${PLATFORM}`)
  const gypBuild = packInto(t, path.dirname(require.resolve('node-gyp-build/package.json')))
  if (gypBuild === null) return

  const app = makeApp('app-ignore-scripts')
  const res = npm(['install', '--offline', '--ignore-scripts', '--no-audit', '--no-fund',
    '--no-package-lock', tarball, gypBuild], app)
  t.equal(res.code, 0, 'npm install --offline --ignore-scripts: ' + res.out)
  const installed = path.join(app, 'node_modules', 'http-oneshot')
  t.notOk(fs.existsSync(path.join(installed, 'build')), 'nothing was compiled')
  const prebuilds = fs.readdirSync(path.join(installed, 'prebuilds', PLATFORM))
  t.match(prebuilds, [/^http-oneshot\.napi(\.glibc|\.musl)?\.node$/], 'one Node-API prebuild')

  if (process.platform === 'linux' && !fs.existsSync('/etc/alpine-release')) {
    // A glibc Linux machine cross-builds every listed prebuild.
    const wanted = PREBUILT.filter((p) => p.platform === 'linux')
    t.strictSame(fs.readdirSync(path.join(installed, 'prebuilds')).sort(),
      wanted.map((p) => `linux-${p.arch}`).sort(), 'the tarball carries every listed prebuild')
    for (const { arch, libc } of wanted) {
      const file = path.join(installed, 'prebuilds', `linux-${arch}`, `http-oneshot.napi.${libc}.node`)
      const elf = fs.existsSync(file) ? elfHeader(file) : null
      t.strictSame(elf, { bits: 64, littleEndian: true, machine: ELF_MACHINE[arch] }, `linux-${arch}: its ELF header`)
    }
  }

  const out = runApp(t, app)
  t.equal(out.isNative, true, 'isNative: ' + out.loadError)
  t.equal(out.addon, path.join(installed, 'prebuilds', PLATFORM, prebuilds[0]), 'loaded from prebuilds/')
  t.strictSame(pathStats(out.stats), expectedStats({ native: 1, fallback: 0, reasons: {} }), 'one native response')
  t.match(out.response, /^HTTP\/1\.1 200 OK\r\n[^]*\r\n\r\nhello$/)

  t.test('a normal install runs the install script, which finds the prebuild', async t => {
    const app = makeApp('app-scripts')
    const res = npm(['install', '--offline', '--foreground-scripts', '--no-audit', '--no-fund',
      '--no-package-lock', tarball, gypBuild], app)
    t.equal(res.code, 0, res.out)
    t.notMatch(res.out, /native addon not built|gyp info/, 'no build ran')
    t.notOk(fs.existsSync(path.join(app, 'node_modules', 'http-oneshot', 'build')))
    t.equal(runApp(t, app).isNative, true)
  })

  t.test('--build-from-source: the install compiles the addon, which then loads', async t => {
    const app = makeApp('app-build-from-source')
    const res = npm(['install', '--offline', '--foreground-scripts', '--build-from-source', '--no-audit', '--no-fund',
      '--no-package-lock', tarball, gypBuild], app)
    t.equal(res.code, 0, res.out)
    t.match(res.out, /http-oneshot: built the addon from source \(--build-from-source\)/)
    const built = path.join(app, 'node_modules', 'http-oneshot', 'build', 'Release', 'http_oneshot.node')
    t.ok(fs.existsSync(built), 'build/Release/http_oneshot.node')
    const out = runApp(t, app)
    t.equal(out.isNative, true, 'isNative: ' + out.loadError)
    t.equal(out.addon, built, 'loaded from build/, not prebuilds/')
  })

  t.test('no prebuild and no compiler: the install succeeds and says the package stays inactive', async t => {
    // The same package without prebuilds/, packed without its prepack step.
    const bare = path.join(dir, 'bare')
    fs.mkdirSync(bare)
    const tar = childProcess.spawnSync('tar', ['xzf', tarball, '-C', bare, '--strip-components=1'], { encoding: 'utf8' })
    t.equal(tar.status, 0, 'tar: ' + tar.stderr)
    fs.rmSync(path.join(bare, 'prebuilds'), { recursive: true, force: true })
    const packDir = path.join(dir, 'bare-pack')
    fs.mkdirSync(packDir)
    const packed = npm(['pack', '--ignore-scripts', '--pack-destination', packDir, bare], ROOT)
    t.equal(packed.code, 0, 'npm pack --ignore-scripts: ' + packed.out)
    const [bareTarball] = fs.readdirSync(packDir).map((f) => path.join(packDir, f))
    if (bareTarball === undefined) return

    const app = makeApp('app-no-compiler')
    const res = npm(['install', '--offline', '--foreground-scripts', '--no-audit', '--no-fund',
      '--no-package-lock', bareTarball, gypBuild], app, { CC: 'no-such-cc' })
    t.equal(res.code, 0, 'the install does not fail: ' + res.out)
    t.match(res.out, /http-oneshot: native addon not built \(no C compiler \(no-such-cc\) on PATH[^\n]*\)\. http-oneshot stays inactive: every response takes Node's own path\./)
    t.notMatch(res.out, /JS fallback|same bytes/)
    t.notOk(fs.existsSync(path.join(app, 'node_modules', 'http-oneshot', 'build')), 'no half-made build/')
    const out = runApp(t, app)
    t.equal(out.isNative, false, 'no addon: ' + out.loadError)
    t.strictSame(pathStats(out.stats), expectedStats({ native: 0, fallback: 0, reasons: {} }),
      'the response took Node\'s own path, untouched')
    t.match(out.response, /^HTTP\/1\.1 200 OK\r\n[^]*\r\n\r\nhello$/)
  })
})
