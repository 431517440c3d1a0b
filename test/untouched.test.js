'use strict'

// What the shim must leave alone: HTTP/2 compatibility responses (not
// ServerResponse instances), the client side (ClientRequest shares
// OutgoingMessage#end), and every prototype other than ServerResponse's.

const http = require('node:http')
const http2 = require('node:http2')
const net = require('node:net')

const t = require('tap')

const oneshot = require('../lib/index.js')
const internals = require('../lib/internals.js')
const { expectedStats, shimActive, pathStats } = require('./helpers/expect-path.js')
const { close, listen } = require('./helpers/framework-capture.js')

t.jobs = 1

const ZERO = { native: 0, fallback: 0, reasons: {} }

// Own property descriptors (names and symbols) of a prototype, for exact
// before/after comparison.
function ownProperties (obj) {
  const out = new Map()
  for (const key of Reflect.ownKeys(obj)) out.set(key, Object.getOwnPropertyDescriptor(obj, key))
  return out
}

function diffKeys (before, after) {
  const changed = []
  for (const key of new Set([...before.keys(), ...after.keys()])) {
    const a = before.get(key)
    const b = after.get(key)
    if (!a || !b || a.value !== b.value || a.get !== b.get || a.set !== b.set ||
        a.writable !== b.writable || a.enumerable !== b.enumerable ||
        a.configurable !== b.configurable) {
      changed.push(String(key))
    }
  }
  return changed
}

// writeHead is replaced only where the shim is active: on other Node lines
// it has nothing to render with and install() leaves it to Node.
t.test('install() defines end, writeHead and (where they apply) setHeader, write and uncork on ServerResponse.prototype only', async t => {
  const targets = {
    ServerResponse: http.ServerResponse.prototype,
    OutgoingMessage: http.OutgoingMessage.prototype,
    ClientRequest: http.ClientRequest.prototype,
    IncomingMessage: http.IncomingMessage.prototype,
    Server: http.Server.prototype,
    Socket: net.Socket.prototype,
    Http2ServerResponse: http2.Http2ServerResponse.prototype
  }
  const before = {}
  for (const [name, proto] of Object.entries(targets)) before[name] = ownProperties(proto)
  const omEnd = http.OutgoingMessage.prototype.end
  const crEnd = http.ClientRequest.prototype.end

  const uninstall = oneshot.install()
  try {
    const changed = {}
    for (const [name, proto] of Object.entries(targets)) {
      const keys = diffKeys(before[name], ownProperties(proto))
      if (keys.length > 0) changed[name] = keys
    }
    if (changed.ServerResponse) changed.ServerResponse.sort()
    const wh = Object.getOwnPropertyDescriptor(http.ServerResponse.prototype, 'writeHead')
    if (shimActive) {
      // setHeader() too where Node's own store is a dictionary (20 to 24),
      // which it hands a fast-mode store instead (lib/headers.js; on 26 only
      // once a response of more than 16 headers wants one). write() or
      // uncork() too where the probe found Node 20's or Node 24.22's chunked
      // write() (lib/protocol/chunked20.js writeChunk(), chunked24.js flushChunks()).
      // assignSocket() and detachSocket() where the probe child saw Node's (lib/socket-close.js).
      const wrapped = internals.closeMethods !== null ? ['assignSocket', 'detachSocket', 'end'] : ['end']
      if (internals.nullProtoHeaders) wrapped.push('setHeader')
      if (internals.chunkedUncork) wrapped.push('uncork')
      if (internals.chunkedWrite) wrapped.push('write')
      wrapped.push('writeHead')
      t.strictSame(changed, { ServerResponse: wrapped },
        'only ServerResponse.prototype.end, writeHead (and setHeader, write, uncork) changed')
      t.equal(wh.value.name, 'writeHead', 'the writeHead wrapper is named writeHead')
      t.equal(wh.value.length, 3, 'the writeHead wrapper takes three arguments, like Node\'s')
      for (const name of ['assignSocket', 'detachSocket']) {
        const fn = http.ServerResponse.prototype[name]
        t.same([fn.name, fn.length], [name, 1], `${name}() named and shaped as Node's`)
      }
    } else {
      t.strictSame(changed, {}, 'where the native path cannot run, install() changes nothing')
      t.equal(wh.value, before.ServerResponse.get('writeHead').value, 'writeHead stays Node\'s')
    }
    // Node 26 dropped the writeHeader alias; where it exists it stays Node's.
    t.equal(http.ServerResponse.prototype.writeHeader, before.ServerResponse.get('writeHeader')?.value,
      'writeHeader stays what Node defines')
    t.equal(http.OutgoingMessage.prototype.end, omEnd, 'OutgoingMessage#end is the same function')
    t.equal(http.ClientRequest.prototype.end, crEnd, 'ClientRequest#end is the same function')
    if (shimActive) {
      t.not(http.ServerResponse.prototype.end, omEnd, 'ServerResponse#end is replaced')
      const desc = Object.getOwnPropertyDescriptor(http.ServerResponse.prototype, 'end')
      // Enumerable as the method it shadows: for-in over a response lists
      // the names it lists on Node's path.
      const shadowed = Object.getOwnPropertyDescriptor(http.OutgoingMessage.prototype, 'end')
      t.match(desc, { writable: true, enumerable: shadowed.enumerable, configurable: true })
      const res = new http.ServerResponse({ method: 'GET', httpVersionMajor: 1, httpVersionMinor: 1 })
      const names = []
      for (const k in res) names.push(k)
      uninstall()
      const nodeNames = []
      for (const k in res) nodeNames.push(k)
      oneshot.install()
      // (In another order: a prototype's own keys come before its parent's.)
      t.strictSame(names.sort(), nodeNames.sort(), 'for-in over a response lists the names it lists on Node\'s path')
      t.equal(desc.value.name, 'end', 'the wrapper is named end')
      t.equal(desc.value.length, 3, 'the wrapper takes three arguments, like Node\'s end')
    } else {
      t.equal(http.ServerResponse.prototype.end, omEnd, 'ServerResponse#end stays Node\'s')
    }
  } finally {
    uninstall()
  }
  for (const [name, proto] of Object.entries(targets)) {
    t.strictSame(diffKeys(before[name], ownProperties(proto)), [], `${name} restored`)
  }
})

