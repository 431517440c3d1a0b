'use strict'

// A Content-Length set by hand before writeHead(), as @hono/node-server
// sets res._contentLength and then passes only Content-Type: Node's
// _storeHeader() appends the line after the automatic ones, and the
// renderer (lib/render.js, handLength()) caches that block, so end() sends
// it in one direct write. Each case runs through the dual-path harness
// (bytes, state, events, path) on keep-alive connections, so that later
// responses meet the cached block.

const t = require('tap')

const { checkCases } = require('./helpers/dual-path.js')
const { renderedPath } = require('./helpers/expect-path.js')

const KEEP = 'GET / HTTP/1.1\r\nHost: x\r\n\r\n'
const HEAD = 'HEAD / HTTP/1.1\r\nHost: x\r\n\r\n'
const CLOSE = 'GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'

// @hono/node-server's writeDefaultHeaders(): the body's byte length in
// _contentLength, then writeHead() with the Content-Type alone.
function honoText (res, body, status = 200) {
  res._contentLength = Buffer.byteLength(body)
  res.writeHead(status, { 'Content-Type': 'text/plain; charset=UTF-8' })
  res.end(body)
}

const cases = [
  {
    name: 'c.text: the same response three times',
    request: [KEEP, KEEP, KEEP],
    path: { native: 3 },
    direct: 3,
    handler: (req, res) => honoText(res, 'hello world')
  },
  {
    name: 'c.json, then c.text, then c.json again: two cached blocks',
    request: [KEEP, KEEP, KEEP],
    path: { native: 3 },
    direct: 3,
    handler (req, res, ctx) {
      if (ctx.index === 1) return honoText(res, 'hi')
      res._contentLength = 17
      res.writeHead(200, { 'Content-Type': 'application/json' })
      res.end('{"hello":"world"}')
    }
  },
  {
    name: 'bodies of other lengths in the same block',
    request: [KEEP, KEEP, KEEP, CLOSE],
    path: { native: 4 },
    direct: 4,
    handler (req, res, ctx) {
      honoText(res, ['a', 'abc', 'x'.repeat(1000), 'a'][ctx.index])
    }
  },
  {
    name: 'a Buffer body and an empty body',
    request: [KEEP, KEEP],
    path: { native: 2 },
    direct: 2,
    handler (req, res, ctx) {
      if (ctx.index === 0) {
        res._contentLength = 3
        res.writeHead(201, { 'Content-Type': 'application/octet-stream' })
        res.end(Buffer.from('abc'))
      } else {
        res._contentLength = 0
        res.writeHead(200, { 'Content-Type': 'text/plain' })
        res.end()
      }
    }
  },
  {
    name: 'a Content-Length header as well: the header\'s',
    request: [KEEP, KEEP],
    path: { native: 2 },
    handler (req, res) {
      res._contentLength = 7
      res.writeHead(200, { 'Content-Type': 'text/plain', 'Content-Length': 2 })
      res.end('hi')
    }
  },
  {
    // The shim renders and caches the pairs (lib/render.js,
    // writeHeadArray()), with the length line _storeHeader() appends.
    name: 'header pairs in an array, flat and nested',
    request: [KEEP, KEEP],
    path: { native: 2 },
    handler (req, res, ctx) {
      res._contentLength = 2
      res.writeHead(200, ctx.index === 0
        ? [['Content-Type', 'text/plain'], ['X-A', 'a']]
        : ['Content-Type', 'text/plain', 'X-A', 'a'])
      res.end('hi')
    }
  },
  {
    // Node renders these blocks itself: its writeHead() merges the pairs
    // into the stored headers (a flat array only: it throws for a nested
    // one there), and the native path sends the block with
    // the body where end() writes the body apart (Node 20's protocol).
    name: 'header pairs in an array after setHeader()',
    request: [KEEP, KEEP],
    path: renderedPath({ native: 2 }, { 'node-rendered': 2 }),
    handler (req, res, ctx) {
      res._contentLength = 2
      res.setHeader('X-B', 'b')
      res.writeHead(200, ['Content-Type', 'text/plain', 'X-A', 'a'])
      res.end('hi')
    }
  },
  {
    // No body: _storeHeader() appends no length; Node renders the block.
    name: 'HEAD, 204 and 304 with a length set by hand',
    request: [HEAD, KEEP, KEEP],
    path: { native: 3 },
    handler (req, res, ctx) {
      honoText(res, 'hello', [200, 204, 304][ctx.index])
    }
  },
  {
    // Array values: a block the cache does not hold, sent with the body.
    name: 'an array value',
    request: [KEEP, KEEP],
    path: { native: 2 },
    handler (req, res) {
      res._contentLength = 2
      res.writeHead(200, { 'Content-Type': 'text/plain', 'X-A': ['1', '2'] })
      res.end('hi')
    }
  },
  {
    // A removed Content-Length turns the framing chunked (Node renders
    // the block).
    name: 'a removed Content-Length',
    request: [KEEP, KEEP],
    path: { native: 2 },
    handler (req, res) {
      res._contentLength = 2
      res.removeHeader('Content-Length')
      res.writeHead(200, { 'Content-Type': 'text/plain' })
      res.end('hi')
    }
  },
  {
    // writeHead(status) alone: the length line is the only header line
    // before the automatic ones.
    name: 'no headers object',
    request: [KEEP, KEEP],
    path: { native: 2 },
    handler (req, res) {
      res._contentLength = 2
      res.writeHead(200)
      res.end('hi')
    }
  }
]

checkCases(t, cases)
