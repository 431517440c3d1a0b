'use strict'

// Every response fixture runs twice against a real server on 127.0.0.1:0,
// once on Node's own path and once with the shim installed; the raw bytes,
// the response state, the event order and the path taken must match
// (STYLE.md §5, docs/node-outgoing-path.md Appendix B).

const t = require('tap')

const { checkParity, makeCertificate } = require('./helpers/dual-path.js')
const { fixtures } = require('./fixtures/responses.js')

t.jobs = 1

for (const [i, fx] of fixtures.entries()) {
  t.test(`${fx.name} (fixtures/responses.js#${i})`, t => checkParity(t, fx))
}

// A TLSSocket is a net.Socket and ServerResponse writes to it the same way,
// so the common shapes take the native path over HTTPS too.
const TLS_FIXTURES = [
  'fresh end(string), keep-alive',
  'fresh end(Buffer)',
  'writeHead(200, {content-length}) + end(string, null, null)',
  'express 5 res.send(string) sequence, Buffer body',
  'end(chunk, cb)',
  'write() then end()',
  'two pipelined requests answered synchronously'
]

t.test('over HTTPS', async t => {
  const cert = makeCertificate()
  for (const name of TLS_FIXTURES) {
    const i = fixtures.findIndex(fx => fx.name === name)
    t.ok(i >= 0, `fixture "${name}" exists`)
    await t.test(`${name} (fixtures/responses.js#${i}, tls)`, t => checkParity(t, fixtures[i], { tls: cert }))
  }
})
