'use strict'

// The direct write (lib/send.js, src/send.c): a response whose header block
// is cached goes to the socket's descriptor in one sendmsg(), and the shim
// leaves what socket.write() would have left. Each test runs Node's own path
// and the shim's on a real server and compares what a user can observe:
// bytesWritten, writableLength, the idle timer, async resources, errors after
// a reset, event and tick order, and the bytes on the wire. Each one also
// checks that the direct path ran (stats().direct or .partial), so none
// passes by falling back to socket.write() on both runs.

const t = require('tap')
const asyncHooks = require('node:async_hooks')
const childProcess = require('node:child_process')
const http = require('node:http')
const net = require('node:net')
const path = require('node:path')
const internals = require('../lib/internals.js')
const protocolName = internals === null ? null : internals.protocol.name
const { performance } = require('node:perf_hooks')

const shim = require('../lib/index.js')
const binding = require('../lib/binding.js')
const { checkParity, makeCertificate } = require('./helpers/dual-path.js')
const { expectedPath, shimActive } = require('./helpers/expect-path.js')
const { parseResponse } = require('./helpers/llhttp.js')
const { RawClient } = require('./helpers/raw-client.js')
const { requests: { CLOSE, KEEP } } = require('./fixtures/responses.js')

t.jobs = 1

// Where the direct write can run at all: an active shim with an addon that
// can write to a descriptor (not Windows).
const canDirect = shimActive && binding !== null && binding.canSend === true
const { DEFAULT_MAX_BODY } = require('../lib/rules.js')

/**
 * Runs `fn` on Node's own path (patched false) or with the shim installed,
 * with fresh counters, and returns its result with the counters.
 */
async function onPath (patched, fn, options) {
  const uninstall = patched ? shim.install(options) : null
  shim.resetStats()
  try {
    const result = await fn()
    return { result, stats: shim.stats() }
  } finally {
    shim.resetStats()
    if (uninstall !== null) {
      if (options && options.maxBodySize !== undefined) shim.install({ maxBodySize: DEFAULT_MAX_BODY })
      uninstall()
    }
  }
}

async function listen (server) {
  await new Promise(resolve => server.listen(0, '127.0.0.1', resolve))
  return server.address().port
}

async function close (server) {
  server.closeAllConnections()
  await new Promise(resolve => server.close(() => resolve()))
}

function tick () {
  return new Promise(resolve => setImmediate(resolve))
}

function delay (ms) {
  return new Promise(resolve => setTimeout(resolve, ms))
}

function label (arg) {
  if (arg instanceof Error) return ':' + (arg.code ?? arg.name)
  if (typeof arg === 'boolean') return ':' + arg
  return ''
}

// Records every event in `names` on `emitter` as "who:name[:detail]".
function watch (events, who, emitter, names) {
  for (const name of names) emitter.on(name, arg => events.push(`${who}:${name}${label(arg)}`))
}

function wantDirect (t, stats, what = 'the direct path ran') {
  if (canDirect) {
    t.ok(stats.direct + stats.partial > 0, what, { stats })
  } else {
    t.equal(stats.direct + stats.partial, 0, 'no direct write on this platform')
  }
}

// --- 1. bytesWritten over many keep-alive responses -------------------------

const MARK = '#end#'

/**
 * Serves `count` sequential keep-alive requests on one connection and
 * records the socket's bytesWritten right after end() and in 'finish' for
 * every response, then after the server destroys the socket.
 */
