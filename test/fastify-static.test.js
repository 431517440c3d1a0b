'use strict'

// @fastify/static serving files of 2 KiB, 64 KiB and 1 MiB on a real
// loopback server, on Node's own path and with the shim installed: the same
// bytes for GET, HEAD, Range and If-None-Match requests, a client that
// stops reading, keep-alive sequences and reply.download(); the native
// share at least as NATIVE_SHARE_MIN says (test/helpers/frameworks.js).

const t = require('tap')

const { Totals } = require('./helpers/framework-capture.js')
const { GET, NATIVE, WRITTEN, checkShare, compare, makeFiles, staticFiles, warmUp } = require('./helpers/frameworks.js')

const dir = makeFiles(t)

t.test('@fastify/static', async t => {
  const fastify = require('fastify')({ logger: false })
  fastify.register(require('@fastify/static'), { root: dir, prefix: '/static/' })
  // reply.download() sets Content-Disposition with content-disposition 3,
  // an ES module (loaded with require() on Node 20.19+).
  fastify.get('/download', (req, reply) => reply.download('2k.txt'))
  await fastify.listen({ port: 0, host: '127.0.0.1' })
  t.teardown(() => fastify.close())
  const port = fastify.server.address().port
  await warmUp(port, '/static/2k.txt')
  const totals = new Totals()

  await t.test('files', t => staticFiles(t, port, '/static', totals, dir))
  await t.test('a missing file (404)', async t => {
    const { legacy } = await compare(t, port, GET('/static/none.txt'), NATIVE, totals)
    t.equal(legacy.messages[0].statusCode, 404)
  })
  await t.test('reply.download()', async t => {
    const { legacy } = await compare(t, port, GET('/download'), WRITTEN, totals)
    t.match(legacy.text, /\r\ncontent-disposition: attachment; filename="?2k.txt"?\r\n/i)
    t.equal(legacy.messages[0].body.length, 2048)
  })
  await t.test('a Range past the end (416)', async t => {
    const { legacy } = await compare(t, port, GET('/static/2k.txt', { Range: 'bytes=5000-6000' }), NATIVE, totals)
    t.equal(legacy.messages[0].statusCode, 416)
  })
  await t.test('native share', async t => checkShare(t, totals, '@fastify/static'))
})
