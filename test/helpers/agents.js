'use strict'

// Runs test/fixtures/agents/app.js under an APM agent in a child process,
// with an offline receiver for the agent's data, sends it the same requests
// on one keep-alive connection, and reduces what came back (the raw bytes,
// the agent's spans or transactions, the package's stats()) to values two
// runs can be compared on. Nothing leaves the machine: dd-trace writes to a
// recorder at its agent URL, Elastic APM to a fake APM server, both on
// 127.0.0.1 in the test process; OpenTelemetry keeps its spans in memory and
// New Relic's transactions are read in the child, its collector host being a
// closed port on 127.0.0.1.

const { spawn } = require('node:child_process')
const http = require('node:http')
const net = require('node:net')
const path = require('node:path')
const zlib = require('node:zlib')

const { RawClient } = require('./raw-client.js')

const ROOT = path.resolve(__dirname, '..', '..')
const APP = path.join(ROOT, 'test', 'fixtures', 'agents', 'app.js')
const OTEL = path.join(ROOT, 'test', 'fixtures', 'agents', 'otel.js')
const REGISTER = path.join(ROOT, 'register.js')

// The module each agent documents for `node -r` (and NODE_OPTIONS).
const PRELOAD = {
  dd: 'dd-trace/init',
  otel: OTEL,
  nr: 'newrelic',
  elastic: 'elastic-apm-node/start'
}

// The load orders: the agent's documented one (before the package) three
// ways, and the agent after the package.
const ORDERS = {
  'cli-first': { args: agent => ['-r', PRELOAD[agent], '-r', REGISTER] },
  'node-options-first': { args: () => ['-r', REGISTER], nodeOptions: agent => `-r ${PRELOAD[agent]}` },
  'code-first': { args: () => ['-r', REGISTER], inCode: true },
  'cli-after': { args: agent => ['-r', REGISTER, '-r', PRELOAD[agent]] }
}

// Each route, its request repeated ROUNDS times in this order on one
// connection. /stream is written over several ticks: the only route without
// a single end() on a fresh response.
const ROUTES = ['/text', '/json', '/missing', '/error', '/stream']
const ROUNDS = 4
const SINGLE_END = ROUTES.filter(r => r !== '/stream').length * ROUNDS

// A msgpack decoder for the subset dd-trace's 0.4 encoder writes (maps,
// arrays, strings, ints up to 64 bits as BigInt-free Numbers or strings,
// floats, nil, booleans). 64-bit ids become decimal strings.
function decodeMsgpack (buf) {
  let pos = 0
  const u8 = () => buf[pos++]
  const str = n => { const s = buf.toString('utf8', pos, pos + n); pos += n; return s }
  const arr = n => { const a = []; for (let i = 0; i < n; i++) a.push(value()); return a }
  const map = n => {
    const o = {}
    for (let i = 0; i < n; i++) { const k = value(); o[k] = value() }
    return o
  }
  const u64 = () => { const v = buf.readBigUInt64BE(pos); pos += 8; return v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : String(v) }
  const i64 = () => { const v = buf.readBigInt64BE(pos); pos += 8; return Math.abs(Number(v)) <= Number.MAX_SAFE_INTEGER ? Number(v) : String(v) }
  function value () {
    const b = u8()
    if (b <= 0x7f) return b
    if (b >= 0xe0) return b - 0x100
    if ((b & 0xf0) === 0x80) return map(b & 0x0f)
    if ((b & 0xf0) === 0x90) return arr(b & 0x0f)
    if ((b & 0xe0) === 0xa0) return str(b & 0x1f)
    let v
    switch (b) {
      case 0xc0: return null
      case 0xc2: return false
      case 0xc3: return true
      case 0xc4: v = u8(); pos += v; return null
      case 0xc5: v = buf.readUInt16BE(pos); pos += 2 + v; return null
      case 0xc6: v = buf.readUInt32BE(pos); pos += 4 + v; return null
      case 0xca: v = buf.readFloatBE(pos); pos += 4; return v
      case 0xcb: v = buf.readDoubleBE(pos); pos += 8; return v
      case 0xcc: return u8()
      case 0xcd: v = buf.readUInt16BE(pos); pos += 2; return v
      case 0xce: v = buf.readUInt32BE(pos); pos += 4; return v
      case 0xcf: return u64()
      case 0xd0: v = buf.readInt8(pos); pos += 1; return v
      case 0xd1: v = buf.readInt16BE(pos); pos += 2; return v
      case 0xd2: v = buf.readInt32BE(pos); pos += 4; return v
      case 0xd3: return i64()
      case 0xd9: return str(u8())
      case 0xda: v = buf.readUInt16BE(pos); pos += 2; return str(v)
      case 0xdb: v = buf.readUInt32BE(pos); pos += 4; return str(v)
      case 0xdc: v = buf.readUInt16BE(pos); pos += 2; return arr(v)
      case 0xdd: v = buf.readUInt32BE(pos); pos += 4; return arr(v)
      case 0xde: v = buf.readUInt16BE(pos); pos += 2; return map(v)
      case 0xdf: v = buf.readUInt32BE(pos); pos += 4; return map(v)
      default: throw new Error(`msgpack: type 0x${b.toString(16)} at ${pos - 1}`)
    }
  }
  return value()
}

