'use strict'

// Inputs the handler changes after handing them over. A body Buffer
// mutated right after end() returns must not change what was sent: the
// native path copies it into the message before end() returns, and no
// response is ever cached by the body's identity (a review finding on
// nodejs/node PR #64393). A header array mutated after setHeader() is
// rendered by Node as it is at end() time, unvalidated (lib/_http_outgoing.js
// _storeHeader() reads the kOutHeaders store), and must come out the same
// way on the shim's path.

const t = require('tap')

const { checkParity } = require('./helpers/dual-path.js')
const { requests: { CLOSE, KEEP } } = require('./fixtures/responses.js')

t.jobs = 1

function bodies (capture) {
  return capture.parsed.messages.filter(m => m.statusCode >= 200).map(m => m.body.toString('latin1'))
}

function headerLines (capture) {
  return capture.bytes.split('\r\n\r\n')[0].split('\r\n').slice(1)
}

t.test('a small body mutated right after end()', async t => {
  const { legacy, native } = await checkParity(t, {
    name: 'end(buf) then buf.fill()',
    request: CLOSE,
    path: 'native',
    handler (req, res, ctx) {
      const body = Buffer.from('original body')
      res.end(body)
      body.fill('X')
      ctx.record('after', body.toString())
    }
  })
  t.strictSame(bodies(legacy), ['original body'], 'Node sent the original')
  t.strictSame(bodies(native), ['original body'], 'the native path sent the original')
})

t.test('a Uint8Array view whose backing store changes after end()', async t => {
  const { native } = await checkParity(t, {
    name: 'end(view) then backing.fill()',
    request: CLOSE,
    path: 'native',
    handler (req, res) {
      const backing = Buffer.from('0123456789abcdefghij')
      res.setHeader('Content-Type', 'text/plain')
      res.end(new Uint8Array(backing.buffer, backing.byteOffset + 5, 10))
      backing.fill(0)
    }
  })
  t.strictSame(bodies(native), ['56789abcde'])
})

t.test('the same Buffer object sent twice with different contents', async t => {
  let shared = null
  const { legacy, native } = await checkParity(t, {
    name: 'writeHead + CL, end(shared) twice on one keep-alive socket',
    request: [KEEP, KEEP, CLOSE],
    sequential: true,
    path: { native: 3 },
    handler (req, res, ctx) {
      if (ctx.index === 0) shared = Buffer.from('one')
      res.writeHead(200, { 'Content-Length': '3' })
      res.end(shared)
      // Mutated before the next request arrives, and once right after the
      // third end(), which must not reach the wire either.
      shared.write(ctx.index === 0 ? 'two' : 'six')
    }
  })
  t.strictSame(bodies(legacy), ['one', 'two', 'six'], 'Node sends each content once')
  t.strictSame(bodies(native), ['one', 'two', 'six'], 'the native path never reuses an earlier message')
})

t.test('the same Buffer object with automatic Content-Length and a changing size', async t => {
  let shared = null
  const { native } = await checkParity(t, {
    name: 'end(shared) with a shared pool buffer, twice',
    request: [KEEP, CLOSE],
    sequential: true,
    path: { native: 2 },
    handler (req, res, ctx) {
      if (ctx.index === 0) shared = Buffer.alloc(8, 'a')
      res.end(ctx.index === 0 ? shared : shared.subarray(0, 5))
      shared.fill('b')
    }
  })
  t.strictSame(bodies(native), ['aaaaaaaa', 'bbbbb'])
})

// A header array changed after setHeader(): Node renders the array as it is
// at end() time and does not validate it again.
const arrayCases = [
  {
    name: 'elements replaced and appended',
    path: 'native',
    mutate: a => { a[0] = 'z'; a.push('c') },
    lines: ['X-Arr: z', 'X-Arr: b', 'X-Arr: c']
  },
  { name: 'emptied', path: 'native', mutate: a => { a.length = 0 }, lines: [] },
  { name: 'a number appended', path: 'native', mutate: a => a.push(7), lines: ['X-Arr: a', 'X-Arr: b', 'X-Arr: 7'] },
  { name: 'an object appended', path: 'header-value', mutate: a => a.push({ toString: () => 'obj' }), lines: ['X-Arr: a', 'X-Arr: b', 'X-Arr: obj'] },
  // Node sends these unvalidated; the shim must leave them to Node, not
  // reject them and not render them differently.
  {
    name: 'CRLF appended',
    path: 'invalid',
    malformed: false,
    mutate: a => a.push('x\r\nX-Injected: 1'),
    lines: ['X-Arr: a', 'X-Arr: b', 'X-Arr: x', 'X-Injected: 1']
  },
  { name: 'U+010A appended, string body', path: 'invalid', mutate: a => a.push('x\u010ay') },
  { name: 'U+010A appended, Buffer body', path: 'invalid', buffer: true, malformed: true, mutate: a => a.push('x\u010ay') },
  { name: 'latin1 appended, string body', mutate: a => a.push('caf\u00e9') },
  { name: 'latin1 appended, Buffer body', path: 'native', buffer: true, mutate: a => a.push('caf\u00e9') }
]

for (const c of arrayCases) {
  t.test(`a header array mutated after setHeader: ${c.name}`, async t => {
    const { native } = await checkParity(t, {
      name: c.name,
      request: CLOSE,
      path: c.path,
      malformed: c.malformed,
      handler (req, res) {
        const values = ['a', 'b']
        res.setHeader('X-Arr', values)
        c.mutate(values)
        res.end(c.buffer ? Buffer.from('ok') : 'ok')
      }
    })
    if (c.lines) t.strictSame(headerLines(native).filter(l => /^X-(Arr|Injected):/.test(l)), c.lines, 'header lines')
  })
}

t.test('a header array mutated after writeHead() is not sent', async t => {
  const { native } = await checkParity(t, {
    name: 'writeHead(obj with array) then mutate',
    request: CLOSE,
    path: 'native',
    handler (req, res) {
      const values = ['a', 'b']
      res.writeHead(200, { 'X-Arr': values, 'Content-Length': '2' })
      values.push('c\r\nX-Injected: 1')
      res.end('ok')
    }
  })
  t.strictSame(headerLines(native).filter(l => /^X-(Arr|Injected):/.test(l)), ['X-Arr: a', 'X-Arr: b'])
})