async function bytesWrittenRun (variant, count) {
  const afterEnd = []
  const inFinish = []
  let lastSocket = null
  let n = 0
  const server = http.createServer((req, res) => {
    const i = n++
    const socket = req.socket
    res.sendDate = false
    const body = 'x'.repeat(i % 97) + MARK
    if (variant === 'writeHead') {
      res.writeHead(200, { 'Content-Type': 'text/plain', 'Content-Length': body.length })
    } else {
      res.setHeader('Content-Type', 'text/plain')
      res.setHeader('Content-Length', body.length)
    }
    res.on('finish', () => { inFinish[i] = socket.bytesWritten })
    res.end(body)
    afterEnd[i] = socket.bytesWritten
    lastSocket = socket
  })
  const port = await listen(server)
  const client = net.connect(port, '127.0.0.1')
  const chunks = []
  let received = 0
  let tail = ''
  let sent = 0
  await new Promise((resolve, reject) => {
    client.on('error', reject)
    client.on('connect', () => { sent++; client.write(KEEP) })
    client.on('data', chunk => {
      chunks.push(chunk)
      const text = tail + chunk.toString('latin1')
      let at = -1
      while ((at = text.indexOf(MARK, at + 1)) !== -1) received++
      tail = text.slice(-(MARK.length - 1))
      if (received === count) resolve()
      else if (received === sent) { sent++; client.write(KEEP) }
    })
  })
  await tick()
  const beforeDestroy = lastSocket.bytesWritten
  lastSocket.destroy()
  const afterDestroy = lastSocket.bytesWritten
  await new Promise(resolve => lastSocket.once('close', resolve))
  const afterClose = lastSocket.bytesWritten
  client.destroy()
  await close(server)
  const raw = Buffer.concat(chunks)
  return { afterEnd, inFinish, beforeDestroy, afterDestroy, afterClose, raw }
}

t.test('socket.bytesWritten after end(), in finish and after destroy(), 1000 keep-alive responses', async t => {
  for (const variant of ['writeHead', 'setHeader']) {
    await t.test(variant, async t => {
      const count = 1000
      const legacy = await onPath(false, () => bytesWrittenRun(variant, count))
      const native = await onPath(true, () => bytesWrittenRun(variant, count))
      const l = legacy.result
      const n = native.result
      t.equal(l.afterEnd.length, count, 'every response ran')
      t.strictSame(n.afterEnd, l.afterEnd, 'bytesWritten right after end(), per response')
      t.strictSame(n.inFinish, l.inFinish, 'bytesWritten in finish, per response')
      t.equal(n.beforeDestroy, l.beforeDestroy, 'bytesWritten before destroy()')
      t.equal(n.afterDestroy, l.afterDestroy, 'bytesWritten right after destroy() (the copy Node keeps)')
      t.equal(n.afterClose, l.afterClose, 'bytesWritten after close')
      t.equal(n.afterClose, n.raw.length, 'what the client received')
      t.equal(n.raw.toString('latin1'), l.raw.toString('latin1'), 'same bytes on the wire')
      const parsed = parseResponse(n.raw, { eof: false })
      t.equal(parsed.error, null, 'the stream parses')
      t.equal(parsed.messages.length, count, 'one message per request')
      t.strictSame(legacy.stats.direct, 0)
      if (canDirect) {
        t.equal(native.stats.direct, count, 'every response was written directly')
      } else {
        wantDirect(t, native.stats)
      }
    })
  }
})

// --- 2. A slow reader: partial writes -----------------------------------------

// The scenario runs in a child under test/fixtures/small-sndbuf.pl, which
// hands it sockets with small kernel buffers: with loopback's autotuned
// buffers a direct write that poll() allows always fits whole.
function runSlowReader (env = {}) {
  const perl = path.join(__dirname, 'fixtures', 'small-sndbuf.pl')
  const script = path.join(__dirname, 'fixtures', 'slow-reader.js')
  const out = childProcess.spawnSync('perl', [perl, process.execPath, script], {
    encoding: 'utf8', timeout: 30000, maxBuffer: 64 * 1024 * 1024, env: { ...process.env, ...env }
  })
  if (out.error) throw out.error
  if (out.status !== 0) throw new Error(`slow-reader exited with ${out.status}: ${out.stderr}`)
  return JSON.parse(out.stdout)
}

