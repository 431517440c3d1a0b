'use strict'

// The addon's own contract (src/napi_entry.h, src/napi_cache.h, src/binding.c):
// misuse throws a TypeError, a response the core rejects comes back as
// REJECTED with its code in the record, and fillFromHead() reproduces a head Node rendered. Also a self-test
// of test/helpers/llhttp.js.

const http = require('node:http')
const path = require('node:path')
const { Worker } = require('node:worker_threads')
const { test } = require('tap')

const binding = require('../lib/binding.js')
const { codeOf } = require('./helpers/result.js')
const { parseResponse } = require('./helpers/llhttp.js')

const { CHUNKED, BODY_LATIN1, HEAD_UTF8, ASCII_ONLY } = binding?.flags ?? {}

function nodeResponse () {
  return new http.ServerResponse({ method: 'GET', httpVersionMajor: 1, httpVersionMinor: 1, headers: {} })
}

// Counts the header lines of a rendered head (all lines but the status line
// and the empty last one).
function countLines (head) {
  return head.split('\r\n').length - 3
}

// lib/build.js joins header fields as `name NUL value CR LF` lines.
function joined (flat) {
  let s = ''
  for (let i = 0; i < flat.length; i += 2) s += flat[i] + '\0' + flat[i + 1] + '\r\n'
  return s
}

// fill() with no room of its own: the whole message as a Buffer, or the
// rejection code.
function whole (status, reason, flat, body, flags) {
  const r = binding.fill(joined(flat), flat.length / 2, status, reason, body, flags, null, 0)
  return Buffer.isBuffer(r) ? r : codeOf(r)
}

// The bytes Node sends for a head and a body: the head as latin1, or as
// UTF-8 under HEAD_UTF8, the body as Buffer.from() encodes it, framed as one
// chunk under CHUNKED.
function message (head, body, flags) {
  const utf8Head = (flags & HEAD_UTF8) !== 0
  let bytes = body === undefined || body === null
    ? Buffer.alloc(0)
    : typeof body === 'string'
      ? Buffer.from(body, (flags & BODY_LATIN1) !== 0 ? 'latin1' : 'utf8')
      : Buffer.from(body.buffer, body.byteOffset, body.byteLength)
  if ((flags & CHUNKED) !== 0) {
    bytes = bytes.length === 0
      ? Buffer.from('0\r\n\r\n')
      : Buffer.concat([Buffer.from(bytes.length.toString(16) + '\r\n'), bytes, Buffer.from('\r\n0\r\n\r\n')])
  }
  return Buffer.concat([Buffer.from(head, utf8Head ? 'utf8' : 'latin1'), bytes])
}

// fillFromHead() into a buffer sized for message() (a chunked head is
// latin1 whatever the flags): the message, or the rejection code.
function fromHead (head, n, body, flags) {
  const size = message(head, body, (flags & CHUNKED) !== 0 ? flags & ~HEAD_UTF8 : flags).length
  const dst = Buffer.alloc(size, 0x2a)
  const code = codeOf(binding.fillFromHead(dst, head, n, body, flags))
  return code === 0 ? dst : code
}

test('the addon loads and exports its interface', async t => {
  t.not(binding, null, 'lib/binding.js loaded the addon (run `node scripts/build.js` first)')
  t.strictSame(Object.keys(binding), ['fill', 'fillFromHead', 'checkHead', 'cacheSet', 'fillCached', 'sendCached',
    'canSend', 'flags', 'errors', 'errorName', 'result', 'detail', 'key'],
  'the complete export table (src/binding.c)')
  t.strictSame(binding.flags, { CHUNKED: 1, BODY_LATIN1: 2, HEAD_UTF8: 4, ASCII_ONLY: 8, HEAD_ONE_BYTE: 16 })
  t.strictSame(binding.errors, {
    EINVAL_STATUS: 1,
    EINVAL_REASON: 2,
    EINVAL_NAME: 3,
    EINVAL_VALUE: 4,
    EINVAL_HEAD: 5,
    EINVAL_ARG: 6,
    EOVERFLOW: 7,
    E2BIG: 8,
    ENONASCII: 9
  })
  // The names by code, from the one C table (hm_err_name()).
  for (const [name, code] of Object.entries(binding.errors)) {
    t.equal(binding.errorName(code), name, `errorName(${code}) is ${name}`)
  }
  t.equal(binding.errorName(0), 'OK')
  t.equal(binding.errorName(99), 'UNKNOWN')
  t.equal(binding.errorName(-1), 'UNKNOWN')
  t.throws(() => binding.errorName('1'), TypeError, 'the code must be a number')
  t.strictSame(binding.result, { PART: 1, NOT_READY: 2, REJECTED: 3, FAILED: 4 })
  t.ok(binding.detail instanceof Int32Array && binding.detail.length === 1, 'detail: an Int32Array of one')
  t.ok(Object.isFrozen(binding.flags) && Object.isFrozen(binding.errors) &&
    Object.isFrozen(binding.result), 'frozen')
})

