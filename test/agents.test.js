'use strict'

// APM agents beside the package (issue 44, point 3): dd-trace,
// OpenTelemetry (sdk-node with the http and express instrumentations and
// @fastify/otel), New Relic and Elastic APM, each loaded in its documented
// order before the package (`-r`, NODE_OPTIONS, a require on the app's first
// line) and after it, under an express, a fastify and a plain http app
// (test/fixtures/agents/app.js). Every run sends the same requests on one
// keep-alive connection and is compared with the same agent and app without
// the package (HTTP_ONESHOT=0, one run per agent and app, which serves
// every load order):
//
// - the response bytes are identical (Date values masked);
// - the agent's data is identical: every span, transaction and error, the
//   server span or transaction of each request (name, status, error,
//   result/outcome, content length), each lasting at least as long as its
//   response took to reach 'prefinish' (so it ended after the response);
// - a 500 is an error to the agent in both runs;
// - at least 80% of the responses with a single end() take the native path;
//   where an agent's wrapper of ServerResponse#end comes first and the
//   package cannot go beneath it yet (New Relic first), the package says
//   so instead: stats() and NODE_DEBUG name the method. On a
//   line where the package stays off (24.20.x, 26.7.x) every run must give
//   that line's reason.
//
// Receivers are offline (test/helpers/agents.js). The current majors of
// dd-trace and New Relic refuse Node 20 (engines >=22): there they are
// skipped.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { spawnSync } = require('node:child_process')

const t = require('tap')

const { ORDERS, ROUTES, SINGLE_END, nativeShare, runApp, summarize } = require('./helpers/agents.js')

const NODE_MAJOR = Number(process.versions.node.split('.')[0])
const AGENTS = ['dd', 'otel', 'nr', 'elastic']
const APPS = ['express', 'fastify', 'plain']
const MIN_NATIVE_SHARE = 0.8
// Runs at once: each child is mostly waiting on the client, and two cores
// are shared with the other test files.
const CONCURRENCY = 3

// A span's duration is measured by the agent, the 'prefinish' delay by the
// app (test/fixtures/agents/app.js), each with its own reading of the
// monotonic clock: this much shorter still counts.
const CLOCK_SLACK = 0.5

const NAMES = { dd: 'dd-trace', otel: 'OpenTelemetry', nr: 'New Relic', elastic: 'Elastic APM' }

// Agents that wrap ServerResponse#end when they start, before the package:
// their wrapper calls Node's own end(), which keeps the package off
// (issue 44, point 2). dd-trace wraps it when the application requires
// http, after the preload put the stand-ins there: it wraps a stand-in, as
// when it loads after the package, and must be native in every order.
const WRAPS_END_FIRST = new Set(['nr'])

// How stats().wrapped and NODE_DEBUG name a method an agent wrapped.
const WRAPPED_METHOD = /ServerResponse\.prototype\.(end|writeHead|emit)\b/

function skipReason (agent) {
  if ((agent === 'dd' || agent === 'nr') && NODE_MAJOR < 22) {
    return `${NAMES[agent]}'s current major does not start on Node ${NODE_MAJOR}`
  }
  return false
}

// The probe's answer is stored once, in a directory of this test's own, so
// that no run starts with the probe pending (its responses would take
// Node's path).
const cacheDir = fs.mkdtempSync(path.join(os.tmpdir(), 'http-oneshot-agents-'))
t.teardown(() => fs.rmSync(cacheDir, { recursive: true, force: true }))
process.env.HTTP_ONESHOT_CACHE_DIR = cacheDir
// Where the package stays off on this line whatever is loaded (24.20.x,
// 26.7.x: docs/protocols.md), the reason it gives; null where it runs.
const LINE_OFF = JSON.parse(spawnSync(process.execPath, ['-e',
  'const o = require(process.argv[1]); o.install(); console.log(JSON.stringify(o.stats().inactiveReason))',
  path.join(__dirname, '..', 'lib', 'index.js')],
{ env: { ...process.env, HTTP_ONESHOT_CACHE_DIR: cacheDir }, stdio: ['ignore', 'pipe', 'ignore'], encoding: 'utf8' }).stdout)

// A small pool: every run is queued at once, in the order the subtests
// read them, CONCURRENCY at a time.
let running = 0
const queue = []
function pooled (fn) {
  return new Promise((resolve, reject) => {
    queue.push(() => fn().then(resolve, reject).finally(() => {
      running--
      next()
    }))
    next()
  })
}
function next () {
  while (running < CONCURRENCY && queue.length > 0) {
    running++
    queue.shift()()
  }
}

const runs = new Map()
function run (agent, app, order, oneshot) {
  const key = `${agent} ${app} ${order} ${oneshot}`
  if (!runs.has(key)) {
    const p = pooled(() => runApp({ agent, app, order, oneshot }))
    p.catch(() => {})
    runs.set(key, p)
  }
  return runs.get(key)
}

for (const agent of AGENTS) {
  if (skipReason(agent)) continue
  for (const app of APPS) {
    run(agent, app, 'cli-first', false)
    for (const order of Object.keys(ORDERS)) run(agent, app, order, true)
  }
}

