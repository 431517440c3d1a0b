'use strict'

// Runs one response fixture against a real server, once on Node's own path and
// once with the shim installed, and records everything a user could observe:
// the raw bytes on the wire, the response's state at each step of end(), the
// order of events and callbacks, errors thrown by the handler, and which path
// the shim took (from its own counters). Comparing two captures is then a
// matter of strictSame on plain data.

const childProcess = require('node:child_process')
const fs = require('node:fs')
const http = require('node:http')
const https = require('node:https')
const os = require('node:os')
const path = require('node:path')
const util = require('node:util')
const { AsyncLocalStorage } = require('node:async_hooks')

const binding = require('../../lib/binding.js')
const shim = require('../../lib/index.js')
const { expectedPath, shimActive } = require('./expect-path.js')
const { parseResponse } = require('./llhttp.js')
const { RawClient } = require('./raw-client.js')

const DEFAULT_REQUEST = 'GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'
const DATE_LINE = /\r\nDate: [^\r]*\r\n/gi
const DATE_MASK = '\r\nDate: <masked>\r\n'

// A fixture that never settles must fail on its own, not stall the suite.
const DEFAULT_TIMEOUT = 2000
// After the expected responses have arrived on a connection the server keeps
// open, a little extra time catches bytes a broken path would send too many.
const LINGER_MS = 15

/**
 * Replaces every Date header value with a fixed mask, so two captures taken
 * in different seconds compare equal.
 *
 * @param {string|null|undefined} text A header block or raw response text.
 * @returns {string|null|undefined} The text with Date values masked.
 */
function maskDate (text) {
  if (typeof text !== 'string') return text
  return text.replace(DATE_LINE, DATE_MASK)
}

/**
 * Turns the shim's stats() into the form fixtures state expected paths in:
 * an object mapping 'native' and each fallback reason to its count, zero
 * counts left out.
 *
 * @param {{native: number, fallback: number, reasons: object}} stats
 * @returns {object} For example { native: 1 } or { 'headers-sent': 1 }.
 */
function pathCounts (stats) {
  const out = {}
  if (stats.native > 0) out.native = stats.native
  for (const reason of Object.keys(stats.reasons).sort()) {
    if (stats.reasons[reason] > 0) out[reason] = stats.reasons[reason]
  }
  return out
}

/**
 * Checks observed path counts against a fixture's expectation.
 *
 * @param {object} counts What pathCounts() returned for the patched run.
 * @param {string|string[]|object|undefined} expected 'native' or a reason for
 *   exactly one end() call; an array of acceptable outcomes for one call; or
 *   an object of exact counts when a fixture calls end() several times (or
 *   never: {}).
 * @returns {boolean} Whether the observation satisfies the expectation.
 */
function pathMatches (counts, expected) {
  if (expected === undefined) expected = 'native'
  if (typeof expected === 'string') expected = [expected]
  const keys = Object.keys(counts)
  if (Array.isArray(expected)) {
    return keys.length === 1 && counts[keys[0]] === 1 && expected.includes(keys[0])
  }
  const want = Object.keys(expected).filter(k => expected[k] > 0)
  return want.length === keys.length && want.every(k => counts[k] === expected[k])
}

function describeError (err) {
  if (err === null || typeof err !== 'object') return { value: String(err) }
  return { name: err.name, code: err.code, message: err.message }
}

function errorLabel (err) {
  if (err === undefined || err === null) return ''
  return ':' + (err.code ?? err.name ?? String(err))
}

// Header values as stored, with objects reduced to their kind: a user value
// with its own toString is a different object (and function) on each run, and
// calling toString here would add a side effect of the harness's own.
function plainValue (value) {
  if (value === null || typeof value !== 'object' || Buffer.isBuffer(value)) return value
  if (Array.isArray(value)) return value.map(plainValue)
  return { object: Object.prototype.toString.call(value), keys: Object.keys(value) }
}

function plainHeaders (headers) {
  const out = {}
  for (const name of Object.keys(headers)) out[name] = plainValue(headers[name])
  return out
}

const als = new AsyncLocalStorage()
// On from the start, for both paths alike: a store first set later would
// mark only the resources created after it (kResourceStore, Node 20 and 22).
als.run(null, () => {})

// Fields left unread: the connection's ports (they differ from run to
// run), and the deprecated _headers and _headerNames (each read warns;
// getHeaders() and the store stand for them).
const RUN_FIELDS = new Set(['localPort', 'remotePort', '_headers', '_headerNames'])