test('misuse throws a TypeError naming the function and argument', async t => {
  const cases = [
    [() => binding.fill('', 0, 200, undefined, new Uint16Array(1), 0, null, 0), /^fill: argument 'body'/],
    [() => binding.fill('', 0, 200, undefined, new ArrayBuffer(1), 0, null, 0), /^fill: argument 'body'/],
    [() => binding.fill('', 0, 200, undefined, undefined, '0', null, 0), /^fill: argument 'flags' must be a number/],
    [() => binding.fill('', 0, 200, undefined, undefined, 32, null, 0), /^fill: argument 'flags' has unknown bits/],
    [() => binding.fillFromHead(), /^fillFromHead: expected 5 arguments/],
    [() => binding.fillFromHead(Buffer.alloc(19), 5, 0, undefined, 0), /^fillFromHead: argument 'head' must be a string/],
    [() => binding.fillFromHead(Buffer.alloc(19), 'HTTP/1.1 200 OK\r\n\r\n', '0', undefined, 0),
      /^fillFromHead: argument 'numHeaders'/],
    [() => binding.fillFromHead(Buffer.alloc(19), 'HTTP/1.1 200 OK\r\n\r\n', 0, {}, 0), /^fillFromHead: argument 'body'/],
    [() => binding.fillFromHead(Buffer.alloc(19), 'HTTP/1.1 200 OK\r\n\r\n', 0, undefined, null),
      /^fillFromHead: argument 'flags'/]
  ]
  for (const [fn, message] of cases) {
    t.throws(fn, { name: 'TypeError', message }, String(message))
  }
})

test('a rejected response returns the core error code', async t => {
  const { errors } = binding
  t.equal(whole(99, undefined, [], undefined, 0), errors.EINVAL_STATUS)
  t.equal(whole(1000, undefined, [], undefined, 0), errors.EINVAL_STATUS)
  t.equal(whole(200.5, undefined, [], undefined, 0), errors.EINVAL_STATUS)
  t.equal(whole(NaN, undefined, [], undefined, 0), errors.EINVAL_STATUS)
  t.equal(whole(200, 'a\nb', [], undefined, 0), errors.EINVAL_REASON)
  t.equal(whole(200, 'a\u0100', [], undefined, 0), errors.EINVAL_REASON)
  t.equal(whole(200, undefined, ['a b', 'x'], undefined, 0), errors.EINVAL_NAME)
  t.equal(whole(200, undefined, ['', 'x'], undefined, 0), errors.EINVAL_NAME)
  t.equal(whole(200, undefined, ['X\u0d0a', 'x'], undefined, 0), errors.EINVAL_VALUE,
    'a char above 0xFF anywhere in the joined fields')
  t.equal(whole(200, undefined, ['a', 'x\r\nInjected: 1'], undefined, 0), errors.EINVAL_HEAD,
    'an injected line is one line more than counted')
  t.equal(whole(200, undefined, ['a', '\u0d0a'], undefined, HEAD_UTF8), errors.EINVAL_VALUE,
    'U+0D0A is never truncated to LF')
  t.equal(whole(200, undefined, ['a', '\u0141'], undefined, 0), errors.EINVAL_VALUE,
    'U+0141 is never truncated to "A"')
  t.equal(whole(200, undefined, ['a', '\ud800'], undefined, 0), errors.EINVAL_VALUE)
  t.equal(whole(200, undefined, ['a', 'ok', 'b', 'bad\0'], 'body', 0), errors.EINVAL_VALUE)
})

