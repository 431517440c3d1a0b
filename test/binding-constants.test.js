'use strict'

// The addon's named constants (src/binding.c lists them all): the grouped
// objects binding.send and binding.key agree with the first names lib/
// reads, and sendCached() returns what src/napi_cache.h documents for
// every result a test can bring about.

const fs = require('node:fs')
const net = require('node:net')
const { once } = require('node:events')
const { constants: { errno } } = require('node:os')
const { test } = require('tap')

const binding = require('../lib/binding.js')

test('the grouped constants exist, are numbers and agree with the first names', async t => {
  t.not(binding, null, 'lib/binding.js loaded the addon (run `node scripts/build.js` first)')
  const { send, key } = binding
  t.strictSame(Object.keys(send).sort(), ['FAILED_BASE', 'NOT_READY', 'REJECT_BASE'])
  t.strictSame(Object.keys(key).sort(),
    ['BYTES', 'CHECK', 'EMPTY', 'REPEAT', 'SHIFT', 'SLOT_COUNT', 'STRING'])
  for (const [name, value] of [...Object.entries(send), ...Object.entries(key)]) {
    t.ok(Number.isInteger(value), `${name} is an integer`)
  }
  t.ok(Object.isFrozen(send) && Object.isFrozen(key), 'frozen')
  t.equal(send.NOT_READY, -1)
  t.equal(send.REJECT_BASE, 100)
  t.equal(send.FAILED_BASE, 1000)
  // The encodings stay apart: every rejection code fits between NOT_READY
  // and FAILED_BASE, and the flags fit below the key's first bit.
  const codes = Object.values(binding.errors)
  t.ok(send.REJECT_BASE > -send.NOT_READY)
  t.ok(send.REJECT_BASE + Math.max(...codes) < send.FAILED_BASE)
  const allFlags = Object.values(binding.flags).reduce((a, b) => a | b, 0)
  t.ok(key.SLOT_COUNT - 1 < (1 << key.SHIFT))
  t.ok((allFlags << key.SHIFT) < key.REPEAT)
  for (const name of ['REPEAT', 'CHECK', 'STRING', 'BYTES', 'EMPTY']) {
    t.equal(key[name] & (key[name] - 1), 0, `${name} is one bit`)
  }
})

const PREFIX = 'HTTP/1.1 200 OK\r\nContent-Length: '
const SUFFIX = '\r\n\r\n'

// A connected pair of TCP sockets on loopback; `server` does not read
// until resumed.
async function pair (t) {
  const server = net.createServer({ pauseOnConnect: true })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const client = net.connect(server.address().port, '127.0.0.1')
  const [[peer]] = await Promise.all([once(server, 'connection'), once(client, 'connect')])
  t.teardown(() => {
    client.destroy()
    peer.destroy()
    server.close()
  })
  return { client, peer }
}

test('sendCached() returns the documented results', { skip: !binding?.canSend }, async t => {
  const { send, key, errors, flags } = binding
  t.equal(binding.cacheSet(0, PREFIX, SUFFIX, 1), 0, 'slot 0 holds a block with a hole')
  const { client, peer } = await pair(t)
  const fd = client._handle.fd
  t.ok(fd >= 0, 'the client socket has a descriptor')

  // The whole message written: undefined, and the peer reads exactly it.
  t.equal(binding.sendCached(fd, 0 | key.STRING, 4, 'CCCC'), undefined)
  peer.resume()
  const [got] = await once(peer, 'data')
  t.equal(got.toString('latin1'), PREFIX + '4' + SUFFIX + 'CCCC')
  peer.pause()

  // Rejections: -(REJECT_BASE + code), nothing written.
  t.equal(binding.sendCached(fd, 1 | key.STRING, 4, 'CCCC'), -(send.REJECT_BASE + errors.EINVAL_ARG),
    'an empty slot')
  t.equal(binding.sendCached(fd, 0 | key.STRING, 'x', 'C'), -(send.REJECT_BASE + errors.EINVAL_VALUE),
    'a length that is not digits')
  t.equal(binding.sendCached(fd, 0 | (flags.ASCII_ONLY << key.SHIFT) | key.STRING, 2, '\u00e9'),
    -(send.REJECT_BASE + errors.ENONASCII), 'a non-ASCII string body under ASCII_ONLY')

  // A descriptor that cannot be written: NOT_READY before any write.
  t.equal(binding.sendCached(-1, 0 | key.STRING, 4, 'CCCC'), send.NOT_READY, 'no descriptor')

  // A failed write: -(FAILED_BASE + errno).
  const devNull = fs.openSync('/dev/null', 'w')
  try {
    t.equal(binding.sendCached(devNull, 0 | key.STRING, 4, 'CCCC'), -(send.FAILED_BASE + errno.ENOTSOCK),
      'a descriptor that is not a socket')
  } finally {
    fs.closeSync(devNull)
  }

  // A peer that does not read: the socket buffer fills, some message goes
  // out in part (a count below its size), then nothing: NOT_READY.
  const body = Buffer.alloc(256 * 1024, 0x61)
  const total = PREFIX.length + String(body.length).length + SUFFIX.length + body.length
  const seen = new Set()
  for (let i = 0; i < 1000 && !seen.has(send.NOT_READY); i++) {
    const r = binding.sendCached(fd, 0 | key.BYTES, body.length, body)
    if (r === undefined) continue
    t.ok(r === send.NOT_READY || (r >= 0 && r < total), `result ${r} is a count or NOT_READY`)
    seen.add(r === send.NOT_READY ? r : 'partial')
  }
  t.ok(seen.has(send.NOT_READY), 'a full socket gives NOT_READY')
})
