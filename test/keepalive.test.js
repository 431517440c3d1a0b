'use strict'

// Connection-level behaviour on both paths: many responses on one keep-alive
// socket (a framing mistake desynchronises every later response), pipelining,
// the per-socket request limit, HTTP/1.0, clients that go away, and socket
// write errors (Node's lib/_http_server.js resOnFinish(), socketOnError()).

const t = require('tap')

const { capture, checkParity } = require('./helpers/dual-path.js')
const { writeErrorReport } = require('./helpers/node-line.js')
const { bigPath, requests: { CLOSE, KEEP } } = require('./fixtures/responses.js')
const { expectedPath, renderedPath, tailPath } = require('./helpers/expect-path.js')

t.jobs = 1

const UV_EPIPE = -32

function bodies (capture) {
  return capture.parsed.messages.filter(m => m.statusCode >= 200).map(m => m.body.toString('latin1'))
}

// Six response shapes the native path handles, cycled through.
function answer (res, i) {
  const body = `response ${i} ` + 'x'.repeat(i * 37 % 300)
  switch (i % 6) {
    case 0: return res.end(body)
    case 1: return res.end(Buffer.from(body))
    case 2:
      res.writeHead(200, { 'content-type': 'text/plain', 'content-length': String(body.length) })
      return res.end(body, null, null)
    case 3:
      res.setHeader('Set-Cookie', [`n=${i}`, 'x=y'])
      return res.end(body, 'utf8')
    case 4:
      res.statusCode = 201
      return res.end(body, 'latin1')
    default:
      res.setHeader('Content-Length', body.length)
      return res.end(new Uint8Array(Buffer.from(body)))
  }
}

function expectedBody (i) {
  return `response ${i} ` + 'x'.repeat(i * 37 % 300)
}

t.test('100 sequential requests on one keep-alive socket', async t => {
  const requests = Array.from({ length: 100 }, (_, i) => (i === 99 ? CLOSE : KEEP))
  const { native } = await checkParity(t, {
    name: '100 sequential',
    request: requests,
    sequential: true,
    timeout: 10000,
    path: { native: 100 },
    handler (req, res, ctx) { answer(res, ctx.index) }
  })
  t.strictSame(bodies(native), requests.map((_, i) => expectedBody(i)), 'every body in order')
  t.equal(native.parsed.messages.filter(m => m.shouldKeepAlive).length, 99, 'kept alive until the last')
})

// HEAD, 204 and 304 between GETs on one keep-alive socket. The shapes share
// their status and headers between GET and HEAD, so a header block cached
// for one method is what a lookup for the other finds first: a GET block
// carries a Content-Length line (its hole) that a HEAD block must not, and
// a framing mistake desynchronises every later response on the socket.
const HEAD_KEEP = 'HEAD / HTTP/1.1\r\nHost: x\r\n\r\n'

function answerBodyless (req, res, shape, i) {
  const body = `body ${i}`
  switch (shape) {
    case 0:
      res.setHeader('X-Shape', 'a')
      return res.end(body)
    case 1:
      res.writeHead(200, { 'content-type': 'text/plain', 'content-length': String(body.length) })
      return res.end(body, null, null)
    case 2:
      res.statusCode = 204
      res.setHeader('X-Shape', 'a')
      return res.end()
    case 3:
      res.statusCode = 304
      res.setHeader('ETag', '"v1"')
      return res.end(Buffer.from(body))
    case 4:
      res.writeHead(204, {})
      return res.end(null, null, null)
    case 5:
      return res.end()
    case 6:
      res.setHeader('X-Shape', 'a')
      res.setHeader('Content-Length', body.length)
      return res.end(body)
    default:
      res.statusCode = 404
      res.setHeader('X-Shape', 'a')
      return res.end(body, 'latin1')
  }
}

const BODYLESS_SHAPES = 8

// Each shape (of `shapes`) answers a GET then a HEAD, then (second round)
// a HEAD then a GET, so each method meets the other's cached block.
function methodPlan (rounds, shapes) {
  const plan = []
  for (let r = 0; r < rounds; r++) {
    for (let shape = 0; shape < shapes; shape++) {
      const methods = r % 2 === 0 ? ['GET', 'HEAD'] : ['HEAD', 'GET']
      for (const method of methods) plan.push({ method, shape })
    }
  }
  return plan
}

function bodylessPlan (rounds) {
  return methodPlan(rounds, BODYLESS_SHAPES)
}

