'use strict'

// Fastify 5 on a real loopback server: every route is requested once on
// Node's own path and once with the shim installed, and the raw bytes must be
// identical. Fastify renders its headers with writeHead() and then calls
// end(payload, null, null), the writeHead-first path. fastify.inject() runs
// on a fake socket (light-my-request) and must always take Node's own path.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { Readable } = require('node:stream')

const t = require('tap')
const Fastify = require('fastify')

const oneshot = require('../lib/index.js')
const { expectedStats, pathStats } = require('./helpers/expect-path.js')
const { Totals, compare, pathCounts, request } = require('./helpers/framework-capture.js')

const totals = new Totals()
const GET = (p, headers) => request('GET', p, headers)

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'http-oneshot-fastify-'))
const file = path.join(dir, 'data.txt')
fs.writeFileSync(file, 'line of text\n'.repeat(400))
t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }))

function makeApp () {
  const app = Fastify()
  app.get('/json', async () => ({ hello: 'world', list: [1, 2, 3] }))
  app.get('/created', (req, reply) => { reply.code(201).send({ id: 7 }) })
  app.get('/text', (req, reply) => { reply.send('hello world') })
  app.get('/utf8', (req, reply) => { reply.send('café ☕') })
  app.get('/buffer', (req, reply) => { reply.send(Buffer.from([0, 1, 2, 0x80, 0xff])) })
  app.get('/nothing', (req, reply) => { reply.send() })
  app.get('/empty', (req, reply) => { reply.code(204).send() })
  app.get('/cookies', (req, reply) => {
    reply.header('set-cookie', ['a=1; Path=/', 'b=2; HttpOnly']).send('cookies')
  })
  app.get('/redirect', (req, reply) => { reply.redirect('/text') })
  app.get('/file', (req, reply) => { reply.type('text/plain').send(fs.createReadStream(file)) })
  app.get('/readable', (req, reply) => {
    reply.type('text/plain').send(Readable.from(['one ', 'two ', 'three']))
  })
  app.get('/trailer', (req, reply) => {
    reply.trailer('x-sum', (reply, payload, done) => done(null, 'abc')).send('with trailer')
  })
  app.get('/error', async () => { throw new Error('boom') })
  app.get('/teapot', async () => {
    const err = new Error('short and stout')
    err.statusCode = 418
    throw err
  })
  return app
}

