'use strict'

// The preload's stand-ins (lib/patches.js): when the application loads
// http, the preload puts stand-ins on ServerResponse.prototype and loads
// nothing else; the shim, the addon and the probe's answer load when a
// server starts listening, at the first call of a stand-in, or when the
// package's state is asked for. An APM agent that wraps ServerResponse
// methods after http loaded ends up in the chain an install at http load
// would have made.

const fs = require('node:fs')
const path = require('node:path')

const t = require('tap')

const { shimActive } = require('./helpers/expect-path.js')
const { cacheDirs, node, lastJSON, entryFile } = require('./helpers/probe-child.js')

const ROOT = path.join(__dirname, '..')
const LIB = path.join(ROOT, 'lib', 'index.js')
const REGISTER_CJS = path.join(ROOT, 'register.js')
const REGISTER_ESM = path.join(ROOT, 'register.mjs')

const { dir, emptyCache } = cacheDirs(t, 'http-oneshot-stand-in-')

// One cache directory holding this binary's answer, as after a first run.
const warmCache = emptyCache()
node(['-e', `require(${JSON.stringify(LIB)}).install()`], { HTTP_ONESHOT_CACHE_DIR: warmCache })

// What of the package a process has loaded, by file name under lib/.
const LOADED = `
const loaded = () => Object.keys(require.cache)
  .filter((f) => f.startsWith(${JSON.stringify(path.join(ROOT, 'lib') + path.sep)}))
  .map((f) => f.slice(${JSON.stringify(path.join(ROOT, 'lib') + path.sep)}.length)).sort()
`

t.test('loading http loads the stand-ins only', async t => {
  const script = `${LOADED}
const http = require('node:http')
const proto = http.ServerResponse.prototype
const own = ['end', 'writeHead', 'setHeader', 'write', 'uncork'].filter((m) => Object.hasOwn(proto, m))
console.log(JSON.stringify({ loaded: loaded(), own, endName: proto.end.name, endLength: proto.end.length,
  writeHeadLength: proto.writeHead.length, children: process.getActiveResourcesInfo().filter((r) => r === 'ProcessWrap').length }))
`
  for (const preload of [['-r', REGISTER_CJS], ['--import', REGISTER_ESM]]) {
    for (const cacheDir of [warmCache, emptyCache()]) {
      const out = lastJSON(node([...preload, '-e', script], { HTTP_ONESHOT_CACHE_DIR: cacheDir }).stdout)
      t.strictSame(out.loaded, ['patches.js', 'preload.js'], `${preload[0]}: neither the shim, the addon nor the probe`)
      t.strictSame(out.own, ['end', 'writeHead', 'setHeader', 'write', 'uncork'], 'a stand-in for each method the shim may replace')
      t.equal(out.endName, 'end', 'named as Node\'s')
      t.equal(out.endLength, 3)
      t.equal(out.writeHeadLength, 3)
      t.equal(out.children, 0, 'no probe child started')
    }
  }
  const { file } = entryFile(emptyCache())
  t.notOk(require('node:fs').existsSync(file), 'nothing stored')
})

// A server under the preload: what is loaded and what stats() says at
// listen(), in the listen callback, and after one request.
const SERVER = `${LOADED}
const http = require('node:http')
const seen = {}
const server = http.createServer((req, res) => res.end('hello'))
seen.beforeListen = loaded().includes('shim.js')
server.listen(0, '127.0.0.1', async () => {
  seen.atListening = loaded().includes('shim.js') || loaded().includes('binding.js')
  const proto = http.ServerResponse.prototype
  seen.endIsShim = proto.end === require(${JSON.stringify(path.join(ROOT, 'lib', 'shim.js'))}).end
  const oneshot = require(${JSON.stringify(LIB)})
  seen.reasonAtListening = oneshot.stats().inactiveReason
  await (await fetch('http://127.0.0.1:' + server.address().port + '/')).text()
  seen.stats = oneshot.stats()
  seen.active = oneshot.isActive()
  server.close()
  console.log(JSON.stringify(seen))
})
`

