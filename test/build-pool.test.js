'use strict'

// buildHttpMessage() hands out its results from a shared slab (lib/build.js
// buildFromPool()): results built back to back never share a byte, a result
// stays intact however many are built after it, and messages the slab does
// not take, or takes only after a retry, come out the same as on the JS
// fallback.

const { test } = require('tap')

const { loadBuild } = require('./helpers/load-build.js')

const native = loadBuild(true)
const fallback = loadBuild(false)

// A message of about `size` bytes whose every byte depends on `seed`.
function args (seed, size, kind = 'string') {
  const text = String.fromCharCode(...Array.from({ length: 26 }, (_, i) => 97 + (seed + i) % 26))
  const bodyText = text.repeat(Math.ceil(size / 26)).slice(0, size)
  const body = kind === 'string' ? bodyText : Buffer.from(bodyText)
  return [200 + seed % 300, undefined, ['X-Seed', String(seed), 'Content-Length', body.length], body]
}

function overlaps (a, b) {
  return a.buffer === b.buffer &&
    a.byteOffset < b.byteOffset + b.length && b.byteOffset < a.byteOffset + a.length
}

test('both paths are present', async t => {
  t.equal(native.isNative, true, 'addon loaded')
  t.equal(fallback.isNative, false, 'fallback forced')
})

test('results built back to back do not share memory', async t => {
  const a = native.buildHttpMessage(...args(1, 10))
  const b = native.buildHttpMessage(...args(2, 10))
  t.ok(Buffer.isBuffer(a) && Buffer.isBuffer(b), 'Buffers')
  t.equal(Object.getPrototypeOf(a), Buffer.prototype, 'with Buffer.prototype')
  t.notOk(overlaps(a, b), 'disjoint')
  t.equal(a.buffer, b.buffer, 'from the same slab')
  t.equal(a.byteOffset % 8, 0, 'aligned to 8 bytes')
  t.equal(b.byteOffset % 8, 0, 'aligned to 8 bytes')
  const aCopy = Buffer.from(a)
  b.fill(0)
  t.ok(a.equals(aCopy), 'writing to one leaves the other as it was')
})

test('a result stays valid after many later builds', async t => {
  const kept = []
  for (let i = 0; i < 2000; i++) {
    const size = [0, 3, 100, 1000, 4000, 17000, 33000, 70000][i % 8]
    const a = args(i, size, i % 3 === 0 ? 'Buffer' : 'string')
    const out = native.buildHttpMessage(...a)
    kept.push([out, fallback.buildHttpMessage(...a)])
  }
  let same = 0
  for (const [out, want] of kept) if (out.equals(want)) same++
  t.equal(same, kept.length, 'every result still holds its own bytes')
  const live = kept.map(k => k[0]).filter(b => b.buffer.byteLength > b.length)
  t.ok(live.length > 1000, 'most results came from a slab')
  let disjoint = true
  const bySlab = new Map()
  for (const b of live) {
    if (!bySlab.has(b.buffer)) bySlab.set(b.buffer, [])
    bySlab.get(b.buffer).push(b)
  }
  for (const list of bySlab.values()) {
    list.sort((x, y) => x.byteOffset - y.byteOffset)
    for (let i = 1; i < list.length; i++) {
      if (list[i].byteOffset < list[i - 1].byteOffset + list[i - 1].length) disjoint = false
    }
  }
  t.ok(disjoint, 'no two results of one slab overlap')
})

test('messages of 8 to 32 KiB come from the slab', async t => {
  // lib/build.js POOL_SIZE and POOL_MAX: a 16 KiB Buffer body no longer
  // gets an ArrayBuffer per message.
  for (const [name, build] of [['native', native.buildHttpMessage], ['fallback', fallback.buildHttpMessage]]) {
    for (const cached of [true, false]) {
      // The same header set every time hits the header block cache; a
      // new seed every time misses it (the addon writes the whole message).
      const inputs = Array.from({ length: 20 }, (_, i) => args(cached ? 5 : 1000 + i, 16 * 1024, 'Buffer'))
      const outs = inputs.map(a => build(...a))
      const other = name === 'native' ? fallback.buildHttpMessage : native.buildHttpMessage
      t.ok(outs.every((out, i) => out.equals(other(...inputs[i]))),
        `${name}, cached=${cached}: the same bytes as the other path`)
      const slabs = new Set(outs.map(out => out.buffer))
      t.ok([...slabs].every(ab => ab.byteLength === 64 * 1024), `${name}, cached=${cached}: in 64 KiB slabs`)
      t.ok(slabs.size <= 8, `  ${outs.length} results in ${slabs.size} slabs`)
      const first = outs[0]
      let disjoint = true
      let aligned = true
      for (let i = 0; i < outs.length; i++) {
        if (outs[i].byteOffset % 8 !== 0) aligned = false
        for (let j = 0; j < i; j++) if (overlaps(outs[i], outs[j])) disjoint = false
      }
      t.ok(disjoint, '  no two results overlap')
      t.ok(aligned, '  each aligned to 8 bytes')
      const copy = Buffer.from(first)
      outs[1].fill(0)
      t.ok(first.equals(copy), '  writing to one leaves the other as it was')
    }
  }
  // A chunked Buffer body and a latin1 string, each on a miss and a hit.
  for (const [kind, opts] of [['Buffer', { chunked: true }], ['string', { encoding: 'latin1' }]]) {
    for (let i = 0; i < 2; i++) {
      const a = args(11, 20 * 1024, kind)
      const out = native.buildHttpMessage(...a, opts)
      t.ok(out.equals(fallback.buildHttpMessage(...a, opts)), `${kind} ${JSON.stringify(opts)}: same bytes as the fallback`)
      t.equal(out.buffer.byteLength, 64 * 1024, '  in a 64 KiB slab')
    }
  }
})

