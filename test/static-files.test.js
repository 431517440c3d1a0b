'use strict'

// express.static and res.sendFile serving files of 2 KiB, 64 KiB and 1 MiB
// on a real loopback server, on Node's own path and with the shim
// installed: the same bytes for GET, HEAD, Range and If-None-Match requests,
// a client that stops reading, and keep-alive sequences; the native share
// at least as NATIVE_SHARE_MIN says (test/helpers/frameworks.js).

const t = require('tap')

const { Totals } = require('./helpers/framework-capture.js')
const { GET, NATIVE, checkShare, compare, makeFiles, serve, staticFiles, warmUp } = require('./helpers/frameworks.js')

const dir = makeFiles(t)

t.test('express.static and res.sendFile', async t => {
  const express = require('express')
  const totals = new Totals()
  const app = express()
  app.set('env', 'test')
  app.use('/static', express.static(dir))
  app.get('/send/:name', (req, res, next) => res.sendFile(req.params.name, { root: dir }, err => {
    if (err) next(err)
  }))
  const port = await serve(t, app)
  await warmUp(port, '/static/2k.txt')
  await warmUp(port, '/send/2k.txt')

  await t.test('express.static', t => staticFiles(t, port, '/static', totals, dir))
  await t.test('res.sendFile', t => staticFiles(t, port, '/send', totals, dir))
  await t.test('a missing file (404)', async t => {
    const { legacy } = await compare(t, port, GET('/static/none.txt'), NATIVE, totals)
    t.equal(legacy.messages[0].statusCode, 404)
  })
  await t.test('a directory without its slash (301)', async t => {
    const { legacy } = await compare(t, port, GET('/static/sub'), NATIVE, totals)
    t.equal(legacy.messages[0].statusCode, 301)
  })
  await t.test('a Range past the end (416)', async t => {
    const { legacy } = await compare(t, port, GET('/static/2k.txt', { Range: 'bytes=5000-6000' }), NATIVE, totals)
    t.equal(legacy.messages[0].statusCode, 416)
  })
  await t.test('native share', async t => checkShare(t, totals, 'express.static'))
})
