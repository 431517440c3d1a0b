'use strict'

// User-space instructions per request on the server's main thread, counted
// by valgrind's callgrind, for Node's own response path (legacy), the shim
// (native) and the limit stub side by side:
//   node benchmark/instructions.js [shapes=writehead,chunked,express3,headers20,head,status204,fastify,express]
//     [modes=legacy,native,limit] [warmup=10000] [requests=8000] [c=1]
//     [jobs=2] [runs=1] [seed=1] [node=<path>] [json=<file>] [semi=16] [ready=180]
//     [keep=<dir>] [flags=<node flag>,...] [env=<NAME=value>,...]
// Every measurement is a fresh server process under callgrind. The parent
// warms it up over c keep-alive connections, zeroes the counters with
// `callgrind_control -z`, sends `requests` more requests on the same
// connections, dumps with `callgrind_control -d` and divides the main
// thread's Ir by the number of requests. Unlike wall-clock or CPU time the
// count does not depend on the machine's load, so small differences show.
// Every server runs with a young generation of `semi` MiB
// (--min-semi-space-size = --max-semi-space-size): left to V8, it grows
// or not from run to run, and the scavenges per request with it, which
// moved the same code's count by up to 1.5k. semi=0 leaves V8's own sizing.
// V8 seeds its string hashes at random in every process, which orders the
// hash tables of dictionary-mode objects (`process`, whose nextTick Node
// reads several times a request, among them) differently each time: that
// moved the same code's count by up to 1.2k (writeHead shape, limit stub,
// Node 20.20.2: 31.3k and 32.5k). So every server of round r runs with
// --hash-seed=<seed + r - 1>: the same code counts the same (within 0.1k),
// and the modes of a round share their tables' layout. seed=0 leaves it to
// V8. With runs=N every measurement is made N times, in N rounds of all
// shapes and modes (N seeds), and the table shows each cell's median with
// its range, and the medians' difference and ratio.
// env= sets variables in every server's environment, HTTP_ONESHOT
// included (otherwise removed, so that each mode decides for itself):
// env=HTTP_ONESHOT=0 with modes=native runs the app with the preload in
// place and the package off, and env=STATIC_RETAIN_KIB=<n> sizes the
// static-files app's heap (benchmark/apps/static-files.js).

const { execFile, execFileSync, spawn } = require('node:child_process')
const fs = require('node:fs')
const net = require('node:net')
const os = require('node:os')
const path = require('node:path')
const { parseArgs, runMain, usage } = require('./lib/args.js')
const { getFreePort, lastStats } = require('./lib/child.js')
const { SERVER_DEFAULTS, checkConfig, parseModes, serverArgs } = require('./lib/config.js')
const { describeShim } = require('./lib/measure.js')
const { parseResponse } = require('./lib/response.js')

const ROOT = path.join(__dirname, '..')
const REGISTER = path.join(ROOT, 'register.js')
const REPORT_STATS = path.join(__dirname, 'lib', 'report-stats.js')

