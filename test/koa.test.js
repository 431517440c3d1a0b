'use strict'

// Koa 3 on a real loopback server: every route is requested once on Node's
// own path and once with the shim installed, and the raw bytes must be
// identical. Koa uses the progressive API with a numeric Content-Length, and
// for JSON removes and re-sets it (docs/node-outgoing-path.md §8.3).

const fs = require('node:fs')
const http = require('node:http')
const os = require('node:os')
const path = require('node:path')
const { Readable } = require('node:stream')

const t = require('tap')
const Koa = require('koa')

const { Totals, close, compare, listen, request } = require('./helpers/framework-capture.js')

const totals = new Totals()
const GET = (p, headers) => request('GET', p, headers)

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'http-oneshot-koa-'))
const file = path.join(dir, 'data.txt')
fs.writeFileSync(file, 'line of text\n'.repeat(400))
t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }))

const ROUTES = {
  '/json': ctx => { ctx.body = { hello: 'world', list: [1, 2, 3] } },
  '/created': ctx => {
    ctx.status = 201
    ctx.body = { id: 7 }
  },
  '/text': ctx => { ctx.body = 'hello world' },
  '/html': ctx => { ctx.body = '<p>hello</p>' },
  '/utf8': ctx => { ctx.body = 'café ☕' },
  '/buffer': ctx => { ctx.body = Buffer.from([0, 1, 2, 0x80, 0xff]) },
  '/empty': ctx => { ctx.status = 204 },
  '/null': ctx => { ctx.body = null },
  '/cookies': ctx => {
    ctx.cookies.set('a', '1')
    ctx.cookies.set('b', '2', { httpOnly: false })
    ctx.body = 'cookies'
  },
  '/redirect': ctx => { ctx.redirect('/text') },
  '/file': ctx => {
    ctx.type = 'text/plain'
    ctx.body = fs.createReadStream(file)
  },
  '/readable': ctx => {
    ctx.type = 'text/plain'
    ctx.body = Readable.from(['one ', 'two ', 'three'])
  },
  '/error': () => { throw new Error('boom') },
  '/teapot': ctx => ctx.throw(418, 'short and stout')
}

t.test('koa on a loopback server', async t => {
  const app = new Koa()
  // Koa prints unexposed errors to stderr unless silent.
  app.silent = true
  app.use(async ctx => {
    const route = ROUTES[ctx.path]
    if (route) await route(ctx)
  })
  const server = http.createServer(app.callback())
  const port = await listen(server)
  t.teardown(() => close(server))
  const native1 = { native: 1 }

  t.test('ctx.body = object', async t => {
    const { legacy } = await compare(t, port, GET('/json'), native1, totals)
    t.equal(legacy.messages[0].body.toString(), '{"hello":"world","list":[1,2,3]}')
    t.match(legacy.text, /\r\nContent-Length: 32\r\n/)
  })
  t.test('ctx.status = 201 with a body', t => compare(t, port, GET('/created'), native1, totals))
  t.test('ctx.body = string', t => compare(t, port, GET('/text'), native1, totals))
  t.test('ctx.body = HTML string', t => compare(t, port, GET('/html'), native1, totals))
  // A UTF-8 string whose character count differs from its byte count would
  // change the socket's write accounting (§6.1 item 9): Node's path.
  t.test('ctx.body = non-ASCII string', async t => {
    const { legacy } = await compare(t, port, GET('/utf8'), { native: 1 }, totals)
    t.equal(legacy.messages[0].body.toString(), 'café ☕')
  })
  t.test('ctx.body = Buffer', async t => {
    const { legacy } = await compare(t, port, GET('/buffer'), native1, totals)
    t.strictSame([...legacy.messages[0].body], [0, 1, 2, 0x80, 0xff])
  })
  t.test('ctx.status = 204', t => compare(t, port, GET('/empty'), native1, totals))
  t.test('ctx.body = null', t => compare(t, port, GET('/null'), native1, totals))
  t.test('cookies', async t => {
    const { legacy } = await compare(t, port, GET('/cookies'), native1, totals)
    t.match(legacy.text, /\r\nSet-Cookie: a=1; path=\/; httponly\r\nSet-Cookie: b=2; path=\/\r\n/)
  })
  t.test('default 404', async t => {
    const { legacy } = await compare(t, port, GET('/nowhere'), native1, totals)
    t.equal(legacy.messages[0].statusCode, 404)
    t.equal(legacy.messages[0].body.toString(), 'Not Found')
  })
  t.test('HEAD', async t => {
    const { legacy } = await compare(t, port, request('HEAD', '/text'), native1, totals)
    t.match(legacy.text, /\r\nContent-Length: 11\r\n/)
  })
  t.test('HEAD 404', t => compare(t, port, request('HEAD', '/nowhere'), native1, totals))
  t.test('ctx.redirect', async t => {
    const { legacy } = await compare(t, port, GET('/redirect'), native1, totals)
    t.equal(legacy.messages[0].statusCode, 302)
  })
  t.test('ctx.body = fs.createReadStream()', async t => {
    const { legacy } = await compare(t, port, GET('/file'), { 'headers-sent': 1 }, totals)
    t.equal(legacy.messages[0].body.length, 13 * 400)
  })
  t.test('ctx.body = Readable.from()', t =>
    compare(t, port, GET('/readable'), { 'headers-sent': 1 }, totals))
  t.test('500 from a thrown error', async t => {
    const { legacy } = await compare(t, port, GET('/error'), native1, totals)
    t.equal(legacy.messages[0].statusCode, 500)
    t.equal(legacy.messages[0].body.toString(), 'Internal Server Error')
  })
  t.test('ctx.throw(418)', t => compare(t, port, GET('/teapot'), native1, totals))
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

t.test('totals', async t => {
  t.comment(totals.format('koa'))
  totals.check(t, 'koa')
})
