'use strict'

// Bad input to buildHttpMessage() must throw what Node's own writeHead(),
// setHeader() and validateHeader*() throw for the same input: same class,
// code and message. Every case runs through the addon and the JS fallback.

const http = require('node:http')
const { test } = require('tap')

const { loadBuild, caught, shape } = require('./helpers/load-build.js')

const variants = [loadBuild(true), loadBuild(false)]

// A ServerResponse that is not attached to a socket: writeHead() validates
// and renders without sending anything.
function nodeResponse () {
  return new http.ServerResponse({ method: 'GET', httpVersionMajor: 1, httpVersionMinor: 1, headers: {} })
}

test('both paths are present', async t => {
  t.equal(variants[0].isNative, true, 'addon loaded')
  t.equal(variants[1].isNative, false, 'fallback forced')
  t.equal(variants[0].loadError, null, 'no load error with the addon')
  t.match(variants[1].loadError?.message, /HTTP_ONESHOT_NATIVE=0/, 'the reason it is off')
  const index = require('../lib/index.js')
  t.equal(index.loadError, null, 'lib/index.js re-exports loadError')
})

// Inputs Node's writeHead(status, reason, headers) also takes.
const writeHeadCases = [
  ['status 99', 99, undefined, []],
  ['status 1000', 1000, undefined, []],
  ['status NaN', NaN, undefined, []],
  ['status undefined', undefined, undefined, []],
  ['status "abc"', 'abc', undefined, []],
  ['status -200', -200, undefined, []],
  ['status "1e3"', '1e3', undefined, []],
  ['status object', { a: 1 }, undefined, []],
  ['reason with LF', 200, 'a\nb', []],
  ['reason with CR', 200, 'a\r', []],
  ['reason with NUL', 200, '\0', []],
  ['reason with DEL', 200, 'x\x7f', []],
  ['reason with U+0100', 200, 'x\u0100', []],
  ['reason with U+0D0A', 200, 'x\u0d0a', []],
  ['odd headers array', 200, undefined, ['a']],
  ['odd headers array of three', 200, undefined, ['a', 'b', 'c']],
  ['name with space', 200, undefined, ['a b', 'x']],
  ['empty name', 200, undefined, ['', 'x']],
  ['name with colon', 200, undefined, ['a:', 'x']],
  ['latin1 name', 200, undefined, ['caf\u00e9', 'x']],
  ['number name', 200, undefined, [5, 'x']],
  ['undefined value', 200, undefined, ['a', undefined]],
  ['value with CRLF', 200, undefined, ['a', 'x\r\ny']],
  ['value with U+0D0A', 200, undefined, ['a', 'x\u0d0ay']],
  ['value with U+0141', 200, undefined, ['a', '\u0141']],
  ['value with lone surrogate', 200, undefined, ['a', '\ud800']],
  ['bad element in an array', 200, undefined, ['a', ['ok', 'bad\n']]],
  ['undefined element in an array', 200, undefined, ['a', ['ok', undefined]]],
  ['bad element in a cookie array', 200, undefined, ['Cookie', ['a=1', 'b\n=2']]],
  ['object with a bad name', 200, undefined, { 'bad name': 1 }],
  ['object with an undefined value', 200, undefined, { ok: 'x', a: undefined }],
  ['bad name before undefined value', 200, undefined, ['a b', undefined]],
  ['bad value before bad name', 200, undefined, ['a', '\n', 'b c', 'x']],
  ['bad reason before bad header', 200, '\n', ['a b', 'x']],
  ['bad status before bad reason', 42, '\n', []]
]

test('errors match writeHead()', async t => {
  for (const [name, status, reason, headers] of writeHeadCases) {
    const want = shape(caught(() => nodeResponse().writeHead(status, reason, headers)))
    t.not(want, null, `${name}: Node throws`)
    for (const { buildHttpMessage, isNative } of variants) {
      const got = shape(caught(() => buildHttpMessage(status, reason, headers, 'body')))
      t.strictSame(got, want, `${name} (native=${isNative})`)
    }
  }
})