// Every string-keyed field of `obj` and its prototypes (Node's getters
// included), sorted, functions by name, objects by kind. (The shim's own
// methods sit on ServerResponse.prototype, ahead of OutgoingMessage's.)
function readableFields (obj) {
  const out = {}
  const keys = new Set()
  for (let p = obj; p !== null && p !== Object.prototype; p = Object.getPrototypeOf(p)) {
    for (const key of Object.getOwnPropertyNames(p)) {
      if (key !== 'constructor' && !RUN_FIELDS.has(key)) keys.add(key)
    }
  }
  for (const key of [...keys].sort()) {
    let v
    try {
      v = obj[key]
    } catch (err) {
      v = `throws ${err.code || err.name}`
    }
    out[key] = typeof v === 'function'
      ? `function ${v.name}`
      : typeof v === 'string'
        ? maskDate(v)
        : v !== null && typeof v === 'object' ? (Array.isArray(v) ? `array ${v.length}` : 'object') : v
  }
  return out
}

function inspectStore (res) {
  const sym = Object.getOwnPropertySymbols(res).find((s) => s.description === 'kOutHeaders')
  return sym === undefined ? 'none' : util.inspect(res[sym], { breakLength: Infinity, depth: 1 })
}

// The fields end() changes on the response over time, plus the ones that
// decide framing and keep-alive, and the socket fields legacy end() leaves
// behind.
function snapshot (res) {
  const socket = res.socket
  return {
    _header: maskDate(res._header),
    _headerSent: res._headerSent,
    headersSent: res.headersSent,
    finished: res.finished,
    writableEnded: res.writableEnded,
    writableFinished: res.writableFinished,
    writableLength: res.writableLength,
    writableCorked: res.writableCorked,
    writableNeedDrain: res.writableNeedDrain,
    destroyed: res.destroyed,
    _contentLength: res._contentLength,
    chunkedEncoding: res.chunkedEncoding,
    useChunkedEncodingByDefault: res.useChunkedEncodingByDefault,
    _hasBody: res._hasBody,
    _last: res._last,
    shouldKeepAlive: res.shouldKeepAlive,
    _defaultKeepAlive: res._defaultKeepAlive,
    _removedConnection: res._removedConnection,
    _removedContLen: res._removedContLen,
    _removedTE: res._removedTE,
    _trailer: res._trailer,
    sendDate: res.sendDate,
    statusCode: res.statusCode,
    statusMessage: res.statusMessage,
    outputSize: res.outputSize,
    outputData: Array.isArray(res.outputData) ? res.outputData.length : res.outputData,
    headers: plainHeaders(res.getHeaders()),
    // What console.log(res) shows beyond the fields above: the response's
    // own keys in order, and its header store as printed.
    ownKeys: Reflect.ownKeys(res).map(String),
    store: inspectStore(res),
    finishListeners: res.listenerCount('finish'),
    events: res.eventNames().map(String),
    fields: readableFields(res),
    // The process's pending requests, handles and timers (ticks and
    // WriteWraps among them), by kind.
    resources: process.getActiveResourcesInfo().sort().join(),
    // The request (its readable state among the fields): what 'finish'
    // does to it (resOnFinish() dumps an unread body) happens alike.
    req: res.req ? { ...readableFields(res.req), readableState: readableFields(res.req._readableState) } : null,
    socket: socket
      ? {
          owner: socket._httpMessage === res,
          writable: socket.writable,
          destroyed: socket.destroyed,
          writableCorked: socket.writableCorked,
          writableLength: socket.writableLength,
          writableNeedDrain: socket.writableNeedDrain,
          bytesWritten: socket.bytesWritten,
          closeListeners: socket.listenerCount('close'),
          ownKeys: Reflect.ownKeys(socket).map(String),
          fields: readableFields(socket),
          events: socket.eventNames().map(String),
          // (afterWriteTickInfo, which Node's write holds until its tick
          // and a direct write never sets, is left out: README, How it
          // works.)
          state: { ...readableFields(socket._writableState), afterWriteTickInfo: '-' },
          // console.log(socket) prints its handle's keys (a TLS handle's
          // time of its handshake differs from run to run).
          handle: util.inspect(socket._handle, { depth: 0, breakLength: Infinity })
            .replace(/lastHandshakeTime: \d+/, 'lastHandshakeTime: -')
        }
      : null
  }
}