// Rows of the table. `config` overrides SERVER_DEFAULTS for
// benchmark/http/server.js; `app` is a framework app run with and without
// `node -r register.js` (the limit stub exists only in server.js).
// `body` is the body length every response must have (0 for a HEAD
// request and for 204), `status` its status (default 200), `method` the
// request method (default GET), `path` the request target (default /), `version` the request's HTTP version
// (default 1.1; 1.0 asks for keep-alive); `weight` is the rough run time
// under callgrind, to schedule the long runs first; `maxWarmup` and
// `maxRequests` cap warmup= and requests= for the shape.
const SHAPES = {
  writehead: {
    label: 'writeHead(200, {CT, CL}) + end(\'CCCC\')',
    config: {},
    body: 4,
    weight: 1
  },
  chunked: {
    label: 'writeHead(200, {CT}) + end(\'CCCC\') (chunked framing)',
    config: { chunkedEnc: 1 },
    body: 4,
    weight: 1
  },
  express3: {
    label: '3 × setHeader + end(Buffer) (express res.send)',
    config: { shape: 'express3' },
    body: 4,
    weight: 1
  },
  // express3 on a response whose writeHead() on-headers replaced, as
  // morgan (request logging) does on every response.
  hooked: {
    label: 'on-headers listener + 3 × setHeader + end(Buffer) (express with morgan)',
    config: { shape: 'hooked' },
    body: 4,
    weight: 1,
    optional: true
  },
  // The same over HTTP/1.0 with Connection: keep-alive, as ApacheBench
  // (`ab -k`) sends it: the response is the HTTP/1.1 one.
  express3http10: {
    label: '3 × setHeader + end(Buffer), HTTP/1.0 keep-alive request',
    config: { shape: 'express3' },
    version: '1.0',
    body: 4,
    weight: 1,
    optional: true
  },
  headers20: {
    label: '20 × setHeader + end(\'CC\')',
    config: { headers: 20, len: 2 },
    body: 2,
    weight: 1
  },
  head: {
    label: 'HEAD: writeHead(200, {CT, CL}) + end(\'CCCC\') (no body sent)',
    config: {},
    method: 'HEAD',
    body: 0,
    weight: 1
  },
  status204: {
    label: 'writeHead(204, {CT, CL}) + end(\'CCCC\') (no body sent)',
    config: { status: 204 },
    status: 204,
    body: 0,
    weight: 1
  },
  // Not in the default set: bodies above the 4 KiB copy cap, which go out
  // in a direct write (shapes=bytes16k,buffer16k,bytes64k,buffer64k).
  bytes16k: {
    label: 'writeHead(200, {CT, CL}) + end(16 KiB string)',
    config: { len: 16384 },
    body: 16384,
    weight: 1,
    optional: true
  },
  buffer16k: {
    label: 'writeHead(200, {CT, CL}) + end(16 KiB Buffer)',
    config: { type: 'buffer', len: 16384 },
    body: 16384,
    weight: 1,
    optional: true
  },
  bytes64k: {
    label: 'writeHead(200, {CT, CL}) + end(64 KiB string)',
    config: { len: 65536 },
    body: 65536,
    weight: 2,
    optional: true
  },
  buffer64k: {
    label: 'writeHead(200, {CT, CL}) + end(64 KiB Buffer)',
    config: { type: 'buffer', len: 65536 },
    body: 65536,
    weight: 2,
    optional: true
  },
  // Plain http servers: setHeader(), then writeHead(status) renders the
  // stored header, then end().
  stored: {
    label: 'setHeader(CT) + writeHead(200) + end(\'CCCC\') (chunked framing)',
    config: { shape: 'stored', chunkedEnc: 1 },
    body: 4,
    weight: 1,
    optional: true
  },
  // Streamed: three write() calls, then end() (Node's chunks=4 rows).
  chunks4: {
    label: 'writeHead(200, {CT}) + 3 × write + end (chunked framing, 1 KiB)',
    config: { chunks: 4, chunkedEnc: 1, len: 1024 },
    body: 1024,
    weight: 1,
    optional: true
  },
  chunks4cl: {
    label: 'writeHead(200, {CT, CL}) + 3 × write + end (1 KiB)',
    config: { chunks: 4, len: 1024 },
    body: 1024,
    weight: 1,
    optional: true
  },
  // writeHead(CL), the body in write() calls, end() without a chunk: h3,
  // hapi, send and serve-static (shapes=streamed,streamed2).
  streamed: {
    label: 'writeHead(200, {CT, CL}) + write(\'CCCC\') + end()',
    config: { shape: 'streamed' },
    body: 4,
    weight: 1,
    optional: true
  },
  streamed2: {
    label: 'writeHead(200, {CT, CL}) + 2 × write + end() (1 KiB)',
    config: { shape: 'streamed', chunks: 2, len: 1024 },
    body: 1024,
    weight: 1,
    optional: true
  },
  // Every response falls back (res.strictContentLength, which the shim
  // leaves to Node): what the shim's writeHead(), write() and end() cost
  // on top of Node's own path, for one end() and for write() + end().
  fallback: {
    label: 'strictContentLength: writeHead(200, {CT, CL}) + end(\'CCCC\'), Node\'s path',
    config: { strict: 1 },
    body: 4,
    weight: 1,
    optional: true
  },
  fallbackstreamed: {
    label: 'strictContentLength: writeHead(200, {CT, CL}) + write(\'CCCC\') + end(), Node\'s path',
    config: { shape: 'streamed', strict: 1 },
    body: 4,
    weight: 1,
    optional: true
  },
  // Every response falls back at end(), after the shim's writeHead()
  // rendered a Connection header (once Node's to render, hence the name).
  fallbacknode: {
    label: 'strictContentLength: writeHead(200, {CT, CL, Connection}) + end(\'CCCC\'), Node\'s path',
    config: { strict: 2 },
    body: 4,
    weight: 1,
    optional: true
  },
  // A user Connection header (once only Node's renderer's), sent by the shim.
  rendered: {
    label: 'writeHead(200, {CT, CL, Connection}) + end(\'CCCC\')',
    config: { strict: 3 },
    body: 4,
    weight: 1,
    optional: true
  },
  fastify: {
    label: 'fastify hello (GET /, JSON)',
    app: path.join(__dirname, 'apps', 'fastify-hello.js'),
    body: 17,
    weight: 2
  },
  express: {
    label: 'express hello (GET /, text)',
    app: path.join(__dirname, 'apps', 'express-hello.js'),
    body: 11,
    weight: 4
  },
  // Not in the default set (run only when named): the apps of the
  // frameworks beyond express and fastify, and static files.
  hono: {
    label: 'hono hello (GET /, c.text)',
    app: path.join(__dirname, 'apps', 'hono-hello.js'),
    body: 11,
    weight: 3,
    optional: true
  },
  honojson: {
    label: 'hono hello (GET /json, c.json)',
    app: path.join(__dirname, 'apps', 'hono-hello.js'),
    path: '/json',
    body: 17,
    weight: 3,
    optional: true
  },
  h3: {
    label: 'h3 hello (GET /, text: writeHead + write + end())',
    app: path.join(__dirname, 'apps', 'h3-hello.js'),
    body: 11,
    weight: 3,
    optional: true
  },
  koa: {
    label: 'koa hello (GET /, text: setHeader + end(body))',
    app: path.join(__dirname, 'apps', 'koa-hello.js'),
    body: 11,
    weight: 3,
    optional: true
  },
  hapi: {
    label: 'hapi hello (GET /, text: writeHead + write + end())',
    app: path.join(__dirname, 'apps', 'hapi-hello.js'),
    body: 11,
    weight: 4,
    optional: true
  },
  // express.static: setHeader() calls, then an fs.createReadStream() piped
  // into the response (one write() per 64 KiB read) and an empty end().
  static2k: {
    label: 'express.static, 2 KiB file',
    app: path.join(__dirname, 'apps', 'static-files.js'),
    path: '/2k.bin',
    body: 2048,
    weight: 4,
    optional: true
  },
  static64k: {
    label: 'express.static, 64 KiB file (at most 4000 + 2000 requests)',
    app: path.join(__dirname, 'apps', 'static-files.js'),
    path: '/64k.bin',
    body: 65536,
    weight: 4,
    maxWarmup: 4000,
    maxRequests: 2000,
    optional: true
  },
  static1m: {
    label: 'express.static, 1 MiB file (at most 1000 + 500 requests)',
    app: path.join(__dirname, 'apps', 'static-files.js'),
    path: '/1m.bin',
    body: 1048576,
    weight: 6,
    maxWarmup: 1000,
    maxRequests: 500,
    optional: true
  }
}

