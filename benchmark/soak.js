'use strict'

// Memory soak of the native path: a server with http-oneshot installed (in a
// child process) answers `requests` keep-alive requests of mixed shapes sent
// by `conns` raw connections from this process, one request in flight per
// connection. The server's RSS and heapUsed are read after the warm-up, at
// `checkpoints` points during the run and at the end, each after a full GC,
// so the numbers show retained memory rather than garbage not yet
// collected. The run passes when every response arrived with the expected
// status and body length and the end RSS is at most `tolerance` percent
// above the start RSS; it exits non-zero otherwise.
//
//   node benchmark/soak.js [requests=1000000] [conns=8] [warmup=20000]
//     [checkpoints=10] [tolerance=10] [mode=native|legacy]
//
// mode=legacy runs the same load without install(), as the baseline to
// tell growth of the native path from growth of Node's own.
//
// A short run for CI: node benchmark/soak.js requests=50000

const { fork } = require('node:child_process')
const http = require('node:http')
const net = require('node:net')
const path = require('node:path')

const { parseArgs, runMain } = require('./lib/args.js')

// Response shapes, picked in turn by the request path. `status` and `len`
// (decoded body bytes) are what the client checks; `path` is what the shim
// is expected to do with it.
// end(chunk) after write() is native where Node's end() and write() are
// Node 20's (lib/shim.js, tailEnd), else Node's own (headers-sent, or
// socket-busy where the response holds the chunk on its cork).
function tailPath () {
  const internals = require(path.join(__dirname, '..', 'lib', 'internals.js'))
  if (internals === null) return 'headers-sent'
  if (internals.chunkedWrite && internals.protocol.name === 'node20') return 'native'
  return internals.chunkedUncork ? 'socket-busy' : 'headers-sent'
}
const JSON_BODY = JSON.stringify({ id: 42, name: 'soak', tags: ['a', 'b', 'c'], nested: { ok: true } })
const BIG_BODY = Buffer.alloc(20 * 1024, 'z')
const SHAPES = [
  { name: 'end(string)', status: 200, len: 11, path: 'native' },
  { name: 'end(Buffer)', status: 200, len: 64, path: 'native' },
  { name: 'writeHead+end', status: 200, len: 12, path: 'native' },
  { name: 'setHeader x10+end', status: 200, len: 5, path: 'native' },
  { name: '404', status: 404, len: 9, path: 'native' },
  { name: 'JSON', status: 200, len: Buffer.byteLength(JSON_BODY), path: 'native' },
  { name: 'HEAD', status: 200, len: 0, head: true, path: 'native' },
  { name: 'write+end (chunked)', status: 200, len: 10, path: tailPath() },
  { name: 'writeHead without CL (chunked)', status: 200, len: 7, path: 'native' },
  // Above the 4 KiB copy cap: native in a direct write, which an idle
  // keep-alive socket's kernel buffer takes whole.
  { name: '20 KiB Buffer', status: 200, len: BIG_BODY.length, path: 'native' }
]
const BUFFER_BODY = Buffer.alloc(64, 'b')

function handle (req, res) {
  const shape = Number(req.url.slice(1))
  switch (shape) {
    case 0: return res.end('hello world')
    case 1: return res.end(BUFFER_BODY)
    case 2:
      res.writeHead(200, { 'Content-Type': 'text/plain', 'Content-Length': '12' })
      return res.end('writeHead ok')
    case 3:
      for (let i = 0; i < 10; i++) res.setHeader('X-Header-' + i, 'value ' + i)
      return res.end('ten h')
    case 4:
      res.statusCode = 404
      return res.end('Not Found')
    case 5:
      res.setHeader('Content-Type', 'application/json; charset=utf-8')
      return res.end(JSON_BODY)
    case 6: return res.end('dropped for HEAD')
    case 7:
      res.write('first ')
      return res.end('last')
    case 8:
      res.writeHead(200, { 'Content-Type': 'text/plain' })
      return res.end('chunked')
    default: return res.end(BIG_BODY)
  }
}

// The server side, in the child process: listens, reports its port, and
// answers memory queries over IPC.
function serve () {
  const oneshot = require(path.join(__dirname, '..', 'lib', 'index.js'))
  if (process.env.SOAK_MODE !== 'legacy') oneshot.install()
  const server = http.createServer(handle)
  server.listen(0, '127.0.0.1', () => process.send({ type: 'port', port: server.address().port }))
  process.on('message', msg => {
    if (msg.type === 'memory') {
      if (typeof global.gc === 'function') global.gc()
      const { rss, heapTotal, heapUsed, external, arrayBuffers } = process.memoryUsage()
      process.send({ type: 'memory', rss, heapTotal, heapUsed, external, arrayBuffers, stats: oneshot.stats(), installed: oneshot.isInstalled() })
    } else if (msg.type === 'stop') {
      server.closeAllConnections()
      server.close(() => process.exit(0))
    }
  })
}

