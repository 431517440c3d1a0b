'use strict'

// A hello-world h3 2 app (the Nitro/Nuxt server, on srvx) for
// benchmark/instructions.js, listening on 127.0.0.1:$PORT. srvx answers
// with writeHead(status, '', [name, value, ...]) including Content-Length,
// then write(body) and an empty end(). h3 2 is an ES module, loaded with
// require() (Node 20.19+ and 22.12+).

const { H3, serve } = require('h3')

const app = new H3()

app.get('/', () => 'hello world')

// No SIGTERM handler of srvx's own: the benchmark stops the server with it.
const server = serve(app, {
  port: Number(process.env.PORT), hostname: '127.0.0.1', silent: true, gracefulShutdown: false
})
// The benchmark's keep-alive connections wait while callgrind_control
// zeroes or dumps the counters, which can take longer than Node's 5 s
// default on a loaded machine: the server must not close them then.
server.node.server.keepAliveTimeout = 300e3
server.ready().catch((err) => {
  process.stderr.write(`${err.stack}\n`)
  process.exit(1)
})