function checkSlowReaderInvariants (t, run, hwm) {
  const bad = []
  let cum = 0
  for (const r of run.responses) {
    cum += r.total
    const at = `response ${r.i}`
    if (r.cum !== cum) bad.push(`${at}: cum ${r.cum} != ${cum}`)
    if (r.owner) {
      // Written whole (synchronously), or all of it pending (counted in
      // chars for strings, as Writable counts them).
      if (r.end.socketLength !== 0 && r.end.socketLength !== r.before + r.pending) {
        bad.push(`${at}: writableLength after end() ${r.end.socketLength}, before ${r.before}, pending ${r.pending}`)
      }
      if (r.end.resLength !== r.end.socketLength) {
        bad.push(`${at}: res.writableLength ${r.end.resLength} != socket's ${r.end.socketLength}`)
      }
      if (r.end.bytesWritten !== cum) {
        bad.push(`${at}: bytesWritten after end() ${r.end.bytesWritten} != sum of sizes ${cum}`)
      }
      // Node's end() queues the whole message on a corked socket first.
      if (r.end.needDrain !== (r.total >= hwm) && r.before === 0) {
        bad.push(`${at}: writableNeedDrain ${r.end.needDrain} for a message of ${r.total}`)
      }
    }
    if (r.finish === null) {
      bad.push(`${at}: no finish`)
      continue
    }
    // In 'finish' this response's bytes reached the kernel: what was handed
    // over minus what is still pending covers it.
    const done = r.finish.bytesWritten - r.finish.socketLength
    if (done < cum) bad.push(`${at}: in finish, bytesWritten - writableLength ${done} < ${cum}`)
    if (r.finish.resLength !== 0 && r.finish.resLength !== r.finish.socketLength) {
      bad.push(`${at}: in finish, res.writableLength ${r.finish.resLength}`)
    }
  }
  t.strictSame(bad, [], 'invariants hold for every response')
}

for (const text of [false, true]) {
  const title = text
    ? 'slow reader, UTF-8 text bodies: partial writes leave what socket.write() leaves'
    : 'slow reader: partial writes leave what socket.write() leaves'
  t.test(title, { skip: process.platform === 'win32' && 'POSIX only' }, t => slowReader(t, text))
}

async function slowReader (t, text) {
  const { legacy, native, highWaterMark } = runSlowReader({ HTTP_ONESHOT_TEST_TEXT: text ? '1' : '0' })
  if (text) {
    t.ok(legacy.responses.every(r => r.pending < r.total), 'every body counts fewer chars than bytes')
  }
  for (const [name, run] of [['legacy', legacy], ['native', native]]) {
    await t.test(name, async t => {
      t.equal(run.parseError, null, 'the client parses the stream')
      t.equal(run.messages, run.responses.length, 'one message per response')
      t.ok(run.stalled < run.responses.length, 'the server stalled behind the reader')
      t.ok(run.responses.some(r => r.owner && r.end.socketLength > 0),
        'some response stayed pending in the socket')
      checkSlowReaderInvariants(t, run, highWaterMark)
    })
  }
  t.strictSame(native.finishOrder, legacy.finishOrder, 'same finish order')
  t.strictSame(native.finishOrder, legacy.responses.map(r => r.i), 'finish in response order')
  t.equal(native.responses.length, legacy.responses.length, 'same number of responses')
  t.equal(native.bytes, legacy.bytes, 'byte-identical streams')
  t.equal(legacy.stats.native + legacy.stats.direct + legacy.stats.partial, 0)
  if (canDirect) {
    t.ok(native.stats.partial >= 1, 'a direct write went out in part', { stats: native.stats })
    t.ok(native.stats.direct >= 1, 'and some whole', { stats: native.stats })
  } else {
    wantDirect(t, native.stats)
  }
}

