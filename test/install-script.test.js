'use strict'

// The install script (scripts/build.js --if-needed) never downloads Node's
// headers, never fails an install unless a source build was asked for, says
// in one line why it did not build, that the package stays inactive and how
// to get the native path, and leaves no half-made build/; scripts/build.js
// finds a node-gyp outside npm too; scripts/fuzz.js names missing Debian
// packages.

const childProcess = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')

const t = require('tap')

const build = require('../scripts/build.js')
const fuzz = require('../scripts/fuzz.js')

const ROOT = path.join(__dirname, '..')

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'http-oneshot-install-'))
t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }))

// A copy of the package sources without build/ or prebuilds/, so that the
// install script has something to do.
function packageCopy (name) {
  const root = path.join(dir, name)
  fs.mkdirSync(root)
  for (const file of ['package.json', 'binding.gyp']) {
    fs.copyFileSync(path.join(ROOT, file), path.join(root, file))
  }
  fs.cpSync(path.join(ROOT, 'src'), path.join(root, 'src'), { recursive: true })
  fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(root, 'node_modules'), 'dir')
  return root
}

// A fake Node install: <prefix>/bin/node, with or without headers.
function fakeNode (name, withHeaders) {
  const prefix = path.join(dir, name)
  fs.mkdirSync(path.join(prefix, 'bin'), { recursive: true })
  fs.writeFileSync(path.join(prefix, 'bin', 'node'), '')
  if (withHeaders) {
    fs.mkdirSync(path.join(prefix, 'include', 'node'), { recursive: true })
    fs.writeFileSync(path.join(prefix, 'include', 'node', 'node_api.h'), '')
  }
  return { prefix, execPath: path.join(prefix, 'bin', 'node') }
}

function run (opts) {
  const lines = []
  const code = build.main({ ifNeeded: true, log: (line) => lines.push(line), ...opts })
  return { code, lines }
}

t.test('findNodedir(): headers next to the binary, then npm nodedir, else null', async t => {
  const bare = fakeNode('bare', false)
  const full = fakeNode('full', true)
  t.equal(build.findNodedir(full.execPath, {}), full.prefix)
  t.equal(build.findNodedir(bare.execPath, {}), null)
  t.equal(build.findNodedir(bare.execPath, { npm_config_nodedir: full.prefix }), full.prefix)
  t.equal(build.findNodedir(bare.execPath, { npm_config_nodedir: path.join(dir, 'nowhere') }), null)
})

