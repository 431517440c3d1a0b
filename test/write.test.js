'use strict'

// write() with chunked framing. Where the probe found Node 20's write()
// (internals.chunkedWrite: Node 20 and 22, 24 up to 24.21, 26 up to 26.8),
// the shim sends each chunk with its framing in two or three socket writes
// instead of four (lib/protocol/chunked20.js, writeChunk()); where it found Node 24.22's
// (internals.chunkedUncork: 24.22 and 26.10 on), the response's uncork()
// sends the chunks it holds with fewer writes (lib/protocol/chunked24.js, flushChunks()).
// end() after write() is the shim's where end() is Node 20's or, with
// chunks held or Content-Length framing, Node 24.22's (lib/send.js,
// endAfterWrites()). Every fixture runs on Node's own
// path and with the shim installed, and must give the same bytes, the
// same state after each write() (its return value, the response's and the
// socket's writable counters, bytesWritten), the same events ('drain'
// included) and the same callbacks in the same order.

const t = require('tap')
const http = require('node:http')
const net = require('node:net')
const { once } = require('node:events')

const internals = require('../lib/internals.js')
const shim = require('../lib/index.js')
const { capture, checkParity } = require('./helpers/dual-path.js')
const { heldTail } = require('./helpers/expect-path.js')
const { requests: { CLOSE, KEEP } } = require('./fixtures/responses.js')

const HTTP10_KEEP_ALIVE = 'GET / HTTP/1.0\r\nHost: x\r\nConnection: keep-alive\r\n\r\n'

t.jobs = 1

// Whether write() calls, or the response's uncork(), take the shim's path
// on this line.
const chunkedWrite = internals !== null && internals.chunkedWrite
const chunkedUncork = internals !== null && internals.chunkedUncork
// Whether end(chunk) after write() sends its chunk the shim's way (Node
// 20's write() and end(), or Node 24.22's: lib/shim.js, lib/send.js
// endAfterWrites()), and so counts as native.
const chunkedTail = (chunkedWrite && internals.protocol.name === 'node20') || heldTail
// The path of end() after write() in the same tick, with chunked framing:
// where the chunks are held on the corked response (chunkedUncork), Node's
// end() finds them there.
const HELD = chunkedUncork ? 'socket-busy' : 'headers-sent'
// The same for end(chunk).
const TAIL = chunkedTail ? 'native' : HELD
// The path of end() without a chunk after write() in the same tick, with
// chunked framing: the shim's where the tail is (the chunks wait on the
// socket's cork, or are held on the response's), else Node's.
const ENDED = chunkedTail ? 'native' : ['headers-sent', 'socket-busy']

// What a test can read of the response and its socket after a write().
function writeState (res, ret) {
  const socket = res.socket
  return {
    ret,
    headersSent: res.headersSent,
    writableLength: res.writableLength,
    writableNeedDrain: res.writableNeedDrain,
    writableCorked: res.writableCorked,
    socket: socket
      ? {
          writableLength: socket.writableLength,
          writableCorked: socket.writableCorked,
          writableNeedDrain: socket.writableNeedDrain,
          bytesWritten: socket.bytesWritten
        }
      : null
  }
}

// Writes each chunk ([chunk, encoding] or a chunk), recording the state
// after each, with a callback per write.
function writeAll (res, ctx, chunks) {
  chunks.forEach((item, i) => {
    const [chunk, encoding] = Array.isArray(item) ? item : [item, undefined]
    const ret = encoding === undefined
      ? res.write(chunk, ctx.cb(`write${i}-cb`))
      : res.write(chunk, encoding, ctx.cb(`write${i}-cb`))
    ctx.record(`after write ${i}`, writeState(res, ret))
  })
}