function toRequests (request) {
  if (request === undefined) return [DEFAULT_REQUEST]
  return Array.isArray(request) ? request : [request]
}

// The method of each request, in order, for the parser: one string when
// they are all the same.
function requestMethods (requests) {
  const methods = []
  for (const r of requests) {
    for (const m of r.matchAll(/(?:^|\r\n\r\n)([A-Z]+) \S+ HTTP\/\d\.\d\r\n/g)) methods.push(m[1])
  }
  if (methods.length === 0) return 'GET'
  return methods.every(m => m === methods[0]) ? methods[0] : methods
}

function countRequests (requests) {
  // A pipelined fixture may pack several requests into one string; count the
  // request lines so the client knows how many responses to wait for.
  let n = 0
  for (const r of requests) n += (r.match(/(^|\r\n\r\n)[A-Z]+ \S+ HTTP\/\d\.\d\r\n/g) || []).length
  return n
}

/**
 * Runs `fx` once and records what happened.
 *
 * Fixture fields: name, handler(req, res, ctx) (may be async), request (raw
 * request text, or an array of texts written together, i.e. pipelined,
 * or one after another with `sequential: true`),
 * server (options for http.createServer, plus keepAliveTimeout,
 * maxRequestsPerSocket, headersTimeout set on the server object), setup(server)
 * (extra listeners such as checkContinue), date (keep res.sendDate), malformed
 * (the response is not expected to parse), method (for the parser, one or
 * one per response; inferred from the requests), timeout, path (expected path, see pathMatches()),
 * client(rawClient) (a hook to make the client misbehave, e.g. reset).
 *
 * ctx offers mark() (sample the state "right after end()" and queue a tick
 * and an immediate; done automatically when a synchronous handler returns),
 * cb(label) (an end()/write() callback that records its call and error code),
 * record(key, value) (a fixture's own observation), error(err) (record a
 * caught error), event(label), index (which request on the connection) and
 * server.
 *
 * @param {object} fx The fixture.
 * @param {object} options
 * @param {boolean} options.patched Install the shim around the run.
 * @param {{key: string, cert: string}} [options.tls] Serve over HTTPS.
 * @param {string} [options.path] Listen on this UNIX domain socket rather
 *   than on a port of 127.0.0.1.
 * @returns {Promise<object>} bytes (latin1 text, Date masked), raw (Buffer),
 *   parsed (parseResponse result), state, events, path (pathCounts), stats,
 *   timedOut.
 */
