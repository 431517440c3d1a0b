'use strict'

// writeHead(status[, reason], headers) with the headers as an array of
// pairs, flat [name, value, ...] or nested [[name, value], ...], as srvx
// (h3's Node adapter) passes them: the renderer (lib/render.js,
// writeHeadArray()) renders and caches such a block as it does an object's,
// so end() sends it natively, and the write()s srvx makes in the same tick
// go with it in one direct write. Node's _storeHeader() renders the pairs in
// index order, each validated, duplicates kept; whatever it treats apart
// (Connection, a second Content-Length, a name or value it rejects) is
// left to Node's writeHead(). Each case runs through the dual-path harness
// (bytes parsed by llhttp, state, events, errors, path) on keep-alive
// connections, so that later responses meet the cached block.

const t = require('tap')

const { checkCases } = require('./helpers/dual-path.js')
const { renderedPath } = require('./helpers/expect-path.js')

const KEEP = 'GET / HTTP/1.1\r\nHost: x\r\n\r\n'
const HEAD = 'HEAD / HTTP/1.1\r\nHost: x\r\n\r\n'
const CLOSE = 'GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'

// srvx's sendNodeResponse(): writeHead(status, statusText, pairs) with the
// names in lowercase and Content-Length as a string, write(body), end().
function srvx (res, body, status = 200, statusText = '', extra = []) {
  const headers = [...extra, 'content-type', 'text/plain; charset=UTF-8',
    'content-length', String(Buffer.byteLength(body))]
  res.writeHead(status, statusText, headers)
  res.write(body)
  res.end()
}

// The path of end(string) after a block Node's writeHead() rendered (a
// form left to Node, or a value that is not cached).
const NODE_RENDERED = renderedPath('native')