// Ends the response with `last` (in `encoding` when given) and a callback,
// recording the state after end().
function endAndRecord (res, ctx, last, encoding) {
  if (encoding === undefined) {
    res.end(last, ctx.cb('end-cb'))
  } else {
    res.end(last, encoding, ctx.cb('end-cb'))
  }
  ctx.record('after end', writeState(res, null))
}

const MIXED = ['abc', Buffer.from('d\xe9f', 'latin1'), ['g\xe9', 'latin1'], 'caf\u00e9 \u2615',
  new Uint8Array([0x78, 0x79]), ['plain', 'utf8']]

// Each fixture: `writes` is how many write() calls the shim sends where
// chunkedWrite (the others are Node's), null when that depends on the line;
// `path` the end() path as in fixtures/responses.js. Where chunkedUncork,
// the count is that of the chunks held and sent (end()'s own included):
// some whenever `writes` is not 0.
const fixtures = [
  {
    name: 'writeHead without Content-Length, mixed chunks in one tick, end(chunk)',
    request: KEEP,
    path: TAIL,
    writes: MIXED.length,
    handler (req, res, ctx) {
      res.writeHead(200, { 'Content-Type': 'text/plain' })
      writeAll(res, ctx, MIXED)
      res.end('end', ctx.cb('end-cb'))
    }
  },
  {
    name: 'end(chunk) after writes: a Uint8Array, a latin1 string, a long string',
    request: [KEEP, KEEP, CLOSE],
    sequential: true,
    path: { [TAIL]: 3 },
    writes: 3,
    handler (req, res, ctx) {
      res.writeHead(200)
      writeAll(res, ctx, ['first '])
      const last = [Buffer.from('bytes'), 'caf\xe9', '\u00e9'.repeat(1500)][ctx.index]
      endAndRecord(res, ctx, last, ctx.index === 1 ? 'latin1' : undefined)
    }
  },
  {
    name: 'end(chunk) on a later tick than the writes, and with trailers',
    request: [KEEP, KEEP, CLOSE],
    sequential: true,
    path: chunkedTail
      ? { native: 3 }
      : TAIL === 'headers-sent' ? { 'headers-sent': 3 } : { [TAIL]: 1, 'headers-sent': 2 },
    writes: 3,
    handler (req, res, ctx) {
      res.writeHead(200, { Trailer: 'X-Sum' })
      writeAll(res, ctx, ['early '])
      if (ctx.index === 2) {
        // In the same tick, with a latin1 trailer value after a UTF-8 chunk.
        res.addTrailers({ 'X-Sum': 'ab\xe9' })
        res.end('l\u00e4te', ctx.cb('end-cb'))
        ctx.record('after end', writeState(res, null))
        return
      }
      return new Promise(resolve => setImmediate(() => {
        ctx.record('before end', writeState(res, null))
        if (ctx.index === 1) res.addTrailers({ 'X-Sum': 'abc' })
        res.end('late', ctx.cb('end-cb'))
        ctx.record('after end', writeState(res, null))
        resolve()
      }))
    }
  },
  {
    name: 'end(chunk) above the high-water mark after a write',
    request: KEEP,
    path: TAIL,
    writes: 1,
    handler (req, res, ctx) {
      res.writeHead(200)
      res.socket.on('drain', () => ctx.record('socket drain', writeState(res, null)))
      writeAll(res, ctx, ['x'.repeat(100)])
      res.end(Buffer.alloc(70000, 0x62), ctx.cb('end-cb'))
      ctx.record('after end', writeState(res, null))
    }
  },
  {
    name: 'end(chunk) after writes, on a strict Content-Length response or with an empty chunk',
    request: [KEEP, CLOSE],
    sequential: true,
    // The strict response is Node's; where heldTail, the empty chunk joins
    // the held ones.
    path: heldTail
      ? { native: 1, 'strict-content-length': 1 }
      : { [HELD]: 1, 'strict-content-length': 1 },
    writes: 1,
    handler (req, res, ctx) {
      if (ctx.index === 0) {
        res.writeHead(200)
        writeAll(res, ctx, ['some '])
        res.end(Buffer.alloc(0), ctx.cb('end-cb'))
        return
      }
      res.strictContentLength = true
      res.writeHead(200, { 'Content-Length': '8' })
      writeAll(res, ctx, ['four'])
      res.end('more', ctx.cb('end-cb'))
    }
  },
  {
    name: 'Content-Length framing: writes, then end(chunk) in the same tick',
    request: [KEEP, KEEP, KEEP, CLOSE],
    sequential: true,
    path: chunkedTail ? { native: 4 } : { 'headers-sent': 4 },
    writes: 0,
    handler (req, res, ctx) {
      const last = ['tail', Buffer.from('tail'), new Uint8Array([0x74, 0x61, 0x69, 0x6c]), 't\xe0il'][ctx.index]
      if (ctx.index === 2) {
        res.setHeader('Content-Length', 12)
      } else {
        res.writeHead(200, { 'Content-Length': ctx.index === 3 ? '13' : '12' })
      }
      res.on('finish', () => ctx.record('finish', writeState(res, null)))
      writeAll(res, ctx, ['head', Buffer.from('body')])
      if (ctx.index === 3) {
        res.end(last, 'utf8')
      } else {
        res.end(last, ctx.cb('end-cb'))
      }
      ctx.record('after end', writeState(res, null))
    }
  },
  {
    name: 'Content-Length framing: end(chunk) above the high-water mark, a latin1 chunk, a corked socket',
    request: [KEEP, KEEP, CLOSE],
    sequential: true,
    path: chunkedTail ? { native: 3 } : { 'headers-sent': 3 },
    writes: 0,
    handler (req, res, ctx) {
      const big = 'z'.repeat(70000)
      const last = [big, 'caf\xe9', 'last'][ctx.index]
      res.writeHead(200, { 'Content-Length': String(5 + Buffer.byteLength(last, 'latin1')) })
      res.socket.on('drain', () => ctx.record('socket drain', writeState(res, null)))
      if (ctx.index === 2) res.socket.cork()
      writeAll(res, ctx, ['first'])
      endAndRecord(res, ctx, last, ctx.index === 1 ? 'latin1' : undefined)
    }
  },
  {
    name: 'Content-Length framing: end(chunk) with nothing waiting on the cork, end(\'\') then write()',
    request: [KEEP, CLOSE],
    sequential: true,
    // Node 20's end() writes an empty string after the chunk there, which
    // the shim leaves to it; Node 24.22's sends the chunk alone.
    // end('') in the same tick as the write sends both in one direct write.
    path: heldTail ? { native: 2 } : { native: 1, 'headers-sent': 1 },
    writes: 0,
    handler (req, res, ctx) {
      res.writeHead(200, { 'Content-Length': ctx.index === 0 ? '9' : '5' })
      writeAll(res, ctx, ['early'])
      if (ctx.index === 0) {
        return new Promise(resolve => setImmediate(() => {
          res.end('late', ctx.cb('end-cb'))
          ctx.record('after end', writeState(res, null))
          resolve()
        }))
      }
      res.end('', ctx.cb('empty-end-cb'))
      ctx.mark()
      res.write('late', ctx.cb('late-cb'))
    }
  },
  {
    // Strings of one encoding waiting on the cork are joined into one write
    // before end()'s uncork (lib/send.js, joinWaiting()): runs broken by a
    // Buffer, by another encoding or by the size cap, callbacks on each.
    name: 'Content-Length framing: writes of each kind joined before end(chunk)',
    request: [KEEP, KEEP, KEEP, CLOSE],
    sequential: true,
    path: chunkedTail ? { native: 4 } : { 'headers-sent': 4 },
    writes: 0,
    handler (req, res, ctx) {
      const runs = [
        ['a1', 'b2', 'caf\u00e9 \u2615', ['x\xe9', 'latin1'], ['yz', 'latin1'], Buffer.from('B'), 'c3', 'd4'],
        ['plain', ['ascii', 'utf8'], 'more', new Uint8Array([0x75, 0x38]), 'end of run'],
        ['s'.repeat(9000), 't'.repeat(9000), 'u'.repeat(9000), 'v'],
        [['l\xe0tin', 'latin1'], ['\xff\xfe', 'latin1'], 'utf\u00e9']
      ][ctx.index]
      const last = ['tail', Buffer.from('tail'), 'w'.repeat(3), 'fin\u00e9'][ctx.index]
      let length = Buffer.byteLength(last)
      for (const item of runs) {
        const [chunk, encoding] = Array.isArray(item) ? item : [item, 'utf8']
        length += typeof chunk === 'string' ? Buffer.byteLength(chunk, encoding) : chunk.byteLength
      }
      res.writeHead(200, { 'Content-Length': String(length) })
      res.on('finish', () => ctx.record('finish', writeState(res, null)))
      writeAll(res, ctx, runs)
      endAndRecord(res, ctx, last)
    }
  },
  {
    name: 'chunked framing: writes on an earlier tick, then writes and end(chunk) on a later one',
    request: [KEEP, CLOSE],
    sequential: true,
    path: chunkedTail ? { native: 2 } : { [HELD]: 2 },
    writes: null,
    handler (req, res, ctx) {
      res.writeHead(200, { 'Content-Type': 'text/plain' })
      writeAll(res, ctx, ['first ', 'tick '])
      return new Promise(resolve => setImmediate(() => {
        writeAll(res, ctx, ['second ', Buffer.from('tick '), ['\xe9t\xe9 ', 'latin1'], 'caf\u00e9 '])
        if (ctx.index === 0) {
          endAndRecord(res, ctx, 'done')
        } else {
          res.end(ctx.cb('end-cb'))
          ctx.record('after end', writeState(res, null))
        }
        resolve()
      }))
    }
  },
  {
    name: 'end(chunk) after write(): HTTP/1.0 (no framing), and HEAD (chunks dropped)',
    // HTTP/1.0 without a length ends the connection: it goes last.
    request: ['HEAD / HTTP/1.1\r\nHost: x\r\n\r\n', HTTP10_KEEP_ALIVE],
    sequential: true,
    // HEAD: write_() drops the chunk before the header is sent, and end()
    // sends the header alone.
    path: chunkedTail ? { native: 2 } : { native: 1, 'headers-sent': 1 },
    writes: 0,
    handler (req, res, ctx) {
      writeAll(res, ctx, ['raw '])
      res.end('bytes', ctx.cb('end-cb'))
      ctx.record('after end', writeState(res, null))
    }
  },
  {
    name: 'implicit header: setHeader, write, write, end()',
    request: KEEP,
    path: ENDED,
    writes: 2,
    handler (req, res, ctx) {
      res.setHeader('X-Stream', 'yes')
      writeAll(res, ctx, ['one', Buffer.from('two')])
      res.end(ctx.cb('end-cb'))
    }
  },
  {
    name: 'end() without a chunk after writes in the same tick, with latin1 trailers',
    request: KEEP,
    path: ENDED,
    writes: 3,
    handler (req, res, ctx) {
      res.writeHead(200, { Trailer: 'X-Sum' })
      writeAll(res, ctx, ['one ', 'tw\u00f6 ', ['thr\xe9e', 'latin1']])
      res.addTrailers({ 'X-Sum': 'ab\xe9' })
      res.end(ctx.cb('end-cb'))
      ctx.record('after end', writeState(res, null))
    }
  },
  {
    name: 'a write per tick, then end() on a later tick',
    request: KEEP,
    path: 'headers-sent',
    writes: 3,
    handler (req, res, ctx) {
      res.writeHead(200)
      return new Promise(resolve => {
        let i = 0
        const next = () => {
          if (i === 3) {
            res.end(ctx.cb('end-cb'))
            ctx.mark()
            resolve()
            return
          }
          writeAll(res, ctx, [`piece ${i++} `])
          setImmediate(next)
        }
        next()
      })
    }
  },
  {
    name: 'chunks above the high-water mark: write() returns false and drain follows',
    request: KEEP,
    path: ENDED,
    writes: 3,
    handler (req, res, ctx) {
      res.writeHead(200, { 'Content-Type': 'application/octet-stream' })
      res.on('drain', () => ctx.record('drain', writeState(res, null)))
      writeAll(res, ctx, ['x'.repeat(10000), Buffer.alloc(10000, 0x61), '\u00e9'.repeat(6000)])
      res.end(ctx.cb('end-cb'))
    }
  },
  {
    name: 'a header with latin1 chars, then a UTF-8 chunk',
    request: KEEP,
    path: ENDED,
    writes: 2,
    handler (req, res, ctx) {
      res.writeHead(200, { 'X-Name': 'Jos\xe9' })
      writeAll(res, ctx, ['na\u00efve \u2713', 'more'])
      res.end()
    }
  },
  {
    name: 'a header with latin1 chars, then a latin1 chunk',
    request: KEEP,
    path: ENDED,
    writes: 1,
    handler (req, res, ctx) {
      res.writeHead(200, { 'X-Name': 'Jos\xe9' })
      writeAll(res, ctx, [['caf\xe9', 'latin1']])
      res.end()
    }
  },
  {
    name: 'a header with latin1 chars, then ASCII chunks',
    request: [KEEP, CLOSE],
    sequential: true,
    path: chunkedTail ? { native: 2 } : { [HELD]: 2 },
    writes: 6,
    handler (req, res, ctx) {
      res.writeHead(200, { 'X-Name': 'Jos\xe9' })
      writeAll(res, ctx, ['plain ', ['latin1 ascii ', 'latin1'], Buffer.from('bytes ')])
      if (ctx.index === 0) {
        endAndRecord(res, ctx, 'done')
      } else {
        res.end()
      }
    }
  },
  {
    // Bytes and chars of the held chunks add up alike (a hex chunk has
    // fewer bytes than chars, a non-ASCII one more), yet not all are ASCII.
    name: 'a hex chunk and a non-ASCII chunk whose counts cancel out',
    request: KEEP,
    path: ENDED,
    writes: null,
    handler (req, res, ctx) {
      res.writeHead(200)
      writeAll(res, ctx, [['ab', 'hex'], '\u00e9', 'ascii'])
      res.end()
    }
  },
  {
    name: 'empty chunks and other encodings are Node\'s',
    request: KEEP,
    path: ENDED,
    writes: 1,
    handler (req, res, ctx) {
      res.writeHead(200)
      writeAll(res, ctx, ['', Buffer.alloc(0), ['6869', 'hex'], ['aGk=', 'base64'], 'ok'])
      res.end()
    }
  },
  {
    name: 'write(chunk) without a callback, encoding as the callback',
    request: KEEP,
    path: ENDED,
    writes: 2,
    handler (req, res, ctx) {
      res.writeHead(200)
      ctx.record('ret', res.write('no callback'))
      ctx.record('ret', res.write('callback second', ctx.cb('write-cb')))
      res.end()
    }
  },
  {
    // write() with Content-Length framing is Node's; end() in the same tick
    // sends what waits in one direct write (lib/protocol/streamed.js, sendWaiting()).
    name: 'Content-Length framing: write() is Node\'s, end() native',
    request: KEEP,
    path: 'native',
    writes: 0,
    handler (req, res, ctx) {
      res.writeHead(200, { 'Content-Length': '6' })
      writeAll(res, ctx, ['abc', 'def'])
      res.end()
    }
  },
  {
    name: 'HEAD: chunks dropped',
    request: 'HEAD / HTTP/1.1\r\nHost: x\r\n\r\n',
    // Nothing was sent: end() sends the header block alone.
    path: 'native',
    writes: 0,
    handler (req, res, ctx) {
      res.writeHead(200)
      writeAll(res, ctx, ['dropped'])
      res.end()
    }
  },
  {
    name: 'HTTP/1.0: no chunked framing',
    request: 'GET / HTTP/1.0\r\nHost: x\r\n\r\n',
    // A block Node rendered (Connection: close): no direct write.
    path: 'streamed',
    writes: 0,
    handler (req, res, ctx) {
      writeAll(res, ctx, ['raw ', 'bytes'])
      res.end()
    }
  },
  {
    name: 'a corked response: res.cork(), writes, res.uncork()',
    request: KEEP,
    path: ['headers-sent', 'socket-busy'],
    // Node 22 holds the chunks on a corked response: its own write().
    writes: null,
    handler (req, res, ctx) {
      res.writeHead(200)
      res.cork()
      writeAll(res, ctx, ['a', 'b'])
      res.uncork()
      ctx.record('after uncork', writeState(res, null))
      res.end()
    }
  },
  {
    name: 'write after end, write after destroy',
    request: CLOSE,
    path: { 'headers-sent': 1, finished: 1 },
    writes: 1,
    handler (req, res, ctx) {
      res.writeHead(200)
      writeAll(res, ctx, ['before'])
      return new Promise(resolve => setImmediate(() => {
        res.end()
        ctx.mark()
        ctx.record('after end', res.write('late', ctx.cb('late-cb')))
        res.end('again', ctx.cb('again-cb'))
        resolve()
      }))
    }
  },
  {
    name: 'invalid chunks throw as in Node',
    request: KEEP,
    path: ENDED,
    writes: 1,
    handler (req, res, ctx) {
      res.writeHead(200)
      for (const bad of [null, 42, {}, undefined]) {
        try {
          res.write(bad)
        } catch (err) {
          ctx.error(err)
        }
      }
      writeAll(res, ctx, ['fine'])
      res.end()
    }
  },
  {
    name: 'keep-alive: streamed, single-shot and streamed again',
    request: [KEEP, KEEP, CLOSE],
    sequential: true,
    path: { native: 1, 'headers-sent': 2 },
    writes: 4,
    handler (req, res, ctx) {
      if (ctx.index === 1) {
        res.end('single')
        return
      }
      res.writeHead(200, { 'Content-Type': 'text/plain' })
      return new Promise(resolve => setImmediate(() => {
        writeAll(res, ctx, [`stream ${ctx.index} `, Buffer.from('tail')])
        setImmediate(() => {
          res.end(ctx.cb('end-cb'))
          resolve()
        })
      }))
    }
  }
]