test('fill writes what Buffer.from would', async t => {
  const body = 'a\ud800b\u00e9\u4e2d\ud83d\ude00'
  const out = whole(200, undefined, ['X', 'caf\u00e9'], body, 0)
  t.ok(out.equals(Buffer.concat([
    Buffer.from('HTTP/1.1 200 OK\r\nX: caf\u00e9\r\n\r\n', 'latin1'),
    Buffer.from(body, 'utf8')
  ])), 'utf8 body, latin1 head')
  const out2 = whole(200, 'Ol\u00e9', ['X', 'caf\u00e9'], body, BODY_LATIN1 | HEAD_UTF8)
  t.ok(out2.equals(Buffer.concat([
    Buffer.from('HTTP/1.1 200 Ol\u00e9\r\nX: caf\u00e9\r\n\r\n', 'utf8'),
    Buffer.from(body, 'latin1')
  ])), 'latin1 body, utf8 head')
  const pool = Buffer.from('0123456789')
  const view = new Uint8Array(pool.buffer, pool.byteOffset + 2, 5)
  t.equal(whole(200, '', [], view, 0).toString('latin1'), 'HTTP/1.1 200 \r\n\r\n23456', 'byte offset')
  t.equal(whole(200, undefined, [], new Uint8ClampedArray([65, 66]), 0).toString('latin1'),
    'HTTP/1.1 200 OK\r\n\r\nAB')
  t.equal(whole(204, undefined, [], null, CHUNKED).toString('latin1'),
    'HTTP/1.1 204 No Content\r\n\r\n0\r\n\r\n', 'null body, chunked')
  // Strings larger than the kept scratch memory, several times in a row.
  for (let i = 0; i < 3; i++) {
    const big = 'x\u00e9'.repeat(1024 * 1024) + i
    const got = whole(200, undefined, [], big, 0)
    const want = Buffer.concat([Buffer.from('HTTP/1.1 200 OK\r\n\r\n'), Buffer.from(big)])
    t.ok(got.equals(want), `2 MiB string body, round ${i}`)
  }
  const many = []
  for (let i = 0; i < 500; i++) many.push(`X-${i}`, 'v'.repeat(i))
  const got = whole(200, undefined, many, '', 0).toString('latin1')
  t.equal(got.split('\r\n').length, 503, '500 headers')
  t.ok(got.includes(`X-499: ${'v'.repeat(499)}\r\n`))
})

test('fillFromHead round trips a head Node rendered', async t => {
  const res = nodeResponse()
  res.sendDate = false
  res.setHeader('Content-Type', 'text/plain; charset=utf-8')
  res.setHeader('Set-Cookie', ['a=1', 'b=2'])
  res.setHeader('X-Latin1', 'caf\u00e9')
  res.writeHead(201, { 'Content-Length': 5, 'X-Num': 42 })
  const head = res._header
  t.equal(typeof head, 'string', 'writeHead rendered _header')
  const n = countLines(head)
  t.equal(n, 7, 'seven header lines')

  const body = Buffer.from('hello')
  t.ok(fromHead(head, n, body, 0).equals(Buffer.concat([Buffer.from(head, 'latin1'), body])),
    'latin1 head + Buffer body')
  t.ok(fromHead(head, n, 'h\u00e9llo', HEAD_UTF8).equals(Buffer.from(head + 'h\u00e9llo', 'utf8')),
    'utf8 head + utf8 body, as Node merges them')
  t.ok(fromHead(head, n, 'h\u00e9', BODY_LATIN1).equals(Buffer.from(head + 'h\u00e9', 'latin1')),
    'latin1 head + latin1 body')
  t.equal(fromHead(head, n, 'abc', CHUNKED).toString('latin1'), head + '3\r\nabc\r\n0\r\n\r\n',
    'chunked')
  t.equal(fromHead(head, n, undefined, 0).toString('latin1'), head, 'no body')

  const { messages, error } = parseResponse(fromHead(head, n, body, 0))
  t.equal(error, null)
  t.equal(messages[0].statusCode, 201)
  t.equal(messages[0].body.toString(), 'hello')
})

