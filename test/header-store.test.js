'use strict'

// The header store lib/headers.js hands Node's own setHeader() (a fast-mode
// object with Node's store prototype, in place of the dictionary-mode one
// Node creates on 20 to 24, or for more than 16 headers on every line) must
// be indistinguishable from Node's: same prototype, keys, order and values
// through every accessor, the same errors, and nothing left behind when
// setHeader() throws or the shim is uninstalled.

const t = require('tap')
const http = require('node:http')
const util = require('node:util')

const shim = require('../lib/index.js')
const { checkParity } = require('./helpers/dual-path.js')
const { requests: { CLOSE, KEEP } } = require('./fixtures/responses.js')

t.jobs = 1

const { ServerResponse, OutgoingMessage } = http
const nodeSetHeader = OutgoingMessage.prototype.setHeader

function outHeadersSymbol (res) {
  return Object.getOwnPropertySymbols(res).find((s) => s.description === 'kOutHeaders')
}

// Everything a user can read of the stored headers, the private store
// included (its prototype, keys and entries).
function readStore (res) {
  const store = res[outHeadersSymbol(res)]
  return {
    isNull: store === null,
    proto: store === null ? 'none' : protoChain(store),
    // What console.log(res) shows of it: the name V8 reports for the
    // store's constructor among the rest.
    inspect: store === null ? 'none' : util.inspect(store, { breakLength: Infinity, depth: 1 }),
    own: store === null ? [] : Reflect.ownKeys(store),
    forIn: store === null ? [] : (() => { const k = []; for (const key in store) k.push(key); return k })(),
    entries: store === null ? [] : Object.keys(store).map((k) => [store[k][0], plain(store[k][1])]),
    names: res.getHeaderNames(),
    headers: Object.entries(res.getHeaders()).map(([k, v]) => [k, plain(v)]),
    raw: res.getRawHeaderNames ? res.getRawHeaderNames() : null,
    has: res.hasHeader('content-type')
  }
}

// The store's prototype chain, as the own keys of each link.
function protoChain (store) {
  const chain = []
  for (let p = Object.getPrototypeOf(store); p !== null; p = Object.getPrototypeOf(p)) {
    chain.push(Reflect.ownKeys(p).map(String))
  }
  return chain
}

// A value as data: arrays copied, other objects by their string.
function plain (value) {
  if (Array.isArray(value)) return value.slice()
  return value !== null && typeof value === 'object' ? `object ${value}` : value
}

function errorCode (fn) {
  try {
    fn()
    return 'no error'
  } catch (err) {
    return `${err.name} ${err.code}`
  }
}

// One response on its own connection: `setup` stores headers, then the
// store is recorded and the response ends, on both paths.
function storeParity (t, name, setup) {
  return checkParity(t, {
    name,
    request: CLOSE,
    path: 'native',
    handler (req, res, ctx) {
      setup(res, ctx)
      ctx.record('store', readStore(res))
      res.end('ok')
    }
  })
}

// Where Node's own store is a dictionary (20 to 24) the wrapper goes on at
// install(); where it is fast-mode already (26) only once a response with
// more than FAST_MAX headers asks for a WideStore.
t.test('the wrapper is in place wherever the shim is active and needs it', async t => {
  const headers = require('../lib/headers.js')
  const internals = require('../lib/internals.js')
  const before = Object.getOwnPropertyDescriptor(ServerResponse.prototype, 'setHeader')
  const uninstall = shim.install()
  const own = () => Object.getOwnPropertyDescriptor(ServerResponse.prototype, 'setHeader')
  const checkWrapped = () => {
    const desc = own()
    t.ok(desc !== undefined && desc.value !== nodeSetHeader, 'ServerResponse#setHeader is wrapped')
    t.equal(desc.value.name, nodeSetHeader.name, 'with Node\'s name')
    t.equal(desc.value.length, nodeSetHeader.length, 'and length')
    t.equal(desc.enumerable, Object.getOwnPropertyDescriptor(http.OutgoingMessage.prototype, 'setHeader').enumerable,
      'enumerable as the method it shadows')
  }
  try {
    if (!shim.isActive()) {
      t.strictSame(own(), before, 'setHeader is left as it is')
    } else if (internals.nullProtoHeaders === true) {
      checkWrapped()
    } else {
      t.strictSame(own(), before, 'not before a WideStore is wanted')
      const req = { method: 'GET', httpVersionMajor: 1, httpVersionMinor: 1, headers: {} }
      const res = new ServerResponse(req)
      for (let i = 0; i < 20; i++) res.setHeader(`X-H-${i}`, 'v')
      headers.observe(20, res[outHeadersSymbol(res)])
      checkWrapped()
    }
  } finally {
    headers.observe(0, null)
    uninstall()
  }
  t.strictSame(Object.getOwnPropertyDescriptor(ServerResponse.prototype, 'setHeader'), before,
    'uninstall() restores what was there')
})

