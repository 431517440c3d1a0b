'use strict'

// The addon's named constants (src/binding.c lists them all): the grouped
// objects binding.result and binding.key agree with the first names lib/
// reads, and sendCached() returns what src/napi_cache.h documents for
// every result a test can bring about, with its detail in the record.

const fs = require('node:fs')
const net = require('node:net')
const { once } = require('node:events')
const { Worker } = require('node:worker_threads')
const { constants: { errno } } = require('node:os')
const { test } = require('tap')

const binding = require('../lib/binding.js')

test('the grouped constants exist, are numbers and agree with the first names', async t => {
  t.not(binding, null, 'lib/binding.js loaded the addon (run `node scripts/build.js` first)')
  const { result, key } = binding
  t.strictSame(Object.keys(result).sort(), ['FAILED', 'NOT_READY', 'PART', 'REJECTED'])
  t.strictSame(Object.keys(key).sort(),
    ['BYTES', 'CHECK', 'EMPTY', 'REPEAT', 'SHIFT', 'SLOT_COUNT', 'STRING'])
  for (const [name, value] of [...Object.entries(result), ...Object.entries(key)]) {
    t.ok(Number.isInteger(value), `${name} is an integer`)
  }
  t.ok(Object.isFrozen(result) && Object.isFrozen(key), 'frozen')
  // undefined means finished: every other result is a distinct number.
  t.equal(new Set(Object.values(result)).size, 4, 'the results are distinct')
  t.notOk(Object.values(result).includes(undefined), 'none is undefined')
  const allFlags = Object.values(binding.flags).reduce((a, b) => a | b, 0)
  t.ok(key.SLOT_COUNT - 1 < (1 << key.SHIFT))
  t.ok((allFlags << key.SHIFT) < key.REPEAT)
  for (const name of ['REPEAT', 'CHECK', 'STRING', 'BYTES', 'EMPTY']) {
    t.equal(key[name] & (key[name] - 1), 0, `${name} is one bit`)
  }
})

test('each instance has its own record: a worker thread\'s results stay its own', async t => {
  const { result, errors, detail } = binding
  t.equal(binding.checkHead('HTTP/1.1 200 OK\r\n\r\n', 1), result.REJECTED)
  t.equal(detail[0], errors.EINVAL_HEAD, 'the code is in this thread\'s record')
  const worker = new Worker(`
    const { parentPort } = require('node:worker_threads')
    const b = require(${JSON.stringify(require.resolve('../lib/binding.js'))})
    const r = b.checkHead('HTTP/1.1 200 O\\u0100K\\r\\n\\r\\n', 0)
    parentPort.postMessage([r, b.detail[0]])
  `, { eval: true })
  const [[r, code]] = await once(worker, 'message')
  t.equal(r, result.REJECTED)
  t.equal(code, errors.EINVAL_REASON, 'the worker reads its own code')
  t.equal(detail[0], errors.EINVAL_HEAD, 'and this thread\'s record is untouched')
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
  const { result, detail, key, errors, flags } = binding
  t.equal(binding.cacheSet(0, PREFIX, SUFFIX, 1), undefined, 'slot 0 holds a block with a hole')
  const { client, peer } = await pair(t)
  const fd = client._handle.fd
  t.ok(fd >= 0, 'the client socket has a descriptor')

  // The whole message written: undefined, and the peer reads exactly it.
  t.equal(binding.sendCached(fd, 0 | key.STRING, 4, 'CCCC'), undefined)
  peer.resume()
  const [got] = await once(peer, 'data')
  t.equal(got.toString('latin1'), PREFIX + '4' + SUFFIX + 'CCCC')
  peer.pause()

  // Rejections: REJECTED, the code in the record, nothing written.
  t.equal(binding.sendCached(fd, 1 | key.STRING, 4, 'CCCC'), result.REJECTED, 'an empty slot')
  t.equal(detail[0], errors.EINVAL_ARG, '  EINVAL_ARG')
  t.equal(binding.sendCached(fd, 0 | key.STRING, 'x', 'C'), result.REJECTED, 'a length that is not digits')
  t.equal(detail[0], errors.EINVAL_VALUE, '  EINVAL_VALUE')
  t.equal(binding.sendCached(fd, 0 | (flags.ASCII_ONLY << key.SHIFT) | key.STRING, 2, '\u00e9'),
    result.REJECTED, 'a non-ASCII string body under ASCII_ONLY')
  t.equal(detail[0], errors.ENONASCII, '  ENONASCII')

  // A descriptor that cannot be written: NOT_READY before any write.
  detail[0] = -7
  t.equal(binding.sendCached(-1, 0 | key.STRING, 4, 'CCCC'), result.NOT_READY, 'no descriptor')
  t.equal(detail[0], 0, '  nothing written')

  // A failed write: FAILED, the errno in the record.
  const devNull = fs.openSync('/dev/null', 'w')
  try {
    t.equal(binding.sendCached(devNull, 0 | key.STRING, 4, 'CCCC'), result.FAILED,
      'a descriptor that is not a socket')
    t.equal(detail[0], errno.ENOTSOCK, '  ENOTSOCK')
  } finally {
    fs.closeSync(devNull)
  }

  // A peer that does not read: the socket buffer fills, some message goes
  // out in part (PART, a count below its size in the record), then
  // nothing: NOT_READY.
  const body = Buffer.alloc(256 * 1024, 0x61)
  const total = PREFIX.length + String(body.length).length + SUFFIX.length + body.length
  const seen = new Set()
  for (let i = 0; i < 1000 && !seen.has(result.NOT_READY); i++) {
    const r = binding.sendCached(fd, 0 | key.BYTES, body.length, body)
    if (r === undefined) continue
    t.ok(r === result.NOT_READY || r === result.PART, `result ${r} is PART or NOT_READY`)
    if (r === result.PART) t.ok(detail[0] >= 0 && detail[0] < total, `  PART wrote ${detail[0]} bytes`)
    seen.add(r)
  }
  t.ok(seen.has(result.NOT_READY), 'a full socket gives NOT_READY')
})