t.test('fastify on a loopback server', async t => {
  const app = makeApp()
  await app.listen({ port: 0, host: '127.0.0.1' })
  t.teardown(() => app.close())
  const port = app.server.address().port
  const native1 = { native: 1 }

  t.test('reply.send(object)', async t => {
    const { legacy } = await compare(t, port, GET('/json'), native1, totals)
    t.equal(legacy.messages[0].body.toString(), '{"hello":"world","list":[1,2,3]}')
    t.match(legacy.text, /\r\ncontent-type: application\/json; charset=utf-8\r\n/)
  })
  t.test('reply.code(201).send(object)', t => compare(t, port, GET('/created'), native1, totals))
  t.test('reply.send(string)', t => compare(t, port, GET('/text'), native1, totals))
  // A UTF-8 string whose character count differs from its byte count: the
  // socket's write accounting must end as on Node's path
  // (docs/architecture.md, "What a direct write must leave").
  t.test('reply.send(non-ASCII string)', async t => {
    const { legacy } = await compare(t, port, GET('/utf8'), { native: 1 }, totals)
    t.equal(legacy.messages[0].body.toString(), 'café ☕')
  })
  t.test('reply.send(Buffer)', async t => {
    const { legacy } = await compare(t, port, GET('/buffer'), native1, totals)
    t.strictSame([...legacy.messages[0].body], [0, 1, 2, 0x80, 0xff])
  })
  t.test('reply.send() without a payload', t => compare(t, port, GET('/nothing'), native1, totals))
  t.test('reply.code(204).send()', t =>
    compare(t, port, GET('/empty'), native1, totals))
  t.test('set-cookie array', async t => {
    const { legacy } = await compare(t, port, GET('/cookies'), native1, totals)
    t.match(legacy.text, /\r\nset-cookie: a=1; Path=\/\r\nset-cookie: b=2; HttpOnly\r\n/)
  })
  t.test('default 404', async t => {
    const { legacy } = await compare(t, port, GET('/nowhere'), native1, totals)
    t.equal(legacy.messages[0].statusCode, 404)
  })
  t.test('HEAD of a GET route', async t => {
    const { legacy } = await compare(t, port, request('HEAD', '/text'), native1, totals)
    t.match(legacy.text, /\r\ncontent-length: 11\r\n/)
  })
  t.test('HEAD 404', t => compare(t, port, request('HEAD', '/nowhere'), native1, totals))
  t.test('reply.redirect', async t => {
    const { legacy } = await compare(t, port, GET('/redirect'), native1, totals)
    t.equal(legacy.messages[0].statusCode, 302)
  })
  t.test('reply.send(fs.createReadStream())', async t => {
    const { legacy } = await compare(t, port, GET('/file'), { 'headers-sent': 1 }, totals)
    t.equal(legacy.messages[0].body.length, 13 * 400)
  })
  t.test('reply.send(Readable.from())', t =>
    compare(t, port, GET('/readable'), { 'headers-sent': 1 }, totals))
  t.test('reply.trailer()', async t => {
    const { legacy } = await compare(t, port, GET('/trailer'), { 'headers-sent': 1 }, totals)
    t.match(legacy.text, /\r\n0\r\nx-sum: abc\r\n\r\n$/)
  })
  t.test('500 from a thrown error', async t => {
    const { legacy } = await compare(t, port, GET('/error'), native1, totals)
    t.equal(legacy.messages[0].statusCode, 500)
    t.match(legacy.messages[0].body.toString(), /"message":"boom"/)
  })
  t.test('418 from an error with statusCode', t =>
    compare(t, port, GET('/teapot'), native1, totals))
  t.test('keep-alive: several requests on one socket', async t => {
    const keep = p => request('GET', p, {}, false)
    const { legacy } = await compare(t, port, [
      keep('/json'), keep('/text'), request('HEAD', '/json', {}, false), keep('/nowhere'),
      keep('/readable'), keep('/redirect'), keep('/buffer'), keep('/error'), GET('/cookies')
    ], { native: 8, 'headers-sent': 1 }, totals)
    t.equal(legacy.messages.length, 9)
    t.ok(legacy.closed, 'the last request closed the connection')
  })
})