// One keep-alive connection with one request in flight, and a minimal
// response parser for the framings the shapes use (Content-Length and
// chunked; HEAD has no body).
class Connection {
  constructor (port, onResponse, onError) {
    this.onResponse = onResponse
    this.onError = onError
    this.buf = null
    this.shape = null
    this.need = -1 // body bytes still expected with Content-Length framing
    this.chunked = false
    this.status = 0
    this.bodyLen = 0
    this.socket = net.connect(port, '127.0.0.1')
    this.socket.setNoDelay(true)
    this.ready = new Promise((resolve, reject) => {
      this.socket.once('connect', resolve)
      this.socket.once('error', reject)
    })
    this.socket.on('data', chunk => this.data(chunk))
    this.socket.on('error', err => this.onError(err.message))
    this.socket.on('close', () => { if (this.shape !== null) this.onError('connection closed mid-response') })
  }

  send (shape) {
    this.shape = shape
    this.status = 0
    this.socket.write(`${SHAPES[shape].head ? 'HEAD' : 'GET'} /${shape} HTTP/1.1\r\nHost: soak\r\n\r\n`)
  }

  data (chunk) {
    this.buf = this.buf === null || this.buf.length === 0 ? chunk : Buffer.concat([this.buf, chunk])
    for (;;) {
      if (this.shape === null) {
        if (this.buf.length > 0) this.onError('bytes after a complete response')
        this.buf = null
        return
      }
      if (!this.step()) return
    }
  }

  // Consumes what it can; returns false when more bytes are needed.
  step () {
    const buf = this.buf
    if (this.status === 0) {
      const end = buf.indexOf('\r\n\r\n')
      if (end === -1) return false
      const head = buf.toString('latin1', 0, end)
      this.status = Number(head.slice(9, 12))
      this.bodyLen = 0
      const cl = /\r\ncontent-length: *(\d+)/i.exec(head)
      this.chunked = /\r\ntransfer-encoding: *chunked/i.test(head)
      this.need = SHAPES[this.shape].head ? 0 : this.chunked ? -1 : cl ? Number(cl[1]) : -2
      if (this.need === -2) this.onError('no framing: ' + head)
      this.buf = buf.subarray(end + 4)
      return true
    }
    if (!this.chunked) {
      if (buf.length < this.need) return false
      this.bodyLen = this.need
      this.buf = buf.subarray(this.need)
      this.done()
      return true
    }
    const line = buf.indexOf('\r\n')
    if (line === -1) return false
    const size = parseInt(buf.toString('latin1', 0, line), 16)
    if (size === 0) {
      // No trailers: the last chunk is "0\r\n\r\n".
      if (buf.length < line + 4) return false
      this.buf = buf.subarray(line + 4)
      this.done()
      return true
    }
    if (buf.length < line + 2 + size + 2) return false
    this.bodyLen += size
    this.buf = buf.subarray(line + 2 + size + 2)
    return true
  }

  done () {
    const shape = this.shape
    this.shape = null
    const want = SHAPES[shape]
    if (this.status !== want.status || this.bodyLen !== want.len) {
      this.onError(`${want.name}: status ${this.status}, body ${this.bodyLen} bytes; ` +
        `expected ${want.status}, ${want.len}`)
    }
    this.onResponse(this)
  }
}

function mb (bytes) {
  return (bytes / 1048576).toFixed(1) + ' MB'
}