t.test('listen() loads the package before any request', async t => {
  const out = lastJSON(node(['-r', REGISTER_CJS, '-e', SERVER], { HTTP_ONESHOT_CACHE_DIR: warmCache }).stdout)
  t.equal(out.beforeListen, false, 'not loaded by createServer()')
  t.equal(out.atListening, true, 'loaded by the time listen() calls back')
  t.equal(out.endIsShim, shimActive, 'the shim\'s end() took the stand-in\'s place')
  t.equal(out.reasonAtListening, shimActive ? null : 'unsupported-node')
  t.equal(out.active, shimActive)
  t.equal(out.stats.native, shimActive ? 1 : 0, 'the first response is native')
  t.equal(out.stats.inactiveReason, shimActive ? null : 'unsupported-node')
})

t.test('listen() with no answer stored: the probe starts, the first response takes Node\'s path', async t => {
  const out = lastJSON(node(['-r', REGISTER_CJS, '-e', SERVER], { HTTP_ONESHOT_CACHE_DIR: emptyCache() }).stdout)
  t.equal(out.atListening, true, 'the addon loaded at listen()')
  t.equal(out.endIsShim, false, 'no shim while the probe runs')
  t.equal(out.reasonAtListening, 'probe-pending')
  // The probe's child may answer before the request is served (fetch()
  // loads for a while): then that response is native.
  t.equal(out.stats.native + (out.stats.reasons['probe-pending'] || 0), 1, 'native, or counted as probe-pending')
  if (!shimActive) t.equal(out.stats.native, 0)
})

// A response sent without any listen() (a response made by hand): the
// first call of a stand-in loads the package, and the stand-in gives its
// place to the shim's method before it forwards the call.
t.test('the first call of a stand-in loads the package and hands over', async t => {
  const script = `${LOADED}
const http = require('node:http')
const { PassThrough } = require('node:stream')
const proto = http.ServerResponse.prototype
const standIn = proto.end
const req = new http.IncomingMessage(new PassThrough())
req.method = 'GET'
req.httpVersionMajor = 1
req.httpVersionMinor = 1
const res = new http.ServerResponse(req)
const before = loaded().includes('shim.js')
res.end('x')
const shim = require(${JSON.stringify(path.join(ROOT, 'lib', 'shim.js'))})
const oneshot = require(${JSON.stringify(LIB)})
console.log(JSON.stringify({ before, after: loaded().includes('shim.js'), replaced: proto.end !== standIn,
  endIsShim: proto.end === shim.end, finished: res.finished, stats: oneshot.stats() }))
`
  const out = lastJSON(node(['-r', REGISTER_CJS, '-e', script], { HTTP_ONESHOT_CACHE_DIR: warmCache }).stdout)
  t.equal(out.before, false)
  t.equal(out.after, true, 'end() loaded the shim')
  t.equal(out.replaced, true, 'the stand-in is gone from ServerResponse.prototype')
  t.equal(out.endIsShim, shimActive, 'the shim\'s end() is there where it can run, Node\'s elsewhere')
  t.equal(out.finished, true, 'and the call went on')
  // No socket: the shim counts it as Node's own (no-socket).
  t.strictSame(out.stats.reasons, shimActive ? { 'no-socket': 1 } : {})
})