t.test('a setHeader() another module put on ServerResponse.prototype first stays', async t => {
  const mine = function setHeader (name, value) { return nodeSetHeader.call(this, name, value) }
  ServerResponse.prototype.setHeader = mine
  const uninstall = shim.install()
  t.equal(ServerResponse.prototype.setHeader, mine, 'not wrapped over')
  uninstall()
  t.equal(ServerResponse.prototype.setHeader, mine, 'not removed by uninstall()')
  delete ServerResponse.prototype.setHeader
})

t.test('a wrapper installed after the shim on ServerResponse.prototype.setHeader stays on uninstall', async t => {
  const uninstall = shim.install()
  const inner = ServerResponse.prototype.setHeader
  const mine = function setHeader (name, value) { return inner.call(this, name, value) }
  ServerResponse.prototype.setHeader = mine
  uninstall()
  t.equal(ServerResponse.prototype.setHeader, mine, 'the later wrapper is kept')
  delete ServerResponse.prototype.setHeader
  t.equal(ServerResponse.prototype.setHeader, nodeSetHeader, 'clean again')
})

t.test('the store reads the same through every accessor', async t => {
  await storeParity(t, 'setHeader x3, read the store, end()', (res, ctx) => {
    ctx.record('empty', readStore(res))
    res.setHeader('Content-Type', 'text/plain')
    res.setHeader('X-Number', 42)
    res.setHeader('X-List', ['a', 'b'])
  })
})

t.test('setHeader() that throws on the first header leaves no store behind', async t => {
  await storeParity(t, 'bad name, bad value, undefined value, then a good one', (res, ctx) => {
    ctx.record('bad name', errorCode(() => res.setHeader('Bad Name', 'x')))
    ctx.record('after bad name', readStore(res))
    ctx.record('bad value', errorCode(() => res.setHeader('X-Bad', 'a\r\nb')))
    ctx.record('undefined value', errorCode(() => res.setHeader('X-Undef', undefined)))
    ctx.record('after bad value', readStore(res))
    res.setHeader('Content-Type', 'text/plain')
  })
})

t.test('names that objects treat apart: __proto__, integer-like, constructor', async t => {
  await storeParity(t, 'odd header names in the store', (res) => {
    res.setHeader('X-Last', 'z')
    res.setHeader('__proto__', 'p')
    res.setHeader('123', 'digits')
    res.setHeader('7', 'seven')
    res.setHeader('constructor', 'c')
    res.setHeader('hasOwnProperty', 'h')
  })
})

t.test('removeHeader(), appendHeader() and a second setHeader() of a name on the store', async t => {
  await storeParity(t, 'mutating the store before end()', (res) => {
    res.setHeader('Content-Type', 'text/plain')
    res.setHeader('X-A', '1')
    res.setHeader('X-B', '2')
    res.removeHeader('x-a')
    res.setHeader('x-b', '3')
    if (typeof res.appendHeader === 'function') res.appendHeader('X-C', 'c1').appendHeader('X-C', 'c2')
  })
})

t.test('the first setHeader() with an array or an object value is Node\'s alone', async t => {
  await checkParity(t, {
    name: 'array first, then a string; an object value falls back',
    request: [KEEP, CLOSE],
    sequential: true,
    path: { native: 1, 'header-value': 1 },
    handler (req, res, ctx) {
      if (ctx.index === 0) {
        res.setHeader('X-List', ['a', 'b'])
        res.setHeader('Content-Type', 'text/plain')
      } else {
        res.setHeader('X-Object', { toString () { return 'obj' } })
      }
      ctx.record('store', readStore(res))
      res.end('ok')
    }
  })
})

t.test('a setHeader() wrapper put on OutgoingMessage.prototype after install still runs', async t => {
  const calls = []
  await storeParity(t, 'OutgoingMessage#setHeader wrapped by the handler', (res) => {
    const original = OutgoingMessage.prototype.setHeader
    OutgoingMessage.prototype.setHeader = function (name, value) {
      calls.push(name)
      return original.call(this, name, value)
    }
    try {
      res.setHeader('Content-Type', 'text/plain')
      res.setHeader('X-A', '1')
    } finally {
      OutgoingMessage.prototype.setHeader = original
    }
  })
  t.strictSame(calls, ['Content-Type', 'X-A', 'Content-Type', 'X-A'], 'the wrapper saw every call on both paths')
})