function requestBytes (method, version, target) {
  const keepAlive = version === '1.0' ? 'Connection: keep-alive\r\n' : ''
  return Buffer.from(`${method} ${target} HTTP/${version}\r\nHost: x\r\n${keepAlive}\r\n`, 'latin1')
}
const EMPTY = Buffer.alloc(0)

function log (line) {
  process.stderr.write(`${line}\n`)
}

// One keep-alive connection sending one request at a time.
class Client {
  constructor (socket, method = 'GET', version = '1.1', target = '/') {
    this.socket = socket
    this.requestBytes = requestBytes(method, version, target)
    this.head = method === 'HEAD'
    this.buf = EMPTY
    this.waiting = null
    this.error = null
    socket.setNoDelay(true)
    socket.on('data', (data) => this.onData(data))
    socket.on('error', (err) => this.fail(err))
    socket.on('close', () => this.fail(new Error('the server closed a keep-alive connection')))
  }

  onData (data) {
    this.buf = this.buf.length === 0 ? data : Buffer.concat([this.buf, data])
    if (this.waiting === null) return this.fail(new Error('unexpected bytes from the server'))
    let res
    try {
      res = parseResponse(this.buf, this.head)
    } catch (err) {
      return this.fail(err)
    }
    if (res === null) return
    if (res.size !== this.buf.length) return this.fail(new Error('bytes after the end of a response'))
    this.buf = EMPTY
    const { resolve } = this.waiting
    this.waiting = null
    resolve(res)
  }

