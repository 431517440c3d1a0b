'use strict'

// Express 5 apps on a real loopback server: every route is requested once on
// Node's own path and once with the shim installed, and the raw bytes must be
// identical. The shim's counters show which responses took the native path.

const fs = require('node:fs')
const http = require('node:http')
const os = require('node:os')
const path = require('node:path')
const { Readable } = require('node:stream')

const t = require('tap')
const express = require('express')
const compression = require('compression')
const onHeaders = require('on-headers')

const { Totals, close, compare, listen, request } = require('./helpers/framework-capture.js')

const totals = new Totals()
const GET = (p, headers) => request('GET', p, headers)

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'http-oneshot-express-'))
const file = path.join(dir, 'data.txt')
fs.writeFileSync(file, 'line of text\n'.repeat(400))
t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }))

function routes (app) {
  app.get('/json', (req, res) => res.json({ hello: 'world', list: [1, 2, 3] }))
  app.get('/created', (req, res) => res.status(201).json({ id: 7 }))
  app.get('/text', (req, res) => res.send('hello world'))
  app.get('/plain', (req, res) => res.type('text').send('plain text'))
  app.get('/utf8', (req, res) => res.send('café ☕'))
  app.get('/long', (req, res) => res.send('x'.repeat(1500)))
  app.get('/buffer', (req, res) => res.send(Buffer.from([0, 1, 2, 0x80, 0xff])))
  app.get('/empty', (req, res) => res.sendStatus(204))
  app.get('/redirect', (req, res) => res.redirect('/text'))
  app.get('/moved', (req, res) => res.redirect(301, '/json'))
  app.get('/file', (req, res) => fs.createReadStream(file).pipe(res))
  app.get('/readable', (req, res) => {
    res.type('text')
    Readable.from(['one ', 'two ', 'three']).pipe(res)
  })
  app.get('/error', () => { throw new Error('boom') })
  app.get('/async-error', async () => { throw new Error('async boom') })
  return app
}

function makeApp (configure) {
  const app = express()
  // finalhandler prints errors unless the env is 'test'; the page then
  // carries the stack, which is the same on both runs.
  app.set('env', 'test')
  if (configure) configure(app)
  return routes(app)
}

async function serve (t, app) {
  const server = http.createServer(app)
  const port = await listen(server)
  t.teardown(() => close(server))
  return port
}

