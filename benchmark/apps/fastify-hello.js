'use strict'

// A hello-world fastify app for benchmark/apps.js, listening on
// 127.0.0.1:$PORT. fastify answers through writeHead() and then
// end(payload), the path the shim takes over with a prebuilt header block.

const fastify = require('fastify')({ logger: false })

fastify.get('/', (request, reply) => {
  reply.send({ hello: 'world' })
})

fastify.get('/text', (request, reply) => {
  reply.type('text/plain').send('hello world')
})

fastify.listen({ port: Number(process.env.PORT), host: '127.0.0.1' }, (err) => {
  if (err) {
    process.stderr.write(`${err.stack}\n`)
    process.exit(1)
  }
})