test('fillFromHead rejects a head that is not what it claims', async t => {
  const { errors } = binding
  const head = 'HTTP/1.1 200 OK\r\nA: 1\r\nB: 2\r\n\r\n'
  t.type(fromHead(head, 2, '', 0), Buffer)
  t.equal(fromHead(head, 1, '', 0), errors.EINVAL_HEAD, 'one line fewer than the head has')
  t.equal(fromHead(head, 3, '', 0), errors.EINVAL_HEAD, 'one line more than the head has')
  t.equal(fromHead(head, 4294967295, '', 0), errors.EINVAL_HEAD, 'absurd count')
  // A value that smuggles a line ending or a second header.
  const cr = fromHead('HTTP/1.1 200 OK\r\nA: x\ry\r\n\r\n', 1, '', 0)
  t.ok(cr === errors.EINVAL_VALUE || cr === errors.EINVAL_HEAD, `bare CR in a value (${cr})`)
  const lf = fromHead('HTTP/1.1 200 OK\r\nA: x\ny\r\n\r\n', 1, '', 0)
  t.ok(lf === errors.EINVAL_VALUE || lf === errors.EINVAL_HEAD, `bare LF in a value (${lf})`)
  t.equal(fromHead('HTTP/1.1 200 OK\r\nA: x\r\nInjected: 1\r\n\r\n', 1, '', 0),
    errors.EINVAL_HEAD, 'an injected line changes the count')
  t.equal(fromHead('HTTP/1.1 200 OK\r\nA: x\u0d0ay\r\n\r\n', 1, '', 0), errors.EINVAL_VALUE,
    'U+0D0A in a value')
  t.equal(fromHead('HTTP/1.1 200 OK\r\nA\u0d0a: x\r\n\r\n', 1, '', 0), errors.EINVAL_NAME,
    'U+0D0A in a name')
  t.equal(fromHead('HTTP/1.1 200 O\u0d0aK\r\n\r\n', 0, '', 0), errors.EINVAL_REASON,
    'U+0D0A in the reason')
  t.equal(fromHead('HTTP/1.1 200 OK\r\nA: x\r\n', 1, '', 0), errors.EINVAL_HEAD, 'no final CRLF')
  t.equal(fromHead('HTTP/1.0 200 OK\r\n\r\n', 0, '', 0), errors.EINVAL_HEAD, 'not HTTP/1.1')
  t.equal(fromHead('', 0, '', 0), errors.EINVAL_HEAD, 'empty')
})

test('ASCII_ONLY rejects any char >= 0x80 in the head or a string body', async t => {
  const { errors } = binding
  const head = 'HTTP/1.1 200 OK\r\nX: a\r\n\r\n'
  t.equal(fromHead(head, 1, 'ascii', ASCII_ONLY).toString('latin1'), head + 'ascii')
  t.equal(fromHead('HTTP/1.1 200 OK\r\nX: \u00e9\r\n\r\n', 1, '', ASCII_ONLY), errors.ENONASCII)
  t.equal(fromHead(head, 1, '\u00e9', ASCII_ONLY), errors.ENONASCII, 'utf8 body')
  // The body's UTF-8 byte count against its UTF-16 length decides.
  for (const [body, label] of [['ab\u0141', 'a char above 0xFF'], ['a\ud800', 'a lone surrogate'],
    ['\ud83d\ude00', 'a surrogate pair'], ['x'.repeat(100) + '\u0080', 'a last char of 0x80'],
    ['x'.repeat(100) + '\u0141', 'a long body with a char above 0xFF'],
    ['x'.repeat(100) + '\ud800', 'a long body with a lone surrogate']]) {
    t.equal(fromHead(head, 1, body, ASCII_ONLY), errors.ENONASCII, `utf8 body: ${label}`)
  }
  // Bodies of up to 62 chars are read as UTF-16 and narrowed, longer ones
  // as UTF-8: each length around that bound, ASCII or not in its last char
  // (a char whose low byte is ASCII too: narrowing must not hide it).
  for (const n of [1, 2, 8, 61, 62, 63, 64, 65, 130]) {
    const ascii = 'abcdefgh'.repeat(17).slice(0, n)
    t.equal(fromHead(head, 1, ascii, ASCII_ONLY).toString('latin1'), head + ascii,
      `${n} ASCII chars`)
    for (const last of ['\u0080', '\u00ff', '\u0141', '\u2028', '\ud800', '\udc00']) {
      const text = ascii.slice(0, -1) + last
      t.equal(fromHead(head, 1, text, ASCII_ONLY), errors.ENONASCII,
        `${n} chars, the last U+${last.charCodeAt(0).toString(16)}`)
      t.equal(fromHead(head, 1, text, ASCII_ONLY | BODY_LATIN1), errors.ENONASCII,
        `${n} chars, the last U+${last.charCodeAt(0).toString(16)}, latin1`)
    }
  }
  t.equal(fromHead(head, 1, '', ASCII_ONLY).toString('latin1'), head, 'an empty body')
  t.equal(fromHead(head, 1, 'a\0b\0', ASCII_ONLY).toString('latin1'), head + 'a\0b\0',
    'NUL chars are body bytes')
  const joined = ['ab', 'cd'].join('') + 'x'.repeat(3)
  t.equal(fromHead(head, 1, joined, ASCII_ONLY).toString('latin1'), head + joined,
    'a string V8 keeps in pieces')
  const long = 'ascii '.repeat(3000)
  t.equal(fromHead(head, 1, long, ASCII_ONLY).toString('latin1'), head + long, 'long ASCII body')
  t.equal(fromHead(head, 1, '\u0141', ASCII_ONLY | BODY_LATIN1), errors.ENONASCII,
    'latin1 body whose low byte is ASCII')
  t.equal(fromHead(head, 1, '\x7f', ASCII_ONLY | BODY_LATIN1).toString('latin1'), head + '\x7f')
  t.ok(fromHead(head, 1, Buffer.from([0xff]), ASCII_ONLY).equals(Buffer.from(head + '\xff', 'latin1')),
    'Buffer bodies are bytes, not text')
  t.equal(whole(200, 'Ol\u00e9', [], undefined, ASCII_ONLY), errors.ENONASCII, 'reason')
  t.equal(whole(200, undefined, ['X', '\u00e9'], undefined, ASCII_ONLY), errors.ENONASCII, 'value')
  t.equal(whole(200, undefined, ['X', '\u0100'], undefined, ASCII_ONLY), errors.EINVAL_VALUE,
    'a char above 0xFF is still invalid, not merely non-ASCII')
})