test('errors look like Node errors', async t => {
  const nodeErr = caught(() => http.validateHeaderName('a b'))
  for (const { buildHttpMessage, isNative } of variants) {
    const err = caught(() => buildHttpMessage(200, undefined, ['a b', 'x']))
    t.ok(err instanceof TypeError, `instance of TypeError (native=${isNative})`)
    t.equal(err.name, 'TypeError')
    t.equal(err.stack.split('\n')[0], nodeErr.stack.split('\n')[0], 'first stack line')
    t.equal(String(err), String(nodeErr), 'toString()')
    t.strictSame(Object.keys(err), Object.keys(nodeErr), 'enumerable keys')
    t.notMatch(err.stack, /lib[\\/](build|errors)\.js/, 'no internal frames')
    const range = caught(() => buildHttpMessage(5))
    t.ok(range instanceof RangeError)
    t.equal(range.stack.split('\n')[0], 'RangeError [ERR_HTTP_INVALID_STATUS_CODE]: Invalid status code: 5')
  }
})

test('body types match end() by class and code', async t => {
  for (const body of [5, true, {}, [1, 2], new Uint16Array(2), new DataView(new ArrayBuffer(2)), Symbol('s')]) {
    const res = nodeResponse()
    const want = caught(() => res.end(body))
    t.equal(want && want.code, 'ERR_INVALID_ARG_TYPE', `Node rejects ${typeof body}`)
    for (const { buildHttpMessage, isNative } of variants) {
      const got = caught(() => buildHttpMessage(200, undefined, [], body))
      t.ok(got instanceof TypeError, `TypeError (native=${isNative})`)
      t.equal(got.code, want.code, `${String(body.constructor?.name ?? typeof body)} (native=${isNative})`)
      t.match(got.message, /^The "body" argument must be of type string or an instance of Buffer or Uint8Array\. Received /)
    }
  }
})

test('our own type rules', async t => {
  const cases = [
    ['boolean value', [200, undefined, ['a', true]], TypeError, 'ERR_INVALID_ARG_TYPE'],
    ['null value', [200, undefined, ['a', null]], TypeError, 'ERR_INVALID_ARG_TYPE'],
    ['object value', [200, undefined, ['a', {}]], TypeError, 'ERR_INVALID_ARG_TYPE'],
    ['symbol value', [200, undefined, ['a', Symbol('x')]], TypeError, 'ERR_INVALID_ARG_TYPE'],
    ['nested array value', [200, undefined, ['a', [['x']]]], TypeError, 'ERR_INVALID_ARG_TYPE'],
    ['null in a cookie array', [200, undefined, ['Cookie', ['a', null]]], TypeError, 'ERR_INVALID_ARG_TYPE'],
    ['undefined in a cookie array', [200, undefined, ['Cookie', ['a', undefined]]], TypeError, 'ERR_HTTP_INVALID_HEADER_VALUE'],
    ['number reason', [200, 5, []], TypeError, 'ERR_INVALID_ARG_TYPE'],
    ['string headers', [200, undefined, 'a: b'], TypeError, 'ERR_INVALID_ARG_TYPE'],
    ['options not an object', [200, undefined, [], '', 'utf8'], TypeError, 'ERR_INVALID_ARG_TYPE'],
    ['unknown encoding', [200, undefined, [], '', { encoding: 'hex' }], TypeError, 'ERR_INVALID_ARG_VALUE'],
    ['binary encoding', [200, undefined, [], '', { encoding: 'binary' }], TypeError, 'ERR_INVALID_ARG_VALUE'],
    ['chunked not boolean', [200, undefined, [], '', { chunked: 1 }], TypeError, 'ERR_INVALID_ARG_TYPE'],
    ['unknown headerEncoding', [200, undefined, [], '', { headerEncoding: 'ascii' }], TypeError, 'ERR_INVALID_ARG_VALUE']
  ]
  for (const [name, args, Class, code] of cases) {
    for (const { buildHttpMessage, isNative } of variants) {
      const err = caught(() => buildHttpMessage(...args))
      t.ok(err instanceof Class, `${name}: ${Class.name} (native=${isNative})`)
      t.equal(err && err.code, code, `${name}: ${code} (native=${isNative})`)
    }
  }
  const err = caught(() => variants[0].buildHttpMessage(200, undefined, [], '', { encoding: 'hex' }))
  t.equal(err.message, "The property 'options.encoding' is invalid. Received 'hex'")
})