// stats(), isActive() and isInstalled() asked before any listen(): they
// load the package first and answer as they do after.
t.test('the state asked for before listen() is the state after', async t => {
  const script = `${LOADED}
const http = require('node:http')
const oneshot = require(${JSON.stringify(LIB)})
const before = loaded().includes('shim.js') || loaded().includes('binding.js')
const first = { installed: oneshot.isInstalled(), active: oneshot.isActive(), stats: oneshot.stats() }
const server = http.createServer((req, res) => res.end('hello'))
server.listen(0, '127.0.0.1', async () => {
  await (await fetch('http://127.0.0.1:' + server.address().port + '/')).text()
  const after = { installed: oneshot.isInstalled(), active: oneshot.isActive(), stats: oneshot.stats() }
  server.close()
  console.log(JSON.stringify({ before, first, after }))
})
`
  const out = lastJSON(node(['-r', REGISTER_CJS, '-e', script], { HTTP_ONESHOT_CACHE_DIR: warmCache }).stdout)
  t.equal(out.before, false, 'nothing loaded until asked')
  t.equal(out.first.installed, shimActive)
  t.equal(out.first.active, shimActive)
  t.equal(out.first.stats.inactiveReason, shimActive ? null : 'unsupported-node')
  t.equal(out.first.stats.native, 0)
  t.equal(out.after.installed, out.first.installed)
  t.equal(out.after.active, out.first.active)
  t.equal(out.after.stats.inactiveReason, out.first.stats.inactiveReason)
  t.equal(out.after.stats.native, shimActive ? 1 : 0)
})

// An agent that wraps ServerResponse#end and #writeHead once http is
// loaded, before any server listens, as APM agents do from a require hook:
// with the preload's stand-ins and with an explicit install() at http load,
// the agent's wrapper is on the prototype, calls the shim, and every
// response goes through both.
const AGENT = `${LOADED}
const http = require('node:http')
const oneshot = require(${JSON.stringify(LIB)})
if (process.env.EAGER === '1') oneshot.install()
const proto = http.ServerResponse.prototype
const calls = []
for (const name of ['end', 'writeHead']) {
  const inner = proto[name]
  const wrapper = function () { calls.push(name); return inner.apply(this, arguments) }
  proto[name] = wrapper
  proto[name].agent = true
}
const shimLoadedAtWrap = loaded().includes('shim.js')
const server = http.createServer((req, res) => {
  res.writeHead(200, { 'content-type': 'text/plain' })
  res.end('hello')
})
server.listen(0, '127.0.0.1', async () => {
  const bodies = []
  for (let i = 0; i < 2; i++) bodies.push(await (await fetch('http://127.0.0.1:' + server.address().port + '/')).text())
  const seen = { shimLoadedAtWrap, bodies, calls, endIsAgent: proto.end.agent === true,
    writeHeadIsAgent: proto.writeHead.agent === true, stats: oneshot.stats() }
  oneshot.uninstall()
  seen.afterUninstall = { endIsAgent: proto.end.agent === true, writeHeadIsAgent: proto.writeHead.agent === true }
  bodies.push(await (await fetch('http://127.0.0.1:' + server.address().port + '/')).text())
  seen.callsAfter = calls.length
  seen.statsAfter = oneshot.stats()
  server.close()
  console.log(JSON.stringify(seen))
})
`

t.test('an agent that wraps end and writeHead after http loaded: the order of an install at http load', async t => {
  const lazy = lastJSON(node(['-r', REGISTER_CJS, '-e', AGENT], { HTTP_ONESHOT_CACHE_DIR: warmCache }).stdout)
  const eager = lastJSON(node(['-e', AGENT], { HTTP_ONESHOT_CACHE_DIR: warmCache, EAGER: '1' }).stdout)
  t.equal(lazy.shimLoadedAtWrap, false, 'the agent wrapped the stand-ins')
  t.equal(eager.shimLoadedAtWrap, true, 'the agent wrapped the shim')
  for (const [name, out] of [['stand-ins', lazy], ['install() at http load', eager]]) {
    t.strictSame(out.bodies, ['hello', 'hello', 'hello'], name)
    t.strictSame(out.calls.slice(0, 4), ['writeHead', 'end', 'writeHead', 'end'], 'the agent sees every call')
    t.equal(out.endIsAgent, true, 'the agent\'s end stays on the prototype')
    t.equal(out.writeHeadIsAgent, true)
    t.equal(out.stats.native, shimActive ? 2 : 0, 'and calls the shim, which sends natively')
    t.strictSame(out.afterUninstall, { endIsAgent: true, writeHeadIsAgent: true }, 'uninstall() leaves the agent alone')
    t.equal(out.callsAfter, 6, 'which still sees the calls')
    t.equal(out.statsAfter.native, out.stats.native, 'and Node\'s own path then')
  }
  t.strictSame({ ...lazy, shimLoadedAtWrap: null }, { ...eager, shimLoadedAtWrap: null }, 'the same in every other respect')
})

