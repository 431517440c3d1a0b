'use strict'

// The install script (scripts/build.js --if-needed) never downloads Node's
// headers, never fails an install, says why in one line and leaves no
// half-made build/; scripts/fuzz.js names missing Debian packages.

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
  t.match(lines[0], /^http-oneshot: native addon not built \(no Node headers: .*never downloaded\); using the JS fallback/)
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

t.test('scripts/fuzz.js names missing Debian packages', async t => {
  const missing = fuzz.missingPackages({ ...process.env, CLANG: 'no-such-clang', LLHTTP_DIR: path.join(dir, 'none') })
  t.strictSame(missing.map(([pkg]) => pkg), ['clang', 'node-llhttp'])
})
