'use strict'

// The preload entry points: `node -r register.js` and `node --import
// register.mjs` install the shim before the app runs, for CommonJS and ESM
// apps alike, and the package's exports map resolves both specifiers.

const childProcess = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { pathToFileURL } = require('node:url')

const t = require('tap')

const { expectedStats, pathStats, shimActive } = require('./helpers/expect-path.js')

const ROOT = path.join(__dirname, '..')
const REGISTER_CJS = path.join(ROOT, 'register.js')
const REGISTER_ESM = path.join(ROOT, 'register.mjs')
const LIB_CJS = path.join(ROOT, 'lib', 'index.js')
const LIB_ESM = path.join(ROOT, 'lib', 'index.mjs')

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'http-oneshot-register-'))
t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }))

// A package-less directory whose node_modules/http-oneshot is this package,
// as an installed dependency would be.
const appDir = path.join(dir, 'app')
fs.mkdirSync(path.join(appDir, 'node_modules'), { recursive: true })
fs.symlinkSync(ROOT, path.join(appDir, 'node_modules', 'http-oneshot'), 'dir')

// The body of a tiny app: one server, one request over a raw socket, then
// the shim's stats() printed as JSON. `statsExpr` names the stats function.
function appBody (statsExpr) {
  return `
const server = http.createServer((req, res) => res.end('hello'))
server.listen(0, '127.0.0.1', () => {
  const socket = net.connect(server.address().port, '127.0.0.1', () => {
    socket.write('GET / HTTP/1.1\\r\\nHost: x\\r\\nConnection: close\\r\\n\\r\\n')
  })
  const chunks = []
  socket.on('data', c => chunks.push(c))
  socket.on('close', () => {
    server.close()
    console.log(JSON.stringify({
      stats: ${statsExpr}(),
      own: Object.hasOwn(http.ServerResponse.prototype, 'end'),
      response: Buffer.concat(chunks).toString('latin1')
    }))
  })
})
`
}

function writeApp (name, text) {
  const file = path.join(appDir, name)
  fs.writeFileSync(file, text)
  return file
}

const CJS_APP = writeApp('app.cjs', `'use strict'
const http = require('node:http')
const net = require('node:net')
const { stats } = require(${JSON.stringify(LIB_CJS)})
${appBody('stats')}`)

const ESM_APP = writeApp('app.mjs', `import http from 'node:http'
import net from 'node:net'
import { stats } from ${JSON.stringify(pathToFileURL(LIB_ESM).href)}
${appBody('stats')}`)

// Imports the package by name, through its exports map.
const ESM_BY_NAME = writeApp('by-name.mjs', `import 'http-oneshot/register'
import http from 'node:http'
import net from 'node:net'
import { stats } from 'http-oneshot'
${appBody('stats')}`)

const CJS_BY_NAME = writeApp('by-name.cjs', `'use strict'
require('http-oneshot/register')
const http = require('node:http')
const net = require('node:net')
const { stats } = require('http-oneshot')
${appBody('stats')}`)

const PLAIN_APP = writeApp('plain.cjs', `'use strict'
const http = require('node:http')
const net = require('node:net')
${appBody('(() => null)')}`)

function run (args, env = {}) {
  return new Promise(resolve => {
    const childEnv = { ...process.env, ...env }
    delete childEnv.NODE_OPTIONS
    delete childEnv.NODE_DEBUG
    if (!('HTTP_ONESHOT' in env)) delete childEnv.HTTP_ONESHOT
    childProcess.execFile(process.execPath, args, { cwd: appDir, env: childEnv, timeout: 20000 },
      (err, stdout, stderr) => resolve({ code: err ? err.code ?? 1 : 0, stdout, stderr }))
  })
}

function output (t, result) {
  t.equal(result.code, 0, 'the app exits cleanly' + (result.code ? ': ' + result.stderr : ''))
  try {
    return JSON.parse(result.stdout.trim().split('\n').pop())
  } catch {
    t.fail('the app printed JSON: ' + result.stdout + result.stderr)
    return {}
  }
}

