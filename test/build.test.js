'use strict'

// buildHttpMessage() against Node's own response path: for every row the
// same response is sent by a real http.Server (writeHead + end) and read raw
// from a loopback socket, then built with buildHttpMessage(), once through
// the addon and once through the JS fallback. All three must be the same
// bytes, and llhttp must read the result back as the row describes.

const http = require('node:http')
const net = require('node:net')
const { test } = require('tap')

const { parseResponse } = require('./helpers/llhttp.js')

const { loadBuild } = require('./helpers/load-build.js')

// Deterministic bytes, so a failure reproduces.
function pattern (n, seed = 7) {
  const buf = Buffer.allocUnsafe(n)
  let x = seed
  for (let i = 0; i < n; i++) {
    x = (x * 1103515245 + 12345) >>> 0
    buf[i] = x >>> 24
  }
  return buf
}

function textOf (n, unit) {
  return unit.repeat(Math.ceil(n / unit.length)).slice(0, n)
}

function manyHeaders (n) {
  const h = []
  for (let i = 0; i < n; i++) {
    switch (i % 5) {
      case 0: h.push(`X-Header-${i}`, `value ${i}`); break
      case 1: h.push(`x-num-${i}`, i * 1000 + 0.5); break
      case 2: h.push(`X-Empty-${i}`, ''); break
      case 3: h.push(`X-List-${i}`, [`a${i}`, `b${i}`]); break
      default: h.push(`X-Latin1-${i}`, 'caf\u00e9 \u00ff\u0080'); break
    }
  }
  return h
}

// Each row: status, reason (undefined = default), headers (a flat array,
// passed unchanged to writeHead and to buildHttpMessage), body, encoding
// (for a string body), chunked (let Node pick chunked framing: no
// Content-Length), userTE (the headers already say chunked).
const rows = []
function row (name, r) {
  rows.push({ name, headers: [], ...r })
}

// Status codes and reasons.
for (const status of [200, 201, 202, 203, 205, 206, 226, 301, 302, 303, 307, 308, 400, 401,
  403, 404, 409, 410, 418, 422, 429, 500, 501, 502, 503, 504, 299, 599, 999, 100 + 50]) {
  row(`status ${status} default reason`, { status, body: 'ok' })
}
row('custom reason', { status: 200, reason: 'Everything Fine', body: 'ok' })
row('empty reason', { status: 404, reason: '', body: 'gone' })
row('reason with tab and latin1, utf8 body', { status: 200, reason: 'Ol\u00e9\tbien', body: 'x' })
row('reason latin1, buffer body', { status: 200, reason: 'Ol\u00e9', body: Buffer.from('x') })
row('reason latin1, latin1 body', { status: 200, reason: 'Ol\u00e9', body: 'd\u00e9j\u00e0', encoding: 'latin1' })
row('204 no body', { status: 204 })
row('304 no body', { status: 304, headers: ['ETag', '"abc"'] })
row('204 custom reason', { status: 204, reason: 'Nothing Here' })

