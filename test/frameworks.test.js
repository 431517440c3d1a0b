'use strict'

// hono (on @hono/node-server), hapi, h3, express.static / res.sendFile and
// @fastify/static on a real loopback server: every request is sent once on
// Node's own path and once with the shim installed, the raw bytes must be
// identical (Date values masked) and each response parses with llhttp
// (test/helpers/framework-capture.js). Each framework's responses on a real
// socket with Node's methods must take the native path at least as often as
// its row of NATIVE_SHARE_MIN says.

const fs = require('node:fs')
const http = require('node:http')
const net = require('node:net')
const os = require('node:os')
const path = require('node:path')
const { Readable } = require('node:stream')

const t = require('tap')

const oneshot = require('../lib/index.js')
const { Totals, close, compare, exchange, listen, maskDate, pathCounts, request } = require('./helpers/framework-capture.js')
const { expectedPath, nodeRendered, renderedPath, shimActive } = require('./helpers/expect-path.js')
const { parseResponse } = require('./helpers/llhttp.js')

// The least share of each framework's responses (on a real socket, with
// Node's methods) the native path must take where the shim is active.
const NATIVE_SHARE_MIN = {
  hono: nodeRendered ? 0.4 : 0.8, // 0.8 on 24.21+ too once a block Node rendered goes out natively there
  hapi: 0.25, // 0.8 once length-framed write() is native
  h3: 0.25, // 0.8 once length-framed write() is native
  'express.static': 0.45, // 0.8 once length-framed write() is native
  '@fastify/static': 0.45 // 0.8 once length-framed write() is native
}

// The path of a response whose framework writes the body with write()
// after the header (Content-Length framing or chunked) and ends with an
// empty end(): Node's, because the header went out with the first write()
// ({ native: 1 } once length-framed write() is native).
const WRITTEN = { 'headers-sent': 1 }
const NATIVE = { native: 1 }
// hono's adapter sets _contentLength and lets Node's writeHead() render the
// block, then calls end(body): Node's path on the 24.21+ protocol
// (renderedPath() in test/helpers/expect-path.js).
const RENDERED = renderedPath(NATIVE, { 'node-rendered': 1 })

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

// Files of 2 KiB, 64 KiB and 1 MiB (fs.createReadStream() reads 64 KiB at
// a time: one write() each for the first two, sixteen for the third), with
// bytes that differ along the file so a reordered chunk shows.
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'http-oneshot-frameworks-'))
t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }))
const FILES = { '2k.txt': 2048, '64k.txt': 65536, '1m.txt': 1048576 }
for (const [name, size] of Object.entries(FILES)) {
  const bytes = Buffer.alloc(size)
  for (let i = 0; i < size; i++) bytes[i] = 0x41 + ((i >> 7) % 26)
  fs.writeFileSync(path.join(dir, name), bytes)
}
fs.mkdirSync(path.join(dir, 'sub'))
fs.writeFileSync(path.join(dir, 'sub', 'index.html'), '<p>index</p>')

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

