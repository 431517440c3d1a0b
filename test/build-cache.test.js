'use strict'

// buildHttpMessage() keeps a few validated, rendered header blocks and
// reuses one when a call's status, reason, header names and values and
// header encoding equal an earlier call's (lib/build.js lookup()). These
// tests pin the rules that make the cache invisible: values are compared
// each call, never trusted by identity (mutated arrays and Buffers), what
// differs from a validated value is validated (and throws the error an
// uncached build throws), getters run once per call, the body and every
// option still shape each result, memory stays bounded, alternating header
// sets keep hitting, and every result is byte for byte what a fresh module
// (no cache), string concatenation and llhttp agree on. Each test runs on
// the addon and on the JS fallback.

const { test } = require('tap')

const { parseResponse } = require('./helpers/llhttp.js')

const { loadBuild, caught, shape } = require('./helpers/load-build.js')

const paths = [['native', true], ['fallback', false]]

// The message by string concatenation, for flat arrays of string and number
// values (the same rules as Node: one line per element of an array value).
function concat (status, reason, headers, body, options = {}) {
  const { STATUS_CODES } = require('node:http')
  let head = `HTTP/1.1 ${status | 0} ${typeof reason === 'string' ? reason : (STATUS_CODES[status | 0] || 'unknown')}\r\n`
  const pairs = Array.isArray(headers) ? [] : Object.entries(headers || {}).flat()
  if (Array.isArray(headers)) pairs.push(...headers)
  for (let i = 0; i < pairs.length; i += 2) {
    const name = pairs[i]
    const value = pairs[i + 1]
    if (Array.isArray(value)) {
      if (value.length >= 2 && name.toLowerCase() === 'cookie') head += `${name}: ${value.join('; ')}\r\n`
      else for (const v of value) head += `${name}: ${v}\r\n`
    } else {
      head += `${name}: ${value}\r\n`
    }
  }
  head += '\r\n'
  const headBytes = Buffer.from(head, options.headerEncoding === 'utf8' ? 'utf8' : 'latin1')
  let bodyBytes = Buffer.alloc(0)
  if (typeof body === 'string') {
    bodyBytes = Buffer.from(body, options.encoding === 'latin1' || options.encoding === 'ascii' ? 'latin1' : 'utf8')
  } else if (body != null) {
    bodyBytes = Buffer.from(body)
  }
  if (!options.chunked) return Buffer.concat([headBytes, bodyBytes])
  if (bodyBytes.length === 0) return Buffer.concat([headBytes, Buffer.from('0\r\n\r\n')])
  return Buffer.concat([headBytes, Buffer.from(bodyBytes.length.toString(16) + '\r\n'), bodyBytes,
    Buffer.from('\r\n0\r\n\r\n')])
}

// Builds the same call twice (a miss, then a hit) with `mod`, and once with
// a fresh module of the other kind and of its own kind (no cache).
function checkSame (t, mod, native, args, msg) {
  const first = mod.buildHttpMessage(...args)
  const second = mod.buildHttpMessage(...args)
  const fresh = loadBuild(native).buildHttpMessage(...args)
  const other = loadBuild(!native).buildHttpMessage(...args)
  const want = concat(...args)
  t.same([first.equals(want), second.equals(want), fresh.equals(want), other.equals(want)],
    [true, true, true, true], msg)
  return second
}

