'use strict'

// A hello-world hapi 21 app for benchmark/apps.js and
// benchmark/instructions.js, listening on 127.0.0.1:$PORT. hapi answers
// with writeHead(status, headers) including Content-Length, then pipes its
// payload stream into the response: write(body) and an empty end().

const Hapi = require('@hapi/hapi')

async function main () {
  const server = Hapi.server({ port: Number(process.env.PORT), host: '127.0.0.1' })
  server.route({ method: 'GET', path: '/', handler: () => 'hello world' })
  server.route({ method: 'GET', path: '/json', handler: () => ({ hello: 'world' }) })
  // The benchmark's keep-alive connections wait while callgrind_control
  // zeroes or dumps the counters, which can take longer than Node's 5 s
  // default on a loaded machine: the server must not close them then.
  server.listener.keepAliveTimeout = 300e3
  await server.start()
}

main().catch((err) => {
  process.stderr.write(`${err.stack}\n`)
  process.exit(1)
})
