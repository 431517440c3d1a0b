'use strict'

// Whether the preload delays the first response after start:
//   node benchmark/first-response.js [nodes=20,24.22.3] [runs=11] [root=<checkout>]
// Each run is a whole process: a server on 127.0.0.1 and one request to
// itself with a raw socket, printing (ms, from performance.now(), whose
// zero is the process's start) when listen() was called, how long the
// first request took from connect to the end of the response, and when
// that was. Cells, interleaved run by run: HTTP_ONESHOT=0 (Node's own path,
// nothing loaded), -r register.js with the probe's answer stored (warm),
// and with an empty cache directory (cold: the probe child runs while the
// request is served). Medians.

const childProcess = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { parseArgs, runMain } = require('./lib/args.js')
const { median } = require('./lib/stats.js')

let ROOT = path.join(__dirname, '..')

const APP = `
const { performance } = require('node:perf_hooks')
const http = require('node:http')
const net = require('node:net')
const server = http.createServer((req, res) => res.end('hello'))
const listenAt = performance.now()
server.listen(0, '127.0.0.1', () => {
  const start = performance.now()
  const socket = net.connect(server.address().port, '127.0.0.1', () => {
    socket.write('GET / HTTP/1.1\\r\\nHost: x\\r\\nConnection: close\\r\\n\\r\\n')
  })
  socket.resume()
  socket.on('close', () => {
    const end = performance.now()
    server.close()
    process.stdout.write(JSON.stringify({ listenAt, request: end - start, doneAt: end }))
  })
})
`

function resolveNode (name) {
  if (name === String(process.versions.node.split('.')[0])) return process.execPath
  const file = path.join('/work/nodes', name, 'package', 'bin', 'node')
  if (fs.existsSync(file)) return file
  return name
}

function run (node, args, env) {
  const full = { ...process.env, ...env }
  delete full.NODE_OPTIONS
  delete full.NODE_DEBUG
  const out = childProcess.spawnSync(node, [...args, '-e', APP], { env: full, encoding: 'utf8', timeout: 30000 })
  if (out.status !== 0) throw new Error(out.stderr)
  return JSON.parse(out.stdout)
}

async function main () {
  const opts = parseArgs(process.argv.slice(2), { nodes: '20,24.22.3', runs: 11, root: '' })
  if (opts.root) ROOT = path.resolve(opts.root)
  const register = path.join(ROOT, 'register.js')
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'http-oneshot-first-'))
  const lines = ['| node | cell | listen() at ms | first request ms | done at ms |', '|---|---|---:|---:|---:|']
  try {
    for (const name of opts.nodes.split(',').filter(Boolean)) {
      const node = resolveNode(name)
      const warm = fs.mkdtempSync(path.join(tmp, 'warm-'))
      run(node, ['-r', register], { HTTP_ONESHOT_CACHE_DIR: warm })
      const cells = {
        'HTTP_ONESHOT=0': () => run(node, ['-r', register], { HTTP_ONESHOT: '0' }),
        '-r, warm cache': () => run(node, ['-r', register], { HTTP_ONESHOT_CACHE_DIR: warm }),
        '-r, cold cache': () => run(node, ['-r', register], { HTTP_ONESHOT_CACHE_DIR: fs.mkdtempSync(path.join(tmp, 'cold-')) })
      }
      const results = Object.fromEntries(Object.keys(cells).map((k) => [k, []]))
      for (let i = 0; i < opts.runs; i++) {
        for (const [cell, fn] of Object.entries(cells)) results[cell].push(fn())
      }
      for (const [cell, rs] of Object.entries(results)) {
        lines.push(`| ${name} | ${cell} | ${median(rs.map((r) => r.listenAt)).toFixed(1)} | ` +
          `${median(rs.map((r) => r.request)).toFixed(2)} | ${median(rs.map((r) => r.doneAt)).toFixed(1)} |`)
      }
    }
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true })
  }
  process.stdout.write(lines.join('\n') + '\n')
}

runMain(main)