const cases = [
  {
    name: 'srvx: the same response three times, one direct write each',
    request: [KEEP, KEEP, KEEP],
    path: { native: 3 },
    direct: 3,
    handler: (req, res) => srvx(res, 'hello world')
  },
  {
    name: 'srvx: two blocks alternating, bodies of other lengths',
    request: [KEEP, KEEP, KEEP, CLOSE],
    path: { native: 4 },
    direct: 4,
    handler (req, res, ctx) {
      if (ctx.index % 2 === 0) return srvx(res, 'a'.repeat(ctx.index + 1))
      srvx(res, '{"ok":true}', 404, 'Not Found', ['x-request', 'r'])
    }
  },
  {
    name: 'srvx: a Buffer body and an empty body',
    request: [KEEP, KEEP],
    path: { native: 2 },
    handler (req, res, ctx) {
      if (ctx.index === 1) return srvx(res, '')
      res.writeHead(201, '', ['content-length', '3'])
      res.write(Buffer.from('abc'))
      res.end()
    }
  },
  {
    name: 'flat array with duplicate names (Set-Cookie twice) + end(string)',
    request: [KEEP, KEEP],
    path: { native: 2 },
    handler (req, res) {
      res.writeHead(200, ['Content-Length', '2', 'Set-Cookie', 'a=1', 'Set-Cookie', 'b=2', 'X-Dup', 'x'])
      res.end('ok')
    }
  },
  {
    name: 'nested array + end(string), then the same pairs flat: one block',
    request: [KEEP, KEEP, KEEP],
    path: { native: 3 },
    handler (req, res, ctx) {
      if (ctx.index === 1) {
        res.writeHead(200, ['Content-Length', '2', 'X-A', '1'])
      } else {
        res.writeHead(200, [['Content-Length', '2'], ['X-A', '1']])
      }
      res.end('ok')
    }
  },
  {
    name: 'an object, then the same headers as an array: one block',
    request: [KEEP, KEEP],
    path: { native: 2 },
    handler (req, res, ctx) {
      if (ctx.index === 0) res.writeHead(200, { 'Content-Length': '2', 'X-A': '1' })
      else res.writeHead(200, ['Content-Length', '2', 'X-A', '1'])
      res.end('ok')
    }
  },
  {
    name: 'the reason argument: a string, empty, none (the table), a statusMessage set before',
    request: [KEEP, KEEP, KEEP, KEEP],
    path: { native: 4 },
    handler (req, res, ctx) {
      const pairs = ['Content-Length', '2']
      if (ctx.index === 0) res.writeHead(200, 'Fine', pairs)
      else if (ctx.index === 1) res.writeHead(200, '', pairs)
      else if (ctx.index === 2) res.writeHead(404, pairs)
      else {
        res.statusMessage = 'Mine'
        res.writeHead(200, pairs)
      }
      res.end('ok')
    }
  },
  {
    name: 'numbers as values, Content-Length among them',
    request: [KEEP, KEEP],
    path: { native: 2 },
    handler (req, res) {
      res.writeHead(200, ['Content-Length', 2, 'X-N', 5])
      res.end('ok')
    }
  },
  {
    name: 'no Content-Length pair: chunked framing, then Transfer-Encoding: chunked as a pair',
    request: [KEEP, KEEP],
    path: { native: 2 },
    handler (req, res, ctx) {
      if (ctx.index === 0) res.writeHead(200, ['Content-Type', 'text/plain'])
      else res.writeHead(200, ['Transfer-Encoding', 'chunked'])
      res.end('chunks')
    }
  },
  {
    name: 'an empty array: no header lines, chunked',
    request: [KEEP, KEEP],
    path: { native: 2 },
    handler (req, res) {
      res.writeHead(200, [])
      res.end('none')
    }
  },
  {
    name: 'a Date pair: no automatic Date',
    request: [KEEP, KEEP],
    date: true,
    path: { native: 2 },
    handler (req, res) {
      res.writeHead(200, ['Date', 'Thu, 01 Jan 1970 00:00:00 GMT', 'Content-Length', '2'])
      res.end('ok')
    }
  },
  {
    name: 'the automatic Date after an array',
    request: [KEEP, KEEP],
    date: true,
    path: { native: 2 },
    handler (req, res) {
      res.writeHead(200, ['Content-Length', '2'])
      res.end('ok')
    }
  },
  {
    name: 'HEAD: the Content-Length pair goes out, the body does not',
    request: [HEAD, HEAD],
    path: { native: 2 },
    handler (req, res) {
      res.writeHead(200, ['Content-Length', '5'])
      res.write('hello')
      res.end()
    }
  },
  {
    name: 'a length set by hand and no Content-Length pair',
    request: [KEEP, KEEP],
    path: { native: 2 },
    handler (req, res) {
      res._contentLength = 2
      res.writeHead(200, ['Content-Type', 'text/plain'])
      res.end('ok')
    }
  },
  {
    name: 'array values: one line each (Set-Cookie), joined for Cookie',
    request: [KEEP, KEEP],
    path: { native: 2 },
    handler (req, res) {
      res.writeHead(200, ['Set-Cookie', ['a=1', 'b=2'], 'Cookie', ['c=3', 'd=4'], 'Content-Length', '2'])
      res.end('ok')
    }
  },
  {
    name: 'array values with write() + end(): not cached, Node\'s end()',
    request: [KEEP, KEEP],
    path: { streamed: 2 },
    handler (req, res) {
      res.writeHead(200, ['Set-Cookie', ['a=1', 'b=2'], 'Content-Length', '2'])
      res.write('ok')
      res.end()
    }
  },
  {
    name: 'Connection: close as a pair: rendered by the shim, and the connection closes',
    request: [KEEP],
    path: 'native',
    handler (req, res) {
      res.writeHead(200, ['Connection', 'close', 'Content-Length', '2'])
      res.end('ok')
    }
  },
  {
    name: 'two Content-Length pairs: Node\'s writeHead() sends both',
    request: [CLOSE],
    // llhttp rejects the duplicate, as a client would.
    malformed: true,
    path: NODE_RENDERED,
    handler (req, res) {
      res.writeHead(200, ['Content-Length', '9', 'content-length', '2'])
      res.end('ok')
    }
  },
  {
    name: 'a null value and a boolean: Node\'s writeHead() renders their text',
    request: [KEEP, KEEP],
    path: { [NODE_RENDERED]: 2 },
    handler (req, res) {
      res.writeHead(200, ['X-Null', null, 'X-Bool', true, 'Content-Length', '2'])
      res.end('ok')
    }
  },
  {
    name: 'after setHeader(): Node merges the pairs into the store (its slow case)',
    request: [KEEP, KEEP],
    path: { [NODE_RENDERED]: 2 },
    handler (req, res) {
      res.setHeader('X-A', 'first')
      res.setHeader('Content-Length', '9')
      res.writeHead(200, ['X-A', 'second', '', 'skipped', 'Content-Length', '2', 'X-A', 'third'])
      res.end('ok')
    }
  },
  {
    name: 'after setHeader(), write() + end(): Node\'s block streamed',
    request: [KEEP],
    path: 'streamed',
    handler (req, res) {
      res.setHeader('X-A', 'first')
      res.writeHead(200, '', ['content-length', '2'])
      res.write('ok')
      res.end()
    }
  },
  {
    name: 'nested: an entry that is a string is read as name and value by index',
    request: [KEEP],
    path: NODE_RENDERED,
    handler (req, res) {
      res.writeHead(200, [['Content-Length', '2'], 'Xy'])
      res.end('ok')
    }
  },
  {
    name: 'nested: entries of other lengths',
    request: [KEEP, KEEP],
    path: { native: 2 },
    handler (req, res) {
      res.writeHead(200, [['Content-Length', '2', 'ignored'], ['X-A', '1']])
      res.end('ok')
    }
  },
  // Node throws, with the response's state as writeHead() left it.
  {
    name: 'an odd flat array throws ERR_INVALID_ARG_VALUE',
    request: [CLOSE],
    path: {},
    handler (req, res) {
      res.writeHead(200, 'Fine', ['Content-Length', '2', 'X-A'])
    }
  },
  {
    name: 'a cached block, then an odd flat array',
    request: [KEEP, CLOSE],
    path: { native: 1 },
    handler (req, res, ctx) {
      res.writeHead(200, ctx.index === 0 ? ['Content-Length', '2'] : ['Content-Length', '2', 'X'])
      res.end('ok')
    }
  },
  {
    name: 'an empty name throws ERR_INVALID_HTTP_TOKEN (no store: not skipped)',
    request: [CLOSE],
    path: {},
    handler (req, res) {
      res.writeHead(200, ['', 'x', 'Content-Length', '2'])
    }
  },
  {
    name: 'a number as a name throws ERR_INVALID_HTTP_TOKEN',
    request: [CLOSE],
    path: {},
    handler (req, res) {
      res.writeHead(200, [5, 'x', 'Content-Length', '2'])
    }
  },
  {
    name: 'an undefined value throws ERR_HTTP_INVALID_HEADER_VALUE after a cached pair',
    request: [KEEP, CLOSE],
    path: { native: 1 },
    handler (req, res, ctx) {
      res.writeHead(200, ctx.index === 0 ? ['Content-Length', '2'] : ['Content-Length', '2', 'X-U', undefined])
      res.end('ok')
    }
  },
  {
    name: 'a CR in a value throws ERR_INVALID_CHAR',
    request: [CLOSE],
    path: {},
    handler (req, res) {
      res.writeHead(200, ['Content-Length', '2', 'X-A', 'a\r\nX-B: b'])
    }
  },
  {
    name: 'a control character in the reason throws before the array is read',
    request: [CLOSE],
    path: {},
    handler (req, res) {
      const pairs = ['Content-Length', '2']
      Object.defineProperty(pairs, 0, {
        get () { throw new Error('read') }
      })
      res.writeHead(200, 'Bad\x01', pairs)
    }
  }
]

checkCases(t, cases)