// Bodies above the copy cap and the high-water mark (16 KiB on Node 20,
// 64 KiB from 22): the direct write takes what the kernel buffer holds and
// the rest of the body goes to socket.write() without a copy. Strings
// (ASCII and latin1) and Buffers alternate.
for (const size of [40000, 100000]) {
  t.test(`slow reader, ${size}-byte bodies: the rest written without a copy`, { skip: process.platform === 'win32' && 'POSIX only' }, async t => {
    const { legacy, native, highWaterMark } = runSlowReader({
      HTTP_ONESHOT_TEST_BODY: String(size), HTTP_ONESHOT_TEST_STRINGS: '1', HTTP_ONESHOT_TEST_REQUESTS: '16'
    })
    for (const [name, run] of [['legacy', legacy], ['native', native]]) {
      await t.test(name, async t => {
        t.equal(run.parseError, null, 'the client parses the stream')
        t.equal(run.messages, run.responses.length, 'one message per response')
        t.ok(run.responses.some(r => r.owner && r.end.socketLength > 0),
          'some response stayed pending in the socket')
        checkSlowReaderInvariants(t, run, highWaterMark)
      })
    }
    t.strictSame(native.finishOrder, legacy.finishOrder, 'same finish order')
    t.equal(native.bytes, legacy.bytes, 'byte-identical streams')
    if (canDirect) {
      t.ok(native.stats.partial >= 1, 'a direct write went out in part', { stats: native.stats })
      t.ok(native.stats.native >= 1, 'some went native', { stats: native.stats })
    }
  })
}

// --- 3. A reset --------------------------------------------------------------

/**
 * One connection; for request i `plan[i]` says how the server answers:
 * 'now' (end() at once), 'reset-unread' (the client resets, and end() runs
 * on the same timer turn, before the server's event loop has read the
 * reset), 'reset-read' (the client resets at once and end() runs 50 ms
 * later, after Node saw the reset). `body` is a size (a string body of
 * that many bytes) or one of the shapes of answerWith().
 */
async function resetRun (plan, body = 0) {
  const events = []
  let client = null
  let n = 0
  // Resolved at the last response's setImmediate: under load the answer's
  // timer can fire later than the client's close plus the grace below.
  let lastAnswered
  const answered = new Promise(resolve => { lastAnswered = resolve })
  const server = http.createServer((req, res) => {
    const i = n++
    const socket = req.socket
    const how = plan[i]
    res.sendDate = false
    if (i === 0) {
      watch(events, 'socket', socket, ['error', 'end', 'close', 'timeout', 'drain'])
    }
    watch(events, `res${i}`, res, ['prefinish', 'finish', 'close', 'error'])
    watch(events, `req${i}`, req, ['aborted', 'error', 'close'])
    const answer = () => {
      events.push(`res${i}:end:destroyed=${socket.destroyed}`)
      answerWith(res, body, i, err => events.push(`res${i}:cb${label(err)}:bytesWritten=${socket.bytesWritten}`))
      events.push(`res${i}:ended:writableLength=${socket.writableLength}:bytesWritten=${socket.bytesWritten}`)
      process.nextTick(() => events.push(`res${i}:tick`))
      setImmediate(() => {
        events.push(`res${i}:immediate`)
        if (i === plan.length - 1) lastAnswered()
      })
    }
    if (how === 'now') {
      answer()
    } else if (how === 'reset-unread') {
      // Two timers of one duration fire in order on the same loop turn,
      // with no I/O polled in between.
      setTimeout(() => client.socket.resetAndDestroy(), 20)
      setTimeout(answer, 20)
    } else {
      client.socket.resetAndDestroy()
      setTimeout(answer, 50)
    }
  })
  server.on('clientError', (err, socket) => {
    events.push('server:clientError' + label(err))
    socket.destroy()
  })
  const port = await listen(server)
  client = new RawClient({ port })
  await client.send(KEEP)
  for (let i = 1; i < plan.length; i++) {
    await client.waitFor(i)
    await client.send(KEEP)
  }
  await client.waitClose(2000)
  let timer
  await Promise.race([answered, new Promise(resolve => { timer = setTimeout(resolve, 5000) })])
  clearTimeout(timer)
  // The server side settles a few turns after the client's close.
  await delay(100)
  client.destroy()
  await close(server)
  return { events, bytes: client.bytes().toString('latin1') }
}