// One end('hello'), on the native path where the shim is active.
const ONE_NATIVE = expectedStats({ native: 1, fallback: 0, reasons: {} })

t.test('node -r register.js, CommonJS app', async t => {
  const out = output(t, await run(['-r', REGISTER_CJS, CJS_APP]))
  t.strictSame(pathStats(out.stats), ONE_NATIVE)
  t.equal(out.own, shimActive, 'ServerResponse#end is patched (where the shim can run)')
  t.match(out.response, /^HTTP\/1\.1 200 OK\r\n[^]*\r\n\r\nhello$/)
})

t.test('node -r register.js, ESM app', async t => {
  const out = output(t, await run(['-r', REGISTER_CJS, ESM_APP]))
  t.strictSame(pathStats(out.stats), ONE_NATIVE)
  t.equal(out.own, shimActive)
})

t.test('node --import register.mjs, ESM app', async t => {
  const out = output(t, await run(['--import', pathToFileURL(REGISTER_ESM).href, ESM_APP]))
  t.strictSame(pathStats(out.stats), ONE_NATIVE)
  t.equal(out.own, shimActive)
})

t.test('node --import register.mjs, CommonJS app', async t => {
  const out = output(t, await run(['--import', pathToFileURL(REGISTER_ESM).href, CJS_APP]))
  t.strictSame(pathStats(out.stats), ONE_NATIVE)
})

t.test('node -r http-oneshot/register, resolved from the app directory', async t => {
  const out = output(t, await run(['-r', 'http-oneshot/register', CJS_APP]))
  t.strictSame(pathStats(out.stats), ONE_NATIVE)
})

t.test('node --import http-oneshot/register, resolved from the app directory', async t => {
  const out = output(t, await run(['--import', 'http-oneshot/register', ESM_APP]))
  t.strictSame(pathStats(out.stats), ONE_NATIVE)
})

t.test('without a preload nothing is patched', async t => {
  const out = output(t, await run([PLAIN_APP]))
  t.equal(out.own, false)
  t.match(out.response, /\r\n\r\nhello$/)
})

t.test('HTTP_ONESHOT=0 with -r leaves Node untouched', async t => {
  const out = output(t, await run(['-r', REGISTER_CJS, CJS_APP], { HTTP_ONESHOT: '0' }))
  t.strictSame(pathStats(out.stats), { native: 0, fallback: 0, reasons: {} })
  t.equal(out.own, false)
})

// Apps that look at Node's module list before and after they load http
// themselves: the preload must not have loaded any of Node's HTTP modules,
// and the patch must be in place once the app has loaded http.
const PROBE = `
const httpModules = () => process.moduleLoadList.filter((m) => /^NativeModule (https?|_http_\\w+)$/.test(m))
const bindingLoaded = () => Object.keys(require.cache).some((f) => f.endsWith(${JSON.stringify(path.join('lib', 'binding.js'))}))
const before = httpModules()
const bindingBefore = bindingLoaded()
`
const REPORT = `
const oneshot = require('http-oneshot')
console.log(JSON.stringify({
  before,
  bindingBefore,
  after: httpModules(),
  installed: oneshot.isInstalled(),
  shimEnd: require('node:http').ServerResponse.prototype.end !== require('node:http').OutgoingMessage.prototype.end,
  bindingAfter: bindingLoaded()
}))
`
const LAZY_CJS = writeApp('lazy.cjs', `'use strict'
${PROBE}
require(process.env.APP_HTTP || 'node:http')
${REPORT}`)
const LAZY_ESM = writeApp('lazy.mjs', `import { createRequire } from 'node:module'
const require = createRequire(import.meta.url)
${PROBE}
await import(process.env.APP_HTTP || 'node:http')
${REPORT}`)

