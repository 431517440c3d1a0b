'use strict'

// A hello-world express 5 app for benchmark/apps.js, listening on
// 127.0.0.1:$PORT. express answers through setHeader() calls and then
// end(body): the fresh-response path, with the default ETag and X-Powered-By.

const express = require('express')

const app = express()

app.get('/', (req, res) => {
  res.send('hello world')
})

app.get('/json', (req, res) => {
  res.json({ hello: 'world' })
})

app.listen(Number(process.env.PORT), '127.0.0.1', (err) => {
  if (err) {
    process.stderr.write(`${err.stack}\n`)
    process.exit(1)
  }
})