// Ends `res` with a body of `body` bytes (a string), or in one of these
// shapes: 'buffer', 'none' (end() alone), 'chunked-string',
// 'chunked-buffer', 'chunked-none' (writeHead() without Content-Length
// first), 'dropped' (a 204 given a body), 'streamed' and 'chunked-streamed'
// (a write() before end(chunk), with Content-Length or chunked framing).
function answerWith (res, body, i, callback) {
  if (typeof body === 'number') {
    res.end(body > 0 ? 'y'.repeat(body) : `answer ${i}`, callback)
    return
  }
  const [framing, kind] = body.startsWith('chunked-') ? ['chunked', body.slice(8)] : ['length', body]
  if (framing === 'chunked') res.writeHead(200, { 'Content-Type': 'text/plain' })
  if (kind === 'dropped') {
    res.statusCode = 204
    res.end(`answer ${i}`, callback)
  } else if (kind === 'buffer') {
    res.end(Buffer.from(`answer ${i}`), callback)
  } else if (kind === 'none') {
    res.end(callback)
  } else if (kind === 'streamed') {
    const last = `answer ${i}`
    if (framing === 'length') res.writeHead(200, { 'Content-Length': String(5 + last.length) })
    res.write('part ')
    res.end(last, callback)
  } else if (kind === 'streamed-end' || kind === 'streamed-buffer') {
    // write()s, then end() without a chunk.
    const text = `part answer ${i}`
    if (framing === 'length') res.writeHead(200, { 'Content-Length': String(text.length) })
    res.write(kind === 'streamed-end' ? text : Buffer.from(text))
    res.end(callback)
  } else {
    res.end(`answer ${i}`, callback)
  }
}

// The "not yet read" case needs the server's end() to run before its event
// loop polls the reset; on a loaded machine a timer can slip past a poll, so
// a run pair where either side saw the reset first is repeated (at most 5
// times) rather than compared.
async function unreadResetRuns (plan, body = 0) {
  const unread = `res${plan.length - 1}:end:destroyed=false`
  for (let attempt = 1; ; attempt++) {
    const legacy = await onPath(false, () => resetRun(plan, body))
    const native = await onPath(true, () => resetRun(plan, body))
    if ((legacy.result.events.includes(unread) && native.result.events.includes(unread)) ||
        attempt === 5) {
      return { legacy, native }
    }
  }
}

t.test('a client reset', async t => {
  await t.test('reset not yet read by the server when end() runs', async t => {
    const { legacy, native } = await unreadResetRuns(['reset-unread'])
    t.strictSame(native.result.events, legacy.result.events, 'same events, errors and order')
    t.match(legacy.result.events.join(' '), /socket:error:E(CONNRESET|PIPE)/, 'Node reports the reset')
    t.equal(native.result.bytes, '', 'the client got nothing')
    if (canDirect) {
      // The native path ran and its direct write met the reset: the
      // message went to socket.write(), which reported the same error.
      t.equal(native.stats.native, 1, 'the native path was taken')
      t.equal(native.stats.direct + native.stats.partial, 0, 'the direct write failed')
    }
  })
  // Node counts the bytes of a failed write in socket.bytesWritten when it
  // wrote a Buffer or several chunks, and not when it wrote one string:
  // which one depends on the body and the Node line.
  for (const body of ['buffer', 'none', 'dropped', 'chunked-string', 'chunked-buffer', 'chunked-none',
    'streamed', 'streamed-end', 'streamed-buffer', 'chunked-streamed']) {
    await t.test(`reset not yet read, end() with body shape ${body}`, async t => {
      const { legacy, native } = await unreadResetRuns(['reset-unread'], body)
      t.strictSame(native.result.events, legacy.result.events, 'same events, errors, byte counts and order')
      t.match(legacy.result.events.join(' '), /socket:error:E(CONNRESET|PIPE)/, 'Node reports the reset')
      // With Content-Length framing, end() after write() goes out in one
      // direct write (lib/protocol/streamed.js, sendWaiting()), whose failure Node's own
      // end() then reports; end(chunk) after chunked write()s is the shim's
      // where end() and write() are Node 20's (lib/shim.js, tailEnd).
      const native1 = body === 'chunked-streamed'
        ? shimActive && protocolName === 'node20' && internals.chunkedWrite
        : canDirect
      if (native1) t.equal(native.stats.native, 1, 'the native path was taken')
    })
  }
  await t.test('reset not yet read, a 64 KiB body: Node\'s own end() meets it', async t => {
    const { legacy, native } = await unreadResetRuns(['reset-unread'], 64 * 1024)
    t.strictSame(native.result.events, legacy.result.events, 'same events, errors and order')
    t.match(legacy.result.events.join(' '), /socket:error:E(CONNRESET|PIPE)/, 'Node reports the reset')
    t.equal(native.result.bytes, '', 'the client got nothing')
    if (canDirect) {
      // poll() saw the pending reset: nothing was written, and a body
      // above the copy cap goes back to Node's end() rather than a copy.
      t.strictSame(native.stats.reasons, { 'body-too-large': 1 }, 'Node\'s own end() wrote it')
      t.equal(native.stats.direct + native.stats.partial, 0, 'no direct write')
    }
  })
  await t.test('reset already read by the server', async t => {
    const legacy = await onPath(false, () => resetRun(['reset-read']))
    const native = await onPath(true, () => resetRun(['reset-read']))
    t.strictSame(native.result.events, legacy.result.events, 'same events, errors and order')
    t.strictSame(native.stats.reasons, expectedPath({ destroyed: 1 }), 'end() after the reset is Node\'s')
  })
  await t.test('reset after a first keep-alive response, not yet read', async t => {
    const { legacy, native } = await unreadResetRuns(['now', 'reset-unread'])
    t.strictSame(native.result.events, legacy.result.events, 'same events, errors and order')
    t.equal(native.result.bytes, legacy.result.bytes, 'same bytes on the wire')
    t.match(legacy.result.events.join(' '), /socket:error:E(CONNRESET|PIPE)/, 'Node reports the reset')
    wantDirect(t, native.stats, 'the first response was written directly')
    if (canDirect) t.equal(native.stats.native, 2, 'both responses took the native path')
  })
  await t.test('reset after a first keep-alive response, already read', async t => {
    const legacy = await onPath(false, () => resetRun(['now', 'reset-read']))
    const native = await onPath(true, () => resetRun(['now', 'reset-read']))
    t.strictSame(native.result.events, legacy.result.events, 'same events, errors and order')
    t.equal(native.result.bytes, legacy.result.bytes, 'same bytes on the wire')
    wantDirect(t, native.stats, 'the first response was written directly')
  })
})

