'use strict'

// A hello-world koa 3 app for benchmark/apps.js and
// benchmark/instructions.js, listening on 127.0.0.1:$PORT. koa sets
// Content-Type and a numeric Content-Length with setHeader() and answers
// with end(body); for JSON it removes Content-Length and sets it again.

const http = require('node:http')
const Koa = require('koa')

const app = new Koa()

app.use((ctx) => {
  if (ctx.path === '/json') ctx.body = { hello: 'world' }
  else if (ctx.path === '/') ctx.body = 'hello world'
})

const server = http.createServer(app.callback())
// The benchmark's keep-alive connections wait while callgrind_control
// zeroes or dumps the counters, which can take longer than Node's 5 s
// default on a loaded machine: the server must not close them then.
server.keepAliveTimeout = 300e3
server.once('error', (err) => {
  process.stderr.write(`${err.stack}\n`)
  process.exit(1)
})
server.listen(Number(process.env.PORT), '127.0.0.1')