const PRELOADS = [
  ['-r', REGISTER_CJS],
  ['-r', 'http-oneshot/register'],
  ['--import', pathToFileURL(REGISTER_ESM).href],
  ['--import', 'http-oneshot/register']
]

for (const preload of PRELOADS) {
  for (const app of [LAZY_CJS, LAZY_ESM]) {
    t.test(`node ${preload.join(' ')} ${path.basename(app)}: no http until the app loads it`, async t => {
      const out = output(t, await run([...preload, app]))
      t.strictSame(out.before, [], 'no HTTP module was loaded before the app ran')
      t.equal(out.bindingBefore, false, 'nor the addon')
      t.ok(out.after.includes('NativeModule http'), 'the app loaded http')
      t.equal(out.installed, shimActive, 'installed once the app loaded http (where the shim can run)')
      t.equal(out.shimEnd, shimActive, "ServerResponse#end is the shim's")
    })
  }
}

t.test('loading https installs too', async t => {
  for (const app of [LAZY_CJS, LAZY_ESM]) {
    const out = output(t, await run(['-r', REGISTER_CJS, app], { APP_HTTP: 'node:https' }))
    t.strictSame(out.before, [])
    t.equal(out.installed, shimActive, path.basename(app))
  }
})

t.test('HTTP_ONESHOT=0: the preload loads neither http nor the addon', async t => {
  for (const preload of [PRELOADS[0], PRELOADS[2]]) {
    for (const app of [LAZY_CJS, LAZY_ESM]) {
      const out = output(t, await run([...preload, app], { HTTP_ONESHOT: '0' }))
      t.strictSame(out.before, [], `${preload[0]} ${path.basename(app)}`)
      t.equal(out.installed, false)
      t.equal(out.shimEnd, false)
      t.equal(out.bindingAfter, false, 'lib/binding.js was never loaded')
    }
  }
})

t.test('the exports map', async t => {
  t.test('require.resolve from an app directory', async t => {
    const paths = [appDir]
    t.equal(require.resolve('http-oneshot', { paths }), LIB_CJS)
    t.equal(require.resolve('http-oneshot/register', { paths }), REGISTER_CJS)
    t.equal(require.resolve('http-oneshot/package.json', { paths }), path.join(ROOT, 'package.json'))
    t.throws(() => require.resolve('http-oneshot/lib/shim.js', { paths }),
      { code: 'ERR_PACKAGE_PATH_NOT_EXPORTED' }, 'internal files are not exported')
  })

  t.test('import.meta.resolve picks the ESM entries', async t => {
    const probe = writeApp('resolve.mjs', `console.log(JSON.stringify([
  import.meta.resolve('http-oneshot'),
  import.meta.resolve('http-oneshot/register')
]))`)
    const result = await run([probe])
    t.equal(result.code, 0, result.stderr)
    // ESM resolution follows the node_modules symlink to the real files.
    t.strictSame(JSON.parse(result.stdout), [pathToFileURL(LIB_ESM).href, pathToFileURL(REGISTER_ESM).href])
  })

  t.test('importing by name from CommonJS and ESM apps', async t => {
    for (const app of [CJS_BY_NAME, ESM_BY_NAME]) {
      const out = output(t, await run([app]))
      t.strictSame(pathStats(out.stats), ONE_NATIVE, path.basename(app))
    }
  })

  t.test('the CommonJS and ESM entries share one shim', async t => {
    const probe = writeApp('dual.mjs', `import { createRequire } from 'node:module'
import * as esm from 'http-oneshot'
const cjs = createRequire(import.meta.url)('http-oneshot')
console.log(JSON.stringify([esm.stats === cjs.stats, esm.default === cjs, esm.install === cjs.install]))`)
    const result = await run([probe])
    t.equal(result.code, 0, result.stderr)
    t.strictSame(JSON.parse(result.stdout), [true, true, true])
  })
})
