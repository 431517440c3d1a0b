'use strict'

// What the framework tests of hono, hapi, h3, express.static / res.sendFile
// and @fastify/static share (test/frameworks.test.js,
// test/static-files.test.js, test/fastify-static.test.js): the least native
// share of each framework, the paths their responses take, a static-file
// server's requests, and a whole-response comparison for bodies too large
// for the harness's 3 s exchange (test/helpers/framework-capture.js).

const fs = require('node:fs')
const http = require('node:http')
const net = require('node:net')
const os = require('node:os')
const path = require('node:path')

const oneshot = require('../../lib/index.js')
const { close, compare, exchange, listen, maskDate, pathCounts, request } = require('./framework-capture.js')
const { expectedPath, shimActive } = require('./expect-path.js')
const { parseResponse } = require('./llhttp.js')

// The least share of each framework's responses (on a real socket, with
// Node's methods) the native path must take where the shim is active.
const NATIVE_SHARE_MIN = {
  hono: 0.8,
  hapi: 0.8,
  h3: 0.8,
  'express.static': 0.45, // 0.8 once write()s on later ticks (a piped file) are native
  '@fastify/static': 0.45 // 0.8 once write()s on later ticks (a piped file) are native
}

// The path of a response whose framework writes the body with write()s on
// later ticks than the header (a piped file, a stream payload): Node's,
// because the header went out before end(). In the header's tick the
// writes wait on the socket's cork and end() sends them natively (hapi).
const WRITTEN = { 'headers-sent': 1 }
const NATIVE = { native: 1 }

// The path counts of several responses on one connection, one per request.
function paths (...each) {
  const out = {}
  for (const counts of each) {
    for (const [key, n] of Object.entries(counts)) out[key] = (out[key] ?? 0) + n
  }
  return out
}

const GET = (p, headers) => request('GET', p, headers)
const HEAD = (p, headers) => request('HEAD', p, headers)
const keep = (method, p, headers) => request(method, p, headers, false)

// Files of 2 KiB, 64 KiB and 1 MiB in a fresh directory removed when `t`
// ends (fs.createReadStream() reads 64 KiB at a time: one write() each for
// the first two, sixteen for the third), with bytes that differ along the
// file so a reordered chunk shows; and a directory `sub` with an index.
const FILES = { '2k.txt': 2048, '64k.txt': 65536, '1m.txt': 1048576 }
function makeFiles (t) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'http-oneshot-frameworks-'))
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }))
  for (const [name, size] of Object.entries(FILES)) {
    const bytes = Buffer.alloc(size)
    for (let i = 0; i < size; i++) bytes[i] = 0x41 + ((i >> 7) % 26)
    fs.writeFileSync(path.join(dir, name), bytes)
  }
  fs.mkdirSync(path.join(dir, 'sub'))
  fs.writeFileSync(path.join(dir, 'sub', 'index.html'), '<p>index</p>')
  return dir
}

// Asserts the native share of `totals` against the row `name` of
// NATIVE_SHARE_MIN where the shim is active; elsewhere that nothing reached
// the shim.
function checkShare (t, totals, name) {
  t.comment(totals.format(name))
  if (!shimActive) {
    t.strictSame({ ...totals.counts, ...totals.fake }, {}, `no ${name} response reached the shim`)
    return
  }
  const { native, eligible } = totals.share()
  const min = NATIVE_SHARE_MIN[name]
  t.ok(eligible > 0 && native / eligible >= min,
    `the native path took ${native} of ${eligible} ${name} responses on a real socket ` +
    `with Node's methods (at least ${Math.round(min * 100)}%)`)
}

// GET `p` with Connection: close, reading everything up to the server's
// close; with `pauseMs` > 0 the client reads nothing for that long first
// (the server's writes back up: write() returns false, 'drain' comes
// later). The bytes are parsed once at the end: the harness's exchange()
// parses again on every chunk and gives up after 3 s, which a 1 MiB body
// can take on a loaded machine.
const PAUSE_MS = 200
const WHOLE_TIMEOUT_MS = 30000
function wholeGet (port, p, pauseMs) {
  return new Promise((resolve, reject) => {
    const chunks = []
    const socket = net.connect({ port, host: '127.0.0.1' })
    const timer = setTimeout(() => socket.destroy(new Error(`no close within ${WHOLE_TIMEOUT_MS} ms`)), WHOLE_TIMEOUT_MS)
    socket.on('connect', () => {
      socket.write(GET(p).text, 'latin1')
      if (pauseMs > 0) {
        socket.pause()
        setTimeout(() => socket.resume(), pauseMs)
      }
    })
    socket.on('data', chunk => chunks.push(chunk))
    socket.on('error', err => {
      clearTimeout(timer)
      reject(err)
    })
    socket.on('end', () => {
      clearTimeout(timer)
      socket.end()
      resolve(Buffer.concat(chunks))
    })
  })
}