// Another module defined ServerResponse#end before the preload saw http:
// no stand-in goes over it, and the reason given is the line's first.
t.test('an agent that patches http as it loads, from a hook put on before the preload: it wraps the stand-in', async t => {
  const agent = path.join(dir, 'agent.js')
  // An agent's require hook, loaded before the preload, that patches http
  // when the application loads it: the preload puts the stand-ins on
  // first, the agent wraps the stand-in.
  fs.writeFileSync(agent, `
const Module = require('node:module')
const load = Module._load
let patched = false
Module._load = function (request) {
  const exports = load.apply(this, arguments)
  if (request === 'node:http' && !patched) {
    patched = true
    // What is there (shimmer's way): the stand-in.
    const end = exports.ServerResponse.prototype.end
    exports.ServerResponse.prototype.end = function agentEnd () { return end.apply(this, arguments) }
    exports.ServerResponse.prototype.end.wrapped = end
  }
  return exports
}
`)
  const script = `
const http = require('node:http')
const proto = http.ServerResponse.prototype
const { STAND_INS } = require(${JSON.stringify(path.join(ROOT, 'lib', 'patches.js'))})
const endWrapsStandIn = proto.end.wrapped === STAND_INS.end
const oneshot = require(${JSON.stringify(LIB)})
console.log(JSON.stringify({ endName: proto.end.name, endWrapsStandIn, reason: oneshot.stats().inactiveReason, installed: oneshot.isInstalled() }))
`
  const out = lastJSON(node(['-r', agent, '-r', REGISTER_CJS, '-e', script], { HTTP_ONESHOT_CACHE_DIR: warmCache }).stdout)
  t.equal(out.endName, 'agentEnd', 'the agent\'s end() stays')
  t.equal(out.endWrapsStandIn, true, 'it wraps the stand-in')
  t.equal(out.installed, shimActive)
  t.equal(out.reason, shimActive ? null : 'unsupported-node')
})

t.test('an end() defined before the preload ran: no stand-ins, the package stays off', async t => {
  const agent = path.join(dir, 'eager-agent.js')
  // An agent that loads http and wraps end when it starts (New Relic).
  fs.writeFileSync(agent, `
const http = require('node:http')
const end = http.OutgoingMessage.prototype.end
http.ServerResponse.prototype.end = function agentEnd () { return end.apply(this, arguments) }
`)
  const script = `
const http = require('node:http')
const proto = http.ServerResponse.prototype
const { STAND_INS } = require(${JSON.stringify(path.join(ROOT, 'lib', 'patches.js'))})
const standIns = Object.keys(STAND_INS).filter((m) => proto[m] === STAND_INS[m])
const oneshot = require(${JSON.stringify(LIB)})
console.log(JSON.stringify({ endName: proto.end.name, standIns, reason: oneshot.stats().inactiveReason, installed: oneshot.isInstalled() }))
`
  const out = lastJSON(node(['-r', agent, '-r', REGISTER_CJS, '-e', script], { HTTP_ONESHOT_CACHE_DIR: warmCache }).stdout)
  t.equal(out.endName, 'agentEnd', 'the agent\'s end() stays')
  t.strictSame(out.standIns, [], 'no stand-in was put on')
  t.equal(out.installed, false)
  t.equal(out.reason, shimActive ? 'end-replaced' : 'unsupported-node')
})