test('the addon works in a worker thread (context aware)', async t => {
  const script = `
    const { parentPort } = require('node:worker_threads')
    const b = require(${JSON.stringify(path.join(__dirname, '..', 'lib', 'binding.js'))})
    parentPort.postMessage(b.fill('X\\0y\\r\\n', 1, 200, undefined, 'z', 0, null, 0).toString('latin1'))
  `
  const out = await new Promise((resolve, reject) => {
    const w = new Worker(script, { eval: true })
    w.once('message', resolve)
    w.once('error', reject)
  })
  t.equal(out, 'HTTP/1.1 200 OK\r\nX: y\r\n\r\nz')
  t.equal(whole(200, undefined, [], 'still', 0).toString('latin1'), 'HTTP/1.1 200 OK\r\n\r\nstill',
    'the main thread is unaffected after the worker exits')
})

test('llhttp helper: pipelined messages, HEAD, batches and errors', async t => {
  const three = Buffer.from('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi' +
    'HTTP/1.1 404 Nope\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n0\r\n\r\n' +
    'HTTP/1.1 204 No Content\r\n\r\n')
  const r = parseResponse(three)
  t.equal(r.error, null)
  t.strictSame(r.messages.map(m => [m.statusCode, m.statusMessage, m.body.toString()]),
    [[200, 'OK', 'hi'], [404, 'Nope', 'ab'], [204, 'No Content', '']])
  t.strictSame(r.messages[1].headers, ['Transfer-Encoding', 'chunked'])
  t.equal(r.messages[0].versionMajor, 1)
  t.equal(r.messages[0].versionMinor, 1)
  t.equal(r.messages[0].shouldKeepAlive, true)

  const head = parseResponse(Buffer.from('HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n' +
    'HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n'), { method: 'HEAD' })
  t.equal(head.error, null)
  t.equal(head.messages.length, 2, 'HEAD: Content-Length does not announce a body')

  const lines = []
  for (let i = 0; i < 70; i++) lines.push(`H${i}`, `v${i}`)
  const big = parseResponse(Buffer.from('HTTP/1.1 200 OK\r\n' +
    lines.map((x, i) => i % 2 ? `${x}\r\n` : `${x}: `).join('') + 'Content-Length: 0\r\n\r\n'))
  t.strictSame(big.messages[0].headers, [...lines, 'Content-Length', '0'], '70 headers arrive in order')

  const bad = parseResponse(Buffer.from('HTTP/1.1 200 OK\r\nA: x\ny\r\n\r\n'))
  t.equal(bad.messages.length, 0)
  t.match(bad.error, { code: /^HPE_/, reason: String, bytesParsed: Number })

  const truncated = parseResponse(Buffer.from('HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nab'))
  t.not(truncated.error, null, 'a short body is an error at EOF')
  t.equal(parseResponse(Buffer.from('HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nab'), { eof: false }).error,
    null, 'but not before EOF')

  const close = parseResponse(Buffer.from('HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nuntil close'))
  t.equal(close.messages[0].body.toString(), 'until close', 'a body delimited by close ends at EOF')
  t.equal(close.messages[0].shouldKeepAlive, false)
})