// One GET of `p` on Node's own path before the compared ones: a
// framework's first response loads and compiles its modules, which on a
// loaded machine can take longer than the harness's 3 s per exchange.
async function warmUp (port, p) {
  await wholeGet(port, p, 0)
}

// wholeGet() on Node's path and with the shim installed: the same bytes
// (compared without a diff of megabytes on failure), one complete
// response, and the patched run's path counts.
async function compareWhole (t, port, p, expected, totals, pauseMs = 0) {
  t.notOk(oneshot.isInstalled(), 'the shim starts uninstalled')
  const legacy = await wholeGet(port, p, pauseMs)
  const uninstall = oneshot.install()
  oneshot.resetStats()
  let native
  let stats
  try {
    native = await wholeGet(port, p, pauseMs)
    stats = oneshot.stats()
  } finally {
    uninstall()
  }
  totals.add(stats)
  const same = maskDate(native.toString('latin1')) === maskDate(legacy.toString('latin1'))
  t.ok(same, `patched bytes equal unpatched bytes (${native.length} and ${legacy.length})`)
  const parsed = parseResponse(legacy)
  t.equal(parsed.error, null, 'the unpatched response parses')
  t.equal(parsed.messages.length, 1, 'one response')
  t.strictSame(pathCounts(stats), expectedPath(expected), 'paths taken: ' + JSON.stringify(pathCounts(stats)))
  return parsed.messages[0]
}

async function serve (t, handler) {
  const server = http.createServer(handler)
  const port = await listen(server)
  t.teardown(() => close(server))
  return port
}

// The ETag a HEAD of `p` answers with (on Node's own path), for a
// conditional request.
async function etagOf (port, p) {
  const { messages } = await exchange(port, [HEAD(p)])
  const h = messages[0].headers
  for (let i = 0; i < h.length; i += 2) {
    if (h[i].toLowerCase() === 'etag') return h[i + 1]
  }
  throw new Error(`no ETag on GET ${p}`)
}

// The requests of a static-file server for every file: GET, HEAD, a Range
// request and an If-None-Match request answered 304; `prefix` is the URL
// path the files of `dir` (makeFiles()) are served under.
async function staticFiles (t, port, prefix, totals, dir) {
  for (const [name, size] of Object.entries(FILES)) {
    const p = `${prefix}/${name}`
    await t.test(`GET ${p}`, async t => {
      const message = size > 65536
        ? await compareWhole(t, port, p, WRITTEN, totals)
        : (await compare(t, port, GET(p), WRITTEN, totals)).legacy.messages[0]
      t.equal(message.statusCode, 200)
      t.ok(message.body.equals(fs.readFileSync(path.join(dir, name))), 'the file')
    })
    await t.test(`HEAD ${p}`, async t => {
      const { legacy } = await compare(t, port, HEAD(p), NATIVE, totals)
      t.match(legacy.text, new RegExp(`\\r\\ncontent-length: ${size}\\r\\n`, 'i'))
    })
    await t.test(`GET ${p}, Range: bytes=100-1123`, async t => {
      const { legacy } = await compare(t, port, GET(p, { Range: 'bytes=100-1123' }), WRITTEN, totals)
      t.equal(legacy.messages[0].statusCode, 206)
      t.equal(legacy.messages[0].body.length, 1024)
    })
    await t.test(`GET ${p}, If-None-Match (304)`, async t => {
      const etag = await etagOf(port, p)
      const { legacy } = await compare(t, port, GET(p, { 'If-None-Match': etag }), NATIVE, totals)
      t.equal(legacy.messages[0].statusCode, 304)
    })
  }
  await t.test(`GET ${prefix}/1m.txt, a client that stops reading for ${PAUSE_MS} ms`, async t => {
    const message = await compareWhole(t, port, `${prefix}/1m.txt`, WRITTEN, totals, PAUSE_MS)
    t.ok(message.body.equals(fs.readFileSync(path.join(dir, '1m.txt'))), 'the file')
  })
  await t.test('keep-alive: files, a 304 and a HEAD on one socket', async t => {
    const etag = await etagOf(port, `${prefix}/2k.txt`)
    const { legacy } = await compare(t, port, [
      keep('GET', `${prefix}/64k.txt`), keep('GET', `${prefix}/2k.txt`, { 'If-None-Match': etag }),
      keep('HEAD', `${prefix}/1m.txt`), keep('GET', `${prefix}/64k.txt`), GET(`${prefix}/2k.txt`)
    ], paths(WRITTEN, NATIVE, NATIVE, WRITTEN, WRITTEN), totals)
    t.equal(legacy.messages.length, 5)
  })
}

module.exports = {
  GET,
  HEAD,
  NATIVE,
  NATIVE_SHARE_MIN,
  WRITTEN,
  checkShare,
  compare,
  keep,
  makeFiles,
  paths,
  serve,
  staticFiles,
  warmUp
}