// Header shapes.
row('no headers, empty string body', { status: 200, body: '' })
row('no headers, no body', { status: 200 })
row('one header', { status: 200, headers: ['Content-Type', 'text/plain'], body: 'hi' })
row('three headers', {
  status: 200,
  headers: ['Content-Type', 'text/html; charset=utf-8', 'Cache-Control', 'no-store', 'X-Id', 42],
  body: '<p>hi</p>'
})
for (const n of [10, 20, 40]) {
  row(`${n} mixed headers, utf8 body`, { status: 200, headers: manyHeaders(n), body: 'caf\u00e9' })
  row(`${n} mixed headers, buffer body`, { status: 200, headers: manyHeaders(n), body: pattern(300) })
  row(`${n} mixed headers, chunked`, { status: 200, headers: manyHeaders(n), body: 'chunk me', chunked: true })
}
row('set-cookie array', {
  status: 200,
  headers: ['Set-Cookie', ['a=1; Path=/', 'b=2; HttpOnly', 'c=3'], 'Content-Type', 'text/plain'],
  body: 'cookies'
})
row('cookie array joined', { status: 200, headers: ['Cookie', ['a=1', 'b=2', 3]], body: 'x' })
row('cookie array of one', { status: 200, headers: ['cookie', ['only=1']], body: 'x' })
row('empty array value', { status: 200, headers: ['X-None', [], 'X-After', 'y'], body: 'x' })
row('numbers', { status: 200, headers: ['X-Int', 7, 'X-Float', 1.25, 'X-Big', 1e21, 'X-Neg', -3], body: 'n' })
row('empty values', { status: 200, headers: ['X-A', '', 'X-B', ''], body: 'e' })
row('token punctuation in names', { status: 200, headers: ["!#$%&'*+-.^_`|~09azAZ", 'v'], body: 'p' })
row('all latin1 value bytes, buffer body', {
  status: 200,
  headers: ['X-High', Array.from({ length: 128 }, (_, i) => String.fromCharCode(0x80 + i)).join('')],
  body: Buffer.from('b')
})
row('all latin1 value bytes, utf8 body', {
  status: 200,
  headers: ['X-High', Array.from({ length: 128 }, (_, i) => String.fromCharCode(0x80 + i)).join('')],
  body: 'b'
})
row('latin1 value, latin1 body', { status: 200, headers: ['X-V', 'na\u00efve'], body: '\u00e9t\u00e9', encoding: 'latin1' })
row('latin1 value, chunked utf8 body', { status: 200, headers: ['X-V', 'na\u00efve'], body: '\u00e9t\u00e9', chunked: true })
row('visible ASCII value', {
  status: 200,
  headers: ['X-Ascii', Array.from({ length: 95 }, (_, i) => String.fromCharCode(0x20 + i)).join('').trim()],
  body: 'a'
})
row('user connection header', { status: 200, headers: ['Connection', 'close'], body: 'bye' })

// Bodies.
row('utf8 multibyte body', { status: 200, body: 'h\u00e9llo w\u00f6rld \u2713 \ud83d\ude00' })
row('lone surrogates in body', { status: 200, body: 'a\ud800b\udc00c\ud800' })
row('latin1 body with chars above 0xff', { status: 200, body: 'x\u0141\u20ac\u00ff', encoding: 'latin1' })
row('ascii body', { status: 200, body: 'caf\u00e9 \u0141', encoding: 'ascii' })
row('utf-8 spelled with a dash', { status: 200, body: 'caf\u00e9', encoding: 'utf-8' })
row('empty buffer body', { status: 200, body: Buffer.alloc(0) })
row('uint8array view with offset', { status: 200, body: new Uint8Array(pattern(64).buffer, 8, 40) })
row('buffer slice of the pool', { status: 200, body: Buffer.from('0123456789abcdef').subarray(3, 11) })
for (const size of [1, 1023, 1024, 16 * 1024, 64 * 1024, 1024 * 1024]) {
  row(`binary body ${size} B`, { status: 200, headers: ['Content-Type', 'application/octet-stream'], body: pattern(size, size) })
}
for (const size of [1024, 64 * 1024, 1024 * 1024]) {
  row(`utf8 string body ${size} chars`, { status: 200, body: textOf(size, 'ab\u00e9\u4e2d\ud83d\ude00') })
  row(`latin1 string body ${size} chars`, { status: 200, body: textOf(size, 'xy\u00e9\u00ff'), encoding: 'latin1' })
}

// Chunked framing.
row('chunked utf8', { status: 200, body: 'hello \u2713', chunked: true })
row('chunked latin1', { status: 200, body: 'h\u00e9', encoding: 'latin1', chunked: true })
row('chunked buffer', { status: 200, body: pattern(5000), chunked: true })
row('chunked empty string', { status: 200, body: '', chunked: true })
row('chunked no body', { status: 200, chunked: true })
row('chunked 1 MiB buffer', { status: 200, body: pattern(1024 * 1024, 3), chunked: true })
row('chunked 64 KiB string', { status: 200, body: textOf(65536, 'z\u00e9'), chunked: true })
row('chunked with user transfer-encoding', {
  status: 200,
  headers: ['Transfer-Encoding', 'chunked', 'X-A', 'b'],
  body: 'user chunked',
  chunked: true,
  userTE: true
})
row('chunked 500 with reason', { status: 500, reason: 'Broken', headers: manyHeaders(3), body: 'oops', chunked: true })