// GET `p` with Connection: close from a client that reads nothing for
// PAUSE_MS (the server's writes back up: write() returns false, 'drain'
// comes later), then everything up to the server's close.
const PAUSE_MS = 200
function slowGet (port, p) {
  return new Promise((resolve, reject) => {
    const chunks = []
    const socket = net.connect({ port, host: '127.0.0.1' })
    const timer = setTimeout(() => socket.destroy(new Error('no close within 5 s')), 5000)
    socket.on('connect', () => {
      socket.pause()
      socket.write(GET(p).text, 'latin1')
      setTimeout(() => socket.resume(), PAUSE_MS)
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

// slowGet() on Node's path and with the shim installed: the same bytes,
// one complete response, and the patched run's path counts.
async function compareSlow (t, port, p, expected, totals) {
  const legacy = await slowGet(port, p)
  const uninstall = oneshot.install()
  oneshot.resetStats()
  let native
  let stats
  try {
    native = await slowGet(port, p)
    stats = oneshot.stats()
  } finally {
    uninstall()
  }
  totals.add(stats)
  t.ok(maskDate(native.toString('latin1')) === maskDate(legacy.toString('latin1')),
    `patched bytes equal unpatched bytes (${native.length} and ${legacy.length})`)
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

// The ETag a GET of `p` answers with (on Node's own path), for a
// conditional request.
async function etagOf (port, p) {
  const { messages } = await exchange(port, [GET(p)])
  const h = messages[0].headers
  for (let i = 0; i < h.length; i += 2) {
    if (h[i].toLowerCase() === 'etag') return h[i + 1]
  }
  throw new Error(`no ETag on GET ${p}`)
}

t.test('hono on @hono/node-server', async t => {
  const { Hono } = require('hono')
  const { getRequestListener } = require('@hono/node-server')
  const totals = new Totals()
  const app = new Hono()
  app.get('/text', c => c.text('hello world'))
  app.get('/json', c => c.json({ hello: 'world', list: [1, 2, 3] }))
  app.get('/html', c => c.html('<p>hello</p>'))
  app.get('/created', c => c.json({ id: 7 }, 201))
  app.get('/header', c => {
    c.header('X-Custom', 'yes')
    return c.text('with a header')
  })
  app.get('/redirect', c => c.redirect('/text'))
  app.get('/error', () => { throw new Error('boom') })
  app.onError((err, c) => c.text(`failed: ${err.message}`, 500))
  // A stream that has ended by the time the adapter reads it, and one whose
  // second chunk comes a turn later, which the adapter writes as it comes.
  const encode = text => new TextEncoder().encode(text)
  app.get('/stream', () => new Response(new ReadableStream({
    start (controller) {
      controller.enqueue(encode('one '))
      controller.enqueue(encode('two'))
      controller.close()
    }
  }), { headers: { 'Content-Type': 'text/plain' } }))
  app.get('/stream-later', () => new Response(new ReadableStream({
    start (controller) {
      controller.enqueue(encode('one '))
      setTimeout(() => {
        controller.enqueue(encode('two'))
        controller.close()
      }, 5)
    }
  }), { headers: { 'Content-Type': 'text/plain' } }))
  const port = await serve(t, getRequestListener(app.fetch))

  await t.test('c.text', async t => {
    const { legacy } = await compare(t, port, GET('/text'), RENDERED, totals)
    t.equal(legacy.messages[0].body.toString(), 'hello world')
    t.match(legacy.text, /\r\nContent-Length: 11\r\n/i)
  })
  await t.test('c.json', async t => {
    const { legacy } = await compare(t, port, GET('/json'), RENDERED, totals)
    t.equal(legacy.messages[0].body.toString(), '{"hello":"world","list":[1,2,3]}')
  })
  await t.test('c.html', t => compare(t, port, GET('/html'), RENDERED, totals))
  await t.test('c.json with 201', async t => {
    const { legacy } = await compare(t, port, GET('/created'), RENDERED, totals)
    t.equal(legacy.messages[0].statusCode, 201)
  })
  await t.test('c.header + c.text', t => compare(t, port, GET('/header'), NATIVE, totals))
  await t.test('default 404', async t => {
    const { legacy } = await compare(t, port, GET('/nowhere'), RENDERED, totals)
    t.equal(legacy.messages[0].statusCode, 404)
  })
  await t.test('HEAD', async t => {
    const { legacy } = await compare(t, port, HEAD('/text'), NATIVE, totals)
    t.equal(legacy.messages[0].body.length, 0)
  })
  await t.test('c.redirect', async t => {
    const { legacy } = await compare(t, port, GET('/redirect'), NATIVE, totals)
    t.equal(legacy.messages[0].statusCode, 302)
  })
  await t.test('500 from app.onError', async t => {
    const { legacy } = await compare(t, port, GET('/error'), RENDERED, totals)
    t.equal(legacy.messages[0].body.toString(), 'failed: boom')
  })
  await t.test('c.body(ReadableStream), ended when read', async t => {
    const { legacy } = await compare(t, port, GET('/stream'), NATIVE, totals)
    t.equal(legacy.messages[0].body.toString(), 'one two')
  })
  await t.test('c.body(ReadableStream), a chunk a turn later', async t => {
    const { legacy } = await compare(t, port, GET('/stream-later'), NATIVE, totals)
    t.equal(legacy.messages[0].body.toString(), 'one two')
    t.match(legacy.text, /\r\nTransfer-Encoding: chunked\r\n/i)
  })
  await t.test('keep-alive: several requests on one socket', async t => {
    const { legacy } = await compare(t, port, [
      keep('GET', '/json'), keep('GET', '/stream-later'), keep('HEAD', '/text'), keep('GET', '/nowhere'),
      keep('GET', '/stream'), GET('/created')
    ], paths(RENDERED, NATIVE, NATIVE, RENDERED, NATIVE, RENDERED), totals)
    t.equal(legacy.messages.length, 6)
  })
  await t.test('native share', async t => checkShare(t, totals, 'hono'))
})

t.test('hapi', async t => {
  const Hapi = require('@hapi/hapi')
  const totals = new Totals()
  // debug: false, or hapi prints its internal errors to stderr.
  const server = Hapi.server({ port: 0, host: '127.0.0.1', debug: false })
  server.route([
    { method: 'GET', path: '/text', handler: () => 'hello' },
    { method: 'GET', path: '/created', handler: (req, h) => h.response({ id: 7 }).code(201) },
    { method: 'GET', path: '/json', handler: () => ({ hello: 'world', list: [1, 2, 3] }) },
    { method: 'GET', path: '/typed', handler: (req, h) => h.response('<p>hi</p>').type('text/html') },
    { method: 'GET', path: '/redirect', handler: (req, h) => h.redirect('/text') },
    { method: 'GET', path: '/buffer', handler: () => Buffer.from([0, 1, 2, 0x80, 0xff]) },
    { method: 'GET', path: '/error', handler: () => { throw new Error('boom') } },
    { method: 'GET', path: '/empty', handler: (req, h) => h.response().code(204) },
    {
      method: 'GET',
      path: '/stream',
      handler: (req, h) => h.response(Readable.from(['one ', 'two ', 'three'].map(s => Buffer.from(s)), { objectMode: false }))
        .type('text/plain')
    }
  ])
  await server.start()
  t.teardown(() => server.stop({ timeout: 1 }))
  const port = server.info.port

  await t.test("return 'hello'", async t => {
    const { legacy } = await compare(t, port, GET('/text'), WRITTEN, totals)
    t.equal(legacy.messages[0].body.toString(), 'hello')
    t.match(legacy.text, /\r\ncontent-length: 5\r\n/)
  })
  await t.test('h.response().code(201)', async t => {
    const { legacy } = await compare(t, port, GET('/created'), WRITTEN, totals)
    t.equal(legacy.messages[0].statusCode, 201)
  })
  await t.test('JSON', async t => {
    const { legacy } = await compare(t, port, GET('/json'), WRITTEN, totals)
    t.equal(legacy.messages[0].body.toString(), '{"hello":"world","list":[1,2,3]}')
  })
  await t.test('h.response().type()', t => compare(t, port, GET('/typed'), WRITTEN, totals))
  await t.test('h.redirect', async t => {
    const { legacy } = await compare(t, port, GET('/redirect'), NATIVE, totals)
    t.equal(legacy.messages[0].statusCode, 302)
  })
  await t.test('a Buffer', async t => {
    const { legacy } = await compare(t, port, GET('/buffer'), WRITTEN, totals)
    t.strictSame([...legacy.messages[0].body], [0, 1, 2, 0x80, 0xff])
  })
  await t.test('500 from a thrown error', async t => {
    const { legacy } = await compare(t, port, GET('/error'), WRITTEN, totals)
    t.equal(legacy.messages[0].statusCode, 500)
  })
  await t.test('h.response().code(204)', t => compare(t, port, GET('/empty'), NATIVE, totals))
  await t.test('default 404', async t => {
    const { legacy } = await compare(t, port, GET('/nowhere'), WRITTEN, totals)
    t.equal(legacy.messages[0].statusCode, 404)
  })
  await t.test('HEAD', async t => {
    const { legacy } = await compare(t, port, HEAD('/text'), NATIVE, totals)
    t.equal(legacy.messages[0].body.length, 0)
  })
  await t.test('a stream payload', async t => {
    const { legacy } = await compare(t, port, GET('/stream'), WRITTEN, totals)
    t.equal(legacy.messages[0].body.toString(), 'one two three')
  })
  await t.test('keep-alive: several requests on one socket', async t => {
    const { legacy } = await compare(t, port, [
      keep('GET', '/json'), keep('GET', '/stream'), keep('HEAD', '/text'), keep('GET', '/nowhere'),
      GET('/created')
    ], paths(WRITTEN, WRITTEN, NATIVE, WRITTEN, WRITTEN), totals)
    t.equal(legacy.messages.length, 5)
  })
  await t.test('native share', async t => checkShare(t, totals, 'hapi'))
})

t.test('h3', async t => {
  const { H3 } = require('h3')
  const { toNodeHandler } = require('h3/node')
  const totals = new Totals()
  const app = new H3()
  app.get('/', () => 'hello')
  app.get('/json', () => ({ hello: 'world', list: [1, 2, 3] }))
  const port = await serve(t, toNodeHandler(app))

  await t.test("app.get('/', () => 'hello')", async t => {
    const { legacy } = await compare(t, port, GET('/'), WRITTEN, totals)
    t.equal(legacy.messages[0].body.toString(), 'hello')
  })
  await t.test('JSON', async t => {
    const { legacy } = await compare(t, port, GET('/json'), WRITTEN, totals)
    t.equal(legacy.messages[0].body.toString(), '{"hello":"world","list":[1,2,3]}')
  })
  await t.test('default 404', async t => {
    const { legacy } = await compare(t, port, GET('/nowhere'), WRITTEN, totals)
    t.equal(legacy.messages[0].statusCode, 404)
  })
  await t.test('HEAD', t => compare(t, port, HEAD('/'), NATIVE, totals))
  await t.test('keep-alive: several requests on one socket', async t => {
    const { legacy } = await compare(t, port, [
      keep('GET', '/json'), keep('GET', '/nowhere'), keep('HEAD', '/'), GET('/')
    ], paths(WRITTEN, WRITTEN, NATIVE, WRITTEN), totals)
    t.equal(legacy.messages.length, 4)
  })
  await t.test('native share', async t => checkShare(t, totals, 'h3'))
})

// The requests of a static-file server for every file: GET, HEAD, a Range
// request and an If-None-Match request answered 304; `prefix` is the URL
// path the files are served under.
async function staticFiles (t, port, prefix, totals, expectBody = true) {
  for (const [name, size] of Object.entries(FILES)) {
    const p = `${prefix}/${name}`
    await t.test(`GET ${p}`, async t => {
      const { legacy } = await compare(t, port, GET(p), WRITTEN, totals)
      t.equal(legacy.messages[0].statusCode, 200)
      t.equal(legacy.messages[0].body.length, size)
      if (expectBody) t.ok(legacy.messages[0].body.equals(fs.readFileSync(path.join(dir, name))), 'the file')
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
    const message = await compareSlow(t, port, `${prefix}/1m.txt`, WRITTEN, totals)
    t.ok(message.body.equals(fs.readFileSync(path.join(dir, '1m.txt'))), 'the file')
  })
  await t.test('keep-alive: files, a 304 and a HEAD on one socket', async t => {
    const etag = await etagOf(port, `${prefix}/2k.txt`)
    const { legacy } = await compare(t, port, [
      keep('GET', `${prefix}/64k.txt`), keep('GET', `${prefix}/2k.txt`, { 'If-None-Match': etag }),
      keep('HEAD', `${prefix}/1m.txt`), keep('GET', `${prefix}/1m.txt`), GET(`${prefix}/2k.txt`)
    ], paths(WRITTEN, NATIVE, NATIVE, WRITTEN, WRITTEN), totals)
    t.equal(legacy.messages.length, 5)
  })
}

t.test('express.static and res.sendFile', async t => {
  const express = require('express')
  const totals = new Totals()
  const app = express()
  app.set('env', 'test')
  app.use('/static', express.static(dir))
  app.get('/send/:name', (req, res, next) => res.sendFile(req.params.name, { root: dir }, err => {
    if (err) next(err)
  }))
  const port = await serve(t, app)

  await t.test('express.static', t => staticFiles(t, port, '/static', totals))
  await t.test('res.sendFile', t => staticFiles(t, port, '/send', totals))
  await t.test('a missing file (404)', async t => {
    const { legacy } = await compare(t, port, GET('/static/none.txt'), NATIVE, totals)
    t.equal(legacy.messages[0].statusCode, 404)
  })
  await t.test('a directory without its slash (301)', async t => {
    const { legacy } = await compare(t, port, GET('/static/sub'), NATIVE, totals)
    t.equal(legacy.messages[0].statusCode, 301)
  })
  await t.test('a Range past the end (416)', async t => {
    const { legacy } = await compare(t, port, GET('/static/2k.txt', { Range: 'bytes=5000-6000' }), NATIVE, totals)
    t.equal(legacy.messages[0].statusCode, 416)
  })
  await t.test('native share', async t => checkShare(t, totals, 'express.static'))
})

t.test('@fastify/static', async t => {
  const fastify = require('fastify')({ logger: false })
  fastify.register(require('@fastify/static'), { root: dir, prefix: '/static/' })
  // reply.download() sets Content-Disposition with content-disposition 3,
  // an ES module (loaded with require() on Node 20.19+).
  fastify.get('/download', (req, reply) => reply.download('2k.txt'))
  await fastify.listen({ port: 0, host: '127.0.0.1' })
  t.teardown(() => fastify.close())
  const port = fastify.server.address().port
  const totals = new Totals()

  await t.test('files', t => staticFiles(t, port, '/static', totals))
  await t.test('a missing file (404)', async t => {
    const { legacy } = await compare(t, port, GET('/static/none.txt'), NATIVE, totals)
    t.equal(legacy.messages[0].statusCode, 404)
  })
  await t.test('reply.download()', async t => {
    const { legacy } = await compare(t, port, GET('/download'), WRITTEN, totals)
    t.match(legacy.text, /\r\ncontent-disposition: attachment; filename="?2k.txt"?\r\n/i)
    t.equal(legacy.messages[0].body.length, 2048)
  })
  await t.test('a Range past the end (416)', async t => {
    const { legacy } = await compare(t, port, GET('/static/2k.txt', { Range: 'bytes=5000-6000' }), NATIVE, totals)
    t.equal(legacy.messages[0].statusCode, 416)
  })
  await t.test('native share', async t => checkShare(t, totals, '@fastify/static'))
})