t.test('Node without headers and no nodedir: node-gyp does not run', async t => {
  const root = packageCopy('no-headers')
  const bare = fakeNode('bare-2', false)
  const env = { ...process.env }
  delete env.npm_config_nodedir
  const { code, lines } = run({ root, execPath: bare.execPath, env })
  t.equal(code, 0, 'the install does not fail')
  t.equal(lines.length, 1, 'one line')
  t.match(lines[0], /^http-oneshot: native addon not built \(no Node headers: .*never downloaded\)\. /)
  t.match(lines[0], /http-oneshot stays inactive: every response takes Node's own path\./, 'says the package is inactive')
  t.match(lines[0], /install a C toolchain .* and run "npm rebuild http-oneshot --foreground-scripts"/, 'how to build')
  t.match(lines[0], /or use a platform with a prebuild: linux-x64 and linux-arm64 \(glibc\)$/, 'where prebuilds exist')
  t.notMatch(lines[0], /fallback|same bytes/, 'does not read as still accelerated')
  t.notOk(fs.existsSync(path.join(root, 'build')), 'no build/ directory')

  const strict = run({ root, execPath: bare.execPath, env, ifNeeded: false })
  t.equal(strict.code, 1, '`npm run build` fails')
  t.match(strict.lines[0], /^http-oneshot: native build failed \(no Node headers/)
})

t.test('no C compiler: one line naming the Debian package', async t => {
  const root = packageCopy('no-cc')
  const { code, lines } = run({ root, env: { ...process.env, CC: 'no-such-cc' } })
  t.equal(code, 0)
  t.equal(lines.length, 1)
  t.match(lines[0], /no C compiler \(no-such-cc\) on PATH \(Debian: apt-get install gcc\)/)
  t.notOk(fs.existsSync(path.join(root, 'build')), 'no build/ directory')
})

t.test('a compile error: one line, and the half-made build/ is removed', async t => {
  const root = packageCopy('broken')
  fs.appendFileSync(path.join(root, 'src', 'binding.c'), '\n#error deliberately broken\n')
  const { code, lines } = run({ root })
  t.equal(code, 0, 'the install does not fail')
  t.equal(lines.length, 1, 'one line: ' + lines.join(' | '))
  t.match(lines[0], /native addon not built \(node-gyp exited with \d+: .*deliberately broken/)
  t.notOk(fs.existsSync(path.join(root, 'build')), 'build/ was removed')
})

t.test('an addon that loads already: nothing runs', async t => {
  // The repository's own build/ (or prebuilds/) is what the tests use.
  t.equal(run({ root: ROOT, env: { ...process.env, CC: 'no-such-cc' } }).lines.length, 0)
})

t.test('buildFromSource(): --build-from-source, true/1, or a list naming the package', async t => {
  const asked = (value) => build.buildFromSource(value === undefined ? {} : { npm_config_build_from_source: value })
  t.equal(asked(undefined), false)
  for (const value of ['', 'false', '0', 'sqlite3', 'sqlite3,bcrypt']) t.equal(asked(value), false, JSON.stringify(value))
  for (const value of ['true', 'TRUE', '1', 'http-oneshot', 'sqlite3, http-oneshot']) t.equal(asked(value), true, JSON.stringify(value))
})

t.test('npm_config_build_from_source: the install script builds even when an addon loads', async t => {
  const root = packageCopy('forced')
  // A prebuild that loads, so that without the setting nothing would run.
  const platform = path.join(root, 'prebuilds', `${process.platform}-${process.arch}`)
  fs.mkdirSync(platform, { recursive: true })
  fs.copyFileSync(require('node-gyp-build').resolve(ROOT), path.join(platform, 'http-oneshot.napi.node'))
  t.equal(run({ root }).lines.length, 0, 'without it: the prebuild loads, nothing runs')
  t.notOk(fs.existsSync(path.join(root, 'build')))

  const env = { ...process.env, npm_config_build_from_source: 'true' }
  const { code, lines } = run({ root, env })
  t.equal(code, 0, 'built: ' + lines.join(' | '))
  t.strictSame(lines, ['http-oneshot: built the addon from source (--build-from-source): build/Release/http_oneshot.node'])
  t.ok(fs.existsSync(path.join(root, 'build', 'Release', 'http_oneshot.node')), 'build/Release/http_oneshot.node')

  t.test('a forced build that cannot run fails the install', async t => {
    const failed = run({ root, env: { ...env, CC: 'no-such-cc' } })
    t.equal(failed.code, 1)
    t.strictSame(failed.lines, ['http-oneshot: source build failed (no C compiler (no-such-cc) on PATH ' +
      '(Debian: apt-get install gcc)); it was asked for with --build-from-source ' +
      '(npm_config_build_from_source), so the install fails'])
  })
})

t.test('findNodeGyp(): npm\'s setting, then a resolvable copy, then npm\'s bundled one, then PATH', async t => {
  const configured = path.join(dir, 'configured-node-gyp.js')
  fs.writeFileSync(configured, '')
  t.strictSame(build.findNodeGyp(ROOT, { npm_config_node_gyp: configured }), [process.execPath, [configured]],
    'npm_config_node_gyp, run with this node')
  const own = require.resolve('node-gyp/bin/node-gyp.js', { paths: [ROOT] })
  t.strictSame(build.findNodeGyp(ROOT, { npm_config_node_gyp: path.join(dir, 'missing.js') }), [process.execPath, [own]],
    'a configured path that does not exist is passed over')
  t.equal(build.npmBundledNodeGyp('/opt/node/bin/node'),
    path.join('/opt/node/lib/node_modules/npm/node_modules/node-gyp/bin/node-gyp.js'), 'npm next to the binary')
})

t.test('scripts/build.js outside npm, from a package without node-gyp of its own', async t => {
  // An installed package: no devDependencies, no npm_config_* settings, and
  // PATH without npm's node-gyp-bin. The build then takes the node-gyp of
  // the npm installed next to the running node, or says there is none.
  const root = path.join(dir, 'installed', 'node_modules', 'http-oneshot')
  fs.mkdirSync(root, { recursive: true })
  for (const file of ['package.json', 'binding.gyp']) fs.copyFileSync(path.join(ROOT, file), path.join(root, file))
  for (const sub of ['src', 'lib', 'scripts']) fs.cpSync(path.join(ROOT, sub), path.join(root, sub), { recursive: true })
  fs.mkdirSync(path.join(root, 'node_modules'))
  fs.symlinkSync(path.dirname(require.resolve('node-gyp-build/package.json')), path.join(root, 'node_modules', 'node-gyp-build'), 'dir')
  const env = {}
  for (const [key, value] of Object.entries(process.env)) {
    if (!/^npm_/i.test(key) && key !== 'NODE_OPTIONS') env[key] = value
  }
  env.PATH = (process.env.PATH || '').split(path.delimiter).filter((p) => !/node-gyp-bin/.test(p)).join(path.delimiter)
  const res = childProcess.spawnSync(process.execPath, [path.join(root, 'scripts', 'build.js')],
    { cwd: path.join(dir, 'installed'), env, encoding: 'utf8', timeout: 120000 })
  const bundled = build.npmBundledNodeGyp(process.execPath)
  if (fs.existsSync(bundled) || build.onPath('node-gyp', env)) {
    t.equal(res.status, 0, 'built with npm\'s node-gyp: ' + res.stderr)
    t.ok(fs.existsSync(path.join(root, 'build', 'Release', 'http_oneshot.node')), 'build/Release/http_oneshot.node')
    t.notMatch(res.stderr, /ENOENT/)
  } else {
    // A node without npm next to it (the registry's node-linux-* packages).
    t.equal(res.status, 1)
    t.match(res.stderr, /^http-oneshot: native build failed \(no node-gyp: run the build through npm/)
  }
})

t.test('scripts/fuzz.js names missing Debian packages', async t => {
  const missing = fuzz.missingPackages({ ...process.env, CLANG: 'no-such-clang', LLHTTP_DIR: path.join(dir, 'none') })
  t.strictSame(missing.map(([pkg]) => pkg), ['clang', 'node-llhttp'])
})