// The keep-alive requests of a plan, the last one closing the connection.
function planRequests (plan) {
  return plan.map(({ method }, i) => {
    const text = method === 'HEAD' ? HEAD_KEEP : KEEP
    return i === plan.length - 1 ? text.replace('\r\n\r\n', '\r\nConnection: close\r\n\r\n') : text
  })
}

t.test('HEAD, 204 and 304 between GETs on one keep-alive socket', async t => {
  const plan = bodylessPlan(4)
  const requests = planRequests(plan)
  const { native } = await checkParity(t, {
    name: 'bodyless interleaved',
    request: requests,
    sequential: true,
    timeout: 10000,
    path: { native: plan.length },
    handler (req, res, ctx) { answerBodyless(req, res, plan[ctx.index].shape, ctx.index) }
  })
  const messages = native.parsed.messages
  t.equal(messages.length, plan.length, 'one response per request')
  for (const [i, { method, shape }] of plan.entries()) {
    const m = messages[i]
    const names = m.headers.filter((h, j) => j % 2 === 0).map(h => h.toLowerCase())
    const userLength = shape === 1 || shape === 6
    const bodyless = method === 'HEAD' || shape === 2 || shape === 3 || shape === 4
    if (bodyless && !userLength) t.notOk(names.includes('content-length'), `#${i} ${method} shape ${shape}: no Content-Length`)
    const body = bodyless ? '' : shape === 5 ? '' : `body ${i}`
    t.equal(m.body.toString('latin1'), body, `#${i} ${method} shape ${shape}: body`)
    // The client's parser reads an unframed HEAD answer as the last one, so
    // the server's own word decides.
    t.equal(m.headers[m.headers.indexOf('Connection') + 1], i === plan.length - 1 ? 'close' : 'keep-alive')
  }
})

t.test('pipelined HEAD, 204 and GET requests', async t => {
  const plan = bodylessPlan(1)
  const requests = plan.map(({ method }) => (method === 'HEAD' ? HEAD_KEEP : KEEP))
  requests.push(CLOSE)
  await checkParity(t, {
    name: 'bodyless pipelined',
    request: requests,
    // The first response owns the socket; the others wait in outputData.
    path: { native: 1, 'no-socket': plan.length },
    handler (req, res, ctx) {
      if (ctx.index === plan.length) return res.end('last')
      answerBodyless(req, res, plan[ctx.index].shape, ctx.index)
    }
  })
})

t.test('pipelined requests written at once', async t => {
  const requests = Array.from({ length: 10 }, (_, i) => (i === 9 ? CLOSE : KEEP))
  const { native } = await checkParity(t, {
    name: '10 pipelined',
    request: requests,
    // The first response owns the socket; Node queues the others in
    // outputData with res.socket === null until their turn.
    path: { native: 1, 'no-socket': 9 },
    handler (req, res, ctx) { answer(res, ctx.index) }
  })
  t.strictSame(bodies(native), requests.map((_, i) => expectedBody(i)))
})

t.test('pipelined requests answered in reverse order', async t => {
  const requests = [KEEP, KEEP, KEEP, CLOSE]
  const { native } = await checkParity(t, {
    name: 'reverse order',
    request: requests,
    // Only the first response owns the socket when it ends; the rest ended
    // earlier, while queued.
    path: { native: 1, 'no-socket': 3 },
    handler (req, res, ctx) {
      // The last request is answered first; each earlier one on the loop
      // turn after its successor, so the order never depends on timers.
      const last = requests.length - 1
      return new Promise(resolve => {
        const go = () => setImmediate(() => {
          answer(res, ctx.index)
          ctx.mark()
          ctx.server.emit(`test:ended:${ctx.index}`)
          resolve()
        })
        if (ctx.index === last) go()
        else ctx.server.once(`test:ended:${ctx.index + 1}`, go)
      })
    }
  })
  t.strictSame(bodies(native), requests.map((_, i) => expectedBody(i)), 'responses keep request order')
})

t.test('pipelined requests answered after the previous one finished', async t => {
  const requests = [KEEP, KEEP, KEEP, CLOSE]
  const { native } = await checkParity(t, {
    name: 'in turn',
    request: requests,
    // Each response waits for its socket, so each one owns it when it ends.
    path: { native: 4 },
    handler (req, res, ctx) {
      return new Promise(resolve => {
        const go = () => {
          answer(res, ctx.index)
          ctx.mark()
          resolve()
        }
        if (res.socket) go()
        else res.once('socket', () => setImmediate(go))
      })
    }
  })
  t.strictSame(bodies(native), requests.map((_, i) => expectedBody(i)))
})