// --- 4. socket.setTimeout: the write refreshes the idle timer -----------------

async function timeoutRun () {
  let endAt = 0
  let timeoutAt = 0
  const server = http.createServer((req, res) => {
    const socket = req.socket
    res.sendDate = false
    socket.setTimeout(400)
    socket.once('timeout', () => {
      timeoutAt = performance.now()
      socket.destroy()
    })
    setTimeout(() => {
      endAt = performance.now()
      res.end('late answer')
    }, 250)
  })
  // No keep-alive timer of the server's own after the response.
  server.keepAliveTimeout = 0
  const port = await listen(server)
  const client = new RawClient({ port })
  await client.send(KEEP)
  const closed = await client.waitClose(3000)
  client.destroy()
  await close(server)
  const parsed = client.parse(true)
  return { closed, sinceEnd: timeoutAt - endAt, messages: parsed.messages.length }
}

t.test('socket.setTimeout fires a full timeout after end()', async t => {
  const legacy = await onPath(false, timeoutRun)
  const native = await onPath(true, timeoutRun)
  for (const [name, run] of [['legacy', legacy], ['native', native]]) {
    t.ok(run.result.closed, `${name}: the timeout closed the connection`)
    t.equal(run.result.messages, 1, `${name}: the response arrived first`)
    // Not refreshed, the timer would fire ~150 ms after end().
    t.ok(run.result.sinceEnd >= 380 && run.result.sinceEnd < 1000,
      `${name}: 'timeout' ${Math.round(run.result.sinceEnd)} ms after end(), about 400`)
  }
  t.ok(Math.abs(native.result.sinceEnd - legacy.result.sinceEnd) < 200, 'both paths agree')
  wantDirect(t, native.stats)
})

// --- 5. Async hooks ----------------------------------------------------------

/**
 * Three sequential keep-alive responses under an enabled async hook that
 * counts init types from the handler's entry to an immediate queued after
 * end(), per response. The client sends nothing in that window (it answers
 * data, which the loop polls only after the immediate).
 */