// Captures the raw bytes a client request puts on the wire, and answers it.
async function rawRequestBytes (t, send) {
  let resolveBytes
  const bytes = new Promise(resolve => { resolveBytes = resolve })
  const server = net.createServer(socket => {
    const chunks = []
    socket.on('data', chunk => {
      chunks.push(chunk)
      const text = Buffer.concat(chunks).toString('latin1')
      const end = text.indexOf('\r\n\r\n')
      if (end === -1) return
      const length = Number(/\r\ncontent-length: (\d+)/i.exec(text)?.[1] ?? 0)
      const chunked = /\r\ntransfer-encoding: chunked/i.test(text)
      if ((chunked && text.endsWith('0\r\n\r\n')) ||
          (!chunked && text.length >= end + 4 + length)) {
        resolveBytes(text)
        socket.end('HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n')
      }
    })
  })
  const port = await listen(server)
  t.teardown(() => new Promise(resolve => server.close(resolve)))
  const { status } = await send(port)
  // Each capture has its own port, which the Host header carries.
  const text = (await bytes).replace(/\r\nHost: 127\.0\.0\.1:\d+\r\n/, '\r\nHost: <masked>\r\n')
  return { text, status }
}

function post (port, body, options = {}) {
  return new Promise((resolve, reject) => {
    const req = http.request({
      port,
      host: '127.0.0.1',
      method: 'POST',
      path: '/echo',
      agent: false,
      headers: { 'content-type': 'text/plain', ...options.headers }
    }, res => {
      const chunks = []
      res.on('data', c => chunks.push(c))
      res.on('end', () => resolve({ status: res.statusCode, body: Buffer.concat(chunks).toString() }))
    })
    req.on('error', reject)
    if (options.write) {
      req.write(body)
      req.end()
    } else {
      req.end(body)
    }
  })
}