async function main () {
  const config = parseArgs(process.argv.slice(2), {
    requests: 1000000, conns: 8, warmup: 20000, checkpoints: 10, tolerance: 10, mode: 'native'
  })
  if (config.mode !== 'native' && config.mode !== 'legacy') throw new Error('mode must be native or legacy')
  const legacy = config.mode === 'legacy'
  const { requests, conns, checkpoints, tolerance } = config
  const warmup = Math.min(config.warmup, Math.floor(requests / 5))

  const child = fork(__filename, ['--server'], {
    // The young generation's size is fixed, so V8 growing its semi-spaces
    // under load (empty heapTotal, not retained memory) cannot pass for a
    // leak in the RSS comparison.
    execArgv: ['--expose-gc', '--min-semi-space-size=16', '--max-semi-space-size=16'], stdio: 'inherit', env: { ...process.env, SOAK_MODE: config.mode }
  })
  const replies = []
  let childExited = false
  child.on('message', msg => { const r = replies.shift(); if (r) r(msg) })
  child.on('exit', () => { childExited = true })
  const ask = msg => new Promise(resolve => { replies.push(resolve); child.send(msg) })
  const { port } = await new Promise(resolve => replies.push(resolve))

  const errors = []
  const onError = message => { if (errors.push(message) <= 5) console.error('error: ' + message) }
  let sent = 0
  let received = 0
  let total = warmup
  let nextShape = 0
  let onIdle = null

  // Each completed response sends the next request on the same connection
  // until `total` requests went out.
  const onResponse = conn => {
    received++
    if (sent < total) {
      sent++
      conn.send(nextShape)
      nextShape = (nextShape + 1) % SHAPES.length
    }
    if (received === total && onIdle) onIdle()
    if (onTick) onTick(received)
  }
  let onTick = null
  const connections = []
  for (let i = 0; i < conns; i++) connections.push(new Connection(port, onResponse, onError))
  await Promise.all(connections.map(c => c.ready))

  // Runs until `count` more responses arrived; calls `tick(received)` after each.
  const phase = (count, tick) => new Promise(resolve => {
    total = received + count
    onTick = tick ?? null
    onIdle = resolve
    for (const conn of connections) {
      if (conn.shape === null && sent < total) {
        sent++
        conn.send(nextShape)
        nextShape = (nextShape + 1) % SHAPES.length
      }
    }
  })

  const rows = []
  const reading = async label => {
    const m = await ask({ type: 'memory' })
    rows.push({ label, requests: received - warmup, ...m })
    console.log(`${label.padEnd(12)} ${String(received - warmup).padStart(9)} req  rss ${mb(m.rss).padStart(9)}` +
      `  heapTotal ${mb(m.heapTotal).padStart(8)}  heapUsed ${mb(m.heapUsed).padStart(8)}` +
      `  external ${mb(m.external).padStart(8)}`)
    return m
  }

  console.log(`soak (${config.mode}): ${requests} requests (after ${warmup} warm-up), ${conns} keep-alive connections, ` +
    `${SHAPES.length} shapes in turn`)
  await phase(warmup)
  const start = await reading('start')
  if (start.installed === legacy) onError(`the shim is ${legacy ? '' : 'not '}installed in the server`)
  const base = start.stats

  const began = Date.now()
  const every = Math.max(1, Math.floor(requests / checkpoints))
  const pending = []
  await phase(requests, n => {
    const done = n - warmup
    if (done % every === 0 && done < requests) pending.push(reading('checkpoint'))
  })
  const seconds = (Date.now() - began) / 1000
  await Promise.all(pending)
  const end = await reading('end')

  for (const conn of connections) conn.socket.destroy()
  if (!childExited) {
    const exited = new Promise(resolve => child.once('exit', resolve))
    child.send({ type: 'stop' })
    await exited
  }

  const native = end.stats.native - base.native
  const fallback = end.stats.fallback - base.fallback
  const reasons = {}
  for (const [reason, n] of Object.entries(end.stats.reasons)) {
    const d = n - (base.reasons[reason] ?? 0)
    if (d > 0) reasons[reason] = d
  }
  const growth = (end.rss - start.rss) / start.rss * 100
  console.log(`${requests} responses in ${seconds.toFixed(1)} s (${Math.round(requests / seconds)} req/s); ` +
    `native ${native}, fallback ${fallback} ${JSON.stringify(reasons)}`)
  console.log(`rss ${mb(start.rss)} -> ${mb(end.rss)} (${growth >= 0 ? '+' : ''}${growth.toFixed(1)}%), ` +
    `heapUsed ${mb(start.heapUsed)} -> ${mb(end.heapUsed)}`)

  // Each shape ran requests/SHAPES.length times (give or take one); the
  // native share must match the shapes' expected paths.
  const expectedNative = legacy ? 0 : SHAPES.filter(s => s.path === 'native').length / SHAPES.length
  if (Math.abs(native / requests - expectedNative) > 0.01) {
    onError(`native share ${(native / requests).toFixed(3)}, expected ${expectedNative.toFixed(3)}`)
  }
  if (received - warmup !== requests) onError(`${received - warmup} responses, expected ${requests}`)
  const failures = []
  if (errors.length > 0) failures.push(`${errors.length} response errors`)
  if (growth > tolerance) failures.push(`rss grew ${growth.toFixed(1)}% (limit ${tolerance}%)`)
  if (failures.length === 0) {
    console.log('PASS')
  } else {
    console.log('FAIL: ' + failures.join('; '))
    process.exitCode = 1
  }
}

if (process.argv[2] === '--server') {
  serve()
} else {
  runMain(main)
}