  fail (err) {
    if (this.error === null) this.error = err
    if (this.waiting !== null) {
      const { reject } = this.waiting
      this.waiting = null
      reject(err)
    }
  }

  request () {
    if (this.error !== null) return Promise.reject(this.error)
    return new Promise((resolve, reject) => {
      this.waiting = { resolve, reject }
      this.socket.write(this.requestBytes)
    })
  }

  close () {
    this.error = new Error('closed')
    this.socket.destroy()
  }
}

function connect (port) {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1')
    socket.once('connect', () => {
      socket.removeListener('error', reject)
      resolve(socket)
    })
    socket.once('error', reject)
  })
}

/**
 * Sends `total` requests spread evenly over `clients`, each connection one
 * request at a time, and checks every response.
 *
 * @returns {Promise<{responses: number, bytes: number, sizes: Set<number>, head: string}>}
 */
async function sendRequests (clients, total, bodyLength, status) {
  const result = { responses: 0, bytes: 0, sizes: new Set(), head: '' }
  await Promise.all(clients.map(async (client, i) => {
    const count = Math.floor(total / clients.length) + (i < total % clients.length ? 1 : 0)
    for (let n = 0; n < count; n++) {
      const res = await client.request()
      if (res.status !== status) throw new Error(`status ${res.status}, expected ${status}`)
      if (res.body !== bodyLength) throw new Error(`body of ${res.body} bytes, expected ${bodyLength}`)
      result.responses++
      result.bytes += res.size
      result.sizes.add(res.size)
      if (result.head === '') result.head = res.head
    }
  }))
  return result
}

function run (file, args) {
  return new Promise((resolve, reject) => {
    execFile(file, args, { encoding: 'utf8' }, (err, stdout, stderr) => {
      if (err) {
        err.message += `\n${stdout}${stderr}`
        reject(err)
      } else {
        resolve(stdout)
      }
    })
  })
}

async function callgrindControl (flag, pid) {
  const out = await run('callgrind_control', [flag, String(pid)])
  if (!/OK/.test(out)) throw new Error(`callgrind_control ${flag} ${pid} did not confirm:\n${out}`)
}

function sleep (ms) {
  return new Promise((resolve) => setTimeout(resolve, ms))
}

/**
 * Reads the costs of every thread from the first dump of process `pid`
 * (callgrind names them <prefix>.<pid>.1-<thread>, thread 01 being the main
 * thread). Waits until the main thread's file is complete.
 *
 * @returns {Promise<{main: number, threads: Record<string, number>, fullGc: boolean}>}
 *   Ir, and whether a full collection ran on the main thread
 */
async function readDump (dir, pid) {
  const mainFile = path.join(dir, `cg.${pid}.1-01`)
  const deadline = Date.now() + 30e3
  while (!fs.existsSync(mainFile) || !/^totals:/m.test(fs.readFileSync(mainFile, 'latin1'))) {
    if (Date.now() > deadline) throw new Error(`no complete callgrind dump ${mainFile}`)
    await sleep(100)
  }
  const threads = {}
  let fullGc = false
  for (const name of fs.readdirSync(dir)) {
    const m = new RegExp(`^cg\\.${pid}\\.1-(\\d+)$`).exec(name)
    if (m === null) continue
    const text = fs.readFileSync(path.join(dir, name), 'latin1')
    const events = /^events:\s*(.*)$/m.exec(text)
    if (events === null || events[1].trim().split(/\s+/)[0] !== 'Ir') {
      throw new Error(`${name}: expected "events: Ir", got ${events && events[0]}`)
    }
    const summary = /^summary:\s*(\d+)/m.exec(text)
    if (summary === null) throw new Error(`${name}: no summary line`)
    threads[m[1]] = Number(summary[1])
    // A full (mark-compact) collection in the measured window adds 1-2k per
    // request to one server and not to the next; it shows as V8's
    // Heap::MarkCompact() on the main thread.
    if (m[1] === '01') fullGc = text.includes('Heap::MarkCompact()')
  }
  return { main: threads['01'], threads, fullGc }
}