for (const fx of fixtures) {
  t.test(fx.name, async t => {
    const { native } = await checkParity(t, fx)
    const writes = native.stats.writes
    if (chunkedWrite) {
      if (fx.writes !== null) {
        t.equal(writes.native, fx.writes, `${fx.writes} write() calls took the shim's path`)
      }
    } else if (chunkedUncork) {
      if (fx.writes !== null) {
        t.equal(writes.native > 0, fx.writes > 0, 'the held chunks took the shim\'s path: ' + writes.native)
      }
    } else {
      t.equal(writes.native, 0, 'write() is Node\'s own on this line')
    }
  })
}

t.test('the write() and uncork() wrappers follow install() and uninstall()', async t => {
  const proto = http.ServerResponse.prototype
  for (const [name, applies] of [['write', chunkedWrite], ['uncork', chunkedUncork]]) {
    t.equal(Object.getOwnPropertyDescriptor(proto, name), undefined,
      `ServerResponse inherits ${name}() while uninstalled`)
    const uninstall = shim.install()
    try {
      if (applies) {
        t.not(proto[name], http.OutgoingMessage.prototype[name], `installed: ${name}() is the shim's`)
      } else {
        t.equal(proto[name], http.OutgoingMessage.prototype[name], `${name}() untouched on this line`)
      }
    } finally {
      uninstall()
    }
    t.equal(Object.getOwnPropertyDescriptor(proto, name), undefined, 'uninstall() restores it')
  }
})

