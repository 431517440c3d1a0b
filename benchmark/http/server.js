'use strict'

// The server side of benchmark/http/simple.js, run as a child process:
//   node benchmark/http/server.js mode=legacy|native|limit type=bytes len=4 \
//     chunks=1 chunkedEnc=0 headers=0 [shape=simple|express3|stored] [status=200|204|304] [strict=0|1|2]
// It listens on 127.0.0.1:$PORT. The handler mirrors Node core's
// benchmark/fixtures/simple-http-server.js, except that the body and its
// pieces are built once at start-up so that only the response path is timed.

const crypto = require('node:crypto')
const http = require('node:http')
const path = require('node:path')
const onHeaders = require('on-headers')
const { parseArgs } = require('../lib/args.js')
const { SERVER_DEFAULTS, checkConfig } = require('../lib/config.js')
const report = require('../lib/report-stats.js')

const config = parseArgs(process.argv.slice(2), { mode: 'legacy', ...SERVER_DEFAULTS })
checkConfig({ ...config, c: 1, duration: 1, warmup: 0, method: 'GET' })
const { mode, type, len, chunks, chunkedEnc, headers, shape, status, strict } = config

const expressShape = shape === 'express3' || shape === 'hooked'
const body = type === 'buffer' || expressShape ? Buffer.alloc(len, 'C') : 'C'.repeat(len)

// Split as Node's fixture does: chunks - 1 pieces of floor(len / chunks)
// bytes (at least 1) go out with write(), the remainder with end();
// shape=streamed writes the remainder too and calls end() without it.
const pieces = []
let last = body
if (shape === 'streamed') {
  const step = Math.floor(len / chunks) || 1
  for (let i = 0; i < chunks - 1; i++) pieces.push(body.slice(i * step, i * step + step))
  pieces.push(body.slice((chunks - 1) * step))
  last = undefined
} else if (chunks > 1) {
  const step = Math.floor(len / chunks) || 1
  for (let i = 0; i < chunks - 1; i++) pieces.push(body.slice(i * step, i * step + step))
  last = body.slice((chunks - 1) * step)
}

const contentLength = String(len)
const headerNames = []
const headerValues = []
for (let i = 0; i < headers; i++) {
  headerNames.push(`X-Header-${i}`)
  headerValues.push(`value-${i}`)
}

// shape=express3: the calls express 5's res.send(string) makes, with the
// values it would compute (its weak ETag is the body length in hex and a
// base64 SHA-1), without express itself around them. X-Powered-By is left
// out: three setHeader() calls and end(Buffer).
const expressHeaders = [
  ['Content-Type', 'text/html; charset=utf-8'],
  ['Content-Length', contentLength],
  ['ETag', `W/"${len.toString(16)}-${crypto.createHash('sha1').update(body).digest('base64').slice(0, 27)}"`]
]

function express3Handler (req, res) {
  if (status !== 200) res.statusCode = status
  res.setHeader('Content-Type', expressHeaders[0][1])
  res.setHeader('Content-Length', expressHeaders[1][1])
  res.setHeader('ETag', expressHeaders[2][1])
  res.end(body)
}

// shape=hooked: express3 on a response whose writeHead() on-headers
// replaced with a listener that records when the header went out, as
// morgan does for every response.
function recordStartTime () {
  this._startAt = process.hrtime()
}

function hookedHandler (req, res) {
  onHeaders(res, recordStartTime)
  express3Handler(req, res)
}

// shape=stored: the header stored with setHeader(), then writeHead() with
// the status alone renders it (chunked framing: no Content-Length).
function storedHandler (req, res) {
  res.setHeader('Content-Type', 'text/plain')
  res.writeHead(status)
  res.end(body)
}

function handler (req, res) {
  if (strict === 1 || strict === 2) res.strictContentLength = true
  if (headers > 0) {
    // The fresh-response path: setHeader() calls, then end() renders the
    // header block itself (OutgoingMessage#end -> _implicitHeader).
    if (status !== 200) res.statusCode = status
    for (let i = 0; i < headers; i++) res.setHeader(headerNames[i], headerValues[i])
    if (chunkedEnc === 1) res.setHeader('Transfer-Encoding', 'chunked')
  } else if (chunkedEnc === 1) {
    // No Content-Length: writeHead() renders the header block before the
    // body is known, so Node picks chunked framing.
    res.writeHead(status, { 'Content-Type': 'text/plain' })
  } else if (strict >= 2) {
    res.writeHead(status, { 'Content-Type': 'text/plain', 'Content-Length': contentLength, Connection: 'keep-alive' })
  } else {
    res.writeHead(status, { 'Content-Type': 'text/plain', 'Content-Length': contentLength })
  }
  for (let i = 0; i < pieces.length; i++) res.write(pieces[i])
  res.end(last)
}