for (const [kind, native] of paths) {
  test(`${kind}: a header array mutated between calls`, async t => {
    const mod = loadBuild(native)
    const headers = ['Content-Type', 'text/plain', 'X-Id', 'one']
    const a = mod.buildHttpMessage(200, undefined, headers, 'x')
    headers[3] = 'two'
    const b = mod.buildHttpMessage(200, undefined, headers, 'x')
    headers.push('X-More', 'three')
    const c = mod.buildHttpMessage(200, undefined, headers, 'x')
    headers.length = 2
    const d = mod.buildHttpMessage(200, undefined, headers, 'x')
    t.equal(a.toString('latin1'), 'HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nX-Id: one\r\n\r\nx')
    t.equal(b.toString('latin1'), 'HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nX-Id: two\r\n\r\nx')
    t.equal(c.toString('latin1'),
      'HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nX-Id: two\r\nX-More: three\r\n\r\nx')
    t.equal(d.toString('latin1'), 'HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nx')
    headers[0] = 'X-Renamed'
    t.equal(mod.buildHttpMessage(200, undefined, headers, 'x').toString('latin1'),
      'HTTP/1.1 200 OK\r\nX-Renamed: text/plain\r\n\r\nx', 'a renamed header')
  })

  test(`${kind}: array values (multi-line, Cookie) compared element by element`, async t => {
    const mod = loadBuild(native)
    const list = ['a=1', 'b=2']
    const headers = ['Set-Cookie', list, 'Cookie', ['c=3', 'd=4']]
    const first = mod.buildHttpMessage(200, undefined, headers, '')
    t.equal(first.toString('latin1'),
      'HTTP/1.1 200 OK\r\nSet-Cookie: a=1\r\nSet-Cookie: b=2\r\nCookie: c=3; d=4\r\n\r\n')
    list[1] = 'b=3'
    t.match(mod.buildHttpMessage(200, undefined, headers, '').toString('latin1'), /Set-Cookie: b=3\r\n/,
      'an element changed in place')
    list.push(5)
    t.match(mod.buildHttpMessage(200, undefined, headers, '').toString('latin1'),
      /Set-Cookie: b=3\r\nSet-Cookie: 5\r\n/, 'an element added')
    headers[3][0] = 'c=9'
    t.match(mod.buildHttpMessage(200, undefined, headers, '').toString('latin1'), /Cookie: c=9; d=4\r\n/,
      'a Cookie element changed in place')
    // The same lines from another shape give the same bytes.
    const flat = ['Set-Cookie', 'a=1', 'Set-Cookie', 'b=3', 'Set-Cookie', '5', 'Cookie', 'c=9; d=4']
    t.ok(mod.buildHttpMessage(200, undefined, flat, '').equals(mod.buildHttpMessage(200, undefined, headers, '')))
    list[0] = 'bad\r\nline'
    t.same(shape(caught(() => mod.buildHttpMessage(200, undefined, headers, ''))),
      shape(caught(() => loadBuild(native).buildHttpMessage(200, undefined, headers, ''))),
      'an element made invalid throws as without a cache')
    t.equal(shape(caught(() => mod.buildHttpMessage(200, undefined, headers, ''))).code, 'ERR_INVALID_CHAR')
    list[0] = {}
    t.equal(shape(caught(() => mod.buildHttpMessage(200, undefined, headers, ''))).code, 'ERR_INVALID_ARG_TYPE')
  })

  test(`${kind}: a Buffer body mutated between calls`, async t => {
    const mod = loadBuild(native)
    const headers = ['Content-Length', 4]
    const body = Buffer.from('abcd')
    const a = mod.buildHttpMessage(200, undefined, headers, body)
    body.write('wxyz')
    const b = mod.buildHttpMessage(200, undefined, headers, body)
    t.equal(a.toString('latin1'), 'HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nabcd')
    t.equal(b.toString('latin1'), 'HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nwxyz')
    // A Uint8Array view on part of a larger buffer, and a subclass lying
    // about its length.
    const big = new Uint8Array(100).fill(0x41)
    const view = new Uint8Array(big.buffer, 10, 4)
    t.equal(mod.buildHttpMessage(200, undefined, headers, view).toString('latin1'),
      'HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nAAAA')
    class Liar extends Uint8Array {
      get byteLength () { return 1000 }
      get length () { return 1000 }
    }
    const liar = new Liar(4).fill(0x42)
    t.equal(mod.buildHttpMessage(200, undefined, headers, liar).toString('latin1'),
      'HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nBBBB', 'the real length of a subclass')
  })

  test(`${kind}: mutating a result changes neither the cache nor later results`, async t => {
    const mod = loadBuild(native)
    const args = [200, undefined, ['X-A', 'b'], 'body']
    const a = mod.buildHttpMessage(...args)
    const want = Buffer.from(a)
    a.fill(0)
    const b = mod.buildHttpMessage(...args)
    t.ok(b.equals(want), 'the hit renders the cached block, not the first result')
    t.notOk(a.buffer === b.buffer && a.byteOffset < b.byteOffset + b.length &&
      b.byteOffset < a.byteOffset + a.length, 'no shared bytes')
  })

  test(`${kind}: a value changed from valid to invalid between calls`, async t => {
    const cases = [
      ['a CR LF in a value', h => { h[1] = 'a\r\nX-Injected: 1' }],
      ['a NUL in a value', h => { h[1] = 'a\0b' }],
      ['a char above 0xFF', h => { h[1] = '\u0100' }],
      ['a bad name', h => { h[0] = 'Bad Name' }],
      ['an empty name', h => { h[0] = '' }],
      ['undefined', h => { h[1] = undefined }],
      ['an object', h => { h[1] = { toString () { return 'x' } } }],
      ['a boolean', h => { h[1] = true }],
      ['a symbol name', h => { h[0] = Symbol('x') }],
      ['an odd length', h => { h.push('X-Odd') }]
    ]
    for (const [name, mutate] of cases) {
      const mod = loadBuild(native)
      const headers = ['X-Value', 'fine', 'X-Other', 'also fine']
      mod.buildHttpMessage(200, undefined, headers, 'x')
      mod.buildHttpMessage(200, undefined, headers, 'x')
      mutate(headers)
      const got = shape(caught(() => mod.buildHttpMessage(200, undefined, headers, 'x')))
      const fresh = shape(caught(() => loadBuild(native).buildHttpMessage(200, undefined, headers, 'x')))
      const other = shape(caught(() => loadBuild(!native).buildHttpMessage(200, undefined, headers, 'x')))
      t.ok(got !== null, `${name}: throws`)
      t.same(got, fresh, `${name}: the error of an uncached build`)
      t.same(got, other, `${name}: the error of the other path`)
    }
    const mod = loadBuild(native)
    const headers = { 'X-Value': 'fine' }
    mod.buildHttpMessage(200, 'OK', headers, 'x')
    t.equal(shape(caught(() => mod.buildHttpMessage(200, 'O\nK', headers, 'x'))).code, 'ERR_INVALID_CHAR',
      'a reason made invalid')
    t.equal(shape(caught(() => mod.buildHttpMessage(99, 'OK', headers, 'x'))).code,
      'ERR_HTTP_INVALID_STATUS_CODE', 'a status made invalid')
    t.equal(shape(caught(() => mod.buildHttpMessage(200, 'OK', headers, 5))).code, 'ERR_INVALID_ARG_TYPE',
      'a body made invalid')
    t.equal(shape(caught(() => mod.buildHttpMessage(200, 'OK', headers, 'x', { encoding: 'hex' }))).code,
      'ERR_INVALID_ARG_VALUE', 'an option made invalid')
    t.equal(shape(caught(() => mod.buildHttpMessage(200, 'OK', headers, new Uint16Array(2)))).code,
      'ERR_INVALID_ARG_TYPE', 'a body of another TypedArray')
  })

  test(`${kind}: getters run once per call, hit or miss or error`, async t => {
    const mod = loadBuild(native)
    let reads = 0
    let value = 'v1'
    const obj = {}
    Object.defineProperty(obj, 'X-Counted', { enumerable: true, get () { reads++; return value } })
    obj['X-Plain'] = 'p'
    for (let i = 0; i < 3; i++) {
      const before = reads
      const out = mod.buildHttpMessage(200, undefined, obj, 'x')
      t.equal(reads - before, 1, `object, call ${i + 1}: one read`)
      t.equal(out.toString('latin1'), 'HTTP/1.1 200 OK\r\nX-Counted: v1\r\nX-Plain: p\r\n\r\nx')
    }
    value = 'v2'
    let before = reads
    t.match(mod.buildHttpMessage(200, undefined, obj, 'x').toString('latin1'), /X-Counted: v2/)
    t.equal(reads - before, 1, 'a changed value: one read')
    value = 'bad\n'
    before = reads
    t.equal(shape(caught(() => mod.buildHttpMessage(200, undefined, obj, 'x'))).code, 'ERR_INVALID_CHAR')
    t.equal(reads - before, 1, 'an invalid value: one read, also for the error')

    // A getter returning a different value on each read: what is checked is
    // what is written.
    let flip = 0
    const flipping = ['X-Flip', 'ok']
    Object.defineProperty(flipping, 1, { enumerable: true, get () { return flip++ % 2 === 0 ? 'ok' : 'bad\r\n' } })
    t.equal(mod.buildHttpMessage(200, undefined, flipping, '').toString('latin1'),
      'HTTP/1.1 200 OK\r\nX-Flip: ok\r\n\r\n', 'first read: valid, written')
    t.equal(shape(caught(() => mod.buildHttpMessage(200, undefined, flipping, ''))).code, 'ERR_INVALID_CHAR',
      'second read: invalid, thrown')
    t.equal(flip, 2, 'one read per call')

    // An array value whose elements are getters: each read once per call,
    // on a miss, a hit and an error, and what is checked is what is written.
    let elementReads = 0
    let element = 'e1'
    const list = ['first']
    Object.defineProperty(list, 1, { enumerable: true, get () { elementReads++; return element } })
    for (const name of ['X-List', 'Cookie']) {
      for (let i = 0; i < 3; i++) {
        before = elementReads
        const out = mod.buildHttpMessage(200, undefined, [name, list], '')
        t.equal(elementReads - before, 1, `${name} array element, call ${i + 1}: one read`)
        t.match(out.toString('latin1'), name === 'Cookie' ? /Cookie: first; e1\r\n/ : /X-List: e1\r\n/)
      }
    }
    let turn = 0
    const sneaky = ['ok']
    Object.defineProperty(sneaky, 1, { enumerable: true, get () { return turn++ % 2 === 0 ? 'fine' : 'x\r\ny' } })
    for (let i = 0; i < 4; i++) {
      const result = caught(() => mod.buildHttpMessage(200, undefined, ['X-Sneaky', sneaky], ''))
      t.ok(result === null || result.code === 'ERR_INVALID_CHAR', `sneaky element, call ${i + 1}`)
      if (result === null) {
        t.notMatch(mod.buildHttpMessage(200, undefined, ['X-Sneaky', ['ok', 'fine']], '').toString('latin1'),
          /x\r\ny/, 'never written unchecked')
      }
    }
    t.equal(turn, 4, 'one read per call')
    element = 'bad\n'
    before = elementReads
    t.equal(shape(caught(() => mod.buildHttpMessage(200, undefined, ['X-List', list], ''))).code,
      'ERR_INVALID_CHAR')
    t.equal(elementReads - before, 1, 'an invalid element: one read, also for the error')

    // A Proxy: each trap once per value.
    const traps = { get: 0, ownKeys: 0 }
    const proxy = new Proxy({ 'X-A': 'a', 'X-B': 'b' }, {
      get (target, key) { traps.get++; return target[key] },
      ownKeys (target) { traps.ownKeys++; return Reflect.ownKeys(target) }
    })
    for (let i = 0; i < 2; i++) mod.buildHttpMessage(200, undefined, proxy, '')
    t.same(traps, { get: 4, ownKeys: 2 }, 'proxy traps: two gets and one ownKeys per call')
  })

  test(`${kind}: a getter that builds a message itself`, async t => {
    const mod = loadBuild(native)
    const inner = []
    const headers = ['X-Outer', 'value', 'X-Same', 'same']
    Object.defineProperty(headers, 1, {
      enumerable: true,
      get () {
        // The same header set, then others, built while the outer call is
        // reading its headers.
        inner.push(mod.buildHttpMessage(200, undefined, ['X-Outer', 'value', 'X-Same', 'same'], 'inner'))
        for (let i = 0; i < 10; i++) inner.push(mod.buildHttpMessage(200, undefined, ['X-N', i], 'n'))
        return 'value'
      }
    })
    const outer = [mod.buildHttpMessage(200, undefined, headers, 'outer'),
      mod.buildHttpMessage(200, undefined, headers, 'outer')]
    for (const o of outer) {
      t.equal(o.toString('latin1'), 'HTTP/1.1 200 OK\r\nX-Outer: value\r\nX-Same: same\r\n\r\nouter')
    }
    t.equal(inner[0].toString('latin1'), 'HTTP/1.1 200 OK\r\nX-Outer: value\r\nX-Same: same\r\n\r\ninner')
    t.equal(inner[10].toString('latin1'), 'HTTP/1.1 200 OK\r\nX-N: 9\r\n\r\nn')
  })

  test(`${kind}: every input that shapes the output`, async t => {
    const mod = loadBuild(native)
    const headers = ['X-Caf', 'caf\u00e9', 'Content-Type', 'text/plain']
    const calls = [
      [200, undefined, headers, 'b\u00e9'],
      [200, null, headers, 'b\u00e9'],
      [200, '', headers, 'b\u00e9'],
      [200, 'OK', headers, 'b\u00e9'],
      [200, 'Fine', headers, 'b\u00e9'],
      [201, undefined, headers, 'b\u00e9'],
      ['201', undefined, headers, 'b\u00e9'],
      [201.7, undefined, headers, 'b\u00e9'],
      [999, undefined, headers, 'b\u00e9'],
      [200, undefined, headers, 'b\u00e9', { encoding: 'latin1' }],
      [200, undefined, headers, 'b\u00e9', { encoding: 'ascii' }],
      [200, undefined, headers, 'b\u00e9', { encoding: 'utf-8' }],
      [200, undefined, headers, 'b\u00e9', { chunked: true }],
      [200, undefined, headers, '', { chunked: true }],
      [200, undefined, headers, undefined, { chunked: true }],
      [200, undefined, headers, Buffer.from('xyz'), { chunked: true }],
      [200, undefined, headers, 'b\u00e9', { chunked: false }],
      [200, undefined, headers, 'b\u00e9', { headerEncoding: 'utf8' }],
      [200, undefined, headers, 'b\u00e9', { headerEncoding: 'latin1' }],
      [200, undefined, headers, 'b\u00e9', { headerEncoding: 'utf8', chunked: true, encoding: 'latin1' }],
      [200, undefined, ['X-N', 5], ''],
      [200, undefined, ['X-N', '5'], ''],
      [200, undefined, ['X-N', 5.5], ''],
      [200, undefined, ['X-N', -0], ''],
      [200, undefined, ['X-N', 0], ''],
      [200, undefined, ['X-N', NaN], ''],
      [200, undefined, ['x-n', 5], ''],
      [200, undefined, { 'X-N': 5 }, ''],
      [200, undefined, [], ''],
      [200, undefined, undefined, ''],
      [200, undefined, null, null],
      [200, undefined, ['X-A', 'a', 'X-B', 'b'], ''],
      [200, undefined, ['X-B', 'b', 'X-A', 'a'], ''],
      [200, undefined, ['X-A', ['a', 'b']], ''],
      [200, undefined, ['X-A', 'a', 'X-A', 'b'], '']
    ]
    // Every call twice in a row and then all again in order, so each one
    // is built on a miss and on hits with other entries around.
    const seen = new Map()
    for (let round = 0; round < 3; round++) {
      for (const args of calls) {
        const label = JSON.stringify(args, (k, v) => v === undefined ? 'undefined' : v)
        const out = round === 0 ? checkSame(t, mod, native, args, label) : mod.buildHttpMessage(...args)
        if (round === 0) seen.set(args, Buffer.from(out))
        else t.ok(out.equals(seen.get(args)), `round ${round}: ${label}`, { diagnostic: false })
        const { messages, error } = parseResponse(out)
        t.equal(error, null, `llhttp reads ${label}`, { diagnostic: false })
        t.equal(messages.length, 1, { diagnostic: false })
      }
    }
    // Equal inputs in other spellings ('201', 201.7; null and undefined;
    // 'ascii' and 'latin1') give equal bytes; every other pair differs.
    const distinct = new Set([...seen.values()].map(b => b.toString('hex')))
    const want = new Set(calls.map(args => concat(...args).toString('hex')))
    t.equal(distinct.size, want.size, `${distinct.size} distinct results, as many as by concatenation`)
  })

  test(`${kind}: bounded: many distinct header sets, a block above the cap`, async t => {
    const mod = loadBuild(native)
    const info0 = mod.cacheInfo()
    for (let i = 0; i < 5000; i++) {
      const out = mod.buildHttpMessage(200, undefined, ['Content-Length', i, 'X-I', `v${i}`], 'x')
      if (i % 500 === 0) {
        t.ok(out.equals(concat(200, undefined, ['Content-Length', i, 'X-I', `v${i}`], 'x')), `set ${i}`)
      }
    }
    const info = mod.cacheInfo()
    t.ok(info.entries <= info0.maxEntries, `${info.entries} entries of at most ${info0.maxEntries}`)
    t.ok(info.bytes <= info.entries * info0.maxBlock, 'blocks within the cap')
    t.equal(info.misses, 5000, 'every distinct set rendered once')

    const long = 'x'.repeat(info0.maxBlock)
    const before = mod.cacheInfo()
    const args = [200, undefined, ['X-Long', long, 'X-Short', 's'], 'body']
    checkSame(t, mod, native, args, 'a block above the cap')
    const after = mod.cacheInfo()
    t.ok(after.bytes <= after.entries * info0.maxBlock, 'not kept')
    t.equal(after.hits, before.hits, 'never a hit')
    // With a body too, in and above the slab.
    for (const size of [0, 100, 20000, 70000]) {
      checkSame(t, mod, native, [200, 'R', ['X-Long', long], 'y'.repeat(size)], `long block, ${size} B body`)
      checkSame(t, mod, native, [200, 'R', ['X-Long', long], Buffer.alloc(size, 1), { chunked: true }],
        `long block, ${size} B chunked`)
    }
  })

  test(`${kind}: alternating header sets keep hitting`, async t => {
    const mod = loadBuild(native)
    const max = mod.cacheInfo().maxEntries
    for (const count of [2, 3, max]) {
      const sets = Array.from({ length: count }, (_, i) => ['Content-Type', 'text/plain', 'X-Set', `set-${count}-${i}`])
      const start = mod.cacheInfo()
      for (let round = 0; round < 50; round++) {
        for (let i = 0; i < count; i++) {
          // A fresh array with equal strings each time: hits by value.
          const out = mod.buildHttpMessage(200, undefined, sets[i].slice(), `r${round}`)
          if (round === 49) {
            t.ok(out.equals(concat(200, undefined, sets[i], `r${round}`)), `${count} sets: set ${i}`)
          }
        }
      }
      const end = mod.cacheInfo()
      t.equal(end.misses - start.misses, count, `${count} alternating sets: one miss each`)
      t.equal(end.hits - start.hits, 50 * count - count, `${count} alternating sets: hits after that`)
    }
    // One set more than fits still builds right (least recently used goes).
    const sets = Array.from({ length: max + 1 }, (_, i) => ['X-Set', `over-${i}`])
    for (let round = 0; round < 3; round++) {
      for (const set of sets) {
        t.ok(mod.buildHttpMessage(200, undefined, set, 'b').equals(concat(200, undefined, set, 'b')),
          `${max + 1} sets, round ${round}`, { diagnostic: false })
      }
    }
    // A hot set survives a stream of one-off sets in between.
    const hot = ['X-Hot', 'yes']
    mod.buildHttpMessage(200, undefined, hot, '')
    const before = mod.cacheInfo()
    for (let i = 0; i < 100; i++) {
      mod.buildHttpMessage(200, undefined, ['X-One-Off', i], '')
      mod.buildHttpMessage(200, undefined, hot, '')
    }
    t.equal(mod.cacheInfo().hits - before.hits, 100, 'the hot set hit every time')

    // After a long run of sets that never repeat, only some misses are
    // cached; a set that starts repeating then still gets in, whatever its
    // period, and results stay right throughout.
    for (let i = 0; i < 1000; i++) {
      const set = ['Content-Length', i, 'X-Run', 'long']
      t.ok(mod.buildHttpMessage(200, undefined, set, '').equals(concat(200, undefined, set, '')),
        `one-off ${i}`, { diagnostic: false })
    }
    for (const period of [1, 2, 16, 32]) {
      const late = ['X-Late', `period-${period}`]
      let firstHit = -1
      for (let i = 0; i < 400 && firstHit < 0; i++) {
        const hitsBefore = mod.cacheInfo().hits
        const out = mod.buildHttpMessage(200, undefined, late, 'z')
        t.ok(out.equals(concat(200, undefined, late, 'z')), { diagnostic: false })
        if (mod.cacheInfo().hits > hitsBefore) firstHit = i
        for (let j = 1; j < period; j++) mod.buildHttpMessage(200, undefined, ['X-Off', `${period}-${i}-${j}`], '')
      }
      t.ok(firstHit >= 0 && firstHit < 400, `period ${period}: cached after ${firstHit} repeats`)
    }
  })

  test(`${kind}: bodies of every kind and size after a cached block`, async t => {
    const mod = loadBuild(native)
    const headers = ['Content-Type', 'text/plain; charset=utf-8', 'X-Caf', 'caf\u00e9']
    const units = ['a', '\u00e9', '\u4e2d', '\ud83d\ude00', '\ud800']
    let bad = 0
    let n = 0
    for (const size of [0, 1, 47, 48, 49, 1000, 8000, 8200, 11000, 16384, 33000, 70000]) {
      for (const unit of units) {
        const text = unit.repeat(Math.ceil(size / unit.length)).slice(0, size)
        for (const body of [text, Buffer.from(text), new Uint8Array(Buffer.from(text))]) {
          for (const options of [undefined, { chunked: true }, { encoding: 'latin1' }, { headerEncoding: 'utf8' }]) {
            if (typeof body !== 'string' && options && options.encoding) continue
            const args = [200, undefined, headers, body, options]
            n++
            const out = mod.buildHttpMessage(...args)
            if (!out.equals(concat(...args))) bad++
          }
        }
      }
    }
    t.equal(bad, 0, `${n} messages equal to concatenation`)
  })
}