t.test('a wrapper of OutgoingMessage#write or #uncork installed later is honoured', async t => {
  const OM = http.OutgoingMessage.prototype
  // The method the shim replaces on this line (write() by default).
  const name = chunkedUncork ? 'uncork' : 'write'
  const original = OM[name]
  let calls = 0
  const fx = {
    name: `wrapped OutgoingMessage#${name}`,
    request: KEEP,
    path: ['headers-sent', 'socket-busy'],
    handler (req, res, ctx) {
      res.writeHead(200)
      writeAll(res, ctx, ['wrapped'])
      res.end()
    }
  }
  const uninstall = shim.install()
  OM[name] = function wrapped (...args) {
    calls++
    return original.apply(this, args)
  }
  let result
  try {
    result = await capture(fx, { patched: false })
  } finally {
    OM[name] = original
    uninstall()
  }
  t.ok(calls >= 1, 'the wrapper ran')
  t.equal(result.stats.writes.native, 0, 'the shim left the chunk to it')
  t.equal(result.parsed.error, null, 'the response parses')
})

// lib/send.js joinWaiting() on a real TCP connection: the writes waiting on
// the server socket's cork, each with a callback, joined (join true) or
// left as they are, then uncorked. Returns what a user can observe, and
// the waiting writes right after the join.
async function corkedWrites (items, { join, patchWritev = false, busy = false }) {
  const { joinWaiting } = require('../lib/send.js')
  const server = net.createServer()
  await new Promise(resolve => server.listen(0, '127.0.0.1', resolve))
  const client = net.connect(server.address().port, '127.0.0.1')
  const [socket] = await once(server, 'connection')
  const received = []
  client.on('data', (data) => received.push(data))
  if (patchWritev) socket._writev = function (chunks, cb) { return net.Socket.prototype._writev.call(this, chunks, cb) }
  const calls = []
  // A write the kernel cannot take at once: the Writable waits on it.
  if (busy) socket.write(Buffer.alloc(32 << 20, 0x2e))
  socket.cork()
  items.forEach(([chunk, encoding], i) => {
    socket.write(chunk, encoding, (err) => calls.push([i, err]))
  })
  const state = socket._writableState
  const before = { length: state.length, pendingcb: state.pendingcb, bytesWritten: socket.bytesWritten }
  if (join) joinWaiting(socket)
  const waiting = state.buffered.slice(state.bufferedIndex).map(e => [e.chunk, e.encoding])
  const allBuffers = state.allBuffers
  const after = { length: state.length, pendingcb: state.pendingcb, bytesWritten: socket.bytesWritten }
  socket.uncork()
  const uncorked = { length: state.length, pendingcb: state.pendingcb }
  await new Promise(resolve => setImmediate(resolve))
  const settled = { pendingcb: state.pendingcb, bytesWritten: socket.bytesWritten, calls }
  socket.end()
  await once(client, 'end')
  client.destroy()
  server.close()
  return { before, after, uncorked, settled, waiting, allBuffers, bytes: Buffer.concat(received) }
}