t.test('maxRequestsPerSocket', async t => {
  await t.test('limit reached on the third request', async t => {
    const { native } = await checkParity(t, {
      name: 'max 3',
      request: [KEEP, KEEP, KEEP],
      sequential: true,
      server: { maxRequestsPerSocket: 3 },
      path: { native: 3 },
      handler (req, res, ctx) { res.end(`r${ctx.index}`) }
    })
    const connection = native.parsed.messages.map(m => m.headers[m.headers.indexOf('Connection') + 1])
    t.strictSame(connection, ['keep-alive', 'keep-alive', 'close'])
    t.match(native.bytes, /Keep-Alive: timeout=5, max=3\r\n/)
  })
  await t.test('a request past the limit gets Node\'s 503', async t => {
    const { native } = await checkParity(t, {
      name: 'max 1, two pipelined',
      request: [KEEP, KEEP],
      server: { maxRequestsPerSocket: 1 },
      // Node's own 503 goes through end() too, queued behind the first.
      path: { native: 1, 'no-socket': 1 },
      // The first response already says Connection: close, so a client
      // parser refuses what follows; the server leaves closing to the client.
      malformed: true,
      client (client) {
        client.socket.on('data', () => {
          if (client.bytes().includes('\r\n0\r\n\r\n')) client.socket.end()
        })
      },
      handler (req, res, ctx) { res.end(`r${ctx.index}`) }
    })
    t.match(native.bytes, /^HTTP\/1\.1 200 OK\r\nConnection: close\r\n[^]*\r\n\r\nr0HTTP\/1\.1 503 Service Unavailable\r\n/)
  })
})

t.test('HTTP/1.0', async t => {
  await t.test('keep-alive with a user Content-Length, three requests', async t => {
    const keep10 = 'GET / HTTP/1.0\r\nHost: x\r\nConnection: keep-alive\r\n\r\n'
    const { native } = await checkParity(t, {
      name: 'HTTP/1.0 keep-alive',
      request: [keep10, keep10, 'GET / HTTP/1.0\r\nHost: x\r\n\r\n'],
      sequential: true,
      // The last, without a length, has a block Node renders.
      path: renderedPath({ native: 3 }, { native: 2, 'node-rendered': 1 }),
      handler (req, res, ctx) {
        const body = `one-oh ${ctx.index}`
        if (ctx.index < 2) res.setHeader('Content-Length', body.length)
        res.end(body)
      }
    })
    t.strictSame(bodies(native), ['one-oh 0', 'one-oh 1', 'one-oh 2'])
  })
  await t.test('without keep-alive the body is close-delimited', async t => {
    const { native } = await checkParity(t, {
      name: 'HTTP/1.0 close',
      request: 'GET / HTTP/1.0\r\nHost: x\r\n\r\n',
      path: renderedPath('native'),
      handler (req, res) { res.end('until close') }
    })
    t.notMatch(native.bytes, /Content-Length/)
    t.strictSame(bodies(native), ['until close'])
  })
})

t.test('clients that go away', async t => {
  await t.test('reset before the response is ready', async t => {
    const { native } = await checkParity(t, {
      name: 'reset early',
      request: KEEP,
      // By the time end() runs the socket closed and the response with it.
      path: 'destroyed',
      client (client) {
        client.ready.then(() => setTimeout(() => client.socket.resetAndDestroy(), 20))
      },
      handler (req, res, ctx) {
        return new Promise(resolve => {
          req.socket.once('close', () => {
            res.end('too late', ctx.cb())
            ctx.mark()
            resolve()
          })
        })
      }
    })
    t.equal(native.bytes, '', 'nothing to read')
  })
  for (const halfOpen of [false, true]) {
    await t.test(`half-close after the request, httpAllowHalfOpen ${halfOpen}`, async t => {
      const { native } = await checkParity(t, {
        name: 'half-close',
        request: KEEP,
        // Without half-open support the server ends its side at once and the
        // response has nowhere to go; with it, socketOnEnd marks the pending
        // response as the last one and it goes out before the close.
        path: halfOpen ? 'native' : 'socket-unwritable',
        setup (server) { server.httpAllowHalfOpen = halfOpen },
        client (client) {
          client.ready.then(() => setTimeout(() => client.socket.end(), 5))
        },
        handler (req, res, ctx) {
          return new Promise(resolve => {
            req.socket.once('end', () => setImmediate(() => {
              ctx.record('_last before end()', res._last)
              res.end('bye')
              ctx.mark()
              resolve()
            }))
          })
        }
      })
      t.strictSame(native.state[0].records, [['_last before end()', halfOpen]])
      t.strictSame(bodies(native), halfOpen ? ['bye'] : [])
    })
  }
  await t.test('reset in the middle of a large body', async t => {
    const { native, legacy } = await checkParity(t, {
      name: 'reset mid-body',
      request: KEEP,
      malformed: true,
      path: bigPath,
      client (client) {
        client.socket.once('data', () => client.socket.resetAndDestroy())
      },
      handler (req, res, ctx) {
        res.socket.on('close', () => ctx.event('socket-close'))
        res.end(Buffer.alloc(8 * 1024 * 1024, 0x61), ctx.cb())
      }
    })
    // Node 20 and 22 still emit 'finish' and call back without an error;
    // later lines emit no 'finish' and hand the failed write's error to the
    // callback (asked of Node by writeErrorReport()).
    const { finish } = await writeErrorReport()
    for (const c of [legacy, native]) {
      if (finish) {
        t.ok(c.events.includes('finish') && c.events.includes('cb') && c.events.includes('close'),
          'finish, the callback and close still happen (a reset during the write)')
      } else {
        t.ok(!c.events.includes('finish') && c.events.some(e => /^cb:./.test(e)) && c.events.includes('close'),
          'no finish; the callback gets the error, and close happens')
      }
    }
  })
})

