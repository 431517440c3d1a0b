'use strict'

// hono (on @hono/node-server), hapi and h3 on a real loopback server: every
// request is sent once on Node's own path and once with the shim installed,
// the raw bytes must be identical (Date values masked) and each response
// parses with llhttp (test/helpers/framework-capture.js). Each framework's
// responses on a real socket with Node's methods must take the native path
// at least as often as its row of NATIVE_SHARE_MIN says
// (test/helpers/frameworks.js).

const { Readable } = require('node:stream')

const t = require('tap')

const { Totals } = require('./helpers/framework-capture.js')
const { GET, HEAD, NATIVE, WRITTEN, checkShare, compare, keep, paths, serve, warmUp } = require('./helpers/frameworks.js')

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
  await warmUp(port, '/text')

  await t.test('c.text', async t => {
    const { legacy } = await compare(t, port, GET('/text'), NATIVE, totals)
    t.equal(legacy.messages[0].body.toString(), 'hello world')
    t.match(legacy.text, /\r\nContent-Length: 11\r\n/i)
  })
  await t.test('c.json', async t => {
    const { legacy } = await compare(t, port, GET('/json'), NATIVE, totals)
    t.equal(legacy.messages[0].body.toString(), '{"hello":"world","list":[1,2,3]}')
  })
  await t.test('c.html', t => compare(t, port, GET('/html'), NATIVE, totals))
  await t.test('c.json with 201', async t => {
    const { legacy } = await compare(t, port, GET('/created'), NATIVE, totals)
    t.equal(legacy.messages[0].statusCode, 201)
  })
  await t.test('c.header + c.text', t => compare(t, port, GET('/header'), NATIVE, totals))
  await t.test('default 404', async t => {
    const { legacy } = await compare(t, port, GET('/nowhere'), NATIVE, totals)
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
    const { legacy } = await compare(t, port, GET('/error'), NATIVE, totals)
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
    ], paths(NATIVE, NATIVE, NATIVE, NATIVE, NATIVE, NATIVE), totals)
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
  await warmUp(port, '/text')

  await t.test("return 'hello'", async t => {
    const { legacy } = await compare(t, port, GET('/text'), NATIVE, totals)
    t.equal(legacy.messages[0].body.toString(), 'hello')
    t.match(legacy.text, /\r\ncontent-length: 5\r\n/)
  })
  await t.test('h.response().code(201)', async t => {
    const { legacy } = await compare(t, port, GET('/created'), NATIVE, totals)
    t.equal(legacy.messages[0].statusCode, 201)
  })
  await t.test('JSON', async t => {
    const { legacy } = await compare(t, port, GET('/json'), NATIVE, totals)
    t.equal(legacy.messages[0].body.toString(), '{"hello":"world","list":[1,2,3]}')
  })
  await t.test('h.response().type()', t => compare(t, port, GET('/typed'), NATIVE, totals))
  await t.test('h.redirect', async t => {
    const { legacy } = await compare(t, port, GET('/redirect'), NATIVE, totals)
    t.equal(legacy.messages[0].statusCode, 302)
  })
  await t.test('a Buffer', async t => {
    const { legacy } = await compare(t, port, GET('/buffer'), NATIVE, totals)
    t.strictSame([...legacy.messages[0].body], [0, 1, 2, 0x80, 0xff])
  })
  await t.test('500 from a thrown error', async t => {
    const { legacy } = await compare(t, port, GET('/error'), NATIVE, totals)
    t.equal(legacy.messages[0].statusCode, 500)
  })
  await t.test('h.response().code(204)', t => compare(t, port, GET('/empty'), NATIVE, totals))
  await t.test('default 404', async t => {
    const { legacy } = await compare(t, port, GET('/nowhere'), NATIVE, totals)
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
    ], paths(NATIVE, WRITTEN, NATIVE, NATIVE, NATIVE), totals)
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
  await warmUp(port, '/')

  await t.test("app.get('/', () => 'hello')", async t => {
    const { legacy } = await compare(t, port, GET('/'), NATIVE, totals)
    t.equal(legacy.messages[0].body.toString(), 'hello')
  })
  await t.test('JSON', async t => {
    const { legacy } = await compare(t, port, GET('/json'), NATIVE, totals)
    t.equal(legacy.messages[0].body.toString(), '{"hello":"world","list":[1,2,3]}')
  })
  await t.test('default 404', async t => {
    const { legacy } = await compare(t, port, GET('/nowhere'), NATIVE, totals)
    t.equal(legacy.messages[0].statusCode, 404)
  })
  await t.test('HEAD', t => compare(t, port, HEAD('/'), NATIVE, totals))
  await t.test('keep-alive: several requests on one socket', async t => {
    const { legacy } = await compare(t, port, [
      keep('GET', '/json'), keep('GET', '/nowhere'), keep('HEAD', '/'), GET('/')
    ], paths(NATIVE, NATIVE, NATIVE, NATIVE), totals)
    t.equal(legacy.messages.length, 4)
  })
  await t.test('native share', async t => checkShare(t, totals, 'h3'))
})