function bodyLength (r) {
  if (r.body === undefined) return 0
  if (typeof r.body === 'string') {
    return Buffer.byteLength(r.body, r.encoding === 'latin1' || r.encoding === 'ascii' ? 'latin1' : 'utf8')
  }
  return r.body.length
}

function noBody (r) {
  return r.status === 204 || r.status === 304 || (r.status >= 100 && r.status < 200)
}

// The headers Node sends for the row, in Node's order: the user's, with
// Content-Length first for plain framing, then the automatic Connection
// (the client asked for close) and Transfer-Encoding lines (doc 2.5).
function nodeHeaders (r) {
  const user = (r.chunked || noBody(r)) ? r.headers : ['Content-Length', bodyLength(r), ...r.headers]
  const names = user.filter((_, i) => i % 2 === 0).map(n => n.toLowerCase())
  const auto = []
  if (!names.includes('connection')) auto.push('Connection', 'close')
  if (r.chunked && !r.userTE) auto.push('Transfer-Encoding', 'chunked')
  return { user, all: [...user, ...auto] }
}

// How Node encodes the head for this row (doc 1.2, 2.8): UTF-8 only when it
// is merged with a non-empty string body written as utf8 with
// Content-Length framing; latin1 otherwise.
function headerEncoding (r) {
  const merged = typeof r.body === 'string' && r.body.length > 0 && !r.chunked && !noBody(r) &&
    (r.encoding === undefined || r.encoding === 'utf8')
  return merged ? 'utf8' : 'latin1'
}

function buildArgs (r) {
  const { all } = nodeHeaders(r)
  return [r.status, r.reason, all, noBody(r) ? undefined : r.body, {
    encoding: r.encoding,
    chunked: Boolean(r.chunked) && !noBody(r),
    headerEncoding: headerEncoding(r)
  }]
}

function startServer () {
  const server = http.createServer((req, res) => {
    const r = rows[Number(req.url.slice(1))]
    res.sendDate = false
    res.writeHead(r.status, r.reason, nodeHeaders(r).user)
    if (r.body === undefined) res.end()
    else if (r.encoding !== undefined) res.end(r.body, r.encoding)
    else res.end(r.body)
  })
  return new Promise(resolve => server.listen(0, '127.0.0.1', () => resolve(server)))
}

function fetchRaw (port, index) {
  return new Promise((resolve, reject) => {
    const chunks = []
    const socket = net.connect(port, '127.0.0.1', () => {
      socket.end(`GET /${index} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`)
    })
    socket.on('data', c => chunks.push(c))
    socket.on('error', reject)
    socket.on('close', () => resolve(Buffer.concat(chunks)))
  })
}

// What llhttp must read back: the texts as llhttp decodes them (latin1 from
// the wire bytes), values without the optional whitespace it strips.
function expectedParse (r) {
  const enc = headerEncoding(r)
  const wire = s => Buffer.from(String(s), enc).toString('latin1')
  const headers = []
  const all = nodeHeaders(r).all
  for (let i = 0; i < all.length; i += 2) {
    const name = all[i]
    const value = all[i + 1]
    const values = Array.isArray(value)
      ? (value.length >= 2 && name.toLowerCase() === 'cookie' ? [value.join('; ')] : value)
      : [value]
    for (const v of values) headers.push(wire(name), wire(v).replace(/^[ \t]+|[ \t]+$/g, ''))
  }
  let body = Buffer.alloc(0)
  if (!noBody(r) && r.body !== undefined) {
    body = typeof r.body === 'string'
      ? Buffer.from(r.body, r.encoding === 'latin1' || r.encoding === 'ascii' ? 'latin1' : 'utf8')
      : Buffer.from(r.body)
  }
  const reason = r.reason ?? (http.STATUS_CODES[r.status] || 'unknown')
  return { statusCode: r.status, statusMessage: wire(reason), headers, body }
}

