'use strict'

// Runs the C core's unit tests (test/c/test_http_message.c, built with
// ASan/UBSan by the Makefile) and checks their TAP output. The C program also
// prints which bytes its token and field-value tables accept; those are
// compared here with the running Node's own validators, so the core's tables
// cannot drift from Node's rules unnoticed.

const t = require('tap')
const http = require('node:http')
const path = require('node:path')
const { execFileSync, spawnSync } = require('node:child_process')

const root = path.join(__dirname, '..')
const bin = path.join(root, 'test', 'c', 'build', 'test_http_message')

// `make` rebuilds the program only when a source changed, so this is cheap
// after `npm run test:c` has run.
execFileSync('make', ['-s', 'test/c/build/test_http_message'], { cwd: root, stdio: 'inherit' })

const run = spawnSync(bin, [], { cwd: root, encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 })
const lines = run.stdout.split('\n')

t.test('the C unit tests pass', async t => {
  t.equal(run.error, undefined, 'the program starts')
  t.equal(run.signal, null, 'no signal (a sanitizer or guard-page crash)')
  t.equal(run.status, 0, 'exit status 0')
  t.same(lines.filter(l => l.startsWith('not ok')), [], 'no `not ok` lines')
  const oks = lines.filter(l => /^ok \d+ /.test(l)).length
  t.ok(oks > 50, `more than 50 passing checks (${oks})`)
  t.ok(lines.includes(`1..${oks}`), 'the plan matches the number of checks')
})

// Decodes a 64-digit hex bitmap, four bytes per digit, lowest byte in the
// digit's lowest bit, into an array of 256 booleans.
function bitmap (name) {
  const line = lines.find(l => l.startsWith(`# ${name} `))
  if (line === undefined) return null
  const hex = line.slice(name.length + 3).trim()
  const bits = []
  for (const digit of hex) {
    const v = parseInt(digit, 16)
    for (let k = 0; k < 4; k++) bits.push((v & (1 << k)) !== 0)
  }
  return bits
}

function accepts (fn) {
  try {
    fn()
    return true
  } catch {
    return false
  }
}

function mismatches (bits, nodeAccepts) {
  const bad = []
  for (let c = 0; c < 256; c++) {
    if (bits[c] !== nodeAccepts(String.fromCharCode(c))) bad.push(`0x${c.toString(16).padStart(2, '0')}`)
  }
  return bad
}

t.test('the core accepts exactly the bytes Node accepts', async t => {
  const token = bitmap('token-bitmap')
  const field = bitmap('field-bitmap')
  t.equal(token?.length, 256, 'the token table is printed')
  t.equal(field?.length, 256, 'the field-value table is printed')
  t.same(mismatches(token ?? [], s => accepts(() => http.validateHeaderName(s))), [],
    'header-name bytes match http.validateHeaderName')
  t.same(mismatches(field ?? [], s => accepts(() => http.validateHeaderValue('x-test', s))), [],
    'header-value bytes match http.validateHeaderValue')
})