t.test('a replaced _isLenientHeaderValidation() sees what Node\'s path shows it', async t => {
  await checkParity(t, {
    name: 'lenient check reads the store',
    request: CLOSE,
    path: 'native',
    handler (req, res, ctx) {
      const seen = []
      res._isLenientHeaderValidation = function () {
        seen.push(readStore(this))
        return false
      }
      res.setHeader('Content-Type', 'text/plain')
      res.setHeader('X-A', '1')
      delete res._isLenientHeaderValidation
      ctx.record('seen', seen)
      ctx.record('store', readStore(res))
      res.end('ok')
    }
  })
})

// The store kind follows the size of the last rendered response: big,
// small and big again on one connection, each the same as Node's.
t.test('responses with many and few headers, alternating', async t => {
  const many = 24
  await checkParity(t, {
    name: `${many}, 3, ${many}, 3 headers on one keep-alive connection`,
    request: [KEEP, KEEP, KEEP, CLOSE],
    sequential: true,
    path: { native: 4 },
    handler (req, res, ctx) {
      const n = ctx.index % 2 === 0 ? many : 3
      for (let i = 0; i < n; i++) res.setHeader(`X-H-${i}`, `v${i}`)
      ctx.record('store', readStore(res))
      res.end('ok')
    }
  })
})

// Past 16 headers the next response gets a WideStore (lib/headers.js), and
// past 64 Node's own store again; each size twice, so the second renders
// from the first's cache entry (lib/render.js, storeAgain()).
t.test('responses with 17 to 100 headers, each size twice', async t => {
  const sizes = [17, 17, 40, 40, 64, 64, 65, 65, 100, 100, 20, 20, 3]
  await checkParity(t, {
    name: `${sizes.join(', ')} headers on one keep-alive connection`,
    request: sizes.map((_, i) => i === sizes.length - 1 ? CLOSE : KEEP),
    sequential: true,
    path: { native: sizes.length },
    handler (req, res, ctx) {
      const n = sizes[ctx.index]
      for (let i = 0; i < n; i++) res.setHeader(`X-H-${i}`, i % 3 === 0 ? i : `v${i}`)
      ctx.record('store', readStore(res))
      res.end('ok')
    }
  })
})

// Which store the next response gets, as lib/headers.js decides it from the
// size of the last rendered response.
t.test('the store kind follows the size of the last rendered response', async t => {
  const headers = require('../lib/headers.js')
  const uninstall = shim.install()
  const req = { method: 'GET', httpVersionMajor: 1, httpVersionMinor: 1, headers: {} }
  const storeOf = (n) => {
    const res = new ServerResponse(req)
    for (let i = 0; i < n; i++) res.setHeader(`X-H-${i}`, 'v')
    return res[outHeadersSymbol(res)]
  }
  try {
    if (!shim.isActive()) {
      t.pass('inactive shim: setHeader() is Node\'s')
      return
    }
    const nodeStore = storeOf(20)
    headers.observe(20, nodeStore)
    const wide = storeOf(20)
    t.ok(headers.isWide(wide), 'after 20 headers the next store is a WideStore')
    t.equal(Object.getPrototypeOf(wide), Object.getPrototypeOf(nodeStore), 'with the prototype of Node\'s store')
    headers.observe(headers.WIDE_MAX, wide)
    t.ok(headers.isWide(storeOf(1)), `after ${headers.WIDE_MAX} still one`)
    headers.observe(headers.WIDE_MAX + 1, wide)
    t.notOk(headers.isWide(storeOf(1)), `after ${headers.WIDE_MAX + 1} Node's own`)
    headers.observe(headers.FAST_MAX, wide)
    t.notOk(headers.isWide(storeOf(1)), `after ${headers.FAST_MAX} a small one`)
    headers.observe(20, wide)
    const last = storeOf(1)
    t.ok(headers.isWide(last), 'after 20 again a WideStore')
    const thrown = new ServerResponse(req)
    t.throws(() => thrown.setHeader('X-Bad', 'a\r\nb'), { code: 'ERR_INVALID_CHAR' })
    t.equal(thrown[outHeadersSymbol(thrown)], null, 'a throwing first setHeader() leaves no store')
    t.notOk(headers.isWide(last), 'and forgets the WideStore before it')
  } finally {
    headers.observe(0, null)
    uninstall()
  }
})

