'use strict'

// Every response fixture runs twice against a real server on 127.0.0.1:0,
// once on Node's own path and once with the shim installed; the raw bytes,
// the response state, the event order and the path taken must match
// (docs/architecture.md, "Tests").

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const t = require('tap')

const { checkParity, makeCertificate, pathMatches } = require('./helpers/dual-path.js')
const { expectedPath } = require('./helpers/expect-path.js')
const { fixtures } = require('./fixtures/responses.js')

t.jobs = 1

for (const [i, fx] of fixtures.entries()) {
  t.test(`${fx.name} (fixtures/responses.js#${i})`, t => checkParity(t, fx))
}

// A TLSSocket is a net.Socket and ServerResponse writes to it the same way,
// so the common shapes take the native path over HTTPS too.
const TLS_FIXTURES = [
  'fresh end(string), keep-alive',
  'fresh end(Buffer)',
  'writeHead(200, {content-length}) + end(string, null, null)',
  'express 5 res.send(string) sequence, Buffer body',
  'end(chunk, cb)',
  'write() then end()',
  'two pipelined requests answered synchronously'
]

t.test('over HTTPS', async t => {
  const cert = makeCertificate()
  for (const name of TLS_FIXTURES) {
    const i = fixtures.findIndex(fx => fx.name === name)
    t.ok(i >= 0, `fixture "${name}" exists`)
    await t.test(`${name} (fixtures/responses.js#${i}, tls)`, t => checkParity(t, fixtures[i], { tls: cert }))
  }
})

// A server on a UNIX domain socket (behind a proxy on the same machine)
// has a net.Socket over a pipe handle: the shim writes the one message with
// socket.write() there (no direct write), with the same bytes and state.
// Every fixture, as over TCP. end() after write()s with Content-Length
// framing falls back there (streamed). The path may differ where a body is above
// COPY_MAX_BODY (4 KiB): a TCP socket takes it natively in a direct write,
// a pipe leaves it to Node (body-too-large), whose slower write can then
// leave the next pipelined response waiting for the socket (no-socket).
// Any other reason, and the number of end() calls, must be as stated.
function pipePathMatches (found, wanted) {
  if (pathMatches(found, wanted)) return true
  // end() after write()s with Content-Length framing is native only in a
  // direct write: without one it falls back before the checks of the body
  // (which tell non-ascii, or a header that went out on an earlier tick).
  if (found.streamed && ['native', 'non-ascii', 'headers-sent'].some(reason =>
    pathMatches(renameStreamed(found, reason), wanted))) {
    return true
  }
  if (!found['body-too-large']) return false
  const sum = counts => Object.values(counts).reduce((a, b) => a + b, 0)
  const counts = typeof wanted === 'object' && !Array.isArray(wanted) ? wanted : null
  if (sum(found) !== (counts === null ? 1 : sum(counts))) return false
  const piped = new Set(['body-too-large', 'no-socket', 'native'])
  return Object.keys(found).every(reason => piped.has(reason) ||
    (counts === null ? [].concat(wanted).includes(reason) : (counts[reason] || 0) >= found[reason]))
}

// `found` with its 'streamed' count counted under `reason`.
function renameStreamed (found, reason) {
  const out = { ...found, [reason]: (found[reason] || 0) + found.streamed }
  delete out.streamed
  return out
}

t.test('over a UNIX domain socket', { skip: process.platform === 'win32' && 'POSIX only' }, async t => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'http-oneshot-unix-'))
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }))
  const socketPath = path.join(dir, 'server.sock')
  for (const [i, fx] of fixtures.entries()) {
    await t.test(`${fx.name} (fixtures/responses.js#${i}, UNIX socket)`, t =>
      checkParity(t, fx, { path: socketPath, pathMatches: pipePathMatches }))
  }
})

// NODE_DEBUG=http is read once at startup, so the 'debug' fallback needs a
// process of its own; Node then prints its debug lines from end(), which the
// shim must leave to Node.
t.test('NODE_DEBUG=http falls back to Node and keeps parity', async t => {
  const { execFile } = require('node:child_process')
  const script = `
    const { capture } = require(${JSON.stringify(require.resolve('./helpers/dual-path.js'))})
    const fx = { request: 'GET / HTTP/1.1\\r\\nHost: x\\r\\nConnection: close\\r\\n\\r\\n',
      handler (req, res) { res.end('hello') } }
    ;(async () => {
      const legacy = await capture(fx, { patched: false })
      const native = await capture(fx, { patched: true })
      for (const c of [legacy, native]) { delete c.raw; delete c.parsed }
      process.stdout.write(JSON.stringify({ legacy, native }))
    })()
  `
  const { stdout, stderr } = await new Promise((resolve, reject) => {
    execFile(process.execPath, ['-e', script], {
      env: { ...process.env, NODE_OPTIONS: '', NODE_DEBUG: 'http' }
    }, (err, stdout, stderr) => (err ? reject(err) : resolve({ stdout, stderr })))
  })
  const { legacy, native } = JSON.parse(stdout)
  t.match(stderr, /HTTP \d+: outgoing message end\./, 'Node printed its debug lines')
  t.equal(native.bytes, legacy.bytes)
  t.strictSame(native.state, legacy.state)
  t.strictSame(native.events, legacy.events)
  t.strictSame(native.path, expectedPath({ debug: 1 }))
})