t.test('ClientRequest is untouched', async t => {
  const bodies = [
    ['end(string)', 'name=value&x=1', {}],
    ['end(Buffer)', Buffer.from([1, 2, 3, 0xff]), {}],
    ['write() then end()', 'streamed', { write: true }],
    ['end(non-ASCII string)', 'café', {}],
    ['explicit Content-Length', 'sized', { headers: { 'content-length': '5' } }]
  ]
  for (const [name, body, options] of bodies) {
    t.test(name, async t => {
      const legacy = await rawRequestBytes(t, port => post(port, body, options))
      const uninstall = oneshot.install()
      oneshot.resetStats()
      let patched
      try {
        patched = await rawRequestBytes(t, port => post(port, body, options))
      } finally {
        uninstall()
      }
      t.strictSame(pathStats(oneshot.stats()), ZERO, 'a client request is never counted')
      t.equal(patched.text, legacy.text, 'the request bytes are identical')
      t.equal(patched.status, 204)
      t.match(legacy.text, /^POST \/echo HTTP\/1\.1\r\n/, 'a request was captured')
    })
  }

  t.test('a POST with a body to a patched server', async t => {
    const server = http.createServer((req, res) => {
      const chunks = []
      req.on('data', c => chunks.push(c))
      req.on('end', () => res.end('got ' + Buffer.concat(chunks).toString()))
    })
    const port = await listen(server)
    t.teardown(() => close(server))
    const uninstall = oneshot.install()
    oneshot.resetStats()
    let res
    try {
      res = await post(port, 'payload of a post')
    } finally {
      uninstall()
    }
    t.strictSame(res, { status: 200, body: 'got payload of a post' })
    t.strictSame(pathStats(oneshot.stats()), expectedStats({ native: 1, fallback: 0, reasons: {} }),
      'only the server response was counted')
  })
})

// Runs one h2c request and collects what the client saw.
function h2request (port, headers) {
  return new Promise((resolve, reject) => {
    const session = http2.connect(`http://127.0.0.1:${port}`)
    session.on('error', reject)
    const stream = session.request(headers)
    const chunks = []
    let response
    stream.on('response', h => {
      response = { ...h }
      delete response.date
    })
    stream.on('data', c => chunks.push(c))
    stream.on('end', () => {
      session.close()
      resolve({ headers: response, body: Buffer.concat(chunks).toString('latin1') })
    })
    stream.on('error', reject)
    stream.end()
  })
}

t.test('HTTP/2 compatibility responses', async t => {
  const h2End = http2.Http2ServerResponse.prototype.end
  const server = http2.createServer((req, res) => {
    switch (req.url) {
      case '/string':
        res.setHeader('content-type', 'text/plain')
        res.end('hello over h2')
        break
      case '/buffer':
        res.end(Buffer.from([0, 1, 2, 0xff]))
        break
      case '/writehead':
        res.writeHead(201, { 'content-type': 'application/json', 'content-length': '2' })
        res.end('{}', null, null)
        break
      case '/write':
        res.write('part one, ')
        res.end('part two')
        break
      default:
        res.statusCode = 404
        res.end('not found')
    }
  })
  const port = await listen(server)
  t.teardown(() => new Promise(resolve => server.close(resolve)))

  const cases = [
    ['GET', '/string'], ['GET', '/buffer'], ['GET', '/writehead'], ['GET', '/write'],
    ['GET', '/missing'], ['HEAD', '/string']
  ]
  for (const [method, path] of cases) {
    t.test(`${method} ${path}`, async t => {
      const headers = { ':method': method, ':path': path }
      const legacy = await h2request(port, headers)
      const uninstall = oneshot.install()
      oneshot.resetStats()
      let patched
      try {
        t.equal(http2.Http2ServerResponse.prototype.end, h2End, 'Http2ServerResponse#end untouched')
        patched = await h2request(port, headers)
      } finally {
        uninstall()
      }
      t.strictSame(pathStats(oneshot.stats()), ZERO, 'HTTP/2 responses are never counted')
      t.strictSame(patched, legacy, 'the same headers and body')
      t.ok(legacy.headers[':status'] >= 200)
    })
  }
})
