'use strict'

// ns per message: buildHttpMessage() (addon), the addon's fillFromHead()
// into a pooled Buffer and buildHttpMessage() on the JS fallback, against the plain JS way
// (string concatenation, then Buffer.from / Buffer.concat, no validation),
// for 3, 10 and 30 headers and bodies of 4 B, 1 KiB and 16 KiB, as a string
// and as a Buffer. Rounds are interleaved so drift hits every variant alike;
// the median round is reported.
//
//   node benchmark/build-message.js [--rounds=5] [--ms=15]

const path = require('node:path')

const args = Object.fromEntries(process.argv.slice(2).map(a => a.replace(/^--/, '').split('=')))
const ROUNDS = Number(args.rounds ?? 5)
const TARGET_MS = Number(args.ms ?? 15)

function loadBuild (native) {
  const libDir = path.join(__dirname, '..', 'lib')
  for (const f of ['build.js', 'binding.js']) delete require.cache[require.resolve(path.join(libDir, f))]
  if (native) delete process.env.HTTP_ONESHOT_NATIVE
  else process.env.HTTP_ONESHOT_NATIVE = '0'
  const mod = require(path.join(libDir, 'build.js'))
  const binding = require(path.join(libDir, 'binding.js'))
  delete process.env.HTTP_ONESHOT_NATIVE
  return { mod, binding }
}

const native = loadBuild(true)
const fallback = loadBuild(false)
if (!native.mod.isNative) {
  console.error('The addon is not built; run `node scripts/build.js` first.')
  process.exit(1)
}
const buildNative = native.mod.buildHttpMessage
const buildFallback = fallback.mod.buildHttpMessage
const binding = native.binding

function headersFor (n, bodyLen) {
  const h = ['Content-Type', 'text/plain; charset=utf-8', 'Content-Length', String(bodyLen)]
  for (let i = 2; i < n; i++) h.push(`X-Header-${i}`, `some-value-${i}-abcdefghij`)
  return h
}

// The usual JS way to serialize the same response.
function jsWay (status, reason, headers, body) {
  let head = 'HTTP/1.1 ' + status + ' ' + reason + '\r\n'
  for (let i = 0; i < headers.length; i += 2) head += headers[i] + ': ' + headers[i + 1] + '\r\n'
  head += '\r\n'
  if (typeof body === 'string') return Buffer.from(head + body, 'utf8')
  return Buffer.concat([Buffer.from(head, 'latin1'), body])
}

function renderHead (status, reason, headers) {
  let head = 'HTTP/1.1 ' + status + ' ' + reason + '\r\n'
  for (let i = 0; i < headers.length; i += 2) head += headers[i] + ': ' + headers[i + 1] + '\r\n'
  return head + '\r\n'
}

const shapes = []
for (const n of [3, 10, 30]) {
  for (const size of [4, 1024, 16384]) {
    for (const kind of ['string', 'Buffer']) {
      const text = 'abcdefghijklmnopqrstuvwxyz0123456789'.repeat(Math.ceil(size / 36)).slice(0, size)
      const body = kind === 'string' ? text : Buffer.from(text)
      const headers = headersFor(n, size)
      const head = renderHead(200, 'OK', headers)
      shapes.push({ n, size, kind, body, headers, head })
    }
  }
}

const variants = {
  js: s => jsWay(200, 'OK', s.headers, s.body),
  native: s => buildNative(200, undefined, s.headers, s.body),
  // The shim's hot path: a Buffer from Node's pool, filled by the addon.
  fill: s => {
    const out = Buffer.allocUnsafe(s.head.length + s.body.length)
    if (binding.fillFromHead(out, s.head, s.n, s.body, binding.flags.HEAD_ONE_BYTE) !== undefined) {
      throw new Error('fillFromHead refused a valid head')
    }
    return out
  },
  fallback: s => buildFallback(200, undefined, s.headers, s.body)
}

// Sanity: every variant produces the same bytes.
for (const s of shapes) {
  const want = variants.js(s)
  for (const [name, fn] of Object.entries(variants)) {
    if (!fn(s).equals(want)) throw new Error(`${name} differs for ${s.n} headers, ${s.size} B ${s.kind}`)
  }
}

let sink = 0
function timeOnce (fn, s, iters) {
  const t0 = process.hrtime.bigint()
  for (let i = 0; i < iters; i++) sink += fn(s).length
  return Number(process.hrtime.bigint() - t0) / iters
}

// Warm up every variant on every shape so the JIT has settled before timing.
for (let w = 0; w < 3; w++) {
  for (const s of shapes) {
    for (const fn of Object.values(variants)) timeOnce(fn, s, 2000)
  }
}

// Calibrate an iteration count per (shape, variant) that runs ~TARGET_MS.
const iters = new Map()
for (const s of shapes) {
  for (const [name, fn] of Object.entries(variants)) {
    let n = 100
    for (;;) {
      const t0 = process.hrtime.bigint()
      for (let i = 0; i < n; i++) sink += fn(s).length
      const ms = Number(process.hrtime.bigint() - t0) / 1e6
      if (ms > TARGET_MS / 4 || n > 1e7) {
        iters.set(s.head + s.kind + s.size + name, Math.max(100, Math.round(n * TARGET_MS / ms)))
        break
      }
      n *= 4
    }
  }
}

const samples = new Map()
for (let r = 0; r < ROUNDS; r++) {
  for (const s of shapes) {
    for (const [name, fn] of Object.entries(variants)) {
      const key = s.head + s.kind + s.size + name
      const ns = timeOnce(fn, s, iters.get(key))
      if (!samples.has(key)) samples.set(key, [])
      samples.get(key).push(ns)
    }
  }
}

function median (xs) {
  const a = [...xs].sort((x, y) => x - y)
  return a[a.length >> 1]
}

const fmt = ns => ns < 100 ? ns.toFixed(1) : Math.round(ns).toString()
console.log(`Node ${process.version}, ${ROUNDS} interleaved rounds of ~${TARGET_MS} ms, median ns per message\n`)
console.log('| headers | body | JS concat | buildHttpMessage | ratio | pooled fillFromHead | ratio | JS fallback |')
console.log('| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |')
for (const s of shapes) {
  const m = name => median(samples.get(s.head + s.kind + s.size + name))
  const js = m('js')
  const nat = m('native')
  const fill = m('fill')
  const size = s.size >= 1024 ? `${s.size / 1024} KiB` : `${s.size} B`
  console.log(`| ${s.n} | ${size} ${s.kind} | ${fmt(js)} | ${fmt(nat)} | ${(js / nat).toFixed(2)}x | ` +
    `${fmt(fill)} | ${(js / fill).toFixed(2)}x | ` +
    `${fmt(m('fallback'))} |`)
}
console.log('\nratio = JS concat time / variant time (above 1 means the variant is faster).')
if (sink === 0) console.log('')