// Every one-char string 0..255, plus chars above 0xFF whose low byte is
// harmless or dangerous, in a name, a value and the reason: accepted exactly
// when Node's own validators accept it.
test('every char agrees with validateHeaderName / validateHeaderValue', async t => {
  const codes = []
  for (let c = 0; c < 256; c++) codes.push(c)
  codes.push(0x100, 0x141, 0x161, 0x0d0a, 0x0a0d, 0x2028, 0xd800, 0xfeff, 0xffff)
  for (const { buildHttpMessage, isNative } of variants) {
    for (const headerEncoding of ['latin1', 'utf8']) {
      const mismatches = []
      for (const c of codes) {
        const ch = String.fromCharCode(c)
        const opts = { headerEncoding }
        const nameWant = shape(caught(() => http.validateHeaderName(ch)))
        const nameGot = shape(caught(() => buildHttpMessage(200, undefined, [ch, 'v'], 'b', opts)))
        if (JSON.stringify(nameWant) !== JSON.stringify(nameGot)) mismatches.push(['name', c, nameGot])
        const nameMid = shape(caught(() => http.validateHeaderName(`X${ch}Y`)))
        const nameMidGot = shape(caught(() => buildHttpMessage(200, undefined, [`X${ch}Y`, 'v'], 'b', opts)))
        if (JSON.stringify(nameMid) !== JSON.stringify(nameMidGot)) mismatches.push(['name mid', c, nameMidGot])
        const valueWant = shape(caught(() => http.validateHeaderValue('X', `a${ch}b`)))
        const valueGot = shape(caught(() => buildHttpMessage(200, undefined, ['X', `a${ch}b`], 'b', opts)))
        if (JSON.stringify(valueWant) !== JSON.stringify(valueGot)) mismatches.push(['value', c, valueGot])
        const reasonWant = shape(caught(() => nodeResponse().writeHead(200, `R${ch}`)))
        const reasonGot = shape(caught(() => buildHttpMessage(200, `R${ch}`, [], 'b', opts)))
        if (JSON.stringify(reasonWant) !== JSON.stringify(reasonGot)) mismatches.push(['reason', c, reasonGot])
      }
      t.strictSame(mismatches, [], `${codes.length} chars agree (native=${isNative}, headers ${headerEncoding})`)
    }
  }
})

test('an accepted value char comes out as Node encodes it', async t => {
  for (const { buildHttpMessage, isNative } of variants) {
    for (let c = 0x80; c < 0x100; c++) {
      const ch = String.fromCharCode(c)
      const latin1 = buildHttpMessage(200, 'OK', ['X', ch])
      const utf8 = buildHttpMessage(200, 'OK', ['X', ch], undefined, { headerEncoding: 'utf8' })
      if (!latin1.equals(Buffer.from(`HTTP/1.1 200 OK\r\nX: ${ch}\r\n\r\n`, 'latin1')) ||
          !utf8.equals(Buffer.from(`HTTP/1.1 200 OK\r\nX: ${ch}\r\n\r\n`, 'utf8'))) {
        t.fail(`char 0x${c.toString(16)} (native=${isNative})`)
      }
    }
    t.pass(`0x80..0xFF encode as latin1 and utf8 (native=${isNative})`)
  }
})
