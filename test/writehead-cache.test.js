'use strict'

// The renderer's cache, as writeHead() meets it (lib/render.js,
// fastWriteHead()): objects are compared with the cached entries without
// being copied while they match, and copied exactly once they differ. Its
// own file, so that the cache starts empty and holds every block below (8
// slots).

const t = require('tap')

const { checkParity } = require('./helpers/dual-path.js')
const { writeHeadThenEnd } = require('./helpers/write-head.js')

const KEEP = 'GET / HTTP/1.1\r\nHost: x\r\n\r\n'

// One keep-alive connection whose writeHead() objects start like a block
// the renderer cached and then differ: fastWriteHead() compares them with
// the cached entry without copying them, and must copy exactly what it
// read once they differ (another entry, fewer or more headers, another
// state, a getter that throws, a Content-Length of the same shape).
t.test('writeHead() objects that start as a cached block, then differ', async t => {
  const CLOSE = 'GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'
  const getter = (obj, name, ctx, fn) => Object.defineProperty(obj, name, {
    enumerable: true, configurable: true, get () { ctx.event('getter ' + name); return fn() }
  })
  const steps = [
    { headers: () => ({ 'Content-Length': '2', 'X-A': 'a' }) },
    { headers: () => ({ 'Content-Length': '2', 'X-A': 'a' }) },
    { headers: () => ({ 'Content-Length': '2', 'X-A': 'b' }) },
    { headers: () => ({ 'Content-Length': '2', 'X-A': 'a' }) },
    { headers: () => ({ 'Content-Length': '3', 'X-A': 'b' }), body: 'abc' },
    { headers: () => ({ 'Content-Length': '4' }), body: 'abcd' },
    {
      headers: ctx => getter({ 'Content-Length': '2' }, 'X-A', ctx, () => { throw new Error('boom') }),
      throws: true
    },
    { headers: () => ({ 'Content-Length': '3', 'X-A': 'a' }), body: 'abc' },
    { headers: ctx => getter({ 'Content-Length': '2' }, 'X-A', ctx, () => 'a') },
    { headers: () => ({ 'Content-Length': '2', 'X-A': 'a', 'X-B': 'c' }) },
    // A status line of its own, whose one entry then matches in full while
    // the state differs: the last request asks to close the connection.
    { status: 201, headers: () => ({ 'Content-Length': '2', 'X-A': 'a' }) },
    { status: 201, headers: () => ({ 'Content-Length': '2', 'X-A': 'a' }) }
  ]
  await checkParity(t, {
    name: 'cached-block prefixes on one connection',
    request: steps.map((_, i) => i === steps.length - 1 ? CLOSE : KEEP),
    sequential: true,
    path: { native: steps.length - 1, chunked: 1 },
    handler (req, res, ctx) {
      const step = steps[ctx.index]
      writeHeadThenEnd(res, ctx, step.status || 200, step.headers(ctx), step.body || 'ok')
    }
  })
})

// writeHead(status[, reason]) after setHeader() first compares the store
// with the entry the one before it used (lib/render.js, storeAgain()):
// each way the two can differ must still give Node's bytes and state.
t.test('stored writeHead() responses that repeat the one before, or almost', async t => {
  const HEAD = 'HEAD / HTTP/1.1\r\nHost: x\r\n\r\n'
  const HTTP10 = 'GET / HTTP/1.0\r\nHost: x\r\nConnection: keep-alive\r\n\r\n'
  const CLOSE = 'GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'
  const ct = (res) => res.setHeader('Content-Type', 'text/plain')
  const steps = [
    { fn: (res) => { ct(res); res.setHeader('Content-Length', 2); res.writeHead(200) } },
    { fn: (res) => { ct(res); res.setHeader('Content-Length', 2); res.writeHead(200) } },
    { fn: (res) => { ct(res); res.setHeader('Content-Length', '2'); res.writeHead(200) } },
    { fn: (res) => { ct(res); res.setHeader('Content-Length', 3); res.writeHead(200) }, body: 'abc' },
    { fn: (res) => { ct(res); res.setHeader('Content-Length', '02'); res.writeHead(200) } },
    { fn: (res) => { ct(res); res.setHeader('Content-Length', 2); res.setHeader('X-A', '1'); res.writeHead(200) } },
    { fn: (res) => { ct(res); res.setHeader('Content-Length', 2); res.setHeader('X-A', '2'); res.writeHead(200) } },
    { fn: (res) => { ct(res); res.setHeader('Content-Length', 2); res.setHeader('x-a', '2'); res.writeHead(200) } },
    { fn: (res) => { res.setHeader('Content-Length', 2); ct(res); res.setHeader('X-A', '2'); res.writeHead(200) } },
    { fn: (res) => { ct(res); res.setHeader('Content-Length', 2); res.setHeader('X-A', '2'); res.removeHeader('X-A'); res.writeHead(200) } },
    // A reason of its own, over a statusMessage set before, then without.
    { fn: (res) => { res.statusMessage = 'Preset'; ct(res); res.setHeader('Content-Length', 2); res.writeHead(200, 'Own') } },
    { fn: (res) => { res.statusMessage = 'Preset'; ct(res); res.setHeader('Content-Length', 2); res.writeHead(200, 'Own') } },
    { fn: (res) => { res.statusMessage = 'Own'; ct(res); res.setHeader('Content-Length', 2); res.writeHead(200) } },
    // Chunked framing (no Content-Length), then the same store on HEAD and
    // on an HTTP/1.0 request, which Node frames otherwise.
    { fn: (res) => { ct(res); res.writeHead(200) } },
    { fn: (res) => { ct(res); res.writeHead(200) } },
    { request: HEAD, fn: (res) => { ct(res); res.writeHead(200) } },
    { request: HTTP10, fn: (res) => { ct(res); res.setHeader('Content-Length', 2); res.writeHead(200) } },
    { fn: (res) => { ct(res); res.writeHead(200) } },
    // A fresh end() between, which may take the entry writeHead() used.
    { fn: (res) => { ct(res); res.setHeader('Content-Length', 2) } },
    { fn: (res) => { ct(res); res.setHeader('Content-Length', 2); res.writeHead(200) } },
    { fn: (res) => { ct(res); res.setHeader('Content-Length', 2); res.sendDate = false; res.writeHead(200) } },
    { fn: (res) => { ct(res); res.setHeader('Content-Length', 2); res.writeHead(201) } },
    { request: CLOSE, fn: (res) => { ct(res); res.setHeader('Content-Length', 2); res.writeHead(201) } }
  ]
  await checkParity(t, {
    name: `${steps.length} stored writeHead() responses on one connection`,
    request: steps.map((step) => step.request || KEEP),
    sequential: true,
    path: { native: steps.length },
    handler (req, res, ctx) {
      const step = steps[ctx.index]
      step.fn(res)
      ctx.record('after writeHead', [res.statusMessage, res._contentLength, res.chunkedEncoding])
      res.end(step.body || 'ok')
    }
  })
})