// A WideStore that changes after it was filled: a header removed from the
// middle (V8 then makes the store a dictionary), one set again, odd names.
t.test('a wide store changed after it was filled', async t => {
  const fill = (res) => { for (let i = 0; i < 24; i++) res.setHeader(`X-H-${i}`, `v${i}`) }
  const variants = [
    fill,
    fill,
    (res) => { fill(res); res.removeHeader('X-H-5') },
    (res) => { fill(res); res.removeHeader('X-H-5'); res.setHeader('X-H-5', 'again') },
    (res) => { fill(res); res.setHeader('x-h-0', 'first, renamed') },
    (res) => { fill(res); res.setHeader('__proto__', 'p'); res.setHeader('7', 'seven') },
    fill
  ]
  await checkParity(t, {
    name: `${variants.length} responses of 24 headers, changed in turn`,
    request: variants.map((_, i) => i === variants.length - 1 ? CLOSE : KEEP),
    sequential: true,
    path: { native: variants.length },
    handler (req, res, ctx) {
      variants[ctx.index](res)
      ctx.record('store', readStore(res))
      res.end('ok')
    }
  })
})

// Two responses whose wide stores are filled before either ends: the first
// ends after the second's store was made.
t.test('pipelined responses with wide stores filled in turn', async t => {
  await checkParity(t, {
    name: 'two pipelined requests with 20 headers each, the first answered late',
    request: [KEEP + CLOSE],
    path: { native: 1, 'no-socket': 1 },
    handler (req, res, ctx) {
      for (let i = 0; i < 20; i++) res.setHeader(`X-H-${i}`, `r${ctx.index}-${i}`)
      ctx.record('store', readStore(res))
      if (ctx.index === 0) {
        return new Promise(resolve => setTimeout(() => {
          res.end('first')
          resolve()
        }, 20))
      }
      res.end('second')
    }
  })
})

// renderFresh() first compares a response with the entry the one before
// it used (lib/render.js, storeAgain()): each way the two can differ must
// still give Node's bytes.
t.test('fresh responses that repeat the one before, or almost', async t => {
  const variants = [
    (res) => { res.setHeader('Content-Type', 'text/plain'); res.setHeader('X-A', '1') },
    (res) => { res.setHeader('Content-Type', 'text/plain'); res.setHeader('X-A', '1') },
    (res) => { res.setHeader('Content-Type', 'text/plain'); res.setHeader('X-A', '2') },
    (res) => { res.setHeader('content-type', 'text/plain'); res.setHeader('X-A', '2') },
    (res) => { res.setHeader('Content-Type', 'text/plain'); res.setHeader('X-B', '2') },
    (res) => { res.setHeader('Content-Type', 'text/plain'); res.setHeader('Content-Length', '2') },
    (res) => { res.setHeader('Content-Type', 'text/plain'); res.setHeader('Content-Length', 2) },
    (res) => { res.setHeader('Content-Type', 'text/plain'); res.setHeader('Content-Length', '02') },
    (res) => { res.setHeader('Content-Type', 'text/plain'); res.setHeader('X-A', '2'); res.statusCode = 201 },
    (res) => { res.setHeader('Content-Type', 'text/plain'); res.setHeader('X-A', '2'); res.statusMessage = 'Fine' },
    (res) => { res.setHeader('Content-Type', 'text/plain'); res.setHeader('X-A', '2'); res.sendDate = true },
    (res) => { res.setHeader('Content-Type', 'text/plain'); res.setHeader('X-A', '2') },
    (res) => { res.setHeader('X-A', '2'); res.setHeader('Content-Type', 'text/plain') },
    (res) => { res.setHeader('Content-Type', 'text/plain'); res.setHeader('X-A', '2'); res.removeHeader('X-A') },
    (res) => { res.setHeader('Content-Type', 'text/plain'); res.setHeader('X-A', ['2', '3']) },
    (res) => { res.setHeader('Content-Type', 'text/plain'); res.setHeader('X-A', '2') }
  ]
  const requests = variants.map((_, i) => i === variants.length - 1 ? CLOSE : KEEP)
  await checkParity(t, {
    name: `${variants.length} fresh responses on one connection`,
    request: requests,
    sequential: true,
    path: { native: variants.length },
    handler (req, res, ctx) {
      variants[ctx.index](res)
      res.end('ok')
    }
  })
})
