'use strict'

// Bodies written on ticks of their own with Content-Length framing (piped
// files of 2 KiB, 64 KiB and 1 MiB, in-memory streams, pipeline(), a slow
// reader, a reset), on a real loopback server, once on Node's own path and
// once with the shim installed: bytes, state, events and their order and
// async context, and the path taken (test/fixtures/piped.js). Then that
// the header block of such a response comes from the shim's renderer
// (the header-block cache), not from Node's _storeHeader().

const fs = require('node:fs')
const http = require('node:http')
const os = require('node:os')
const path = require('node:path')
const t = require('tap')

const shim = require('../lib/index.js')
const { checkParity } = require('./helpers/dual-path.js')
const { shimActive } = require('./helpers/expect-path.js')
const { RawClient } = require('./helpers/raw-client.js')
const { fixtures } = require('./fixtures/piped.js')

t.jobs = 1

for (const [i, fx] of fixtures.entries()) {
  t.test(`${fx.name} (fixtures/piped.js#${i})`, t => checkParity(t, fx))
}

t.test('over a UNIX domain socket', { skip: process.platform === 'win32' && 'POSIX only' }, async t => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'http-oneshot-piped-'))
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }))
  const socketPath = path.join(dir, 'server.sock')
  for (const [i, fx] of fixtures.entries()) {
    if (fx.tcpOnly) continue
    // (`unixPath`: a fixture's path where no direct write can run.)
    const unixFx = fx.unixPath === undefined ? fx : { ...fx, path: fx.unixPath }
    await t.test(`${fx.name} (fixtures/piped.js#${i}, UNIX socket)`, t =>
      checkParity(t, unixFx, { path: socketPath }))
  }
})

// The shim's writeHead(), which the first write()'s _implicitHeader()
// calls, renders the headers setHeader() stored from the cache once a
// block like it is there.
t.test('the first write() renders the stored headers with the shim\'s renderer', async t => {
  const { stores, rendered, stats } = await sendPiped(t, false)
  if (!shimActive) {
    t.equal(rendered, 0, 'the shim renders nothing where it is off')
    t.strictSame(stats.reasons, {}, JSON.stringify(stats))
    return
  }
  t.equal(stores, 0)
  // The first response may render through Node (the cache learns it).
  t.ok(rendered >= N_PIPED - 1, `the shim rendered ${rendered} of ${N_PIPED} headers`)
  t.strictSame(stats.reasons, { 'headers-sent': N_PIPED }, JSON.stringify(stats))
})

// A wrapper of _storeHeader() put on after install() runs as on Node's
// path: Node's writeHead() renders through it, once per response.
t.test('a _storeHeader() wrapper sees every header rendered', async t => {
  const { stores, rendered } = await sendPiped(t, true)
  t.equal(stores, N_PIPED, `the wrapper ran ${stores} times for ${N_PIPED} responses`)
  t.equal(rendered, 0, 'the shim rendered none beneath it')
})

const N_PIPED = 6

// send's calls for one file, N_PIPED times on one keep-alive connection:
// how many headers the shim's renderer rendered (lib/render.js blockOf()
// after the first write()), and, with `wrap`, how often a wrapper of
// OutgoingMessage#_storeHeader put on for that write() ran.
async function sendPiped (t, wrap) {
  const { OutgoingMessage } = http
  const storeHeader = OutgoingMessage.prototype._storeHeader
  const { blockOf } = require('../lib/render.js')
  let stores = 0
  let rendered = 0
  let finished = 0
  let allFinished
  const done = new Promise(resolve => { allFinished = resolve })
  const uninstall = shim.install()
  shim.resetStats()
  const server = http.createServer((req, res) => {
    res.sendDate = false
    res.setHeader('Content-Type', 'application/octet-stream')
    res.setHeader('ETag', 'W/"800-fixed"')
    res.setHeader('Content-Length', 2048)
    setImmediate(() => {
      const own = Object.getOwnPropertyDescriptor(OutgoingMessage.prototype, '_storeHeader')
      if (wrap) {
        OutgoingMessage.prototype._storeHeader = function () {
          stores++
          return storeHeader.apply(this, arguments)
        }
      }
      try {
        res.write(Buffer.alloc(2048, 'x'))
      } finally {
        Object.defineProperty(OutgoingMessage.prototype, '_storeHeader', own)
      }
      if (blockOf(res) !== null) rendered++
      setImmediate(() => res.end())
    })
    res.on('finish', () => {
      if (++finished === N_PIPED) allFinished()
    })
  })
  t.teardown(() => {
    uninstall()
  })
  await new Promise(resolve => server.listen(0, '127.0.0.1', resolve))
  const client = new RawClient({ port: server.address().port })
  for (let i = 0; i < N_PIPED; i++) {
    await client.send('GET / HTTP/1.1\r\nHost: x\r\n\r\n')
    await client.waitFor(i + 1)
  }
  await done
  const { messages, error } = client.parse(false)
  client.destroy()
  server.closeAllConnections()
  await new Promise(resolve => server.close(resolve))
  t.equal(error, null)
  t.equal(messages.length, N_PIPED)
  for (const m of messages) t.equal(m.body.length, 2048)
  return { stores, rendered, stats: shim.stats() }
}