/**
 * A local HTTP server standing in for the Datadog agent or the Elastic APM
 * server: every request is answered, trace and intake bodies are kept.
 * @returns {Promise<{ url: string, spans: object[], events: object[], paths: string[], close: () => Promise<void> }>}
 */
async function startRecorder () {
  const rec = { spans: [], events: [], paths: [] }
  const server = http.createServer((req, res) => {
    const parts = []
    const body = req.headers['content-encoding'] === 'gzip' ? req.pipe(zlib.createGunzip()) : req
    body.on('data', c => parts.push(c))
    body.on('end', () => {
      const data = Buffer.concat(parts)
      rec.paths.push(`${req.method} ${req.url.split('?')[0]}`)
      if (/^\/v0\.[45]\/traces/.test(req.url)) {
        for (const trace of decodeMsgpack(data)) rec.spans.push(...trace)
        res.setHeader('Content-Type', 'application/json')
        res.end('{"rate_by_service":{}}')
      } else if (req.url.startsWith('/intake/v2/events')) {
        for (const line of data.toString('utf8').split('\n')) {
          if (line.trim() !== '') rec.events.push(JSON.parse(line))
        }
        res.statusCode = 202
        res.end()
      } else if (req.url === '/' && req.method === 'GET') {
        // The Elastic APM server's version, which the agent asks first.
        res.setHeader('Content-Type', 'application/json')
        res.end('{"build_date":"2024-01-01T00:00:00Z","build_sha":"0","publish_ready":true,"version":"8.15.0"}')
      } else {
        res.statusCode = req.url === '/info' ? 404 : 200
        res.end('{}')
      }
    })
  })
  await new Promise(resolve => server.listen(0, '127.0.0.1', resolve))
  rec.url = `http://127.0.0.1:${server.address().port}`
  rec.close = () => new Promise(resolve => { server.closeAllConnections(); server.close(resolve) })
  return rec
}

