'use strict'

// Streamed bodies on both paths: files piped into the response
// (fs.createReadStream(file).pipe(res), stream.pipeline(), as
// express.static, res.sendFile, @fastify/static and koa-send do), an
// in-memory stream (hapi's payload), with Content-Length or chunked
// framing; a client that stops reading mid-body and resumes; a reset
// mid-body. Bytes, state, events and callbacks must be Node's; the paths
// are stated per shape (end() after write()s with Content-Length framing
// in the same tick goes out in one direct write: lib/send.js,
// sendWaiting()).

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const stream = require('node:stream')
const t = require('tap')

const { capture, checkParity } = require('./helpers/dual-path.js')
const { requests: { KEEP } } = require('./fixtures/responses.js')
const { expectedPath, heldPath } = require('./helpers/expect-path.js')

t.jobs = 1

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'http-oneshot-streamed-'))
t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }))

// A file of `size` bytes of printable text, so a mismatch shows.
function makeFile (size) {
  const file = path.join(dir, `body-${size}`)
  const line = 'abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ\n'
  fs.writeFileSync(file, line.repeat(Math.ceil(size / line.length)).slice(0, size))
  return file
}

function bodies (capture) {
  return capture.parsed.messages.filter(m => m.statusCode >= 200).map(m => m.body.length)
}

// The fields of a response and its socket that do not depend on when the
// file's reads complete against the socket's events: the rest of what
// checkParity() compares (the process's pending requests, the socket's
// read counts when the next request arrived) does, on both paths alike.
function settled (snapshot) {
  if (snapshot === undefined) return undefined
  const { finished, writableEnded, writableFinished, writableLength, writableCorked, outputSize, _headerSent } = snapshot
  const socket = snapshot.socket && {
    writableLength: snapshot.socket.writableLength,
    writableCorked: snapshot.socket.writableCorked,
    writableNeedDrain: snapshot.socket.writableNeedDrain
  }
  return { finished, writableEnded, writableFinished, writableLength, writableCorked, outputSize, _headerSent, socket }
}

// Each response's own events, in order, without the listeners a stream
// adds (when the next request's response gets its socket depends on when
// the file's reads complete).
function ownEvents (capture) {
  const byResponse = {}
  for (const e of capture.events) {
    if (e.includes('newListener') || /(^|:)(tick|immediate|socket)$/.test(e)) continue
    const at = e.indexOf(':')
    const key = at === -1 ? '' : e.slice(0, at)
    ;(byResponse[key] ??= []).push(e)
  }
  return byResponse
}

// checkParity() for a body read from a file: the bytes, the path, the
// response's own events in order, and its state at 'finish' and 'close'.
async function checkPiped (t, fx) {
  const legacy = await capture(fx, { patched: false })
  const native = await capture(fx, { patched: true })
  t.equal(native.bytes, legacy.bytes, 'same bytes on the wire')
  t.strictSame(ownEvents(native), ownEvents(legacy), 'same response events in the same order')
  const states = c => c.state.map(r => ({ finish: settled(r.state.finish), close: settled(r.state.close) }))
  t.strictSame(states(native), states(legacy), 'same response state at finish and close')
  t.strictSame(native.path, expectedPath(fx.path), 'path taken')
  t.equal(native.parsed.error, null, 'the response parses')
  t.notOk(native.timedOut, 'the exchange completed')
  return { legacy, native }
}

for (const size of [2 * 1024, 64 * 1024, 1024 * 1024]) {
  const file = makeFile(size)
  for (const framing of ['Content-Length', 'chunked']) {
    for (const how of ['pipe', 'pipeline']) {
      t.test(`${how}() of a ${size}-byte file, ${framing}`, async t => {
        const { native } = await checkPiped(t, {
          name: `${how} ${size} ${framing}`,
          request: [KEEP, KEEP],
          sequential: true,
          timeout: 10000,
          // The file's chunks arrive on later ticks, and end() (from the
          // stream's 'end') on a tick of its own with nothing waiting: Node's.
          path: { 'headers-sent': 2 },
          handler (req, res, ctx) {
            res.writeHead(200, framing === 'chunked' ? { 'Content-Type': 'text/plain' } : { 'Content-Length': size })
            res.on('drain', () => ctx.event('res-drain'))
            const source = fs.createReadStream(file)
            if (how === 'pipe') {
              source.pipe(res)
            } else {
              stream.pipeline(source, res, err => ctx.event('pipeline' + (err ? ':' + err.code : '')))
            }
          }
        })
        t.strictSame(bodies(native), [size, size], 'both bodies whole')
      })
    }
  }
}

