'use strict'

// A hello-world hono app on @hono/node-server for benchmark/instructions.js,
// listening on 127.0.0.1:$PORT. The adapter sets res._contentLength itself
// and calls writeHead(status, { 'Content-Type': ... }) and then end(body):
// Node's writeHead() renders the header block (with the Content-Length it
// found in _contentLength), and end() sends it with the body.

const { Hono } = require('hono')
const { serve } = require('@hono/node-server')

const app = new Hono()

app.get('/', (c) => c.text('hello world'))

app.get('/json', (c) => c.json({ hello: 'world' }))

const server = serve({ fetch: app.fetch, port: Number(process.env.PORT), hostname: '127.0.0.1' })
// The benchmark's keep-alive connections wait while callgrind_control
// zeroes or dumps the counters, which can take longer than Node's 5 s
// default on a loaded machine: the server must not close them then.
server.keepAliveTimeout = 300e3
server.once('error', (err) => {
  process.stderr.write(`${err.stack}\n`)
  process.exit(1)
})
