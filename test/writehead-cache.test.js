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
