'use strict'

// lib/header-rules.js, the one JS copy of Node's header character rules, accepts
// exactly what the running Node accepts, for every char 0..0x100 and for
// the empty string.

const http = require('node:http')
const { test } = require('tap')
const { TOKEN, INVALID_HEADER_CHAR } = require('../lib/header-rules.js')

function accepts (fn) {
  try {
    fn()
    return true
  } catch {
    return false
  }
}

test('TOKEN is Node\'s header name rule', async t => {
  const bad = []
  for (let c = 0; c <= 0x100; c++) {
    const s = String.fromCharCode(c)
    if (TOKEN.test(s) !== accepts(() => http.validateHeaderName(s))) bad.push(c.toString(16))
  }
  t.strictSame(bad, [], 'no char differs')
  t.equal(TOKEN.test(''), accepts(() => http.validateHeaderName('')), 'the empty name')
  t.equal(TOKEN.test('x-a b'), false, 'a space inside a name')
})

test('INVALID_HEADER_CHAR is Node\'s header value rule', async t => {
  const bad = []
  for (let c = 0; c <= 0x100; c++) {
    const s = 'a' + String.fromCharCode(c)
    if (!INVALID_HEADER_CHAR.test(s) !== accepts(() => http.validateHeaderValue('x', s))) {
      bad.push(c.toString(16))
    }
  }
  t.strictSame(bad, [], 'no char differs')
  t.equal(INVALID_HEADER_CHAR.test(''), false, 'the empty value is valid')
})
