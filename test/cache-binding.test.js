'use strict'

// The header-block slots of the addon (src/napi_cache.h): cacheSet() stores a
// checked block with a Content-Length hole, fillCached() writes it with the
// digits of a length argument, and the key's REPEAT bit asks for the digits
// the slot's last response had, which lib/render.js Entry#lengthArgument()
// asks for when a response repeats its slot's last Content-Length value.

const t = require('tap')

const binding = require('../lib/binding.js')
const { codeOf } = require('./helpers/result.js')

const PREFIX = 'HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: '
const SUFFIX = '\r\n\r\n'

// fillCached() wants a Buffer sized exactly: `digits` says how many
// digits the block should get.
function fill (slot, length, body, digits = String(length).length) {
  const dst = Buffer.alloc(PREFIX.length + digits + SUFFIX.length + body.length, 0x2e)
  // -1 stands for the key's repeat bit (the slot's last digits).
  const key = slot | binding.flags.BODY_LATIN1 << binding.key.SHIFT | (length === -1 ? binding.key.REPEAT : 0)
  const code = codeOf(binding.fillCached(dst, key, length, body))
  return { code, text: dst.toString('latin1'), untouched: dst.every((b) => b === 0x2e) }
}

t.test('the addon', { skip: binding === null && 'the addon is not built' }, async t => {
  const slot = binding.key.SLOT_COUNT - 1

  t.test('a length of -1 before any response of the slot is rejected', async t => {
    t.equal(codeOf(binding.cacheSet(slot, PREFIX, SUFFIX, 2)), 0, 'the block is stored')
    for (const digits of [0, 1, 2]) {
      const r = fill(slot, -1, 'ab', digits)
      t.not(r.code, 0, `rejected (${digits}-digit buffer)`)
      t.ok(r.untouched, 'nothing written')
    }
  })

  t.test('-1 repeats the digits of the slot\'s last length', async t => {
    t.equal(codeOf(binding.cacheSet(slot, PREFIX, SUFFIX, 2)), 0)
    const first = fill(slot, '4', 'abcd')
    t.equal(first.code, 0)
    t.equal(first.text, PREFIX + '4' + SUFFIX + 'abcd')
    const again = fill(slot, -1, 'wxyz', 1)
    t.equal(again.code, 0)
    t.equal(again.text, PREFIX + '4' + SUFFIX + 'wxyz', 'the string\'s digits again')
    const number = fill(slot, 12, 'x'.repeat(12))
    t.equal(number.text, PREFIX + '12' + SUFFIX + 'x'.repeat(12), 'a number in its turn')
    const repeated = fill(slot, -1, 'y'.repeat(12), 2)
    t.equal(repeated.text, PREFIX + '12' + SUFFIX + 'y'.repeat(12), 'and its digits again')
    const zeros = fill(slot, '0007', 'abcdefg')
    t.equal(zeros.text, PREFIX + '0007' + SUFFIX + 'abcdefg', 'digits as given, leading zeros kept')
    t.equal(fill(slot, -1, 'abcdefg', 4).text, PREFIX + '0007' + SUFFIX + 'abcdefg')
  })

  t.test('a rejected length is the last one too: -1 is rejected after it', async t => {
    t.equal(codeOf(binding.cacheSet(slot, PREFIX, SUFFIX, 2)), 0)
    t.equal(fill(slot, '5', 'abcde').code, 0)
    const injected = fill(slot, '5\r\nX-Injected: 1', 'abcde')
    t.not(injected.code, 0, 'CR LF in the digits is rejected')
    t.ok(injected.untouched)
    t.not(fill(slot, -1, 'abcde', 17).code, 0, 'and so is asking for them again')
  })

  t.test('only the key\'s repeat bit repeats: a length of -1 without it is rejected', async t => {
    t.equal(codeOf(binding.cacheSet(slot, PREFIX, SUFFIX, 2)), 0)
    t.equal(fill(slot, '4', 'abcd').code, 0)
    const dst = Buffer.alloc(PREFIX.length + 1 + SUFFIX.length + 4, 0x2e)
    const key = slot | binding.flags.BODY_LATIN1 << binding.key.SHIFT
    t.equal(codeOf(binding.fillCached(dst, key, -1, 'abcd')), binding.errors.EINVAL_VALUE)
    t.ok(dst.every((b) => b === 0x2e), 'nothing written')
  })

  t.test('storing a block forgets the last digits', async t => {
    t.equal(codeOf(binding.cacheSet(slot, PREFIX, SUFFIX, 2)), 0)
    t.equal(fill(slot, '3', 'abc').code, 0)
    t.equal(codeOf(binding.cacheSet(slot, PREFIX, SUFFIX, 2)), 0, 'the slot is stored again')
    t.not(fill(slot, -1, 'abc', 1).code, 0, '-1 finds no digits')
  })

  // A repeat keeps the block laid out with its digits (src/napi_cache.c,
  // lay_out()); storing, and any other length, must drop that copy.
  t.test('the block kept for repeats goes with the digits and the block', async t => {
    // As long as PREFIX, which fill() sizes its buffer for.
    const OTHER = 'HTTP/1.1 202 OK\r\nContent-Type: text/plain\r\nContent-Length: '
    t.equal(codeOf(binding.cacheSet(slot, PREFIX, SUFFIX, 2)), 0)
    t.equal(fill(slot, '3', 'abc').code, 0)
    t.equal(fill(slot, -1, 'def', 1).text, PREFIX + '3' + SUFFIX + 'def', 'a first repeat')
    t.equal(fill(slot, -1, 'ghi', 1).text, PREFIX + '3' + SUFFIX + 'ghi', 'a second, from the kept block')
    t.equal(codeOf(binding.cacheSet(slot, OTHER, SUFFIX, 2)), 0, 'another block in the same slot')
    t.not(fill(slot, -1, 'abc', 1).code, 0, '-1 finds no digits, and no kept block')
    t.equal(fill(slot, '3', 'jkl').text, OTHER + '3' + SUFFIX + 'jkl')
    t.equal(fill(slot, -1, 'mno', 1).text, OTHER + '3' + SUFFIX + 'mno')
    t.equal(fill(slot, -1, 'pqr', 1).text, OTHER + '3' + SUFFIX + 'pqr', 'kept again, for the new block')
    t.equal(fill(slot, '10', 'x'.repeat(10)).text, OTHER + '10' + SUFFIX + 'x'.repeat(10))
    t.equal(fill(slot, -1, 'y'.repeat(10), 2).text, OTHER + '10' + SUFFIX + 'y'.repeat(10),
      'new digits: laid out again')
    t.equal(fill(slot, -1, 'z'.repeat(10), 2).text, OTHER + '10' + SUFFIX + 'z'.repeat(10))
  })

  t.test('each slot keeps its own digits', async t => {
    const other = slot - 1
    t.equal(codeOf(binding.cacheSet(slot, PREFIX, SUFFIX, 2)), 0)
    t.equal(codeOf(binding.cacheSet(other, PREFIX, SUFFIX, 2)), 0)
    t.equal(fill(slot, '2', 'ab').code, 0)
    t.equal(fill(other, '9', 'abcdefghi').code, 0)
    t.equal(fill(slot, -1, 'cd', 1).text, PREFIX + '2' + SUFFIX + 'cd')
    t.equal(fill(other, -1, 'jklmnopqr', 1).text, PREFIX + '9' + SUFFIX + 'jklmnopqr')
  })

  t.test('a key with unknown bits or a slot out of range is a TypeError', async t => {
    const dst = Buffer.alloc(64)
    const { STRING: keyString, BYTES: keyBytes, EMPTY: keyEmpty } = binding.key
    const twoKinds = [keyString | keyBytes, keyString | keyEmpty, keyBytes | keyEmpty,
      keyString | keyBytes | keyEmpty]
    for (const key of [binding.key.SLOT_COUNT, keyEmpty << 1, -1, 'x', ...twoKinds]) {
      t.throws(() => binding.fillCached(dst, key, 2, 'ab'), TypeError, `key ${String(key)}`)
    }
  })

  // The key may say what the body is (keyString, keyBytes): C then reads it
  // as that without asking V8, with the same bytes, and a body that is not
  // what the key says is a TypeError, as any wrong body.
  t.test('a key that names the body\'s kind', async t => {
    t.equal(codeOf(binding.cacheSet(slot, PREFIX, SUFFIX, 2)), 0)
    const base = slot | binding.flags.BODY_LATIN1 << binding.key.SHIFT
    const read = (kind, body) => {
      const dst = Buffer.alloc(PREFIX.length + 1 + SUFFIX.length + 2, 0x2e)
      const code = codeOf(binding.fillCached(dst, base | kind, 2, body))
      return { code, text: dst.toString('latin1') }
    }
    const want = PREFIX + '2' + SUFFIX + 'ab'
    t.strictSame(read(binding.key.STRING, 'ab'), { code: 0, text: want }, 'a string')
    t.strictSame(read(binding.key.BYTES, Buffer.from('ab')), { code: 0, text: want }, 'a Buffer')
    t.strictSame(read(binding.key.BYTES, new Uint8Array([0x61, 0x62])), { code: 0, text: want },
      'a Uint8Array')
    const wrong = [
      [binding.key.STRING, Buffer.from('ab'), 'a Buffer said to be a string'],
      [binding.key.STRING, undefined, 'nothing said to be a string'],
      [binding.key.STRING, 12, 'a number said to be a string'],
      [binding.key.BYTES, 'ab', 'a string said to be bytes'],
      [binding.key.BYTES, undefined, 'nothing said to be bytes'],
      [binding.key.BYTES, { length: 2 }, 'an object said to be bytes'],
      [binding.key.BYTES, new Uint16Array([0x6261]), 'a Uint16Array said to be bytes']
    ]
    for (const [kind, body, name] of wrong) {
      t.throws(() => read(kind, body), {
        name: 'TypeError', message: /argument 'body' must be undefined, a string or a Uint8Array/
      }, name)
    }
    // keyEmpty: no body, whatever the argument (C does not read it).
    const none = (body) => {
      const dst = Buffer.alloc(PREFIX.length + 1 + SUFFIX.length, 0x2e)
      const code = codeOf(binding.fillCached(dst, base | binding.key.EMPTY, 2, body))
      return { code, text: dst.toString('latin1') }
    }
    const bare = { code: 0, text: PREFIX + '2' + SUFFIX }
    t.strictSame(none(undefined), bare, 'nothing said to be nothing')
    t.strictSame(none('ab'), bare, 'a string said to be nothing is not read')
    t.strictSame(none({ toString () { throw new Error('read') } }), bare, 'nor is an object')
  })

  t.test('a chunked block: no length read, the body framed as one chunk', async t => {
    const head = 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n'
    t.equal(codeOf(binding.cacheSet(slot, null, head, 1)), 0, 'the block is stored without a hole')
    const key = slot | (binding.flags.BODY_LATIN1 | binding.flags.CHUNKED) << binding.key.SHIFT
    const want = head + '11\r\n0123456789abcdefg\r\n0\r\n\r\n'
    const dst = Buffer.alloc(want.length)
    t.equal(codeOf(binding.fillCached(dst, key, { valueOf () { throw new Error('read') } }, '0123456789abcdefg')), 0)
    t.equal(dst.toString('latin1'), want)
    const empty = Buffer.alloc(head.length + 5)
    t.equal(codeOf(binding.fillCached(empty, key, 0, '')), 0)
    t.equal(empty.toString('latin1'), head + '0\r\n\r\n', 'an empty body is the last chunk alone')
    const raw = slot | binding.flags.BODY_LATIN1 << binding.key.SHIFT
    t.not(codeOf(binding.fillCached(Buffer.alloc(want.length), raw, 0, '0123456789abcdefg')), 0,
      'without CHUNKED the framing the caller sized disagrees: rejected')
    t.equal(codeOf(binding.cacheSet(slot, null, 'HTTP/1.1 200 OK\r\nX: a\r\nY: b\r\n\r\n', 1)), binding.errors.EINVAL_HEAD,
      'a chunked block is checked like any other (line count)')
  })
})