test('fillFromHead writes head and body into a caller-sized buffer', t => {
  const { errors } = binding
  const head = 'HTTP/1.1 200 OK\r\nContent-Length: 2\r\nX-A: caf\u00e9\r\n\r\n'
  for (const oneByte of [0, 16]) {
    const out = Buffer.alloc(head.length + 2, 0x2a)
    t.equal(codeOf(binding.fillFromHead(out, head, 2, 'ok', oneByte)), 0, `latin1 head, flags ${oneByte}`)
    t.ok(out.equals(Buffer.from(head + 'ok', 'latin1')), '  bytes as Node sends them with latin1')
    const ascii = Buffer.alloc(head.length + 2)
    t.equal(codeOf(binding.fillFromHead(ascii, head, 2, 'ok', HEAD_UTF8 | ASCII_ONLY | oneByte)),
      errors.ENONASCII, '  a non-ASCII head is refused under ASCII_ONLY')
  }
  const body = Buffer.from('xyz')
  const out = Buffer.alloc(head.length + 3, 0x2a)
  t.equal(codeOf(binding.fillFromHead(out, head, 2, body, 16)), 0, 'a Buffer body')
  t.ok(out.equals(Buffer.concat([Buffer.from(head, 'latin1'), body])), '  bytes')
  const short = Buffer.alloc(head.length + 1, 0x2a)
  t.equal(codeOf(binding.fillFromHead(short, head, 2, body, 0)), errors.E2BIG, 'a short buffer is E2BIG')
  t.ok(short.equals(Buffer.alloc(head.length + 1, 0x2a)), '  and is left untouched')
  t.equal(codeOf(binding.fillFromHead(Buffer.alloc(head.length + 4), head, 2, body, 0)), errors.EINVAL_ARG,
    'a long buffer is EINVAL_ARG')
  t.equal(codeOf(binding.fillFromHead(Buffer.alloc(head.length + 3), head, 3, body, 0)), errors.EINVAL_HEAD,
    'a wrong line count is EINVAL_HEAD')
  const injected = 'HTTP/1.1 200 OK\r\nX-A: a\r\nSet-Cookie: x=1\r\n\r\n'
  t.equal(codeOf(binding.fillFromHead(Buffer.alloc(injected.length), injected, 1, undefined, 16)),
    errors.EINVAL_HEAD, 'an injected line is refused')
  // The one-byte read truncates a char above 0xFF to its low byte: U+0D0A
  // becomes a bare LF, which the core refuses.
  const wide = 'HTTP/1.1 200 OK\r\nX-A: a\u0d0ab\r\n\r\n'
  t.not(codeOf(binding.fillFromHead(Buffer.alloc(wide.length), wide, 1, undefined, 16)), 0,
    'U+0D0A read as one byte still never reaches the buffer')
  t.not(codeOf(binding.fillFromHead(Buffer.alloc(wide.length), wide, 1, undefined, 0)), 0,
    'U+0D0A read in full is refused')
  // Chunked framing (flag 1): the head as latin1, whatever the body's
  // flags, then the body as one chunk and the last chunk.
  const chunkedHead = 'HTTP/1.1 200 OK\r\nX-A: caf\u00e9\r\nTransfer-Encoding: chunked\r\n\r\n'
  for (const [label, chunk, flags, bytes] of [
    ['an ASCII string', 'ok', HEAD_UTF8 | ASCII_ONLY | 16, '2\r\nok\r\n0\r\n\r\n'],
    ['a UTF-8 string', 'd\u00e9j\u00e0', HEAD_UTF8 | 16, '6\r\nd\u00c3\u00a9j\u00c3\u00a0\r\n0\r\n\r\n'],
    ['a latin1 string', 'd\u00e9j\u00e0', 2 | 16, '4\r\nd\u00e9j\u00e0\r\n0\r\n\r\n'],
    ['a Buffer', Buffer.from('xyz'), 16, '3\r\nxyz\r\n0\r\n\r\n'],
    ['no body', undefined, 0, '0\r\n\r\n'],
    ['an empty Buffer', Buffer.alloc(0), 16, '0\r\n\r\n']
  ]) {
    const expected = Buffer.from(chunkedHead + bytes, 'latin1')
    const framed = Buffer.alloc(expected.length, 0x2a)
    t.equal(codeOf(binding.fillFromHead(framed, chunkedHead, 2, chunk, flags | 1)), 0, `chunked, ${label}`)
    t.ok(framed.equals(expected), '  bytes as Node frames them')
    const short = Buffer.alloc(expected.length - 1, 0x2a)
    t.equal(codeOf(binding.fillFromHead(short, chunkedHead, 2, chunk, flags | 1)), errors.E2BIG, '  E2BIG when short')
    t.ok(short.equals(Buffer.alloc(expected.length - 1, 0x2a)), '  and left untouched')
  }
  t.equal(codeOf(binding.fillFromHead(Buffer.alloc(64), injected, 1, 'ok', 1)), errors.EINVAL_HEAD,
    'chunked: an injected line is refused')
  t.equal(codeOf(binding.fillFromHead(Buffer.alloc(64), 'HTTP/1.1 200 OK\r\nA: \u0d0a\r\n\r\n', 1, 'ok', 1)),
    errors.EINVAL_HEAD, 'chunked: U+0D0A read as one byte is refused')
  t.throws(() => binding.fillFromHead(new Uint16Array(4), head, 2, undefined, 0), TypeError,
    'dst must be a Uint8Array')
  t.throws(() => binding.fillFromHead(Buffer.alloc(4), head, 2, undefined), TypeError,
    'five arguments')
  t.end()
})

