'use strict'

// HTTP_ONESHOT_REPORT=1: a table of native and fallen-back responses, by
// reason with what the user can change, printed to stderr when the process
// exits, also on SIGINT or SIGTERM, which end the process as they would
// without the report. Without the variable nothing is printed.

const childProcess = require('node:child_process')
const path = require('node:path')

const t = require('tap')

const { shimActive } = require('./helpers/expect-path.js')
const { FALLBACK } = require('../lib/rules.js')
const report = require('../lib/report.js')

const ROOT = path.join(__dirname, '..')
const REGISTER = path.join(ROOT, 'register.js')

t.test('every fallback reason has advice', async t => {
  for (const reason of Object.values(FALLBACK)) {
    t.type(report.ADVICE[reason], 'string', `${reason} has advice`)
    t.ok(report.ADVICE[reason].length > 20, `${reason}: advice in words`)
  }
  t.type(report.ADVICE['probe-pending'], 'string', 'probe-pending has advice')
  for (const reason of ['not-installed', 'disabled', 'addon-disabled', 'addon-not-loaded', 'unsupported-node',
    'end-replaced', 'wrapped', 'probe-pending']) {
    t.type(report.INACTIVE_ADVICE[reason], 'string', `inactive reason ${reason} has advice`)
  }
})