// Where the shim is inactive (lib/internals.js found no socket state to
// rely on), joinWaiting() leaves every write as it is.
const canJoin = internals !== null && internals.socketState !== null

t.test('joinWaiting(): strings of one encoding joined into one write, the rest as they are', async t => {
  const items = [['a1', 'utf8'], ['b2', 'utf8'], ['caf\u00e9', 'utf8'], [Buffer.from('B')],
    ['c\xe9', 'latin1'], ['d', 'latin1'], ['ascii', 'utf8'], ['only', 'utf8'], ['z', 'utf8']]
  const plain = await corkedWrites(items, { join: false })
  const joined = await corkedWrites(items, { join: true })
  t.strictSame(joined.waiting, canJoin
    ? [
        ['a1b2caf\u00e9', 'utf8'], [Buffer.from('B'), 'buffer'], ['c\xe9d', 'latin1'],
        // An ASCII run goes out as latin1: the same bytes.
        ['asciionly', 'latin1'], ['z', 'utf8']
      ]
    : plain.waiting, 'three runs joined, the last write left alone')
  t.equal(plain.waiting.length, items.length, 'without the join every write waits on its own')
  t.equal(joined.allBuffers, false, 'a UTF-8 string stays a string, so the writev is not all Buffers')
  t.equal(joined.after.pendingcb, joined.before.pendingcb - (canJoin ? 4 : 0),
    'the pending callbacks drop by the writes joined away')
  t.strictSame(joined.after.length, joined.before.length, 'writableLength unchanged')
  t.strictSame(joined.after.bytesWritten, joined.before.bytesWritten, 'bytesWritten unchanged')
  t.strictSame(joined.uncorked, plain.uncorked, 'the same counts once the writev went out')
  t.strictSame(joined.settled, plain.settled, 'the same callbacks, in order, with the same arguments')
  t.equal(joined.settled.calls.length, items.length, 'every write\'s callback ran')
  t.strictSame(joined.bytes, plain.bytes, 'the same bytes on the wire')
})