t.test('reset in the middle of a streamed body whose writes the shim joined', async t => {
  // 4 MB in 2,000 writes of one tick, then end(chunk): more than the
  // kernel takes at once, so the writev is still going when the client's
  // reset arrives. The shim joins the waiting writes (lib/send.js,
  // joinWaiting()); what fails, and what every callback is told, must not
  // change.
  const piece = 'z'.repeat(2000)
  const { native, legacy } = await checkParity(t, {
    name: 'reset mid-stream',
    request: KEEP,
    malformed: true,
    path: tailPath('headers-sent'),
    client (client) {
      client.socket.once('data', () => client.socket.resetAndDestroy())
    },
    handler (req, res, ctx) {
      res.socket.on('close', () => ctx.event('socket-close'))
      res.writeHead(200, { 'Content-Type': 'text/plain' })
      for (let i = 0; i < 2000; i++) {
        res.write(piece, i === 0 ? ctx.cb('first-write') : i === 1999 ? ctx.cb('last-write') : undefined)
      }
      res.end('tail', ctx.cb())
      ctx.mark()
    }
  })
  // Both runs' events are compared whole above; these say what they hold.
  for (const c of [legacy, native]) {
    t.ok(c.events.includes('close'), 'the response closes')
    t.ok(c.events.some(e => e === 'first-write' || e.startsWith('first-write:')), 'the first write\'s callback ran')
  }
})

t.test('a write error on the second response of a connection', async t => {
  const { native } = await checkParity(t, {
    name: 'EPIPE on the second response',
    request: [KEEP, KEEP],
    sequential: true,
    path: { native: 2 },
    handler (req, res, ctx) {
      if (ctx.index === 0) {
        res.end('fine')
        return
      }
      const socket = res.socket
      socket.on('error', err => ctx.event(`socket-error:${err.code}:${err.syscall}`))
      socket.on('close', () => ctx.event('socket-close'))
      for (const name of ['writev', 'writeBuffer', 'writeUtf8String', 'writeLatin1String']) {
        socket._handle[name] = () => UV_EPIPE
      }
      res.end(Buffer.from('lost'), ctx.cb())
    }
  })
  // The sequence this Node line produces for a failed final write (see
  // regressions.test.js, 'a failed socket write is reported as legacy does').
  const report = await writeErrorReport()
  const order = report.finish
    ? ['1:prefinish', '1:finish', '1:cb', '1:close', 'clientError:EPIPE', '1:socket-error:EPIPE:write',
        '1:socket-close']
    : ['1:prefinish', `1:cb:${report.callbackError}`, 'clientError:EPIPE', '1:socket-error:EPIPE:write',
        '1:close', '1:socket-close']
  t.strictSame(native.events.filter(e => order.includes(e)), order, 'the sequence of a failed write')
  t.strictSame(bodies(native), ['fine'], 'only the first response arrived')
})

