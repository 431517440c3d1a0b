'use strict'

// A wrapper of a method the package replaces, calls or compares with runs
// exactly as it would without the package, whether it was put on before
// install() (an APM agent loaded first: Elastic's writeHead, New Relic's
// end), before the preload's stand-ins handed over, when the application
// requires http (dd-trace's end, from a hook around require()), or after
// install: the
// same calls, with the same `this` and arguments, in the same order, and
// the same bytes on the wire. Where it stands in the native path's way the
// response falls back ('patched'), or goes native beneath it (writeHead).
// stats().wrapped names what was there before install.

const path = require('node:path')
const { spawn } = require('node:child_process')

const t = require('tap')

const { shimActive } = require('./helpers/expect-path.js')
const { cacheDirs, node, lastJSON } = require('./helpers/probe-child.js')

const ROOT = path.join(__dirname, '..')
const APP = path.join(__dirname, 'fixtures', 'wrapped.js')
const WRAPPER = path.join(__dirname, 'fixtures', 'wrapper.js')
const REGISTER = path.join(ROOT, 'register.js')

const { emptyCache } = cacheDirs(t, 'http-oneshot-wrappers-')
const cache = emptyCache()
node(['-e', `require(${JSON.stringify(path.join(ROOT, 'lib', 'index.js'))}).install()`], { HTTP_ONESHOT_CACHE_DIR: cache })

const METHODS = [
  'ServerResponse.writeHead', 'ServerResponse._implicitHeader', 'ServerResponse.emit', 'ServerResponse.end',
  'OutgoingMessage.end', 'OutgoingMessage.write', 'OutgoingMessage.uncork', 'OutgoingMessage.setHeader',
  'OutgoingMessage._storeHeader', 'OutgoingMessage._send', 'OutgoingMessage._writeRaw',
  'OutgoingMessage._flushOutput', 'OutgoingMessage._finish',
  'Socket.write', 'Socket.cork', 'Socket.uncork', 'Socket._write', 'Socket._writev', 'Socket._writeGeneric'
]

function run (wrap, when) {
  const args = when === 'preload' || when === 'hook' ? ['-r', WRAPPER, '-r', REGISTER, APP] : [APP]
  const env = { ...process.env, WRAP: wrap, WHEN: when, HTTP_ONESHOT_CACHE_DIR: cache }
  for (const key of ['NODE_OPTIONS', 'NODE_DEBUG', 'HTTP_ONESHOT', 'HTTP_ONESHOT_REPORT']) delete env[key]
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    let err = ''
    child.stdout.setEncoding('utf8').on('data', (d) => { out += d })
    child.stderr.setEncoding('utf8').on('data', (d) => { err += d })
    const timer = setTimeout(() => child.kill(), 20000)
    child.on('close', (code) => {
      clearTimeout(timer)
      if (code !== 0) return reject(new Error(`${wrap} ${when}: exit ${code}: ${err}`))
      resolve(JSON.parse(out.trim().split('\n').pop()))
    })
  })
}

for (const wrap of METHODS) {
  t.test(wrap, async t => {
    const [none, before, preload, hook, after] = await Promise.all(
      ['none', 'before', 'preload', 'hook', 'after'].map((when) => run(wrap, when)))
    // (Node 20's end() does not call the response's uncork().)
    if (wrap !== 'OutgoingMessage.uncork') t.ok(none.calls.length > 0, 'the wrapper is called on Node\'s own path')
    for (const [when, out] of [['before install()', before], ['before the stand-ins handed over', preload],
      ['when the application requires http', hook], ['after install()', after]]) {
      t.strictSame(out.calls, none.calls, `${when}: the wrapper sees the calls it sees without the package`)
      t.strictSame(out.raw, none.raw, `${when}: the same bytes`)
    }
    const method = wrap.replace('.', '.prototype.')
    const listed = (out) => out.stats.wrapped.some((w) => w.method === method && w.wrapper === 'loggingWrapper')
    t.equal(listed(after), false, 'a wrapper put on after install() is not in Node\'s place')
    if (!shimActive || wrap === 'ServerResponse.emit' || wrap === 'ServerResponse._implicitHeader' || wrap === 'OutgoingMessage._finish') return
    // Methods the package checks: named in stats().wrapped.
    t.equal(listed(before), true, 'stats().wrapped names it (before install())')
    t.equal(listed(preload), true, 'stats().wrapped names it (before the stand-ins handed over)')
    if (wrap === 'ServerResponse.writeHead') {
      // Beneath a wrapper put on first, Node's writeHead() runs and the
      // package renders beneath it, in _storeHeader().
      t.equal(after.stats.native, 4, 'every response but the streamed one is native beneath a wrapper put on after')
      t.equal(before.stats.native, 4, 'and beneath a wrapper put on before install()')
      t.equal(preload.stats.native, 4, 'and beneath a wrapper put on before the stand-ins handed over')
    }
    if (wrap === 'OutgoingMessage._storeHeader') {
      t.equal(before.stats.inactiveReason, 'wrapped', 'the package says why it stays off')
      t.equal(preload.stats.inactiveReason, 'wrapped')
    }
    if (wrap === 'ServerResponse.end') {
      t.equal(before.stats.inactiveReason, 'end-replaced')
      t.equal(preload.stats.inactiveReason, 'end-replaced')
    }
    if (wrap.startsWith('ServerResponse.')) {
      // Put on over a stand-in (the preload loaded http without a
      // require()): native beneath it, as beneath one put on after install.
      t.equal(hook.stats.inactiveReason, null, 'a wrapper put on when the application requires http: installed')
      t.equal(hook.stats.native, after.stats.native, 'as native as beneath a wrapper put on after install()')
    }
  })
}

// Beneath a writeHead wrapper put on first the package renders in
// _storeHeader(), on ServerResponse.prototype: a wrapper of
// OutgoingMessage#_storeHeader put on after install() is still called, as
// Node's writeHead() calls it without the package, with the same bytes.
t.test('an OutgoingMessage#_storeHeader wrapper put on after install(), beneath a writeHead wrapper', async t => {
  const script = `
    const http = require('node:http')
    const net = require('node:net')
    const P = http.ServerResponse.prototype
    const writeHead = P.writeHead
    P.writeHead = function wrappedWriteHead () { return writeHead.apply(this, arguments) }
    const oneshot = process.env.WITH === '1' ? require(${JSON.stringify(path.join(ROOT, 'lib', 'index.js'))}) : null
    if (oneshot) oneshot.install()
    const O = http.OutgoingMessage.prototype
    const store = O._storeHeader
    let calls = 0
    O._storeHeader = function wrappedStoreHeader () { calls++; return store.apply(this, arguments) }
    const server = http.createServer((req, res) => res.end('hello'))
    server.listen(0, '127.0.0.1', () => {
      const c = net.connect(server.address().port, '127.0.0.1', () => c.write('GET / HTTP/1.1\\r\\nHost: x\\r\\nConnection: close\\r\\n\\r\\n'))
      let raw = ''
      c.setEncoding('latin1').on('data', (d) => { raw += d }).on('end', () => {
        server.close()
        console.log(JSON.stringify({ calls, raw: raw.replace(/Date: [^\\r]*/, 'Date: -') }))
      })
    })
  `
  const [without, withPackage] = ['0', '1'].map((w) => lastJSON(node(['-e', script], { WITH: w, HTTP_ONESHOT_CACHE_DIR: cache }).stdout))
  t.equal(without.calls, 1, 'without the package the wrapper is called once')
  t.equal(withPackage.calls, 1, 'with it, too')
  t.equal(withPackage.raw, without.raw, 'the same bytes')
})