t.test('format(): counts, reasons by count, advice', async t => {
  const text = report.format({ native: 5, fallback: 3, reasons: { trailers: 1, 'headers-sent': 2 } }, null, 8)
  const lines = text.trimEnd().split('\n')
  t.match(lines[0], /^http-oneshot report \(Node v[\d.]+, pid \d+\): active$/)
  t.equal(lines[1], '  requests: 8; responses: 5 native, 3 on Node\'s own path')
  t.equal(lines[2], '  on Node\'s own path, by reason:')
  t.match(lines[3], /^ {4}2 {2}headers-sent {2}write\(\) or flushHeaders\(\) sent the header/)
  t.match(lines[4], /^ {4}1 {2}trailers {6}addTrailers\(\) or a Trailer header: Node's own path is required here$/)
  const off = report.format({ native: 0, fallback: 0, reasons: {} },
    { reason: 'unsupported-node', message: 'Node v24.20.0 is not a line whose http internals http-oneshot reproduces' }, 4)
  t.match(off, /: inactive: Node v24\.20\.0 is not a line/)
  t.match(off, /requests: 4; responses: 0 native, 4 on Node's own path/, 'an inactive process counts every request as Node\'s')
})

// An app with a native route and one that falls back (strictContentLength),
// a request to each; then it exits, or waits for a signal (`wait`), with or
// without a listener of its own.
function appScript ({ wait = false, listener = '' } = {}) {
  return `
const http = require('node:http')
const server = http.createServer((req, res) => {
  if (req.url === '/strict') res.strictContentLength = true
  res.end('hello')
})
${listener}
server.listen(0, '127.0.0.1', async () => {
  const base = 'http://127.0.0.1:' + server.address().port
  for (const route of ['/', '/strict']) await (await fetch(base + route)).text()
  ${wait ? "process.stdout.write('ready\\n')" : 'server.close()'}
})
`
}

function childEnv (env) {
  const out = { ...process.env, ...env }
  for (const key of ['NODE_OPTIONS', 'NODE_DEBUG', 'HTTP_ONESHOT', 'HTTP_ONESHOT_REPORT']) {
    if (!(key in env)) delete out[key]
  }
  return out
}

function run (script, env) {
  return childProcess.spawnSync(process.execPath, ['-r', REGISTER, '-e', script],
    { env: childEnv(env), encoding: 'utf8', timeout: 20000 })
}

// Starts the app, sends `signal` once it served its requests, and resolves
// with its exit code, signal and stderr. Through sh, which clears
// NODE_OPTIONS itself and then is the app (exec): the test runner puts a
// signal listener of its own (signal-exit) into every process spawned from
// here.
function runAndSignal (script, env, signal) {
  return new Promise((resolve, reject) => {
    const child = childProcess.spawn('/bin/sh', ['-c', 'NODE_OPTIONS= exec "$@"', 'sh',
      process.execPath, '-r', REGISTER, '-e', script],
    { env: childEnv(env), stdio: ['ignore', 'pipe', 'pipe'] })
    let stderr = ''
    let stdout = ''
    const timer = setTimeout(() => child.kill('SIGKILL'), 20000)
    child.stderr.on('data', (c) => { stderr += c })
    let sent = false
    child.stdout.on('data', (c) => {
      stdout += c
      if (!sent && stdout.includes('ready\n')) {
        sent = true
        child.kill(signal)
      }
    })
    child.on('error', reject)
    child.on('close', (code, sig) => {
      clearTimeout(timer)
      resolve({ code, signal: sig, stderr, stdout })
    })
  })
}

const REPORT_HEAD = /^http-oneshot report \(Node v[\d.]+, pid \d+\): /

t.test('with HTTP_ONESHOT_REPORT=1 the table is printed at exit', async t => {
  const res = run(appScript(), { HTTP_ONESHOT_REPORT: '1' })
  t.equal(res.status, 0)
  t.match(res.stderr, REPORT_HEAD)
  if (shimActive) {
    t.match(res.stderr, /requests: 2; responses: 1 native, 1 on Node's own path/)
    t.match(res.stderr, /\n {4}1 {2}strict-content-length {2}res\.strictContentLength is set/)
  } else {
    t.match(res.stderr, /inactive: /)
  }
})

t.test('without the variable, or with it 0, nothing is printed', async t => {
  t.equal(run(appScript(), {}).stderr, '')
  t.equal(run(appScript(), { HTTP_ONESHOT_REPORT: '0' }).stderr, '')
})

t.test('HTTP_ONESHOT=0: the report says the package was off', async t => {
  const res = run(appScript(), { HTTP_ONESHOT_REPORT: '1', HTTP_ONESHOT: '0' })
  t.match(res.stderr, /inactive: turned off by HTTP_ONESHOT=0\n {2}unset HTTP_ONESHOT/)
  t.match(res.stderr, /requests: 2; responses: 0 native, 2 on Node's own path/)
})

for (const signal of ['SIGTERM', 'SIGINT']) {
  t.test(`${signal} without a listener of the app: the report, then death by the signal`, async t => {
    const plain = await runAndSignal(appScript({ wait: true }), {}, signal)
    const reported = await runAndSignal(appScript({ wait: true }), { HTTP_ONESHOT_REPORT: '1' }, signal)
    t.equal(plain.signal, signal, 'without the report the process dies by the signal')
    t.equal(reported.signal, signal, 'with it too')
    t.equal(reported.code, plain.code)
    t.equal(plain.stderr, '')
    t.match(reported.stderr, REPORT_HEAD)
    t.equal(reported.stderr.match(/http-oneshot report/g).length, 1, 'printed once')
  })
}

t.test('SIGTERM with a listener of the app: the app decides, the report prints at its exit', async t => {
  const listener = "process.on('SIGTERM', () => { server.close(); process.exitCode = 7 })"
  const plain = await runAndSignal(appScript({ wait: true, listener }), {}, 'SIGTERM')
  const reported = await runAndSignal(appScript({ wait: true, listener }), { HTTP_ONESHOT_REPORT: '1' }, 'SIGTERM')
  t.equal(plain.code, 7)
  t.equal(plain.signal, null)
  t.equal(reported.code, 7, 'the same exit code')
  t.equal(reported.signal, null)
  t.equal(plain.stderr, '')
  t.match(reported.stderr, REPORT_HEAD)
})

t.test('a listener added after the report\'s own: the report steps aside', async t => {
  // signal-exit's way: a listener that re-raises the signal only when it is
  // the only one. With the report's listener still there it would not.
  const listener = `
function onlyWhenAlone (signal) {
  if (process.listeners(signal).length !== 1) return
  process.stderr.write('re-raised\\n')
  process.removeListener(signal, onlyWhenAlone)
  process.kill(process.pid, signal)
}
process.on('SIGTERM', onlyWhenAlone)`
  const reported = await runAndSignal(appScript({ wait: true, listener }), { HTTP_ONESHOT_REPORT: '1' }, 'SIGTERM')
  t.equal(reported.signal, 'SIGTERM', 'died by the signal, as without the report')
  // It removed itself before re-raising: the report's listener was back
  // for the signal it raised.
  t.match(reported.stderr, /^re-raised\nhttp-oneshot report \(Node v[\d.]+, pid \d+\): /, 'the report, printed before the death')
  t.equal(reported.stderr.match(/http-oneshot report/g).length, 1)
})

t.test('SIGINT with a listener that keeps the process running: it keeps running', async t => {
  // The app ignores the first SIGINT and exits by itself a little later.
  const listener = "process.once('SIGINT', () => setTimeout(() => { server.close(); process.stdout.write('after\\n') }, 100))"
  const reported = await runAndSignal(appScript({ wait: true, listener }), { HTTP_ONESHOT_REPORT: '1' }, 'SIGINT')
  t.equal(reported.signal, null, 'not killed by the signal ')
  t.equal(reported.code, 0)
  t.match(reported.stdout, /after\n/, 'the app went on after the signal')
  t.match(reported.stderr, REPORT_HEAD, 'the report at its exit')
})
