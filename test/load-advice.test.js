'use strict'

// When the addon does not load, lib/binding.js keeps what the user can do
// about it as `loadAdvice` on its module record (lib/index.js and the report
// show it) and logs it with NODE_DEBUG=http-oneshot: a load refused by
// Node's permission model names --allow-addons, never a rebuild.

const childProcess = require('node:child_process')
const path = require('node:path')

const t = require('tap')

const ROOT = path.join(__dirname, '..')
const BINDING = path.join(ROOT, 'lib', 'binding.js')

// The permission model's flag on this line: --permission from Node 22 on,
// --experimental-permission on Node 20.
const PERMISSION = process.allowedNodeEnvironmentFlags.has('--permission') ? '--permission' : '--experimental-permission'

// Loads lib/binding.js in a child with these node flags; returns what the
// loader kept and what it logged.
function load (flags) {
  const script = `const b = require(${JSON.stringify(BINDING)})
const r = require.cache[require.resolve(${JSON.stringify(BINDING)})]
console.log(JSON.stringify({ loaded: b !== null, code: r.loadError && r.loadError.code, advice: r.loadAdvice }))`
  const env = { ...process.env, NODE_DEBUG: 'http-oneshot' }
  for (const key of ['NODE_OPTIONS', 'HTTP_ONESHOT', 'HTTP_ONESHOT_NATIVE']) delete env[key]
  // Through a shell that clears NODE_OPTIONS: tap puts its coverage hooks
  // back into a child's environment, and they use process.binding, which
  // the permission model refuses.
  const res = childProcess.spawnSync('/bin/sh', ['-c', 'NODE_OPTIONS= exec "$@"', 'sh',
    process.execPath, ...flags, '-e', script], { env, encoding: 'utf8', timeout: 30000 })
  let out = {}
  try {
    out = JSON.parse(res.stdout.trim().split('\n').pop())
  } catch {}
  return { status: res.status, stderr: res.stderr, ...out }
}

t.test('the permission model without --allow-addons: the advice names --allow-addons', async t => {
  const res = load([PERMISSION, '--allow-fs-read=*'])
  t.equal(res.status, 0, res.stderr)
  t.equal(res.loaded, false)
  t.equal(res.code, 'ERR_DLOPEN_DISABLED', 'Node refuses the dlopen')
  t.equal(res.advice, "Node's permission model refuses native addons: add --allow-addons to the node options")
  t.match(res.stderr, /HTTP-ONESHOT \d+: native addon not loaded \(Cannot load native addon because loading addons is disabled\.\): the shim stays inactive, every response takes Node's own path; Node's permission model refuses native addons: add --allow-addons/)
  t.notMatch(res.stderr, /rebuild/, 'no rebuild advice')

  const allowed = load([PERMISSION, '--allow-fs-read=*', '--allow-addons'])
  t.equal(allowed.status, 0, allowed.stderr)
  t.equal(allowed.loaded, true, 'with --allow-addons the addon loads')
  t.equal(allowed.advice, null)
})

t.test('--no-addons: the advice names that flag', async t => {
  const res = load(['--no-addons'])
  t.equal(res.code, 'ERR_DLOPEN_DISABLED')
  t.equal(res.advice, 'native addons are turned off (--no-addons): remove that flag from the node options')
})

t.test('adviceFor(): each kind of load error', async t => {
  require(BINDING)
  const { adviceFor } = require.cache[require.resolve(BINDING)]
  t.equal(adviceFor(null), null, 'loaded: nothing to advise')
  const disabled = Object.assign(new Error('disabled by HTTP_ONESHOT_NATIVE=0'), { code: 'HTTP_ONESHOT_DISABLED' })
  t.equal(adviceFor(disabled), null, 'turned off on purpose: nothing to advise')
  const noBuild = new Error('No native build was found for platform=linux arch=riscv64 runtime=node abi=115 uv=1 libc=glibc node=20.20.2')
  t.equal(adviceFor(noBuild), 'no prebuild matches this platform (prebuilds: linux-x64 and linux-arm64 (glibc)) ' +
    'and the install built none: install a C toolchain (a C compiler, make, python3) and run ' +
    '"npm rebuild http-oneshot --foreground-scripts"')
  const denied = Object.assign(new Error('Access to this API has been restricted.'),
    { code: 'ERR_ACCESS_DENIED', permission: 'FileSystemRead', resource: '/app/node_modules/http-oneshot/prebuilds' })
  t.equal(adviceFor(denied), 'the permission model refused FileSystemRead of /app/node_modules/http-oneshot/prebuilds: ' +
    `allow reading the package's directory (--allow-fs-read=${ROOT})`)
  const dlopen = new Error('/app/prebuilds/linux-x64/http-oneshot.napi.glibc.node: wrong ELF class: ELFCLASS32')
  t.equal(adviceFor(dlopen), 'the addon found cannot be used here: build one from source with ' +
    '"npm rebuild http-oneshot --build-from-source --foreground-scripts"')
  t.equal(adviceFor(Object.assign(new Error('x'), { code: 'ERR_DLOPEN_DISABLED' }), { permission: {} }),
    "Node's permission model refuses native addons: add --allow-addons to the node options")
})
