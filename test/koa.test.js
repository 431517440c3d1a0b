'use strict'

// Koa 3 on a real loopback server: every route is requested once on Node's
// own path and once with the shim installed, and the raw bytes must be
// identical. Koa uses the progressive API with a numeric Content-Length, and
// for JSON removes and re-sets it.

const fs = require('node:fs')
const http = require('node:http')
const os = require('node:os')
const path = require('node:path')
const { Readable } = require('node:stream')

const t = require('tap')
const Koa = require('koa')

const { Totals, close, compare, listen, request } = require('./helpers/framework-capture.js')
const { renderedPath } = require('./helpers/expect-path.js')

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

// A koa app answering `routes` (path -> middleware) on a loopback
// server closed when `t` ends; resolves to its port.
async function serveRoutes (t, routes) {
  const app = new Koa()
  // Koa prints unexposed errors to stderr unless silent.
  app.silent = true
  app.use(async ctx => {
    const route = routes[ctx.path]
    if (route) await route(ctx)
  })
  const server = http.createServer(app.callback())
  const port = await listen(server)
  t.teardown(() => close(server))
  return port
}

t.test('koa on a loopback server', async t => {
  const port = await serveRoutes(t, ROUTES)
  const native1 = { native: 1 }

  t.test('ctx.body = object', async t => {
    const { legacy } = await compare(t, port, GET('/json'), native1, totals)
    t.equal(legacy.messages[0].body.toString(), '{"hello":"world","list":[1,2,3]}')
    t.match(legacy.text, /\r\nContent-Length: 32\r\n/)
  })
  t.test('ctx.status = 201 with a body', t => compare(t, port, GET('/created'), native1, totals))
  t.test('ctx.body = string', t => compare(t, port, GET('/text'), native1, totals))
  t.test('ctx.body = HTML string', t => compare(t, port, GET('/html'), native1, totals))
  // A UTF-8 string whose character count differs from its byte count: the
  // socket's write accounting must end as on Node's path
  // (docs/architecture.md, "What a direct write must leave").
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

// Bodies and helpers beyond the common ones: Uint8Array bodies (from
// TextEncoder, as web-standard code makes them), ctx.etag with a fresh
// request, attachments, header arrays, ctx.respond = false, bodies Node
// drops, and statuses without a body.
const MORE_ROUTES = {
  '/u8': ctx => { ctx.body = new TextEncoder().encode('text encoder body') },
  '/u8-json': ctx => {
    ctx.type = 'json'
    ctx.body = new TextEncoder().encode('{"a":1}')
  },
  '/attachment': ctx => {
    ctx.attachment('r é.txt')
    ctx.body = 'x'
  },
  '/set-array': ctx => {
    ctx.set('X-Arr', ['1', '2'])
    ctx.set({ 'X-O': 'o' })
    ctx.body = 'y'
  },
  '/etag': ctx => {
    ctx.etag = 'abc'
    ctx.status = 200
    if (ctx.fresh) {
      ctx.status = 304
      return
    }
    ctx.body = 'fresh body'
  },
  '/status-only': ctx => { ctx.status = 200 },
  '/status-418': ctx => { ctx.status = 418 },
  '/remove-type': ctx => {
    ctx.body = 'z'
    ctx.remove('Content-Type')
  },
  '/length': ctx => {
    ctx.body = 'abc'
    ctx.length = 3
  },
  '/vary': ctx => {
    ctx.vary('Accept')
    ctx.body = { v: 1 }
  },
  '/respond-false': ctx => {
    ctx.respond = false
    ctx.res.writeHead(200, { 'content-length': 2 })
    ctx.res.end('rf')
  },
  '/respond-false-set': ctx => {
    ctx.respond = false
    ctx.res.setHeader('x', 'y')
    ctx.res.end('rf2')
  },
  '/big': ctx => { ctx.body = 'k'.repeat(20000) },
  '/big-buffer': ctx => { ctx.body = Buffer.alloc(20000, 107) },
  '/stream-u8': ctx => {
    ctx.type = 'text'
    ctx.body = Readable.from([new TextEncoder().encode('a'), new TextEncoder().encode('b')])
  },
  '/redirect-back': ctx => { ctx.redirect('back', '/alt') },
  '/throw-headers': ctx => { ctx.throw(401, 'no', { headers: { 'WWW-Authenticate': 'Basic' } }) },
  '/304-body': ctx => {
    ctx.status = 304
    ctx.body = 'ignored'
  },
  '/205': ctx => {
    ctx.status = 205
    ctx.body = 'x'
  },
  '/empty-string': ctx => { ctx.body = '' }
}

t.test('koa: Uint8Array bodies, etags, attachments, ctx.respond = false', async t => {
  const port = await serveRoutes(t, MORE_ROUTES)
  // Node's own path for GET: a Content-Disposition value Node renders
  // itself (on the end() protocol of 24.21+ that is decided before the
  // core sees the block), a 205 with a body (chunked), and a stream
  // (write() first).
  const getPath = {
    '/attachment': renderedPath({ invalid: 1 }, { 'node-rendered': 1 }),
    '/205': { chunked: 1 },
    '/stream-u8': { 'headers-sent': 1 }
  }
  for (const p of Object.keys(MORE_ROUTES)) {
    await t.test(`GET ${p}`, t => compare(t, port, GET(p), getPath[p] || { native: 1 }, totals))
    await t.test(`HEAD ${p}`, t => compare(t, port, request('HEAD', p), { native: 1 }, totals))
  }
  await t.test('GET /etag with If-None-Match (304)', t =>
    compare(t, port, GET('/etag', { 'If-None-Match': '"abc"' }), { native: 1 }, totals))
  await t.test('keep-alive mix', t => compare(t, port, [
    '/u8', '/etag', '/respond-false', '/304-body', '/stream-u8', '/big-buffer', '/status-418'
  ].map(p => request('GET', p, {}, false)).concat([GET('/u8-json')]), { native: 7, 'headers-sent': 1 }, totals))
})

t.test('totals', async t => {
  t.comment(totals.format('koa'))
  totals.check(t, 'koa')
})
