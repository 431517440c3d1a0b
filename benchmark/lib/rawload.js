'use strict'

// The load generator for responses wrk cannot frame, run as a child process
// by lib/load.js:
//   node benchmark/lib/rawload.js port=<port> c=50 duration=5 method=HEAD
// wrk 4.1 (Debian's) and h2load 1.52 parse responses without knowing the
// request method and honour a Content-Length on a bodyless response: they
// wait for a body that never comes after a HEAD request, or after a 204 or
// 304 that carries the Content-Length the application set (Node sends it),
// and count no request at all. This client frames responses as RFC 9112
// 6.3 says (lib/response.js): c keep-alive connections of plain `net`
// sockets, each with one request in flight, for `duration` seconds. It
// prints one JSON line in the shape of lib/load.js's parseWrk(). Being
// JavaScript it costs more CPU per request than wrk: compare modes within
// one of its rows, never its req/s with a wrk row.

const net = require('node:net')
const { parseArgs, runMain } = require('./args.js')
const { parseResponse } = require('./response.js')

const EMPTY = Buffer.alloc(0)

function percentile (sorted, p) {
  if (sorted.length === 0) return NaN
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]
}

async function main () {
  const opts = parseArgs(process.argv.slice(2), { port: 0, c: 50, duration: 5, method: 'GET' })
  const request = Buffer.from(`${opts.method} / HTTP/1.1\r\nHost: 127.0.0.1:${opts.port}\r\n\r\n`, 'latin1')
  const head = opts.method === 'HEAD'
  const latencies = []
  let requests = 0
  let errors = 0
  let non2xx = 0
  let bytes = 0
  let running = true
  const sockets = []

  function open () {
    const socket = net.connect(opts.port, '127.0.0.1')
    socket.setNoDelay(true)
    sockets.push(socket)
    let buf = EMPTY
    let sent = 0
    const send = () => {
      sent = performance.now()
      socket.write(request)
    }
    socket.on('connect', send)
    socket.on('data', (data) => {
      buf = buf.length === 0 ? data : Buffer.concat([buf, data])
      let res
      try {
        res = parseResponse(buf, head)
      } catch {
        errors++
        socket.destroy()
        return
      }
      if (res === null) return
      if (res.size !== buf.length) {
        // One request in flight: nothing may follow the response.
        errors++
        socket.destroy()
        return
      }
      buf = EMPTY
      if (!running) return
      requests++
      bytes += res.size
      latencies.push(performance.now() - sent)
      if (res.status > 399) non2xx++
      send()
    })
    socket.on('error', () => { errors++ })
    socket.on('close', () => {
      // A connection the server closed is replaced, as wrk reconnects.
      if (running) open()
    })
  }

  const started = performance.now()
  for (let i = 0; i < opts.c; i++) open()
  await new Promise((resolve) => setTimeout(resolve, opts.duration * 1000))
  running = false
  const seconds = (performance.now() - started) / 1000
  for (const socket of sockets) socket.destroy()
  const sorted = Float64Array.from(latencies).sort()
  process.stdout.write(`${JSON.stringify({
    tool: 'node-raw',
    rps: requests / seconds,
    requests,
    bytes,
    p50: percentile(sorted, 0.5),
    p99: percentile(sorted, 0.99),
    errors,
    non2xx
  })}\n`)
}

runMain(main)