// The store handed to the response after one whose headers matched the
// entry before is sized by that response, as after any other.
t.test('a stored writeHead() that repeats the one before sizes the next store', async t => {
  const http = require('node:http')
  const shim = require('../lib/index.js')
  const headers = require('../lib/headers.js')
  const kOutHeaders = (res) => res[Object.getOwnPropertySymbols(res).find((s) => s.description === 'kOutHeaders')]
  const req = { method: 'GET', httpVersionMajor: 1, httpVersionMinor: 1, headers: {} }
  const uninstall = shim.install()
  const respond = (n) => {
    const res = new http.ServerResponse(req)
    res.setHeader('Content-Length', 2)
    for (let i = 1; i < n; i++) res.setHeader(`X-H-${i}`, 'v')
    res.writeHead(200)
    return res
  }
  try {
    if (!shim.isActive()) {
      t.pass('inactive shim: nothing to size')
      return
    }
    const first = respond(20)
    t.ok(first._header.startsWith('HTTP/1.1 200 OK\r\n'), 'the first rendered')
    headers.observe(headers.FAST_MAX, null)
    respond(20)
    const next = new http.ServerResponse(req)
    next.setHeader('X-A', 'a')
    t.ok(headers.isWide(kOutHeaders(next)), 'after 20 stored headers the next store is a WideStore')
  } finally {
    headers.observe(0, null)
    uninstall()
  }
})

// The same with more headers than an object literal keeps in fast mode:
// the store compared in place is a wide one, or Node's own dictionary.
t.test('stored writeHead() responses of 20 and 70 headers that repeat, or almost', async t => {
  const CLOSE = 'GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'
  const fill = (res, n, tag = 'v') => {
    res.setHeader('Content-Length', 2)
    for (let i = 1; i < n; i++) res.setHeader(`X-H-${i}`, `${tag}${i}`)
  }
  const steps = [
    (res) => { fill(res, 20); res.writeHead(200) },
    (res) => { fill(res, 20); res.writeHead(200) },
    (res) => { fill(res, 20); res.writeHead(200) },
    // The 20 headers above, then 50 more: after a response end() rendered
    // with as many (its store is then Node's own), and after one with 20.
    (res) => { fill(res, 70) },
    (res) => { fill(res, 70); res.writeHead(200) },
    (res) => { fill(res, 20); res.writeHead(200) },
    (res) => { fill(res, 70); res.writeHead(200) },
    (res) => { fill(res, 70); res.writeHead(200) },
    (res) => { fill(res, 70); res.setHeader('X-H-69', 'other'); res.writeHead(200) },
    (res) => { fill(res, 20); res.writeHead(200) },
    (res) => { fill(res, 20); res.removeHeader('X-H-7'); res.writeHead(200) },
    (res) => { fill(res, 20); res.removeHeader('X-H-7'); res.setHeader('X-H-7', 'v7'); res.writeHead(200) },
    (res) => { fill(res, 20, 'w'); res.writeHead(200) },
    (res) => { fill(res, 20); res.writeHead(200) }
  ]
  await checkParity(t, {
    name: `${steps.length} stored writeHead() responses of many headers on one connection`,
    request: steps.map((_, i) => i === steps.length - 1 ? CLOSE : KEEP),
    sequential: true,
    path: { native: steps.length },
    handler (req, res, ctx) {
      steps[ctx.index](res)
      res.end('ok')
    }
  })
})