// Chunked framing (writeHead() without Content-Length) between
// length-framed responses with the same names on one keep-alive socket: a
// fresh response whose names equal a chunked block's must never take that
// block (end() appends Content-Length there), and a HEAD never frames.
function answerFraming (req, res, shape, i) {
  const body = `framed ${i} ` + 'y'.repeat(i * 13 % 40)
  switch (shape) {
    case 0:
      res.writeHead(200, { 'content-type': 'text/plain' })
      return res.end(body)
    case 1:
      res.writeHead(200, { 'content-type': 'text/plain', 'Transfer-Encoding': 'chunked' })
      return res.end(Buffer.from(body))
    case 2:
      res.writeHead(200, { 'content-type': 'text/plain', 'content-length': String(body.length) })
      return res.end(body)
    case 3:
      res.writeHead(200, { 'content-type': 'text/plain' })
      return res.end()
    case 4:
      res.setHeader('content-type', 'text/plain')
      return res.end(body)
    case 5:
      res.writeHead(200)
      return res.end(body, 'latin1')
    default:
      res.writeHead(200, 'Fine', { 'content-type': 'text/plain' })
      return res.end(new Uint8Array(0))
  }
}

const FRAMING_SHAPES = 7

t.test('chunked and length-framed responses on one keep-alive socket', async t => {
  const plan = methodPlan(4, FRAMING_SHAPES)
  const requests = planRequests(plan)
  const { native } = await checkParity(t, {
    name: 'framing interleaved',
    request: requests,
    sequential: true,
    timeout: 10000,
    path: { native: plan.length },
    handler (req, res, ctx) { answerFraming(req, res, plan[ctx.index].shape, ctx.index) }
  })
  const messages = native.parsed.messages
  t.equal(messages.length, plan.length, 'one response per request')
  for (const [i, { method, shape }] of plan.entries()) {
    const m = messages[i]
    const names = m.headers.filter((h, j) => j % 2 === 0).map(h => h.toLowerCase())
    const chunked = method === 'GET' && shape !== 2 && shape !== 4
    t.equal(names.includes('transfer-encoding'), chunked || shape === 1,
      `#${i} ${method} shape ${shape}: Transfer-Encoding`)
    const empty = method === 'HEAD' || shape === 3 || shape === 6
    const body = empty ? '' : `framed ${i} ` + 'y'.repeat(i * 13 % 40)
    t.equal(m.body.toString('latin1'), body, `#${i} ${method} shape ${shape}: body`)
  }
})

// A response that stops after its Content-Length was handed to the slot's
// memo but before C read it (a non-ASCII body at the high-water mark) must
// not leave C repeating the digits of the response before it.
t.test('a fallback between two responses of one slot keeps their lengths apart', async t => {
  const bodies = ['hello', 'h\xe9llo!', 'abcdefg', 'abcdefg']
  const { native } = await checkParity(t, {
    name: 'length memo across a fallback',
    request: [KEEP, KEEP, KEEP, CLOSE],
    sequential: true,
    path: { native: 3, 'non-ascii': 1 },
    handler (req, res, ctx) {
      res.setHeader('content-type', 'text/plain')
      if (ctx.index === 1) res.socket._writableState.highWaterMark = 16
      else res.socket._writableState.highWaterMark = 16384
      res.end(bodies[ctx.index])
    }
  })
  t.strictSame(native.parsed.messages.map(m => m.body.toString('utf8')), bodies)
})

// A user Connection: close the shim renders (lib/render.js userConnection()) ends the connection
// as Node's does: the pipelined request behind it is parsed and answered into a queue no socket
// ever takes, so its response never closes and both runs wait out the same timeout.
t.test('a pipelined request behind a user Connection: close is never answered', async t => {
  const fx = {
    name: 'user Connection: close, then a pipelined request',
    request: [KEEP, KEEP],
    timeout: 300,
    handler (req, res, ctx) {
      res.writeHead(200, { 'Content-Length': 2, Connection: 'close' })
      res.end(`r${ctx.index}`)
    }
  }
  const legacy = await capture(fx, { patched: false })
  const native = await capture(fx, { patched: true })
  t.equal(native.bytes, legacy.bytes, 'same bytes on the wire')
  t.strictSame(native.state, legacy.state, 'same response state')
  t.strictSame(native.events, legacy.events, 'same events in the same order')
  t.strictSame(native.path, expectedPath({ native: 1, 'no-socket': 1 }), 'the first response went natively')
  t.strictSame(bodies(native), ['r0'], 'one response on the wire')
  t.match(native.bytes, /^HTTP\/1\.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nr0$/)
  t.equal(native.timedOut, legacy.timedOut, 'both runs settled the same way')
})