async function capture (fx, { patched, tls: tlsOptions, path: socketPath } = {}) {
  const requests = toRequests(fx.request)
  const expectedResponses = fx.responses ?? countRequests(requests)
  const method = fx.method ?? requestMethods(requests)
  const events = []
  const contexts = []
  const responses = []
  let responsesClosed = 0
  let uninstall = null

  if (patched) uninstall = shim.install()
  shim.resetStats()

  let settle
  const settled = new Promise(resolve => { settle = resolve })
  let checkDone = () => {}

  function onRequest (req, res) {
    const index = responses.length
    const rec = { state: {}, errors: [], records: [] }
    responses.push(rec)
    const label = requests.length > 1 || expectedResponses > 1 ? `${index}:` : ''
    // Each event, and (in `contexts`) the AsyncLocalStorage store it ran
    // in: the handler runs in its own, and APM agents rely on the store
    // reaching 'finish' and the callbacks.
    const event = name => {
      events.push(label + name)
      contexts.push(`${label}${name}@${als.getStore() ?? '-'}`)
    }
    let marked = false

    if (!fx.date) res.sendDate = false
    res.on('socket', () => event('socket'))
    res.on('prefinish', () => {
      event('prefinish')
      rec.state.prefinish = snapshot(res)
    })
    res.on('finish', () => {
      event('finish')
      rec.state.finish = snapshot(res)
    })
    res.on('close', () => {
      event('close')
      rec.state.close = snapshot(res)
      responsesClosed++
      checkDone()
    })
    res.on('drain', () => event('drain'))
    res.on('error', err => event('error' + errorLabel(err)))
    // Registered last so that only listeners the handler, Node or the shim
    // add from here on show up.
    res.on('newListener', name => event('newListener:' + String(name)))

    const ctx = {
      index,
      server: serverRef,
      mark () {
        if (marked) return
        marked = true
        rec.state.end = snapshot(res)
        process.nextTick(() => event('tick'))
        setImmediate(() => event('immediate'))
      },
      cb (name = 'cb') {
        return function callback (err) {
          event(name + errorLabel(err))
        }
      },
      record (key, value) {
        rec.records.push([key, value])
      },
      error (err) {
        rec.errors.push(describeError(err))
        event('caught' + errorLabel(err))
      },
      event
    }

    const afterThrow = err => {
      ctx.error(err)
      rec.state.thrown = snapshot(res)
      // Whatever the handler left half-written, both paths tear it down the
      // same way, so the client sees the connection close.
      res.destroy()
    }

    let result
    try {
      result = als.run(index, fx.handler, req, res, ctx)
    } catch (err) {
      afterThrow(err)
      return
    }
    if (result && typeof result.then === 'function') {
      result.then(() => ctx.mark(), afterThrow)
    } else {
      ctx.mark()
    }
  }

  const serverOptions = { ...fx.server }
  const serverFields = {}
  for (const key of ['keepAliveTimeout', 'maxRequestsPerSocket', 'headersTimeout', 'requestTimeout']) {
    if (key in serverOptions) {
      serverFields[key] = serverOptions[key]
      delete serverOptions[key]
    }
  }
  const server = tlsOptions
    ? https.createServer({ ...serverOptions, ...tlsOptions }, onRequest)
    : http.createServer(serverOptions, onRequest)
  const serverRef = server
  Object.assign(server, serverFields)
  // The socket's own 'drain' (Node emits it after a message of at least the
  // high-water mark, before that write's callback).
  server.on(tlsOptions ? 'secureConnection' : 'connection', socket => {
    socket.on('drain', () => events.push('socket-drain'))
    // (Its 'end', 'finish' and 'close' may come after the run settles,
    // earlier or later from run to run: not recorded.)
    socket.on('timeout', () => events.push('socket-timeout'))
    socket.on('error', err => events.push('socket-error' + errorLabel(err)))
  })
  server.on('clientError', (err, socket) => {
    events.push('clientError' + errorLabel(err))
    socket.destroy()
  })
  if (fx.setup) fx.setup(server, { events })

  let port
  if (socketPath === undefined) {
    await new Promise(resolve => server.listen(0, '127.0.0.1', resolve))
    port = server.address().port
  } else {
    fs.rmSync(socketPath, { force: true })
    await new Promise(resolve => server.listen(socketPath, resolve))
  }

  const client = new RawClient({ port, path: socketPath, tls: tlsOptions !== undefined, method })
  if (fx.client) fx.client(client)
  let timedOut = false
  let lingerTimer = null
  // Pipelined fixtures write every request at once; sequential ones send
  // the next request only after the previous response arrived complete, on
  // the same keep-alive connection.
  let sent = fx.sequential ? 1 : requests.length
  checkDone = () => {
    if (fx.sequential && sent < requests.length && !client.closed) {
      const { messages, error } = client.parse(false)
      if (error === null && messages.filter(m => m.statusCode >= 200).length >= sent) {
        client.send(requests[sent++]).catch(err => events.push('client-error' + errorLabel(err)))
      }
      return
    }
    // Every response the server started must have closed, so its events are
    // all in before the capture ends.
    if (responsesClosed < responses.length) return
    if (client.closed) {
      settle()
      return
    }
    // Node answers some requests itself (a 503 past maxRequestsPerSocket),
    // so the count of complete responses on the wire decides, not the count
    // of handler calls.
    if (lingerTimer !== null) return
    const { messages, error } = client.parse(false)
    const finals = messages.filter(m => m.statusCode >= 200).length
    if (error === null && finals >= expectedResponses) {
      lingerTimer = setTimeout(settle, LINGER_MS)
      // Not among the resources a snapshot lists: whether it is set when
      // the server's last event runs depends on when the client read.
      lingerTimer.unref()
    }
  }
  client.socket.on('data', () => checkDone())
  client.socket.on('close', () => checkDone())
  client.send(requests.slice(0, sent).join('')).catch(err => events.push('client-error' + errorLabel(err)))

  const timer = setTimeout(() => {
    timedOut = true
    settle()
  }, fx.timeout ?? DEFAULT_TIMEOUT)
  await settled
  clearTimeout(timer)
  clearTimeout(lingerTimer)

  client.destroy()
  server.closeAllConnections()
  await new Promise(resolve => server.close(() => resolve()))
  // Any tick or immediate a handler queued has run by now, because the
  // server's close callback fires on a later loop turn.
  await new Promise(resolve => setImmediate(resolve))

  const stats = shim.stats()
  shim.resetStats()
  if (uninstall !== null) uninstall()

  const raw = client.bytes()
  return {
    bytes: maskDate(raw.toString('latin1')),
    raw,
    parsed: parseResponse(raw, { method, eof: true }),
    state: responses,
    events,
    contexts,
    path: pathCounts(stats),
    stats,
    timedOut
  }
}