// A port on 127.0.0.1 nothing listens on: New Relic's collector host.
async function closedPort () {
  const server = net.createServer()
  await new Promise(resolve => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address()
  await new Promise(resolve => server.close(resolve))
  return port
}

// The agents' settings: their receivers, and everything that would reach
// out (remote configuration, telemetry, cloud metadata, profiling) off.
function agentEnv (agent, rec, nrPort) {
  switch (agent) {
    case 'dd': return {
      DD_TRACE_AGENT_URL: rec.url,
      DD_SERVICE: 'agents-fixture',
      DD_ENV: 'test',
      DD_VERSION: '1',
      DD_TRACE_STARTUP_LOGS: 'false',
      DD_INSTRUMENTATION_TELEMETRY_ENABLED: 'false',
      DD_REMOTE_CONFIGURATION_ENABLED: 'false',
      DD_RUNTIME_METRICS_ENABLED: 'false',
      DD_TRACE_STATS_COMPUTATION_ENABLED: 'false',
      DD_PROFILING_ENABLED: 'false',
      DD_CRASHTRACKING_ENABLED: 'false',
      DD_APPSEC_ENABLED: 'false',
      DD_IAST_ENABLED: 'false',
      DD_DATA_STREAMS_ENABLED: 'false',
      DD_TRACE_AGENT_PROTOCOL_VERSION: '0.4'
    }
    case 'otel': return {
      OTEL_TRACES_EXPORTER: 'none',
      OTEL_METRICS_EXPORTER: 'none',
      OTEL_LOGS_EXPORTER: 'none',
      OTEL_NODE_RESOURCE_DETECTORS: 'none',
      OTEL_SEMCONV_STABILITY_OPT_IN: 'http'
    }
    case 'nr': return {
      NEW_RELIC_LICENSE_KEY: '0123456789abcdef0123456789abcdef01234567',
      NEW_RELIC_APP_NAME: 'agents-fixture',
      NEW_RELIC_HOST: '127.0.0.1',
      NEW_RELIC_PORT: String(nrPort),
      NEW_RELIC_NO_CONFIG_FILE: 'true',
      NEW_RELIC_LOG_ENABLED: 'false',
      NEW_RELIC_LOG: 'stdout',
      NEW_RELIC_LOG_LEVEL: 'fatal',
      NEW_RELIC_UTILIZATION_DETECT_AWS: 'false',
      NEW_RELIC_UTILIZATION_DETECT_AZURE: 'false',
      NEW_RELIC_UTILIZATION_DETECT_AZURE_FUNCTION: 'false',
      NEW_RELIC_UTILIZATION_DETECT_GCP: 'false',
      NEW_RELIC_UTILIZATION_DETECT_PCF: 'false',
      NEW_RELIC_UTILIZATION_DETECT_DOCKER: 'false',
      NEW_RELIC_UTILIZATION_DETECT_KUBERNETES: 'false',
      NEW_RELIC_UTILIZATION_DETECT_ECS: 'false',
      NEW_RELIC_CLOUD_AWS_ACCOUNT_ID: ''
    }
    case 'elastic': return {
      ELASTIC_APM_SERVER_URL: rec.url,
      ELASTIC_APM_SERVICE_NAME: 'agents-fixture',
      ELASTIC_APM_CENTRAL_CONFIG: 'false',
      ELASTIC_APM_CLOUD_PROVIDER: 'none',
      ELASTIC_APM_METRICS_INTERVAL: '0s',
      ELASTIC_APM_LOG_LEVEL: 'off',
      ELASTIC_APM_CAPTURE_EXCEPTIONS: 'false'
    }
    default: throw new Error(`unknown agent ${agent}`)
  }
}

// Environment variables of the test's own process that would change a
// child's agent or the package, or make it write coverage (tap's): none is
// inherited.
function baseEnv () {
  const env = {}
  for (const [k, v] of Object.entries(process.env)) {
    if (/^(DD_|OTEL_|NEW_RELIC_|ELASTIC_APM_|HTTP_ONESHOT|NODE_OPTIONS$|NODE_DEBUG$|NODE_V8_COVERAGE$|TAP|_TAPJS|TS_NODE)/.test(k) &&
        k !== 'HTTP_ONESHOT_CACHE_DIR') continue
    env[k] = v
  }
  return env
}

function readLines (stream, onLine) {
  let rest = ''
  stream.setEncoding('utf8')
  stream.on('data', chunk => {
    rest += chunk
    let i
    while ((i = rest.indexOf('\n')) !== -1) {
      onLine(rest.slice(0, i))
      rest = rest.slice(i + 1)
    }
  })
}

/**
 * One run: the app under `agent` in `order`, with the package or without it
 * (HTTP_ONESHOT=0), ROUTES × ROUNDS requests on one keep-alive connection.
 * @returns {Promise<{ bytes: Buffer, responses: object[], stats: object, marks: number[], agent: object[], stderr: string, elapsed: number }>}
 */
async function runApp ({ agent, order, app, oneshot, timeout = 30000 }) {
  const started = Date.now()
  const rec = await startRecorder()
  const nrPort = await closedPort()
  const how = ORDERS[order]
  const env = {
    ...baseEnv(),
    ...agentEnv(agent, rec, nrPort),
    NODE_ENV: 'production',
    AGENTS_APP: app,
    AGENTS_AGENT: agent,
    HTTP_ONESHOT: oneshot ? '1' : '0',
    NODE_DEBUG: 'http-oneshot'
  }
  if (how.inCode) env.AGENTS_IN_CODE = agent
  // Through env(1), which sets NODE_OPTIONS as the order wants it: tap's
  // process-info hook adds its own --import to a child's NODE_OPTIONS, and
  // its loader thread is no part of an application's setup (on Node 22 it
  // makes Elastic APM's require() of a "module-sync" package throw
  // ERR_METHOD_NOT_IMPLEMENTED).
  const nodeOptions = how.nodeOptions ? ['NODE_OPTIONS=' + how.nodeOptions(agent)] : ['-u', 'NODE_OPTIONS']
  const child = spawn('env', [...nodeOptions, process.execPath, ...how.args(agent), APP],
    { cwd: ROOT, env, stdio: ['pipe', 'pipe', 'pipe'] })
  let stderr = ''
  child.stderr.setEncoding('utf8')
  child.stderr.on('data', c => { stderr += c })
  const lines = []
  let onLine = () => {}
  readLines(child.stdout, line => {
    if (line.startsWith('{')) {
      lines.push(JSON.parse(line))
      onLine()
    }
  })
  // 'close', not 'exit': the child's last line (its stats and the agent's
  // data) may still be on its way through stdout when it exits.
  const exited = new Promise(resolve => child.on('close', (code, signal) => resolve({ code, signal })))
  const timer = setTimeout(() => child.kill('SIGKILL'), timeout)
  try {
    const port = await new Promise((resolve, reject) => {
      onLine = () => resolve(lines[0].port)
      exited.then(() => reject(new Error(`child exited before listening:\n${stderr}`)))
    })
    const client = new RawClient({ port })
    const requests = []
    for (let r = 0; r < ROUNDS; r++) requests.push(...ROUTES)
    for (const [i, route] of requests.entries()) {
      await client.send(`GET ${route} HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: agents-test\r\n\r\n`)
      const got = await client.waitFor(i + 1, 10000)
      if (got.timedOut || got.error !== null || got.closed) {
        throw new Error(`request ${i} (${route}): ${got.timedOut ? 'timed out' : got.closed ? 'connection closed' : got.error.reason}\n${stderr}`)
      }
    }
    const bytes = client.bytes()
    const responses = client.parse(false).messages
    client.destroy()
    child.stdin.end()
    const exit = await exited
    if (exit.code !== 0) throw new Error(`child exited with ${exit.code ?? exit.signal}:\n${stderr}`)
    const last = lines[lines.length - 1]
    const data = agent === 'dd' ? rec.spans : agent === 'elastic' ? rec.events : last.agent
    return { bytes, responses, requests, stats: last.stats, marks: last.marks, agent: data, stderr, paths: rec.paths, elapsed: Date.now() - started }
  } finally {
    clearTimeout(timer)
    child.kill('SIGKILL')
    await rec.close()
  }
}

module.exports = { ORDERS, ROUTES, ROUNDS, SINGLE_END, runApp, decodeMsgpack, startRecorder }

// Keys whose values change from run to run (ids, times, ports, pids), carry
// a stack (the same code on both paths, but whose text names the run's own
// files) or say how the agent was loaded (dd-trace's entrypoint tags differ
// under NODE_OPTIONS): left out of what two runs compare, so that one run
// without the package serves every load order.
const VOLATILE = /^(trace_id|span_id|parent_id|id|transaction_id|timestamp|start|duration|end|runtime-id|_dd\.p\.tid|_dd\.tags\.process|process_id|network\.peer\.port|date|keep-alive|stacktrace|exception\.stacktrace|error\.stack|sample_rate)$/

function strip (value) {
  if (Array.isArray(value)) return value.map(strip)
  if (value === null || typeof value !== 'object') return value
  const out = {}
  for (const key of Object.keys(value).sort()) {
    if (!VOLATILE.test(key)) out[key] = strip(value[key])
  }
  return out
}

/**
 * Reduces one agent's data to what two runs compare: `all`, every span,
 * transaction or error as sorted JSON texts (a multiset: the order the
 * agent sends them in is its own), and `roots`, the server span or web
 * transaction of each request in request order, with its duration in ms.
 */
function summarize (agent, data) {
  let roots
  let all
  if (agent === 'dd') {
    roots = data.filter(s => s.type === 'web' && (s.parent_id === 0 || s.parent_id === '0'))
      .sort((a, b) => (BigInt(a.start) < BigInt(b.start) ? -1 : 1))
      .map(s => ({
        path: new URL(s.meta['http.url']).pathname,
        name: s.name,
        resource: s.resource,
        status: s.meta['http.status_code'] ?? null,
        error: s.error,
        errorType: s.meta['error.type'] ?? null,
        duration: s.duration / 1e6
      }))
    all = data.map(strip)
  } else if (agent === 'otel') {
    roots = data.filter(s => s.kind === 1)
      .sort((a, b) => a.start - b.start)
      .map(s => ({
        path: s.attributes['url.path'],
        name: s.name,
        status: s.attributes['http.response.status_code'] ?? null,
        statusCode: s.status.code,
        events: s.events.map(e => e.name),
        ended: s.ended,
        duration: s.end - s.start
      }))
    all = data.map(strip)
  } else if (agent === 'nr') {
    roots = data.filter(tx => tx.web)
      .sort((a, b) => a.start - b.start)
      .map(tx => ({
        path: tx.attributes['request.uri'],
        name: tx.name,
        status: tx.statusCode,
        exceptions: tx.exceptions.length,
        contentLength: tx.attributes['response.headers.contentLength'] ?? null,
        duration: tx.duration
      }))
    all = data.map(strip)
  } else {
    const transactions = data.filter(e => e.transaction).map(e => e.transaction)
    roots = transactions.sort((a, b) => a.timestamp - b.timestamp)
      .map(tx => ({
        path: tx.context?.request?.url?.pathname,
        name: tx.name,
        result: tx.result,
        outcome: tx.outcome,
        status: tx.context?.response?.status_code ?? null,
        contentLength: tx.context?.response?.headers?.['content-length'] ?? null,
        duration: tx.duration
      }))
    all = data.filter(e => !e.metadata).map(strip)
  }
  return { roots: inRequestOrder(roots), all: all.map(x => JSON.stringify(x)).sort() }
}

// The roots in the order their requests were sent: the k-th root of a path
// (by start time) belongs to the k-th request of that path, so that roots
// whose clocks tie or cross between two routes still pair with their
// request. A path with more or fewer roots than requests is kept whole, at
// the end, for the comparison to show.
function inRequestOrder (roots) {
  const byPath = new Map()
  for (const root of roots) {
    if (!byPath.has(root.path)) byPath.set(root.path, [])
    byPath.get(root.path).push(root)
  }
  const ordered = []
  for (let r = 0; r < ROUNDS; r++) {
    for (const route of ROUTES) {
      const list = byPath.get(route)
      if (list !== undefined && list.length === ROUNDS) ordered.push({ ...list[r], request: r * ROUTES.length + ROUTES.indexOf(route) })
    }
  }
  for (const [route, list] of byPath) {
    if (list.length !== ROUNDS || !ROUTES.includes(route)) ordered.push(...list.map(root => ({ ...root, request: null })))
  }
  return ordered
}

// The package's native share: native end()s over the responses with a real
// socket and a single end() (every route but /stream).
function nativeShare (stats) {
  return stats.native / SINGLE_END
}

module.exports.summarize = summarize
module.exports.nativeShare = nativeShare
