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

// Headers objects the shim reads and then hands to Node's writeHead()
// (a Keep-Alive header is Node's to render): the copy it hands over must
// hold the same own keys, in the same order, as the object given, also
// for names Object.prototype has, where assignment would not define one.
function handedHeaders () {
  return [
    { 'Content-Type': 'text/plain', 'Content-Length': '2', 'Keep-Alive': 'timeout=5' },
    JSON.parse('{"__proto__":"p","7":"seven","Content-Length":"2","Keep-Alive":"timeout=1"}'),
    JSON.parse('{"toString":"t","X-Trap":"v","hasOwnProperty":"h","Keep-Alive":"timeout=1"}'),
    { 'X-A': 'a', 'Keep-Alive': 'timeout=1', 'X-B': ['b1', 'b2'], 'Content-Length': 2 }
  ]
}

// Status 200 has cached entries (the walk reads values, then hands over
// a copy); no response of status 299 is ever cached (the keys alone send
// it to Node).
function renderAll () {
  const cached = new http.ServerResponse(req)
  cached.writeHead(200, { 'Content-Type': 'text/plain', 'Content-Length': '2' })
  return [200, 299].flatMap((status) => handedHeaders().map((headers) => {
    const res = new http.ServerResponse(req)
    res.writeHead(status, headers)
    return blank(res._header)
  }))
}

t.test('headers handed to Node\'s writeHead() keep every own key and its order', async t => {
  // A setter on Object.prototype for one of the names: assigning that
  // name would call it instead of defining the key.
  const trapped = []
  // eslint-disable-next-line no-extend-native
  Object.defineProperty(Object.prototype, 'X-Trap', {
    configurable: true,
    enumerable: false,
    get () { return undefined },
    set (value) { trapped.push(value) }
  })
  try {
    const legacy = renderAll()
    t.match(legacy[2], /\r\nX-Trap: v\r\n/, 'Node renders the own X-Trap key')
    t.match(legacy[1], /\r\n__proto__: p\r\n/, 'Node renders the own __proto__ key')
    const uninstall = shim.install()
    try {
      for (let round = 0; round < 3; round++) {
        const native = renderAll()
        for (let i = 0; i < native.length; i++) {
          t.equal(native[i], legacy[i], `round ${round}, headers ${i}: Node's block`)
        }
      }
      t.strictSame(trapped, [], 'no setter on Object.prototype ran')
      // A getter the walk would have read first: with a key only Node
      // renders and no cached entry, no value is read before Node's pass.
      const reads = []
      const headers = { 'Keep-Alive': 'timeout=1', 'Content-Length': '2' }
      Object.defineProperty(headers, 'X-Read', { enumerable: true, get () { reads.push('x'); return 'x' } })
      const res299 = new http.ServerResponse(req)
      res299.writeHead(299, headers)
      t.strictSame(reads, ['x'], 'the getter ran once, in Node\'s pass')
      const res = new http.ServerResponse(req)
      res.writeHead(200, handedHeaders()[0])
      t.equal(blockOf(res), null, 'a Keep-Alive header is rendered by Node')
    } finally {
      uninstall()
    }
  } finally {
    delete Object.prototype['X-Trap']
  }
})