test('large messages get a Buffer of their own', async t => {
  for (const size of [32 * 1024, 64 * 1024, 1024 * 1024]) {
    for (const kind of ['string', 'Buffer']) {
      const a = args(size, size, kind)
      const out = native.buildHttpMessage(...a)
      t.ok(out.equals(fallback.buildHttpMessage(...a)), `${size} B ${kind}: same bytes as the fallback`)
      t.equal(out.buffer.byteLength, out.length, '  alone in its ArrayBuffer')
    }
  }
})

test('a body with more UTF-8 bytes than chars comes out right wherever the slab is', async t => {
  // A UTF-8 string body is written into the slab's free part before its
  // byte count is known; where the free part is too short for it, the
  // message is counted and placed again. Bodies of 1, 2, 3 and 4 bytes per
  // char (and lone surrogates) at every fill level of the slab, against
  // Buffer.from() of the concatenated message.
  const units = ['a', '\u00e9', '\u4e2d', '\ud83d\ude00', '\ud800', 'x\udc00']
  let n = 0
  let bad = 0
  for (let i = 0; i < 600; i++) {
    const unit = units[i % units.length]
    const body = unit.repeat(1 + (i * 997) % 5000) + i
    const headers = ['X-Latin1', 'caf\u00e9', 'X-I', i % 4]
    for (const opts of [undefined, { headerEncoding: 'utf8' }, { chunked: true }]) {
      const out = native.buildHttpMessage(200, 'R\u00e9ason', headers, body, opts)
      const headEnc = opts && opts.headerEncoding ? 'utf8' : 'latin1'
      const head = Buffer.from(`HTTP/1.1 200 R\u00e9ason\r\nX-Latin1: caf\u00e9\r\nX-I: ${i % 4}\r\n\r\n`, headEnc)
      const bodyBytes = Buffer.from(body, 'utf8')
      const want = opts && opts.chunked
        ? Buffer.concat([head, Buffer.from(bodyBytes.length.toString(16) + '\r\n'), bodyBytes,
          Buffer.from('\r\n0\r\n\r\n')])
        : Buffer.concat([head, bodyBytes])
      n++
      if (!out.equals(want) || !out.equals(fallback.buildHttpMessage(200, 'R\u00e9ason', headers, body, opts))) bad++
    }
  }
  t.equal(bad, 0, `${n} messages, each the same bytes as concatenation and the fallback`)
})

test('a headers array whose getters build messages too', async t => {
  // Reading the array runs user code that builds into the same slab before
  // the outer message is written: the outer one must not land on it.
  let inner = null
  const headers = ['X-Outer', 'value']
  Object.defineProperty(headers, 1, {
    enumerable: true,
    get () {
      inner = native.buildHttpMessage(...args(7, 40))
      return 'value'
    }
  })
  const outer = native.buildHttpMessage(200, undefined, headers, 'outer body')
  t.equal(outer.toString('latin1'), 'HTTP/1.1 200 OK\r\nX-Outer: value\r\n\r\nouter body')
  t.ok(inner.equals(fallback.buildHttpMessage(...args(7, 40))), 'the inner message is intact')
  t.notOk(overlaps(inner, outer), 'and does not overlap the outer one')
})

test('rejected input leaves the slab as it was', async t => {
  const before = native.buildHttpMessage(...args(3, 20))
  const copy = Buffer.from(before)
  t.throws(() => native.buildHttpMessage(200, undefined, ['X', 'a\r\nb'], 'x'.repeat(100)),
    { code: 'ERR_INVALID_CHAR' })
  const after = native.buildHttpMessage(...args(4, 20))
  t.ok(before.equals(copy), 'the earlier result is intact')
  t.notOk(overlaps(before, after), 'the next result does not overlap it')
})