t.test('default settings (weak ETag)', async t => {
  const port = await serve(t, makeApp())
  const native1 = { native: 1 }

  t.test('res.json', async t => {
    const { legacy } = await compare(t, port, GET('/json'), native1, totals)
    t.equal(legacy.messages[0].statusCode, 200)
    t.equal(legacy.messages[0].body.toString(), '{"hello":"world","list":[1,2,3]}')
    t.match(legacy.text, /\r\nETag: W\/"/)
  })
  t.test('res.status(201).json', t => compare(t, port, GET('/created'), native1, totals))
  t.test('res.send(string) goes out as a Buffer body', t =>
    compare(t, port, GET('/text'), native1, totals))
  t.test('res.type().send()', t => compare(t, port, GET('/plain'), native1, totals))
  t.test('res.send(non-ASCII string)', async t => {
    const { legacy } = await compare(t, port, GET('/utf8'), native1, totals)
    t.equal(legacy.messages[0].body.toString('utf8'), 'café ☕')
  })
  t.test('res.send(string of 1500 chars)', t => compare(t, port, GET('/long'), native1, totals))
  t.test('res.send(Buffer)', async t => {
    const { legacy } = await compare(t, port, GET('/buffer'), native1, totals)
    t.strictSame([...legacy.messages[0].body], [0, 1, 2, 0x80, 0xff])
  })
  t.test('res.sendStatus(204)', t =>
    compare(t, port, GET('/empty'), native1, totals))
  t.test('404 from finalhandler', async t => {
    const { legacy } = await compare(t, port, GET('/nowhere'), native1, totals)
    t.equal(legacy.messages[0].statusCode, 404)
    t.match(legacy.text, /Content-Security-Policy: default-src 'none'/)
  })
  t.test('HEAD of a GET route', async t => {
    const { legacy } = await compare(t, port, request('HEAD', '/text'), native1, totals)
    t.match(legacy.text, /\r\nContent-Length: 11\r\n/)
  })
  t.test('HEAD 404', t => compare(t, port, request('HEAD', '/nowhere'), native1, totals))
  t.test('res.redirect', async t => {
    const { legacy } = await compare(t, port, GET('/redirect'), native1, totals)
    t.equal(legacy.messages[0].statusCode, 302)
  })
  t.test('res.redirect(301) with Accept: text/html', t =>
    compare(t, port, GET('/moved', { Accept: 'text/html' }), native1, totals))
  t.test('fs.createReadStream().pipe(res)', async t => {
    const { legacy } = await compare(t, port, GET('/file'), { 'headers-sent': 1 }, totals)
    t.equal(legacy.messages[0].body.length, 13 * 400)
  })
  t.test('Readable.from().pipe(res)', t =>
    compare(t, port, GET('/readable'), { 'headers-sent': 1 }, totals))
  t.test('500 from a thrown error', async t => {
    const { legacy } = await compare(t, port, GET('/error'), native1, totals)
    t.equal(legacy.messages[0].statusCode, 500)
    t.match(legacy.messages[0].body.toString(), /Error: boom/)
  })
  t.test('500 from a rejected async handler', t =>
    compare(t, port, GET('/async-error'), native1, totals))
  t.test('keep-alive: several requests on one socket', async t => {
    const keep = p => request('GET', p, {}, false)
    const { legacy } = await compare(t, port, [
      keep('/json'), keep('/text'), request('HEAD', '/json', {}, false), keep('/nowhere'),
      keep('/readable'), keep('/redirect'), keep('/buffer'), GET('/error')
    ], { native: 7, 'headers-sent': 1 }, totals)
    t.equal(legacy.messages.length, 8)
    t.ok(legacy.closed, 'the last request closed the connection')
  })
})

t.test("app.set('etag', false)", async t => {
  const port = await serve(t, makeApp(app => app.set('etag', false)))

  t.test('res.send(short string) merges header and body', async t => {
    const { legacy } = await compare(t, port, GET('/text'), { native: 1 }, totals)
    t.notMatch(legacy.text, /ETag/)
  })
  t.test('res.json', t => compare(t, port, GET('/json'), { native: 1 }, totals))
  // A UTF-8 string body whose character count differs from its byte count:
  // the socket's write accounting must end as on Node's path
  // (docs/architecture.md, "What a direct write must leave").
  t.test('res.send(non-ASCII short string)', t =>
    compare(t, port, GET('/utf8'), { native: 1 }, totals))
  t.test('res.send(long string) becomes a Buffer', t =>
    compare(t, port, GET('/long'), { native: 1 }, totals))
  t.test('404', t => compare(t, port, GET('/nowhere'), { native: 1 }, totals))
})

t.test('compression middleware', async t => {
  const port = await serve(t, makeApp(app => {
    app.use(compression({ threshold: 1024 }))
    app.get('/big', (req, res) => res.send('compressible text '.repeat(200)))
    app.get('/small', (req, res) => res.send('small'))
  }))
  const gzip = { 'Accept-Encoding': 'gzip' }

  // Above the threshold the body is written through zlib, so the header was
  // sent by write() long before end().
  t.test('body above the threshold is gzipped', async t => {
    const { legacy } = await compare(t, port, GET('/big', gzip), { 'headers-sent': 1 }, totals)
    t.match(legacy.text, /\r\nContent-Encoding: gzip\r\n/)
    t.match(legacy.text, /\r\nTransfer-Encoding: chunked\r\n/)
  })
  // Below it, on-headers has replaced res.writeHead on the instance, and
  // compression's end() renders the header (_implicitHeader()) before it
  // calls the shim's: the header is set, so the wrapper no longer matters.
  t.test('body below the threshold', async t => {
    const { legacy } = await compare(t, port, GET('/small', gzip), { native: 1 }, totals)
    t.notMatch(legacy.text, /Content-Encoding/)
    t.match(legacy.text, /\r\nVary: Accept-Encoding\r\n/)
  })
  t.test('no Accept-Encoding', t => compare(t, port, GET('/big'), { native: 1 }, totals))
  t.test('keep-alive mix', t => compare(t, port, [
    request('GET', '/big', gzip, false), request('GET', '/small', gzip, false), GET('/json', gzip)
  ], { 'headers-sent': 1, native: 2 }, totals))
})

// morgan, response-time and express-session hook the header with
// on-headers, which replaces res.writeHead on every response: end() renders
// the header through it, as Node's end() starts, then sends natively.
t.test('on-headers middleware (morgan, response-time, express-session)', async t => {
  const port = await serve(t, makeApp(app => {
    app.use((req, res, next) => {
      onHeaders(res, function () { this.setHeader('X-Response-Time', '0.1ms') })
      next()
    })
    app.use((req, res, next) => {
      onHeaders(res, function () {
        if (this.statusCode === 200) this.setHeader('Set-Cookie', 'sid=abc; Path=/; HttpOnly')
      })
      next()
    })
  }))
  t.test('res.json', t => compare(t, port, GET('/json'), { native: 1 }, totals))
  t.test('res.send(non-ASCII string)', t => compare(t, port, GET('/utf8'), { native: 1 }, totals))
  t.test('sendStatus(204)', t => compare(t, port, GET('/empty'), { native: 1 }, totals))
  t.test('redirect', t => compare(t, port, GET('/redirect'), { native: 1 }, totals))
  t.test('404', t => compare(t, port, GET('/nowhere'), { native: 1 }, totals))
  t.test('a conditional GET answered 304', async t => {
    const first = await compare(t, port, GET('/text'), { native: 1 }, totals)
    const etag = /\r\nETag: ([^\r]+)\r\n/.exec(first.legacy.text)[1]
    await compare(t, port, GET('/text', { 'If-None-Match': etag }), { native: 1 }, totals)
  })
  t.test('keep-alive mix', t => compare(t, port, [
    request('GET', '/json', {}, false), request('GET', '/text', {}, false), GET('/created')
  ], { native: 3 }, totals))
})

// What express apps send besides res.send(): files (express.static,
// res.sendFile(), res.download()) with ranges and conditional requests, and
// the response helpers that set headers first.
t.test('files, ranges, conditional requests and header helpers', async t => {
  fs.writeFileSync(path.join(dir, 'small.json'), '{"a":1}')
  const app = express()
  app.set('env', 'test')
  app.use('/static', express.static(dir))
  app.get('/sendfile', (req, res) => res.sendFile(file))
  app.get('/download', (req, res) => res.download(path.join(dir, 'small.json')))
  app.get('/cookie', (req, res) => {
    res.cookie('a', 'b', { httpOnly: true })
    res.cookie('c', 'd')
    res.send('ok')
  })
  app.get('/clear', (req, res) => {
    res.clearCookie('a')
    res.end()
  })
  app.get('/append', (req, res) => {
    res.append('Link', ['<a>', '<b>'])
    res.append('Warning', '199 Misc')
    res.send('x')
  })
  app.get('/vary', (req, res) => {
    res.vary('Accept')
    res.vary('Origin')
    res.json([1])
  })
  app.get('/jsonp', (req, res) => res.jsonp({ x: 1 }))
  app.get('/format', (req, res) => res.format({
    text () { res.send('t') },
    html () { res.send('<p>h</p>') },
    default () { res.status(406).send('no') }
  }))
  app.get('/location', (req, res) => {
    res.location('/x')
    res.status(302).end()
  })
  app.get('/write-end', (req, res) => {
    res.write('a')
    res.write(Buffer.from('b'))
    res.end('c')
  })
  app.get('/set', (req, res) => {
    res.set({ 'X-A': '1', 'X-B': ['2', '3'] })
    res.send('s')
  })
  app.get('/etag', (req, res) => {
    res.set('ETag', '"abc"')
    res.send('body')
  })
  app.get('/links', (req, res) => {
    res.links({ next: '/n', last: '/l' })
    res.send('l')
  })
  app.get('/attachment', (req, res) => {
    res.attachment('résumé.pdf')
    res.send(Buffer.from('%PDF'))
  })
  app.get('/big', (req, res) => res.send('y'.repeat(70000)))
  app.get('/unicode', (req, res) => res.send('日本語テキスト'.repeat(100)))
  const port = await serve(t, app)
  const native1 = { native: 1 }
  const streamed = { 'headers-sent': 1 }
  const cases = [
    ['express.static', GET('/static/data.txt'), streamed],
    ['express.static, HEAD', request('HEAD', '/static/data.txt'), native1],
    ['express.static, Range', GET('/static/data.txt', { Range: 'bytes=0-9' }), streamed],
    ['express.static, unsatisfiable Range (416)', GET('/static/data.txt', { Range: 'bytes=9999-' }), native1],
    ['express.static, missing file (404)', GET('/static/missing'), native1],
    ['express.static, a directory', GET('/static/'), native1],
    ['res.sendFile', GET('/sendfile'), streamed],
    ['res.sendFile, If-Modified-Since (304)',
      GET('/sendfile', { 'If-Modified-Since': new Date(Date.now() + 86400000).toUTCString() }), native1],
    ['res.download', GET('/download'), streamed],
    ['res.cookie', GET('/cookie'), native1],
    ['res.clearCookie + end()', GET('/clear'), native1],
    ['res.append', GET('/append'), native1],
    ['res.vary + res.json', GET('/vary'), native1],
    ['res.jsonp with a callback', GET('/jsonp?callback=cb'), native1],
    ['res.format, html', GET('/format', { Accept: 'text/html' }), native1],
    ['res.format, 406', GET('/format', { Accept: 'image/png' }), native1],
    ['res.location + end()', GET('/location'), native1],
    ['write() twice then end()', GET('/write-end'), native1],
    ['res.set with an array', GET('/set'), native1],
    ['a strong ETag, If-None-Match (304)', GET('/etag', { 'If-None-Match': '"abc"' }), native1],
    ['a strong ETag, HEAD', request('HEAD', '/etag'), native1],
    ['res.links', GET('/links'), native1],
    ['res.attachment with a non-ASCII name', GET('/attachment'), native1],
    ['res.send(70 KB string)', GET('/big'), native1],
    ['res.send(non-ASCII text), HEAD', request('HEAD', '/unicode'), native1]
  ]
  for (const [name, req, expected] of cases) {
    await t.test(name, t => compare(t, port, req, expected, totals))
  }
  await t.test('keep-alive mix', t => {
    const keep = (method, p, headers) => request(method, p, headers, false)
    return compare(t, port, [
      keep('GET', '/static/data.txt'), keep('HEAD', '/unicode'),
      keep('GET', '/etag', { 'If-None-Match': '"abc"' }), keep('GET', '/write-end'), keep('GET', '/big'),
      keep('GET', '/format', { Accept: 'image/png' }), GET('/cookie')
    ], { native: 6, 'headers-sent': 1 }, totals)
  })
})

t.test('totals', async t => {
  const text = totals.format('express')
  t.comment(text)
  totals.check(t, 'express')
})
