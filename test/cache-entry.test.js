'use strict'

// lib/render.js Entry: the Content-Length argument an entry gives the write
// (-1 where C kept the slot's digits), and lib/head.js: the head text both
// JS renderers write, against the bytes Node's own writeHead() + end()
// put on the wire.

const http = require('node:http')
const net = require('node:net')
const { test } = require('tap')
const { Entry } = require('../lib/render.js')
const { statusLine, fieldLine, fieldStart, LINE_END } = require('../lib/head.js')

test('lengthArgument() passes a value once, then -1 while C keeps it', async t => {
  const e = new Entry()
  e.setBlock('A: ', '\r\n')
  t.equal(e.fill('5'), 'A: 5\r\n', 'fill() renders the block with the value')
  t.equal(e.lengthArgument(), '5', 'the first write passes the value')
  t.equal(e.lengthArgument(), -1, 'the next write with the same value repeats the kept digits')
  t.equal(e.fill('5'), 'A: 5\r\n')
  t.equal(e.lengthArgument(), -1, 'the same value filled again: still kept')
  e.fill(12)
  t.equal(e.lengthArgument(), 12, 'a new value is passed')
  t.equal(e.lengthArgument(), -1)
  e.forgetLength()
  t.equal(e.lengthArgument(), 12, 'after forgetLength() the value is passed again')
  e.fill('12')
  t.equal(e.lengthArgument(), '12', 'a string is not the number with its digits')
  e.setBlock('B: ', '\r\n')
  t.equal(e.lastHead, '', 'a new block has none rendered yet')
  t.equal(e.fill('12'), 'B: 12\r\n', 'and renders the same value anew')
  t.equal(e.lengthArgument(), '12', 'a new block in the slot: the value is passed again')
})

test('a block without a hole is its suffix', async t => {
  const e = new Entry()
  e.setBlock(null, 'T: chunked\r\n\r\n')
  t.equal(e.lastHead, 'T: chunked\r\n\r\n')
  t.equal(e.fill(undefined), 'T: chunked\r\n\r\n')
  t.equal(e.fill(7), 'T: chunked\r\n\r\n', 'a value has nowhere to go')
})

test('each entry keeps its own value', async t => {
  const a = new Entry()
  const b = new Entry()
  a.setBlock('A: ', '')
  b.setBlock('A: ', '')
  a.fill('7')
  b.fill('7')
  t.equal(a.lengthArgument(), '7')
  t.equal(b.lengthArgument(), '7', 'another slot passes it too')
  a.forgetLength()
  t.equal(b.lengthArgument(), -1, 'forgetting in one entry leaves the other')
  t.equal(a.lengthArgument(), '7')
})

test('lib/head.js writes the head Node writes', async t => {
  const server = http.createServer((req, res) => {
    res.sendDate = false
    res.shouldKeepAlive = false
    res.writeHead(404, 'Not Here', { 'X-A': 'b', 'Content-Length': 2 })
    res.end('ok')
  })
  await new Promise(resolve => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => server.close())
  const wire = await new Promise((resolve, reject) => {
    const chunks = []
    const socket = net.connect(server.address().port, '127.0.0.1', () => {
      socket.end('GET / HTTP/1.1\r\nHost: x\r\n\r\n')
    })
    socket.on('data', c => chunks.push(c))
    socket.on('end', () => resolve(Buffer.concat(chunks).toString('latin1')))
    socket.on('error', reject)
  })
  const head = statusLine(404, 'Not Here') + fieldLine('X-A', 'b') +
    fieldStart('Content-Length') + 2 + LINE_END + fieldLine('Connection', 'close') + LINE_END
  t.equal(wire, head + 'ok')
})