async function hookRun (hookOn) {
  const perResponse = []
  let counts = null
  const hook = asyncHooks.createHook({
    init (id, type) {
      if (counts !== null) counts[type] = (counts[type] || 0) + 1
    }
  })
  const server = http.createServer((req, res) => {
    counts = {}
    const mine = counts
    res.sendDate = false
    res.setHeader('Content-Type', 'text/plain')
    res.end('hooked ' + perResponse.length)
    setImmediate(() => {
      counts = null
      perResponse.push(mine)
    })
  })
  const port = await listen(server)
  if (hookOn) hook.enable()
  let during
  try {
    const client = new RawClient({ port })
    for (let i = 0; i < 3; i++) {
      await client.send(i === 2 ? CLOSE : KEEP)
      await client.waitFor(i + 1)
    }
    await client.waitClose()
    client.destroy()
    during = shim.stats()
  } finally {
    hook.disable()
  }
  await close(server)
  return { perResponse, during }
}

t.test('async hooks with init: same resources as Node', async t => {
  const legacy = await onPath(false, () => hookRun(true))
  const native = await onPath(true, () => hookRun(true))
  t.equal(legacy.result.perResponse.length, 3)
  t.strictSame(native.result.perResponse, legacy.result.perResponse, 'same init types and counts per response')
  t.strictSame(native.result.perResponse.map(c => c.WRITEWRAP ?? 0),
    legacy.result.perResponse.map(c => c.WRITEWRAP ?? 0), 'same WRITEWRAP count')
  if (canDirect) t.equal(native.result.during.native, 3, 'the native path was taken')
  wantDirect(t, native.result.during, 'direct writes while the hook is enabled')
})

// A body end() drops (HEAD, 204, 304) still costs Node one tick, write_()'s
// process.nextTick(callback), queued before the write's own: the same
// resources in the same order on both paths, written directly or not.
const HEAD_KEEP = 'HEAD / HTTP/1.1\r\nHost: x\r\n\r\n'
const BODYLESS = [
  ['HEAD', (res) => res.end('dropped')],
  ['HEAD', (res) => { res.setHeader('Content-Length', 7); res.end('dropped') }],
  ['HEAD', (res) => res.end()],
  ['GET', (res) => { res.statusCode = 204; res.end(Buffer.from('dropped')) }],
  ['GET', (res) => { res.writeHead(304, { etag: '"a"' }); res.end('dropped') }],
  ['GET', (res) => res.end('a body')]
]

async function bodylessHookRun () {
  const perResponse = []
  let types = null
  const hook = asyncHooks.createHook({
    init (id, type) {
      if (types !== null) types.push(type)
    }
  })
  const server = http.createServer((req, res) => {
    types = []
    const mine = types
    res.sendDate = false
    BODYLESS[perResponse.length][1](res)
    setImmediate(() => {
      types = null
      perResponse.push(mine)
    })
  })
  const port = await listen(server)
  const methods = BODYLESS.map(([method]) => method)
  hook.enable()
  try {
    const client = new RawClient({ port, method: methods })
    for (let i = 0; i < BODYLESS.length; i++) {
      const text = methods[i] === 'HEAD' ? HEAD_KEEP : KEEP
      await client.send(i === BODYLESS.length - 1 ? CLOSE : text)
      await client.waitFor(i + 1)
    }
    await client.waitClose()
    client.destroy()
  } finally {
    hook.disable()
  }
  await close(server)
  return perResponse
}

t.test('async hooks: a dropped body costs the tick Node spends on it', async t => {
  const legacy = await onPath(false, bodylessHookRun)
  const native = await onPath(true, bodylessHookRun)
  t.equal(legacy.result.length, BODYLESS.length)
  t.strictSame(native.result, legacy.result, 'same init types in the same order per response')
  t.strictSame(native.stats.native, shimActive ? BODYLESS.length : 0, 'every response took the native path')
})

// --- 6. Pipelined requests ---------------------------------------------------

