'use strict'

// The pass of the shim's writeHead() over a headers object keeps the names
// and values it read in scratch arrays of lib/render.js: a getter that
// calls writeHead() on another response, and a pass that throws, must
// leave each response with the block Node's own writeHead() renders, and
// the next response on the native renderer.

const http = require('node:http')
const t = require('tap')

const shim = require('../lib/index.js')
const { blockOf } = require('../lib/render.js')

const req = { method: 'GET', httpVersionMajor: 1, httpVersionMinor: 1, headers: {} }

function blank (header) {
  return header.replace(/\r\nDate: [^\r]*\r\n/, '\r\nDate: -\r\n')
}

// Two responses, the second's writeHead() called from a getter of the
// first's headers object; their header blocks and the order of the calls.
function nested () {
  const outer = new http.ServerResponse(req)
  const inner = new http.ServerResponse(req)
  const events = []
  const headers = { 'Content-Type': 'text/plain' }
  Object.defineProperty(headers, 'X-Read', {
    enumerable: true,
    get () {
      events.push('getter')
      inner.writeHead(201, { 'Content-Length': '3', 'X-Inner': 'b' })
      events.push('inner rendered')
      return 'a'
    }
  })
  headers['Content-Length'] = '5'
  outer.writeHead(200, headers)
  events.push('outer rendered')
  return { outer, inner, events }
}

t.test('a getter that calls writeHead() on another response', async t => {
  const legacy = nested()
  const uninstall = shim.install()
  try {
    if (!shim.isActive()) {
      t.pass('inactive shim: Node renders both')
      return
    }
    for (let round = 0; round < 3; round++) {
      const native = nested()
      t.equal(blank(native.outer._header), blank(legacy.outer._header), `round ${round}: the outer block`)
      t.equal(blank(native.inner._header), blank(legacy.inner._header), `round ${round}: the inner block`)
      t.strictSame(native.events, legacy.events, `round ${round}: the calls in Node's order`)
      t.not(blockOf(native.outer), null, `round ${round}: the outer block is the renderer's`)
      t.equal(blockOf(native.inner), null, `round ${round}: the inner one, rendered during the pass, is Node's`)
    }
    const after = new http.ServerResponse(req)
    after.writeHead(201, { 'Content-Length': '3', 'X-Inner': 'b' })
    t.not(blockOf(after), null, 'the next response is the renderer\'s')
  } finally {
    uninstall()
  }
})

t.test('a pass that throws leaves the next response to the renderer', async t => {
  const uninstall = shim.install()
  try {
    if (!shim.isActive()) {
      t.pass('inactive shim')
      return
    }
    const failure = new Error('enumerated')
    const trap = new Proxy({}, { ownKeys () { throw failure } })
    const headers = Object.create(trap)
    headers['Content-Length'] = '2'
    const res = new http.ServerResponse(req)
    t.throws(() => res.writeHead(200, headers), failure, 'the trap\'s error, as Node\'s for-in throws it')
    const next = new http.ServerResponse(req)
    next.writeHead(200, { 'Content-Length': '2' })
    t.not(blockOf(next), null, 'the next response is the renderer\'s')
    t.match(next._header, /^HTTP\/1\.1 200 OK\r\n/)
  } finally {
    uninstall()
  }
})