// What one sorted list of JSON texts has that the other has not, counting
// repeats.
function multisetDiff (want, got) {
  const counts = new Map()
  for (const x of want) counts.set(x, (counts.get(x) ?? 0) + 1)
  const extra = []
  for (const x of got) {
    const n = counts.get(x) ?? 0
    if (n === 0) extra.push(JSON.parse(x))
    else counts.set(x, n - 1)
  }
  const missing = []
  for (const [x, n] of counts) for (let i = 0; i < n; i++) missing.push(JSON.parse(x))
  return { missing, extra }
}

const maskDate = bytes => bytes.toString('latin1').replace(/\r\nDate: [^\r]*/g, '\r\nDate: <masked>')

// What every run of an agent must show, with the package and without it:
// each request has its server span or transaction, ended after its
// response's 'prefinish', and a 500 is an error to the agent.
function checkAgentData (t, agent, result, summary, label) {
  const { roots } = summary
  t.equal(roots.filter(r => r.request !== null).length, result.requests.length,
    `${label}: one server span or transaction per request`)
  const late = roots.filter(r => r.request !== null && !(r.duration >= result.marks[r.request] - CLOCK_SLACK))
  t.same(late.map(r => `${r.path} (request ${r.request}) lasted ${r.duration.toFixed(3)} ms, prefinish after ${result.marks[r.request].toFixed(3)} ms`), [],
    `${label}: every one ended after its response's prefinish`)
  const errors = roots.filter(r => r.path === '/error')
  t.ok(errors.length > 0, `${label}: the 500s are there`)
  for (const root of errors) {
    if (agent === 'dd') t.match(root, { status: '500', error: 1 }, `${label}: a 500 is an error span`)
    if (agent === 'otel') t.match(root, { status: 500, statusCode: 2 }, `${label}: a 500 is a span with status ERROR`)
    if (agent === 'nr') t.match(root, { status: 500 }, `${label}: a 500 has status 500`)
    if (agent === 'elastic') {
      t.match(root, { status: 500, result: 'HTTP 5xx', outcome: 'failure' }, `${label}: a 500 is result HTTP 5xx, outcome failure`)
    }
  }
  if (agent === 'elastic') {
    for (const root of roots.filter(r => r.path === '/text')) {
      t.match(root, { result: 'HTTP 2xx', outcome: 'success' }, `${label}: a 200 is result HTTP 2xx, outcome success`)
    }
  }
}

for (const agent of AGENTS) {
  t.test(NAMES[agent], { skip: skipReason(agent) }, async t => {
    for (const app of APPS) {
      await t.test(app, async t => {
        const baseline = await run(agent, app, 'cli-first', false)
        const base = summarize(agent, baseline.agent)
        t.equal(baseline.stats.inactiveReason, 'disabled', 'the baseline runs without the package')
        checkAgentData(t, agent, baseline, base, 'without the package')
        for (const order of Object.keys(ORDERS)) {
          await t.test(order, async t => {
            const result = await run(agent, app, order, true)
            const summary = summarize(agent, result.agent)
            t.equal(maskDate(result.bytes), maskDate(baseline.bytes), 'bytes identical (Date masked)')
            t.equal(result.responses.length, ROUTES.length * 4, 'every response arrived')
            checkAgentData(t, agent, result, summary, 'with the package')
            t.same(summary.roots.map(({ duration, ...r }) => r), base.roots.map(({ duration, ...r }) => r),
              'server spans or transactions identical, in request order')
            const { missing, extra } = multisetDiff(base.all, summary.all)
            t.same({ count: summary.all.length, missing: missing.slice(0, 2), extra: extra.slice(0, 2) },
              { count: base.all.length, missing: [], extra: [] },
              `all agent data identical (${missing.length} missing, ${extra.length} extra; first two shown)`)
            const share = nativeShare(result.stats)
            t.comment(`${NAMES[agent]} ${order} ${app}: native ${result.stats.native} of ${SINGLE_END} single-end() responses; ` +
              `fallback ${JSON.stringify(result.stats.reasons)}; inactive: ${result.stats.inactiveReason}; ` +
              `wrapped: ${(result.stats.wrapped ?? []).map(w => w.method).join(', ') || 'none'}; ${result.elapsed} ms`)
            const { inactiveReason, reasons } = result.stats
            const blocked = inactiveReason !== null || (reasons.patched ?? 0) > 0
            if (LINE_OFF !== null) {
              t.equal(inactiveReason, LINE_OFF, `off on Node ${process.version}, as without an agent`)
            } else if (order !== 'cli-after' && WRAPS_END_FIRST.has(agent) && blocked) {
              // Not beneath this agent's wrapper yet (issue 44, point 2): the
              // package must say so, naming the method the agent wrapped.
              t.ok(inactiveReason === 'end-replaced' || reasons.patched > 0,
                `the package reports why: inactiveReason ${inactiveReason}, patched ${reasons.patched ?? 0}`)
              t.match(result.stderr, WRAPPED_METHOD, 'NODE_DEBUG names the wrapped method')
              if ('wrapped' in result.stats) {
                t.ok(result.stats.wrapped.some(w => WRAPPED_METHOD.test(w.method)),
                  `stats().wrapped names it: ${JSON.stringify(result.stats.wrapped)}`)
              }
            } else {
              t.ok(share >= MIN_NATIVE_SHARE,
                `native share ${result.stats.native}/${SINGLE_END} is at least ${MIN_NATIVE_SHARE * 100}%`)
            }
          })
        }
      })
    }
  })
}