t.test('pipelined requests', async t => {
  await t.test('answered at once: only the first owns the socket', async t => {
    const { native } = await checkParity(t, {
      name: 'pipelined, at once',
      request: [KEEP, KEEP, KEEP, CLOSE],
      path: { native: 1, 'no-socket': 3 },
      handler (req, res, ctx) {
        res.setHeader('Content-Type', 'text/plain')
        res.end(`pipelined ${ctx.index}`, ctx.cb())
      }
    })
    wantDirect(t, native.stats)
  })
  await t.test('each answered once it owns the socket', async t => {
    const { native } = await checkParity(t, {
      name: 'pipelined, in turn',
      request: [KEEP, KEEP, KEEP, KEEP, CLOSE],
      path: { native: 5 },
      handler (req, res, ctx) {
        return new Promise(resolve => {
          const go = () => {
            const body = `in turn ${ctx.index}`
            res.writeHead(200, { 'Content-Type': 'text/plain', 'Content-Length': body.length })
            res.end(body, ctx.cb())
            ctx.mark()
            resolve()
          }
          if (res.socket) go()
          else res.once('socket', () => setImmediate(go))
        })
      }
    })
    if (canDirect) t.equal(native.stats.direct, 5, 'every response written directly')
    else wantDirect(t, native.stats)
  })
})

// --- 7. TLS ------------------------------------------------------------------

t.test('TLS never takes the direct path', async t => {
  let tls
  try {
    tls = makeCertificate()
  } catch (err) {
    t.skip('openssl is not available: ' + err.message)
    return
  }
  const { native } = await checkParity(t, {
    name: 'https',
    request: [KEEP, KEEP, CLOSE],
    sequential: true,
    path: { native: 3 },
    handler (req, res, ctx) {
      res.setHeader('Content-Type', 'text/plain')
      res.end(`secure ${ctx.index}`, ctx.cb())
    }
  }, { tls })
  t.equal(native.stats.direct, 0, 'no direct write on a TLS socket')
  t.equal(native.stats.partial, 0)
})

// --- 8. Event and tick order -------------------------------------------------

t.test('event and tick order of a direct write', async t => {
  for (const [name, request] of [['keep-alive', KEEP], ['Connection: close', CLOSE]]) {
    await t.test(name, async t => {
      const { native } = await checkParity(t, {
        name,
        request,
        handler (req, res, ctx) {
          res.writeHead(200, { 'Content-Type': 'text/plain', 'Content-Length': 5 })
          res.end('hello', ctx.cb('end-cb'))
          queueMicrotask(() => ctx.event('microtask'))
          ctx.mark() // queues a process.nextTick and a setImmediate
        }
      })
      if (canDirect) t.equal(native.stats.direct, 1, 'written directly')
      else wantDirect(t, native.stats)
      // Node's own order (as checkParity compared): the end callback rides
      // on 'finish' (Node 20/22) or runs just before it (24.21+, 26.8+),
      // the caller's tick runs after them and before 'close', the microtask
      // once the parser's callback returned.
      if (protocolName !== null) {
        const order = protocolName === 'node24'
          ? ['prefinish', 'end-cb', 'finish']
          : ['newListener:finish', 'prefinish', 'finish', 'end-cb']
        t.strictSame(native.events, [...order, 'tick', 'close', 'microtask', 'immediate'],
          'every event and callback, in order')
      }
    })
  }
})

// --- Regressions ----------------------------------------------------------------

// A block stored for setHeader() + end() (Content-Length appended by end())
// must never serve writeHead() without a Content-Length, which Node frames
// as chunked.
t.test('writeHead() without Content-Length after a setHeader() response of the same shape', async t => {
  for (const [name, second] of [['same state', KEEP], ['Connection: close', CLOSE]]) {
    await t.test(name, async t => {
      await checkParity(t, {
        name,
        request: [KEEP, second],
        sequential: true,
        path: { native: 2 },
        handler (req, res, ctx) {
          if (ctx.index === 0) {
            res.setHeader('Content-Type', 'text/plain')
            res.end('first')
          } else {
            res.writeHead(200, { 'Content-Type': 'text/plain' })
            res.end('second')
          }
        }
      })
    })
  }
})
