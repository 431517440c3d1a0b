'use strict'

// A server in a node:worker_threads Worker, as some deployments run one:
// the worker has its own `http` module, ServerResponse prototype and addon
// instance, so install() there must patch the worker's copy, send the
// worker's responses down the native path with the same bytes as Node's,
// and leave the main thread's `http` alone. Two workers in turn, to see that
// a second addon instance works after the first one's thread is gone.

const http = require('node:http')
const path = require('node:path')
const { Worker } = require('node:worker_threads')
const t = require('tap')

const { expectedStats, shimActive, pathStats } = require('./helpers/expect-path.js')
const { RawClient } = require('./helpers/raw-client.js')

const INDEX = path.join(__dirname, '..', 'lib', 'index.js')

// The worker: a server answering /a (writeHead + end), /b (setHeader + end
// of a Buffer) and /stats, with the shim installed when workerData says so.
const WORKER = `
const http = require('node:http')
const { parentPort, workerData } = require('node:worker_threads')
const shim = require(${JSON.stringify(INDEX)})
if (workerData.install) shim.install()
const server = http.createServer((req, res) => {
  res.sendDate = false
  if (req.url === '/a') {
    res.writeHead(200, { 'Content-Type': 'text/plain', 'Content-Length': 4 })
    res.end('CCCC')
  } else if (req.url === '/b') {
    res.setHeader('X-Thread', 'worker')
    res.end(Buffer.from('h\\u00e9llo'))
  } else {
    // Read before this response's own end() is counted.
    const body = JSON.stringify({
      installed: Object.hasOwn(http.ServerResponse.prototype, 'end'),
      stats: shim.stats()
    })
    res.setHeader('Content-Type', 'application/json')
    res.end(body)
  }
})
server.listen(0, '127.0.0.1', () => parentPort.postMessage(server.address().port))
parentPort.on('message', () => server.close(() => parentPort.close()))
`

// One request on its own connection: the raw bytes and the parsed message.
async function get (port, url) {
  const client = new RawClient({ port })
  try {
    await client.send(`GET ${url} HTTP/1.1\r\nHost: x\r\n\r\n`)
    const { messages, error, timedOut } = await client.waitFor(1)
    return { bytes: client.bytes().toString('latin1'), messages, error, timedOut }
  } finally {
    client.destroy()
  }
}

// Starts a worker, asks it /a, /b and /stats, and stops it.
async function serveInWorker (install) {
  const worker = new Worker(WORKER, { eval: true, workerData: { install } })
  try {
    const port = await new Promise((resolve, reject) => {
      worker.once('message', resolve)
      worker.once('error', reject)
      worker.once('exit', code => reject(new Error(`worker exited with ${code}`)))
    })
    const a = await get(port, '/a')
    const b = await get(port, '/b')
    const stats = await get(port, '/stats')
    return { a, b, report: JSON.parse(stats.messages[0].body.toString()) }
  } finally {
    worker.postMessage('stop')
    await new Promise(resolve => worker.once('exit', resolve))
  }
}

t.test('a server in a worker thread takes the native path with Node\'s bytes', async t => {
  const legacy = await serveInWorker(false)
  t.equal(legacy.report.installed, false, 'without install() the worker\'s http is Node\'s')

  for (const round of [1, 2]) {
    const native = await serveInWorker(true)
    for (const url of ['a', 'b']) {
      t.equal(native[url].error, null, `round ${round}: /${url} parses`)
      t.equal(native[url].timedOut, false, `round ${round}: /${url} answered`)
      t.equal(native[url].bytes, legacy[url].bytes, `round ${round}: /${url} has the bytes Node sends`)
    }
    t.equal(native.report.installed, shimActive, `round ${round}: installed in the worker where it can run`)
    t.strictSame(pathStats(native.report.stats), expectedStats({ native: 2, fallback: 0, reasons: {} }),
      `round ${round}: both responses ${shimActive ? 'took the native path' : 'were Node\'s (nothing counted)'}`)
  }
  t.equal(Object.hasOwn(http.ServerResponse.prototype, 'end'), false,
    'the main thread\'s ServerResponse is untouched')
})
