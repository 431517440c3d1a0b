'use strict'

// The shim preloaded the way deployments do it, through NODE_OPTIONS, in
// node:cluster workers: each worker must have its own installed copy and
// send a plain end('hello') down the native path. The primary is this test;
// the workers run this same file, which then starts a server instead.

const cluster = require('node:cluster')
const http = require('node:http')
const path = require('node:path')

const ROOT = path.join(__dirname, '..')

if (cluster.isWorker) {
  const shim = require(path.join(ROOT, 'lib', 'index.js'))
  const server = http.createServer((req, res) => {
    res.sendDate = false
    if (req.url === '/stats') {
      // Read before this response's own end() is counted.
      const body = JSON.stringify({
        pid: process.pid,
        installed: Object.hasOwn(http.ServerResponse.prototype, 'end'),
        stats: shim.stats()
      })
      res.setHeader('Content-Type', 'application/json')
      res.end(body)
    } else {
      res.end('hello')
    }
  })
  // exclusive: each worker gets a port of its own, so the primary knows
  // which worker answers.
  server.listen({ port: 0, host: '127.0.0.1', exclusive: true }, () => {
    process.send({ port: server.address().port })
  })
  process.on('disconnect', () => server.close())
} else {
  const t = require('tap')
  const { expectedStats, shimActive, pathStats } = require('./helpers/expect-path.js')
  const { RawClient } = require('./helpers/raw-client.js')

  async function get (port, url) {
    const client = new RawClient({ port })
    try {
      await client.send(`GET ${url} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`)
      const { messages, error, timedOut } = await client.waitFor(1)
      return { bytes: client.bytes().toString('latin1'), messages, error, timedOut }
    } finally {
      client.destroy()
    }
  }

  t.test('two cluster workers preloaded with register.js take the native path', async t => {
    const register = path.join(ROOT, 'register.js')
    // Only the preload: the test runner's own loaders would slow each worker's
    // start several times over and are not what a deployment runs.
    const nodeOptions = `--require ${JSON.stringify(register)}`
    cluster.setupPrimary({ exec: __filename, execArgv: [], silent: false })
    const workers = [0, 1].map(() => cluster.fork({ NODE_OPTIONS: nodeOptions }))
    t.teardown(() => {
      for (const worker of workers) if (!worker.isDead()) worker.kill()
    })
    const ports = await Promise.all(workers.map(worker => new Promise((resolve, reject) => {
      worker.once('message', msg => resolve(msg.port))
      worker.once('exit', code => reject(new Error(`worker exited with ${code}`)))
    })))
    t.not(ports[0], ports[1], 'each worker listens on its own port')

    const pids = []
    for (const port of ports) {
      const hello = await get(port, '/')
      t.equal(hello.error, null, 'the response parses')
      t.equal(hello.bytes,
        'HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 5\r\n\r\nhello', 'exact bytes')
      const stats = await get(port, '/stats')
      const report = JSON.parse(stats.messages[0].body.toString())
      pids.push(report.pid)
      t.equal(report.installed, shimActive, `worker ${report.pid} has the shim installed where it can run`)
      t.strictSame(pathStats(report.stats), expectedStats({ native: 1, fallback: 0, reasons: {} }),
        `worker ${report.pid} counted end('hello') ${shimActive ? 'natively' : 'nowhere (Node untouched)'}`)
    }
    t.not(pids[0], pids[1], 'two different worker processes answered')
    t.not(pids[0], process.pid, 'not the primary')

    await Promise.all(workers.map(worker => new Promise(resolve => {
      worker.once('exit', resolve)
      worker.disconnect()
    })))
  })
}