/**
 * Starts `node <nodeArgs>` under callgrind with PORT set and resolves once
 * the port accepts connections.
 */
async function startServer ({ node, nodeArgs, dir, readyTimeout, extraEnv }) {
  const port = await getFreePort()
  const env = { ...process.env, PORT: String(port) }
  // Each variant decides for itself (see lib/child.js), unless env= says.
  delete env.HTTP_ONESHOT
  Object.assign(env, extraEnv)
  const args = [
    '--tool=callgrind',
    '--separate-threads=yes',
    '--dump-instr=no',
    '--collect-atstart=yes',
    `--callgrind-out-file=${path.join(dir, 'cg.%p')}`,
    `--log-file=${path.join(dir, 'valgrind.%p.log')}`,
    node,
    ...nodeArgs
  ]
  const child = spawn('valgrind', args, { env, stdio: ['ignore', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  child.stdout.setEncoding('utf8').on('data', (d) => { stdout += d })
  child.stderr.setEncoding('utf8').on('data', (d) => { stderr += d })
  let exitInfo = null
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => {
    exitInfo = { code, signal }
    resolve(exitInfo)
  }))
  child.once('error', (err) => {
    exitInfo = { code: null, signal: null, error: err }
  })

  const deadline = Date.now() + readyTimeout
  for (;;) {
    try {
      const socket = await connect(port)
      socket.destroy()
      break
    } catch {}
    if (exitInfo !== null) {
      throw new Error(`server exited before listening (${exitInfo.error ? exitInfo.error.message : `code ${exitInfo.code}, signal ${exitInfo.signal}`}): ` +
        `valgrind ${args.join(' ')}\n${stderr}`)
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL')
      throw new Error(`server did not listen within ${readyTimeout / 1000} s (ready=): node ${nodeArgs.join(' ')}`)
    }
    await sleep(200)
  }

  async function stop () {
    if (exitInfo === null) child.kill('SIGTERM')
    const timer = setTimeout(() => child.kill('SIGKILL'), 30e3)
    await exited
    clearTimeout(timer)
    const stats = lastStats(stdout)
    return { stats, stderr }
  }

  return { pid: child.pid, port, stop }
}

function nodeArgsFor (shape, mode) {
  if (shape.app !== undefined) {
    // As in benchmark/apps.js: the stats reporter is preloaded only with
    // register.js, so the legacy process loads nothing of the package.
    return mode === 'native' ? ['-r', REGISTER, '-r', REPORT_STATS, shape.app] : [shape.app]
  }
  return serverArgs(checkConfig({ ...SERVER_DEFAULTS, ...shape.config, c: 1, duration: 1, warmup: 0, method: 'GET' }), mode)
}

/**
 * One measurement: a fresh server under callgrind, warm-up, zeroed
 * counters, `requests` measured requests, dump.
 */
async function measure ({ name, run, shape, mode, node, warmup: warmupAsked, requests: requestsAsked, connections, semi, hashSeed, readyTimeout, keep, flags, extraEnv }) {
  // A shape with large bodies caps the counts (maxWarmup, maxRequests):
  // under callgrind each of its requests takes far longer.
  const warmup = Math.min(warmupAsked, shape.maxWarmup ?? Infinity)
  const requests = Math.max(connections, Math.min(requestsAsked, shape.maxRequests ?? Infinity))
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'http-oneshot-cg-'))
  const started = Date.now()
  let server = null
  const clients = []
  try {
    const v8Args = semi > 0 ? [`--min-semi-space-size=${semi}`, `--max-semi-space-size=${semi}`] : []
    if (hashSeed > 0) v8Args.push(`--hash-seed=${hashSeed}`)
    v8Args.push(...flags)
    server = await startServer({ node, nodeArgs: [...v8Args, ...nodeArgsFor(shape, mode)], dir, readyTimeout, extraEnv })
    const listening = Date.now()
    const method = shape.method ?? 'GET'
    const status = shape.status ?? 200
    for (let i = 0; i < connections; i++) {
      clients.push(new Client(await connect(server.port), method, shape.version, shape.path))
    }
    if (warmup > 0) await sendRequests(clients, warmup, shape.body, status)
    await callgrindControl('-z', server.pid)
    const zeroed = Date.now()
    const measured = await sendRequests(clients, requests, shape.body, status)
    const done = Date.now()
    await callgrindControl('-d', server.pid)
    if (measured.responses !== requests) {
      throw new Error(`${measured.responses} responses to ${requests} requests`)
    }
    // The Date header has a fixed length, so every response of a shape has
    // the same size; a second size means the server answered differently.
    if (measured.sizes.size !== 1) {
      throw new Error(`responses of ${measured.sizes.size} different sizes: ${[...measured.sizes].join(', ')} bytes`)
    }
    const [size] = measured.sizes
    if (measured.bytes !== size * requests) throw new Error(`received ${measured.bytes} bytes, expected ${size * requests}`)
    const ir = await readDump(dir, server.pid)
    if (keep !== '') keepDump(dir, server.pid, path.join(keep, `${name}.${mode}.${run}`))
    for (const client of clients) client.close()
    const { stats, stderr } = await server.stop()
    server = null
    return {
      irPerRequest: ir.main / requests,
      fullGc: ir.fullGc,
      ir: ir.main,
      irAllThreads: Object.values(ir.threads).reduce((a, b) => a + b, 0),
      threads: ir.threads,
      requests,
      bytesPerResponse: size,
      head: measured.head,
      shim: stats,
      stderr,
      seconds: (Date.now() - started) / 1000,
      phases: { start: (listening - started) / 1000, warmup: (zeroed - listening) / 1000, measured: (done - zeroed) / 1000 }
    }
  } finally {
    for (const client of clients) client.close()
    if (server !== null) await server.stop()
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

// Copies the measured window's dump of the main thread (function-level
// counts, for callgrind_annotate) to `<file>.callgrind`, and the map of
// JIT code V8 writes with flags=--perf-basic-prof (callgrind names JIT
// code by address only) to `<file>.map`.
function keepDump (dir, pid, file) {
  fs.mkdirSync(path.dirname(file), { recursive: true })
  fs.copyFileSync(path.join(dir, `cg.${pid}.1-01`), `${file}.callgrind`)
  const map = path.join(os.tmpdir(), `perf-${pid}.map`)
  if (fs.existsSync(map)) fs.copyFileSync(map, `${file}.map`)
}

// The median of the runs' Ir per request (the mean of the middle two for
// an even count).
function medianIr (runs) {
  const irs = runs.map((r) => r.irPerRequest).sort((a, b) => a - b)
  const mid = irs.length >> 1
  return irs.length % 2 === 1 ? irs[mid] : (irs[mid - 1] + irs[mid]) / 2
}

function k (ir) {
  return `${(ir / 1000).toFixed(1)}k`
}

// A response head with its Date value blanked, to compare modes.
function normalizeHead (head) {
  return head.replace(/^Date: .*$/m, 'Date: -')
}

async function main () {
  const opts = parseArgs(process.argv.slice(2), {
    shapes: Object.keys(SHAPES).filter((name) => !SHAPES[name].optional).join(','),
    modes: 'legacy,native,limit',
    warmup: 10000,
    requests: 8000,
    c: 1,
    jobs: 2,
    runs: 1,
    seed: 1,
    node: process.execPath,
    json: '',
    semi: 16,
    ready: 180,
    keep: '',
    flags: '',
    env: ''
  })
  const flags = String(opts.flags).split(',').filter(Boolean)
  const extraEnv = {}
  for (const pair of String(opts.env).split(',').filter(Boolean)) {
    const eq = pair.indexOf('=')
    if (eq < 1) throw usage(`env: expected NAME=value, got "${pair}"`)
    extraEnv[pair.slice(0, eq)] = pair.slice(eq + 1)
  }
  const shapes = opts.shapes.split(',').map((s) => s.trim()).filter(Boolean)
  for (const s of shapes) {
    if (!Object.hasOwn(SHAPES, s)) throw usage(`shapes: unknown "${s}" (use ${Object.keys(SHAPES).join(', ')})`)
  }
  if (shapes.length === 0) throw usage('no shape given')
  const modes = parseModes(opts.modes)
  if (!Number.isInteger(opts.warmup) || opts.warmup < 0) throw usage('warmup must be a non-negative integer')
  for (const key of ['requests', 'c', 'jobs', 'runs']) {
    if (!Number.isInteger(opts[key]) || opts[key] < 1) throw usage(`${key} must be a positive integer`)
  }
  if (opts.requests < opts.c) throw usage('requests must be at least c')
  // How long a server may take to listen: callgrind starts an app in 25 s
  // on an idle machine, many times that on a loaded one.
  if (!(opts.ready > 0)) throw usage('ready must be a positive number of seconds')
  if (!Number.isInteger(opts.semi) || opts.semi < 0) throw usage('semi must be a non-negative integer (MiB)')
  if (!Number.isInteger(opts.seed) || opts.seed < 0) throw usage('seed must be a non-negative integer')
  let nodeVersion
  let valgrindVersion
  try {
    nodeVersion = execFileSync(opts.node, ['--version'], { encoding: 'utf8' }).trim()
  } catch (err) {
    throw usage(`node=${opts.node} does not run: ${err.message.split('\n')[0]}`)
  }
  try {
    valgrindVersion = execFileSync('valgrind', ['--version'], { encoding: 'utf8' }).trim()
  } catch {
    throw new Error('valgrind not found; install it (Debian package "valgrind")')
  }

  log(`callgrind (${valgrindVersion}), Node ${nodeVersion} (${opts.node}); ` +
    `${opts.c} keep-alive connections, ${opts.warmup} warm-up then ${opts.requests} measured requests; ` +
    'Ir on the server\'s main thread per request; ' +
    (opts.semi > 0 ? `young generation fixed at ${opts.semi} MiB` : 'V8\'s own young generation sizing') +
    (opts.seed > 0 ? `; hash seed ${opts.seed}${opts.runs > 1 ? '+round-1' : ''}` : '; V8\'s random hash seed'))
  const started = Date.now()
  const tasks = []
  for (let run = 1; run <= opts.runs; run++) {
    for (const name of shapes) {
      for (const mode of modes) {
        if (!(mode === 'limit' && SHAPES[name].app !== undefined)) tasks.push({ name, mode, run })
      }
    }
  }
  // Round by round; in a round the longest first, so that the last server
  // to finish is a short one.
  tasks.sort((a, b) => a.run - b.run || SHAPES[b.name].weight - SHAPES[a.name].weight)
  // results[shape][mode]: the runs' measurements, in the order they ended.
  const results = Object.fromEntries(shapes.map((name) => [name, {}]))
  const warnings = []
  // `jobs` servers at a time: callgrind runs all of a server's threads on
  // one core, and the counts do not depend on how fast it runs.
  let next = 0
  async function worker () {
    while (next < tasks.length) {
      const { name, mode, run } = tasks[next++]
      const hashSeed = opts.seed === 0 ? 0 : opts.seed + run - 1
      const r = await measure({ name, run, keep: opts.keep, flags, shape: SHAPES[name], mode, node: opts.node, warmup: opts.warmup, requests: opts.requests, connections: opts.c, semi: opts.semi, hashSeed, readyTimeout: opts.ready * 1000, extraEnv })
      ;(results[name][mode] ??= []).push(r)
      let line = `${name.padEnd(9)} ${mode.padEnd(6)} ${k(r.irPerRequest).padStart(8)} Ir/req  ` +
        (opts.runs > 1 ? `run ${run}/${opts.runs} ` : '') +
        `(${r.requests} × ${r.bytesPerResponse} B, all threads ${k(r.irAllThreads / r.requests)}; ` +
        (r.fullGc ? 'full GC in the window; ' : '') +
        `${r.seconds.toFixed(0)} s: start ${r.phases.start.toFixed(1)}, warm-up ${r.phases.warmup.toFixed(1)}, measured ${r.phases.measured.toFixed(1)})`
      if (mode === 'native') {
        const shim = describeShim(r.shim)
        line += `\n          ${shim}`
        if (r.shim === null || r.shim.installed === false || !r.shim.loaded ||
            (r.shim.stats !== null && r.shim.stats.native === 0)) {
          warnings.push(`WARNING: ${name} native did not take the native path: ${shim}`)
        }
      }
      log(line)
    }
  }
  await Promise.all(Array.from({ length: Math.min(opts.jobs, tasks.length) }, worker))
  for (const name of shapes) {
    // The shim must send the same bytes as Node, and the limit stub was
    // built to; only Date may differ.
    const heads = Object.fromEntries(Object.entries(results[name]).map(([mode, runs]) => [mode, normalizeHead(runs[0].head)]))
    for (const mode of Object.keys(heads)) {
      if (mode !== 'legacy' && heads.legacy !== undefined && heads[mode] !== heads.legacy) {
        warnings.push(`WARNING: ${name}: the ${mode} response head differs from legacy:\n` +
          `legacy:\n${heads.legacy}\n${mode}:\n${heads[mode]}`)
      }
    }
  }
  for (const w of warnings) log(w)

  const rows = [
    '| shape | legacy | native | limit | native−limit | native/legacy |',
    '|---|---:|---:|---:|---:|---:|'
  ]
  for (const name of shapes) {
    const m = Object.fromEntries(Object.entries(results[name]).map(([mode, runs]) => [mode, medianIr(runs)]))
    const cell = (mode) => {
      if (m[mode] === undefined) return '–'
      // †: a full collection ran in the measured window of (one of) its
      // server(s), which adds 1-2k per request to that server's count.
      const gc = results[name][mode].some((r) => r.fullGc) ? '†' : ''
      if (opts.runs === 1) return k(m[mode]) + gc
      const irs = results[name][mode].map((r) => r.irPerRequest)
      return `${k(m[mode])} (${k(Math.min(...irs))}–${k(Math.max(...irs))})${gc}`
    }
    const diff = m.native !== undefined && m.limit !== undefined ? k(m.native - m.limit) : '–'
    const ratio = m.native !== undefined && m.legacy !== undefined ? (m.native / m.legacy).toFixed(3) : '–'
    rows.push(`| ${SHAPES[name].label} | ${cell('legacy')} | ${cell('native')} | ${cell('limit')} | ${diff} | ${ratio} |`)
  }
  console.log(`Instructions (Ir) per request on the server's main thread, callgrind, Node ${nodeVersion}, ` +
    `${opts.requests} requests after ${opts.warmup} warm-up` +
    (opts.runs > 1 ? `; medians of ${opts.runs} runs (range):\n` : ':\n'))
  console.log(rows.join('\n'))
  if (Object.values(results).some((byMode) => Object.values(byMode).some((runs) => runs.some((r) => r.fullGc)))) {
    console.log('\n† a full (mark-compact) collection ran in the measured window of that cell\'s server (of one of them)')
  }
  log(`\n${((Date.now() - started) / 1000).toFixed(0)} s`)

  if (opts.json !== '') {
    const out = {
      node: nodeVersion,
      nodePath: opts.node,
      valgrind: valgrindVersion,
      warmup: opts.warmup,
      requests: opts.requests,
      connections: opts.c,
      jobs: opts.jobs,
      runs: opts.runs,
      hashSeed: opts.seed,
      semiSpaceMiB: opts.semi,
      // Per shape and mode: the median Ir per request, and every run.
      results: Object.fromEntries(Object.entries(results).map(([name, byMode]) => [name, {
        label: SHAPES[name].label,
        ...Object.fromEntries(Object.entries(byMode).map(([mode, runs]) => [mode, {
          irPerRequest: medianIr(runs),
          runs: runs.map((r) => ({
            fullGc: r.fullGc,
            irPerRequest: r.irPerRequest,
            ir: r.ir,
            irAllThreads: r.irAllThreads,
            threads: r.threads,
            bytesPerResponse: r.bytesPerResponse,
            seconds: r.seconds,
            phases: r.phases,
            shim: r.shim
          }))
        }]))
      }]))
    }
    fs.writeFileSync(opts.json, `${JSON.stringify(out, null, 2)}\n`)
  }
}

runMain(main)