test('checkHead validates a rendered block', t => {
  const { errors } = binding
  t.equal(codeOf(binding.checkHead('HTTP/1.1 200 OK\r\nA: b\r\n\r\n', 1)), 0, 'a valid block')
  t.equal(codeOf(binding.checkHead('HTTP/1.1 200 OK\r\nA: b\r\n\r\n', 2)), errors.EINVAL_HEAD, 'count')
  t.equal(codeOf(binding.checkHead('HTTP/1.1 200 OK\r\nA: b\x01\r\n\r\n', 1)), errors.EINVAL_VALUE,
    'a control char')
  t.equal(codeOf(binding.checkHead('HTTP/1.1 200 OK\r\nA b: c\r\n\r\n', 1)), errors.EINVAL_NAME, 'a name')
  t.equal(codeOf(binding.checkHead('HTTP/1.1 200 O\u0100K\r\n\r\n', 0)), errors.EINVAL_REASON,
    'a char above 0xFF in the reason')
  t.throws(() => binding.checkHead(1, 0), TypeError, 'head must be a string')
  t.end()
})

test('fill writes into an ArrayBuffer at an offset, or returns a Buffer of its own', t => {
  const flat = ['Content-Type', 'text/plain', 'X-Latin1', 'caf\u00e9']
  for (const [body, flags] of [['hi', 0], [Buffer.from('hi'), 0], ['h\u00e9', BODY_LATIN1],
    ['h\u00e9', HEAD_UTF8], [undefined, CHUNKED], ['chunk', CHUNKED], [null, 0]]) {
    const want = message('HTTP/1.1 200 Fine\r\nContent-Type: text/plain\r\nX-Latin1: caf\u00e9\r\n\r\n', body, flags)
    t.ok(whole(200, 'Fine', flat, body, flags).equals(want), `a Buffer of its own, flags ${flags}`)
    const ab = new ArrayBuffer(want.length + 16)
    new Uint8Array(ab).fill(0x2a)
    t.equal(binding.fill(joined(flat), 2, 200, 'Fine', body, flags, ab, 8), undefined, `in dst, flags ${flags}`)
    const n = binding.detail[0]
    t.equal(n, want.length, '  its length in the record')
    t.ok(Buffer.from(ab, 8, n).equals(want), '  the same bytes')
    const bytes = new Uint8Array(ab)
    t.ok(bytes.subarray(0, 8).every(b => b === 0x2a) && bytes.subarray(8 + n).every(b => b === 0x2a),
      '  nothing written outside them')
  }
  const ab = new ArrayBuffer(40)
  new Uint8Array(ab).fill(0x2a)
  const own = binding.fill(joined(flat), 2, 200, undefined, 'x'.repeat(30), 0, ab, 0)
  t.ok(Buffer.isBuffer(own), 'a message that does not fit comes back as a Buffer')
  t.ok(own.equals(whole(200, undefined, flat, 'x'.repeat(30), 0)), '  with the same bytes')
  t.ok(new Uint8Array(ab).every(b => b === 0x2a), '  and dst is left untouched')
  const exact = whole(200, undefined, [], 'abc', 0).length
  t.equal(binding.fill('', 0, 200, undefined, 'abc', 0, new ArrayBuffer(exact + 3), 3), undefined,
    'a message that fits exactly to the end')
  t.equal(binding.detail[0], exact, '  its length in the record')
  t.ok(Buffer.isBuffer(binding.fill('', 0, 200, undefined, 'abc', 0, null, 0)), 'null dst')
  t.ok(Buffer.isBuffer(binding.fill('', 0, 200, undefined, 'abc', 0, undefined, 0)), 'undefined dst')
  t.ok(Buffer.isBuffer(binding.fill('', 0, 200, undefined, 'abc', 0, new ArrayBuffer(0), 0)),
    'an empty dst')

  const big = 'x\u00e9'.repeat(1024 * 1024)
  const got = binding.fill(joined(flat), 2, 200, undefined, big, 0, new ArrayBuffer(64), 0)
  t.ok(got.equals(whole(200, undefined, flat, big, 0)), 'a 3 MiB string body')
  t.end()
})