// Payloads and reply helpers beyond the common ones: Uint8Array payloads,
// reply.headers(), reply.hijack() with the raw response, 304 with a payload
// Node drops, custom serializers, onSend hooks, async handlers.
t.test('fastify: Uint8Array payloads, hijack, hooks and serializers', async t => {
  const native1 = { native: 1 }
  const app = Fastify()
  app.get('/u8', (req, reply) => { reply.send(new TextEncoder().encode('u8 body')) })
  app.get('/u8-typed', (req, reply) => {
    reply.type('application/octet-stream').send(new Uint8Array([1, 2, 3]))
  })
  app.get('/null', (req, reply) => { reply.send(null) })
  app.get('/headers', (req, reply) => {
    reply.headers({ 'x-a': '1', 'x-b': 2 }).header('x-c', ['3', '4']).send('h')
  })
  app.get('/raw', (req, reply) => {
    reply.hijack()
    reply.raw.writeHead(200, { 'content-type': 'text/plain', 'content-length': 3 })
    reply.raw.end('raw')
  })
  app.get('/raw-write', (req, reply) => {
    reply.hijack()
    reply.raw.write('a')
    reply.raw.end('b')
  })
  app.get('/304', (req, reply) => { reply.code(304).send() })
  app.get('/304-body', (req, reply) => { reply.code(304).send('ignored') })
  app.get('/error-object', (req, reply) => { reply.send(new Error('sent error')) })
  app.get('/big', (req, reply) => { reply.send('f'.repeat(30000)) })
  app.get('/status-299', (req, reply) => { reply.code(299).send('odd') })
  app.get('/serializer', (req, reply) => {
    reply.serializer(payload => 'custom:' + JSON.stringify(payload)).send({ a: 1 })
  })
  app.get('/async-string', async () => 'plain')
  app.get('/async-buffer', async () => Buffer.from('buf'))
  app.get('/async-null', async (req, reply) => {
    reply.code(204)
    return null
  })
  app.register(async scoped => {
    scoped.addHook('onRequest', async (req, reply) => { reply.header('x-hook', 'yes') })
    scoped.addHook('onSend', async (req, reply, payload) =>
      typeof payload === 'string' ? payload.toUpperCase() : payload)
    scoped.get('/hooked', async () => 'lower')
  })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const port = app.server.address().port
  t.teardown(() => app.close())
  const paths = [
    '/u8', '/u8-typed', '/null', '/headers', '/raw', '/raw-write', '/304', '/304-body', '/error-object',
    '/big', '/status-299', '/serializer', '/async-string', '/async-buffer', '/async-null', '/hooked'
  ]
  for (const p of paths) {
    await t.test(`GET ${p}`, t => compare(t, port, GET(p), native1, totals))
    await t.test(`HEAD ${p}`, t => compare(t, port, request('HEAD', p), native1, totals))
  }
  await t.test('keep-alive mix', t => compare(t, port, paths.map(p => request('GET', p, {}, false))
    .concat([GET('/u8')]), { native: 17 }, totals))
})

function injected (res) {
  const headers = { ...res.headers }
  delete headers.date
  return { statusCode: res.statusCode, statusMessage: res.statusMessage, headers, body: res.rawPayload.toString('latin1') }
}

t.test('fastify.inject()', async t => {
  const app = makeApp()
  await app.ready()
  t.teardown(() => app.close())

  // light-my-request's end() writes a payload through write() before it
  // calls ServerResponse#end, so responses with a body report the header as
  // sent; those without one reach the socket check: the socket is a plain
  // Writable, not a net.Socket.
  const SENT = 'headers-sent'
  const cases = [
    ['/json', 'GET', SENT], ['/text', 'GET', SENT], ['/utf8', 'GET', SENT],
    ['/buffer', 'GET', SENT], ['/nothing', 'GET', 'no-socket'], ['/empty', 'GET', 'no-socket'],
    ['/cookies', 'GET', SENT], ['/nowhere', 'GET', SENT], ['/text', 'HEAD', 'no-socket'],
    ['/redirect', 'GET', 'no-socket'], ['/file', 'GET', SENT], ['/readable', 'GET', SENT],
    ['/error', 'GET', SENT]
  ]
  for (const [url, method, reason] of cases) {
    t.test(`${method} ${url}`, async t => {
      oneshot.resetStats()
      const legacy = injected(await app.inject({ method, url }))
      const uninstall = oneshot.install()
      oneshot.resetStats()
      let res
      try {
        res = injected(await app.inject({ method, url }))
      } finally {
        uninstall()
      }
      const stats = oneshot.stats()
      totals.add(stats, { realSocket: false })
      t.strictSame(res, legacy, 'the injected response is the same')
      t.equal(stats.native, 0, 'never native on a fake socket')
      t.strictSame(pathStats(stats), expectedStats({ native: 0, fallback: 1, reasons: { [reason]: 1 } }),
        'one end() call counted, reason: ' + reason)
      t.comment(`${method} ${url}: ${JSON.stringify(pathCounts(stats))}`)
    })
  }
})

t.test('totals', async t => {
  t.comment(totals.format('fastify'))
  totals.check(t, 'fastify')
})
