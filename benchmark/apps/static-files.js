'use strict'

// express.static serving three files for benchmark/instructions.js,
// listening on 127.0.0.1:$PORT: GET /2k.bin, /64k.bin and /1m.bin (2 KiB,
// 64 KiB and 1 MiB of fixed bytes, written to a fresh temporary directory
// at start and removed on exit). send answers with setHeader() calls
// (Content-Length, ETag, Last-Modified, ...), then pipes an
// fs.createReadStream() into the response: write() per 64 KiB read and an
// empty end().
//
// STATIC_RETAIN_KIB=<n> (default 0): the app keeps about n KiB of plain
// objects, each holding a distinct flat string, alive from start-up, as a
// bigger application's modules and caches would. Which of V8's two
// garbage-collection steady states this app's server settles in depends on
// its live heap (benchmark/RESULTS.md, "static files and the app's heap"),
// so this knob sweeps it with and without the package.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const express = require('express')

const SIZES = { '2k.bin': 2048, '64k.bin': 65536, '1m.bin': 1048576 }

// Each entry: an object (a few dozen bytes) and a sequential one-byte
// string of RETAIN_STRING characters, about 1 KiB of heap in all.
const RETAIN_STRING = 960
function retain (kib) {
  const kept = []
  for (let i = 0; i < kib; i++) {
    kept.push({ i, text: Buffer.alloc(RETAIN_STRING, 97 + (i % 26)).toString('latin1') })
  }
  return kept
}
const retainKib = Number(process.env.STATIC_RETAIN_KIB ?? 0)
if (!Number.isInteger(retainKib) || retainKib < 0) {
  throw new Error(`STATIC_RETAIN_KIB must be a non-negative integer, got ${process.env.STATIC_RETAIN_KIB}`)
}
// Read nowhere, held for the process's life.
globalThis.staticFilesRetained = retain(retainKib)

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'http-oneshot-static-'))
for (const [name, size] of Object.entries(SIZES)) {
  fs.writeFileSync(path.join(dir, name), Buffer.alloc(size, 'x'))
}
function cleanUp () {
  fs.rmSync(dir, { recursive: true, force: true })
}
process.once('exit', cleanUp)
// The benchmarks stop the server with SIGTERM; with -r report-stats.js its
// own handler, added first, prints the stats and exits, which runs cleanUp.
process.once('SIGTERM', () => process.exit(0))

const app = express()
app.use(express.static(dir))

const server = app.listen(Number(process.env.PORT), '127.0.0.1', (err) => {
  if (err) {
    process.stderr.write(`${err.stack}\n`)
    process.exit(1)
  }
})
// The benchmark's keep-alive connections wait while callgrind_control
// zeroes or dumps the counters, which can take longer than Node's 5 s
// default on a loaded machine: the server must not close them then.
server.keepAliveTimeout = 300e3