test('fill rejects a message the core rejects: REJECTED, the code in the record', t => {
  const { errors } = binding
  const ab = new ArrayBuffer(256)
  new Uint8Array(ab).fill(0x2a)
  const cases = [
    [99, undefined, ['a', 'b'], errors.EINVAL_STATUS],
    [200.5, undefined, ['a', 'b'], errors.EINVAL_STATUS],
    [NaN, undefined, [], errors.EINVAL_STATUS],
    [200, 'a\nb', [], errors.EINVAL_REASON],
    [200, 'a\u0100', [], errors.EINVAL_REASON],
    [200, undefined, ['a b', 'x'], errors.EINVAL_NAME],
    [200, undefined, ['', 'x'], errors.EINVAL_NAME],
    [200, undefined, ['X: y', 'z'], errors.EINVAL_NAME],
    [200, undefined, ['a', '\u0d0a'], errors.EINVAL_VALUE],
    [200, undefined, ['a', '\u0141'], errors.EINVAL_VALUE],
    [200, undefined, ['a', 'b\0c'], errors.EINVAL_VALUE],
    [200, undefined, ['a\0b', 'c'], errors.EINVAL_VALUE],
    [200, undefined, ['a', 'x\r\nInjected: 1'], errors.EINVAL_HEAD]
  ]
  for (const [status, reason, flat, code] of cases) {
    t.equal(binding.fill(joined(flat), flat.length / 2, status, reason, 'body', 0, ab, 0), binding.result.REJECTED,
      `${JSON.stringify([status, reason, flat])}: REJECTED`)
    t.equal(binding.detail[0], code, `  code ${code}`)
  }
  t.equal(codeOf(binding.fill(joined(['a', 'b', 'c', 'd']), 1, 200, undefined, '', 0, ab, 0)), errors.EINVAL_HEAD,
    'more lines than counted')
  t.equal(codeOf(binding.fill(joined(['a', 'b']), 2, 200, undefined, '', 0, ab, 0)), errors.EINVAL_HEAD,
    'fewer lines than counted')
  t.equal(codeOf(binding.fill('a\0b', 1, 200, undefined, '', 0, ab, 0)), errors.EINVAL_HEAD, 'no CR LF')
  t.equal(codeOf(binding.fill(joined(['a', 'b']), 2 ** 31, 200, undefined, '', 0, ab, 0)), errors.EINVAL_HEAD,
    'a count the string cannot hold')
  t.equal(codeOf(binding.fill(joined(['X', '\u00e9']), 1, 200, undefined, '', ASCII_ONLY, ab, 0)), errors.ENONASCII,
    'ASCII_ONLY')
  t.ok(new Uint8Array(ab).every(b => b === 0x2a), 'nothing is written on rejection')
  t.end()
})

test('fill misuse throws a TypeError', t => {
  const ab = new ArrayBuffer(64)
  const cases = [
    [() => binding.fill(), /^fill: expected 8 arguments/],
    [() => binding.fill('', 0, 200, undefined, '', 0, ab), /^fill: expected 8 arguments/],
    [() => binding.fill(5, 0, 200, undefined, '', 0, ab, 0), /^fill: argument 'fields' must be a string/],
    [() => binding.fill('', '0', 200, undefined, '', 0, ab, 0), /^fill: argument 'numHeaders'/],
    [() => binding.fill('', 0, '200', undefined, '', 0, ab, 0), /^fill: argument 'statusCode'/],
    [() => binding.fill('', 0, 200, 5, '', 0, ab, 0), /^fill: argument 'reason'/],
    [() => binding.fill('', 0, 200, undefined, 5, 0, ab, 0), /^fill: argument 'body'/],
    [() => binding.fill('', 0, 200, undefined, '', 64, ab, 0), /^fill: argument 'flags' has unknown bits/],
    [() => binding.fill('', 0, 200, undefined, '', 0, Buffer.alloc(64), 0), /^fill: argument 'dst'/],
    [() => binding.fill('', 0, 200, undefined, '', 0, ab, 65), /^fill: argument 'offset'/],
    [() => binding.fill('', 0, 200, undefined, '', 0, ab, -1), /^fill: argument 'offset'/]
  ]
  for (const [fn, message] of cases) {
    t.throws(fn, { name: 'TypeError', message }, String(message))
  }
  t.end()
})