t.test('joinWaiting(): runs capped at 16 KiB chars; nothing joined below three writes or with a replaced _writev', async t => {
  const big = [['x'.repeat(10000), 'utf8'], ['y'.repeat(7000), 'utf8'], ['z'.repeat(100), 'utf8'], ['w', 'utf8'], ['end', 'utf8']]
  const capped = await corkedWrites(big, { join: true })
  t.strictSame(capped.waiting.map(([chunk, encoding]) => [chunk.length, encoding]), canJoin
    ? [[10000, 'buffer'], [7101, 'buffer'], [3, 'buffer']]
    : big.map(([chunk, encoding]) => [chunk.length, encoding]),
  'a run stops before it passes the cap; all ASCII, the writes go as Buffers')
  t.equal(capped.allBuffers, canJoin, 'the Writable\'s allBuffers says so')
  t.strictSame(capped.bytes, (await corkedWrites(big, { join: false })).bytes, 'the same bytes')
  const two = await corkedWrites([['a', 'utf8'], ['b\xe9', 'latin1']], { join: true })
  t.strictSame(two.waiting, canJoin
    ? [[Buffer.from('a'), 'buffer'], [Buffer.from('b\xe9', 'latin1'), 'buffer']]
    : [['a', 'utf8'], ['b\xe9', 'latin1']],
  'two waiting writes stay two, as Buffers')
  t.strictSame(two.bytes, Buffer.from('ab\xe9', 'latin1'))
  const one = await corkedWrites([['a', 'utf8']], { join: true })
  t.strictSame(one.waiting, [['a', 'utf8']], 'one waiting write is left as it is (a write of its own, not a writev)')
  const patched = await corkedWrites([['a', 'utf8'], ['b', 'utf8'], ['c', 'utf8'], ['d', 'utf8']],
    { join: true, patchWritev: true })
  t.equal(patched.waiting.length, 4, 'a socket with its own _writev is left alone')
  t.equal(patched.bytes.toString(), 'abcd')
  const busy = await corkedWrites([['a', 'utf8'], ['b', 'utf8'], ['c', 'utf8'], ['d', 'utf8']],
    { join: true, busy: true })
  t.equal(busy.waiting.length, 4, 'nothing joined while a write is in progress (the uncork would not write them)')
  t.equal(busy.bytes.subarray(32 << 20).toString(), 'abcd')
})