// MEASURING INSTRUMENT, NOT A FEATURE. mode=limit replaces res.end() with a
// deliberately minimal and unsafe stub: it ignores its arguments, skips
// every check Node makes (pipelining, errors, headers already
// sent, trailers, drain) and writes one precomputed response straight to the
// socket; with chunked framing the whole body goes as one chunk. It keeps
// only the bookkeeping keep-alive needs: 'finish' fires from the write
// callback, so the server's resOnFinish() detaches the socket and reads the
// next request. What it measures is the cost of everything around the
// response (parser, IncomingMessage, ServerResponse, one write): an upper
// bound no correct serializer can pass. Never ship this.
// A response without a body (a HEAD request, status 204 or 304) gets its
// own precomputed bytes, chosen by the one flag Node itself goes by:
// ServerResponse sets _hasBody = false for a HEAD request, and the status is
// fixed at start-up.
let limitResponse = null
let limitBodyless = null

function renderLimitResponses () {
  const date = new Date().toUTCString()
  limitResponse = renderLimitResponse(date, status !== 204 && status !== 304)
  limitBodyless = renderLimitResponse(date, false)
}

// What Node sends for this configuration. Without a body (hasBody false)
// Node sends the header block alone, with the Content-Length and
// Transfer-Encoding the application set itself but neither of the two it
// adds on its own (_storeHeader: no framing for a response without a body).
function renderLimitResponse (date, hasBody) {
  let head = `HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\n`
  if (expressShape) {
    for (const [name, value] of expressHeaders) head += `${name}: ${value}\r\n`
  } else if (headers > 0) {
    for (let i = 0; i < headers; i++) head += `${headerNames[i]}: ${headerValues[i]}\r\n`
    // A Transfer-Encoding set with setHeader() stays where the user put it.
    if (chunkedEnc === 1) head += 'Transfer-Encoding: chunked\r\n'
  } else {
    head += 'Content-Type: text/plain\r\n'
    if (chunkedEnc === 0) head += `Content-Length: ${len}\r\n`
  }
  head += `Date: ${date}\r\nConnection: keep-alive\r\nKeep-Alive: timeout=5\r\n`
  const bodyBytes = Buffer.from(body)
  let tail
  // After setHeader() calls, write() before end() leaves Node no length to
  // send, so it frames the body as chunked, as with chunkedEnc=1.
  if (chunkedEnc === 1 || (headers > 0 && chunks > 1)) {
    // One chunk carrying the whole body, then the last-chunk (RFC 9112 7.1).
    if (!(headers > 0 && chunkedEnc === 1) && hasBody) head += 'Transfer-Encoding: chunked\r\n'
    head += '\r\n'
    tail = [Buffer.from(`${len.toString(16)}\r\n`), bodyBytes, Buffer.from('\r\n0\r\n\r\n')]
  } else {
    if (headers > 0 && hasBody) head += `Content-Length: ${len}\r\n`
    head += '\r\n'
    tail = [bodyBytes]
  }
  return Buffer.concat([Buffer.from(head, 'latin1'), ...(hasBody ? tail : [])])
}

// The stub keeps the application's own calls (setHeader() included, which
// Node runs as usual) and replaces only the builder: writeHead() does
// nothing and end() writes the precomputed bytes, whatever its arguments.
// They replace ServerResponse's own methods on its prototype, as the shim
// does, so every response is built by Node's own constructor as in the
// other modes, where a subclass would give V8 a constructor of its own to
// compile and inline.
const limitMethods = {
  writeHead () {
    return this
  },

  write () {
    return true
  },

  end () {
    this._headerSent = true
    this.finished = true
    this.socket.write(this._hasBody ? limitResponse : limitBodyless, () => this.emit('finish'))
    return this
  }
}

const onRequest = shape === 'express3'
  ? express3Handler
  : shape === 'hooked' ? hookedHandler : shape === 'stored' ? storedHandler : handler
if (mode === 'limit') {
  renderLimitResponses()
  // The Date header changes once per second, as Node's own cached date does.
  setInterval(renderLimitResponses, 1000).unref()
  for (const [name, fn] of Object.entries(limitMethods)) {
    Object.defineProperty(http.ServerResponse.prototype, name, {
      value: fn, writable: true, enumerable: false, configurable: true
    })
  }
} else if (mode === 'native') {
  const indexPath = path.join(__dirname, '..', '..', 'lib', 'index.js')
  let shim = null
  let problem = null
  try {
    shim = require(indexPath)
  } catch (err) {
    problem = `cannot load lib/index.js: ${err.message.split('\n')[0]}`
  }
  if (shim !== null && typeof shim.install !== 'function') {
    problem = 'lib/index.js does not export install()'
  }
  if (problem === null) {
    shim.install()
    report.setInfo({ installed: true, isNative: shim.isNative })
  } else {
    process.stderr.write(`benchmark server: mode=native runs UNPATCHED (same as legacy): ${problem}\n`)
    report.setInfo({ installed: false, problem })
  }
} else if (mode !== 'legacy') {
  process.stderr.write(`benchmark server: unknown mode "${mode}"\n`)
  process.exit(2)
}

const port = Number(process.env.PORT)
http.createServer(onRequest).listen(port, '127.0.0.1')