test('the table is large enough', async t => {
  t.ok(rows.length >= 60, `${rows.length} rows`)
})

test('buildHttpMessage matches the bytes Node sends', async t => {
  const native = loadBuild(true)
  const fallback = loadBuild(false)
  t.equal(native.isNative, true, 'the addon is loaded (run `node scripts/build.js` first)')
  t.equal(fallback.isNative, false, 'HTTP_ONESHOT_NATIVE=0 selects the JS fallback')
  t.match(fallback.loadError && fallback.loadError.message, /HTTP_ONESHOT_NATIVE/)

  const server = await startServer()
  t.teardown(() => server.close())
  const { port } = server.address()

  for (const [i, r] of rows.entries()) {
    const wire = await fetchRaw(port, i)
    const args = buildArgs(r)
    const gotNative = native.buildHttpMessage(...args)
    const gotFallback = fallback.buildHttpMessage(...args)
    const label = `${r.name} (rows[${i}])`
    t.ok(Buffer.isBuffer(gotNative), `${label}: native returns a Buffer`)
    // Comparing latin1 strings gives a readable diff on failure; the
    // equality of the Buffers themselves is asserted too.
    if (wire.length < 4096) {
      t.equal(gotNative.toString('latin1'), wire.toString('latin1'), `${label}: native = Node`)
      t.equal(gotFallback.toString('latin1'), wire.toString('latin1'), `${label}: fallback = Node`)
    }
    t.ok(gotNative.equals(wire), `${label}: native bytes = Node bytes (${wire.length} B)`)
    t.ok(gotFallback.equals(wire), `${label}: fallback bytes = Node bytes`)

    const { messages, error } = parseResponse(gotNative)
    t.equal(error, null, `${label}: llhttp accepts it`)
    t.equal(messages.length, 1, `${label}: one message`)
    const m = messages[0]
    const want = expectedParse(r)
    t.equal(m.statusCode, want.statusCode, `${label}: status`)
    t.equal(m.statusMessage, want.statusMessage, `${label}: reason`)
    t.strictSame(m.headers, want.headers, `${label}: headers`)
    t.ok(m.body.equals(want.body), `${label}: body (${want.body.length} B)`)
  }
})

test('an object of headers renders like the same flat array', async t => {
  const { buildHttpMessage } = loadBuild(true)
  const obj = { 'Content-Type': 'text/plain', 'X-N': 5, 'Set-Cookie': ['a=1', 'b=2'], 2: 'two' }
  const flat = ['2', 'two', 'Content-Type', 'text/plain', 'X-N', 5, 'Set-Cookie', ['a=1', 'b=2']]
  t.equal(buildHttpMessage(200, undefined, obj, 'x').toString('latin1'),
    buildHttpMessage(200, undefined, flat, 'x').toString('latin1'))
  const inherited = Object.create({ 'X-Inherited': 'no' })
  inherited.Own = 'yes'
  t.equal(buildHttpMessage(200, 'OK', inherited).toString('latin1'),
    'HTTP/1.1 200 OK\r\nOwn: yes\r\n\r\n', 'inherited keys are skipped')
})

test('status codes are coerced like writeHead', async t => {
  for (const { buildHttpMessage, isNative } of [loadBuild(true), loadBuild(false)]) {
    const line = s => buildHttpMessage(s).toString('latin1').split('\r\n')[0]
    t.equal(line('404'), 'HTTP/1.1 404 Not Found', `string code (native=${isNative})`)
    t.equal(line(200.9), 'HTTP/1.1 200 OK', `fraction (native=${isNative})`)
    t.equal(line(2 ** 32 + 201), 'HTTP/1.1 201 Created', `ToInt32 wraps (native=${isNative})`)
    t.equal(line({ valueOf: () => 418 }), "HTTP/1.1 418 I'm a Teapot", `valueOf (native=${isNative})`)
  }
})