t.test('an in-memory stream piped with Content-Length (hapi\'s payload)', async t => {
  const parts = ['hello ', 'from ', 'an ', 'in-memory ', 'stream']
  const size = parts.join('').length
  await checkParity(t, {
    name: 'Readable.from() piped',
    request: [KEEP, KEEP],
    sequential: true,
    // Readable.from() hands its chunks over on later ticks.
    path: { 'headers-sent': 2 },
    handler (req, res, ctx) {
      res.writeHead(200, { 'Content-Type': 'text/plain', 'Content-Length': size })
      stream.Readable.from(parts).pipe(res)
    }
  })
})

t.test('a stream whose chunks are all written in one tick, then end()', async t => {
  await checkParity(t, {
    name: 'a sync Readable piped',
    request: [KEEP, KEEP],
    sequential: true,
    path: { native: 2 },
    handler (req, res, ctx) {
      res.writeHead(200, { 'Content-Length': 15 })
      res.write('hello ', ctx.cb('w1'))
      res.write(Buffer.from('again '))
      res.write('!!!', ctx.cb('w3'))
      res.end(ctx.cb('end-cb'))
    }
  })
})

t.test('a client that stops reading mid-body, then resumes', async t => {
  // 8 MB in one write() and end() in the same tick: more than the kernel
  // takes at once, so the direct write goes out in part and the rest
  // through socket.write(), while the client does not read.
  const big = Buffer.alloc(8 * 1024 * 1024, 0x61)
  const { native } = await checkParity(t, {
    name: 'slow reader',
    request: KEEP,
    timeout: 20000,
    path: 'native',
    client (client) {
      client.socket.pause()
      setTimeout(() => client.socket.resume(), 200)
    },
    handler (req, res, ctx) {
      res.on('drain', () => ctx.event('res-drain'))
      res.socket.on('drain', () => ctx.event('socket-drain'))
      res.writeHead(200, { 'Content-Length': big.length })
      ctx.record('write', res.write(big, ctx.cb('write-cb')))
      res.end(ctx.cb('end-cb'))
      ctx.record('after end', [res.writableLength, res.socket.writableLength, res.writableNeedDrain])
    }
  })
  t.strictSame(bodies(native), [big.length])
})

t.test('a client that stops reading mid-body, writes on several ticks', async t => {
  const piece = Buffer.alloc(256 * 1024, 0x62)
  const { native } = await checkParity(t, {
    name: 'slow reader, ticks',
    request: KEEP,
    timeout: 20000,
    // end(chunk) with nothing waiting: Node's, but where Node 24.22's end()
    // sends the chunk alone (lib/shim.js, heldTail).
    path: heldPath('headers-sent'),
    client (client) {
      client.socket.pause()
      setTimeout(() => client.socket.resume(), 200)
    },
    handler (req, res, ctx) {
      res.writeHead(200, { 'Content-Length': piece.length * 8 + 4 })
      let n = 0
      const next = () => {
        while (n < 8) {
          n++
          if (!res.write(piece)) return res.once('drain', next)
        }
        res.end('done', ctx.cb('end-cb'))
      }
      next()
    }
  })
  t.strictSame(bodies(native), [piece.length * 8 + 4])
})

t.test('a reset in the middle of a streamed Content-Length body', async t => {
  const big = Buffer.alloc(8 * 1024 * 1024, 0x63)
  const { native, legacy } = await checkParity(t, {
    name: 'reset mid-body, streamed',
    request: KEEP,
    malformed: true,
    path: 'native',
    client (client) {
      client.socket.once('data', () => client.socket.resetAndDestroy())
    },
    handler (req, res, ctx) {
      res.socket.on('close', () => ctx.event('socket-close'))
      res.writeHead(200, { 'Content-Length': big.length + 5 })
      res.write(big, ctx.cb('write-cb'))
      res.end('tail!', ctx.cb('end-cb'))
    }
  })
  for (const c of [legacy, native]) {
    t.ok(c.events.includes('close'), 'the response closes')
    t.ok(c.events.some(e => e === 'write-cb' || e.startsWith('write-cb:')), 'the write\'s callback ran')
  }
})