/**
 * Generates a throwaway self-signed certificate for localhost with openssl.
 *
 * @returns {{key: string, cert: string}} PEM texts.
 */
function makeCertificate () {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'http-oneshot-tls-'))
  try {
    const key = path.join(dir, 'key.pem')
    const cert = path.join(dir, 'cert.pem')
    childProcess.execFileSync('openssl', [
      'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes',
      '-subj', '/CN=localhost', '-days', '1', '-keyout', key, '-out', cert
    ], { stdio: 'ignore' })
    return { key: fs.readFileSync(key, 'latin1'), cert: fs.readFileSync(cert, 'latin1') }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

/**
 * Runs one fixture on both paths under `t` and asserts parity: equal bytes,
 * equal state, equal events, a response that parses, and the expected path.
 *
 * @param {object} t A tap test.
 * @param {object} fx The fixture.
 * @param {object} [options] Passed on to capture() (for example tls), and
 *   pathMatches, a stand-in for pathMatches() where the socket changes
 *   the path a fixture states.
 * @returns {Promise<{legacy: object, native: object}>} Both captures.
 */
async function checkParity (t, fx, options = {}) {
  const legacy = await capture(fx, { ...options, patched: false })
  const native = await capture(fx, { ...options, patched: true })
  t.equal(native.bytes, legacy.bytes, 'same bytes on the wire')
  t.strictSame(native.state, legacy.state, 'same response state')
  t.strictSame(native.events, legacy.events, 'same events in the same order')
  t.strictSame(native.contexts, legacy.contexts, 'each event in the same async context')
  t.equal(native.timedOut, legacy.timedOut, 'both runs settled the same way')
  t.strictSame(legacy.path, {}, 'the unpatched run never reaches the shim')
  // fx.path states the path for an active shim; expectedPath() maps it to
  // this Node line.
  const wanted = expectedPath(fx.path)
  if (!(options.pathMatches || pathMatches)(native.path, wanted)) {
    t.fail('path taken', { found: native.path, wanted })
  } else {
    t.pass('path taken: ' + JSON.stringify(native.path))
  }
  if (fx.malformed) {
    t.ok(native.parsed.error !== null, 'the response is malformed on purpose')
  } else {
    t.equal(native.parsed.error, null, 'the response parses')
    t.notOk(native.timedOut, 'the exchange completed')
  }
  return { legacy, native }
}

// Where the native path can write directly at all (as in
// test/direct-write.test.js).
const canDirect = shimActive && binding !== null && binding.canSend === true

/**
 * Runs each case through checkParity() in a subtest of `t`, its requests
 * one after another; where a case gives `direct` and the native path can
 * write directly here, checks that that many responses went out in a
 * direct write.
 * @param {object} t a tap test
 * @param {Array<{ name: string, request: string[], path?: object,
 *   date?: boolean, malformed?: boolean, direct?: number,
 *   handler: Function }>} cases
 */
function checkCases (t, cases) {
  for (const c of cases) {
    t.test(c.name, async t => {
      const { native } = await checkParity(t, {
        name: c.name,
        request: c.request,
        sequential: true,
        ...(c.date ? { date: true } : {}),
        ...(c.malformed ? { malformed: true } : {}),
        ...(c.path === undefined ? {} : { path: c.path }),
        handler: c.handler
      })
      if (c.direct !== undefined && canDirect) {
        t.equal(native.stats.direct + native.stats.partial, c.direct, 'every response went out in a direct write')
      }
    })
  }
}

module.exports = {
  capture,
  checkCases,
  checkParity,
  makeCertificate,
  maskDate,
  pathCounts,
  pathMatches,
  snapshot
}
