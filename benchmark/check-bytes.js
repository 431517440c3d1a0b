'use strict'

// Checks that the benchmark server sends the same bytes in every mode:
// legacy (Node's own path), native (the shim) and limit (the precomputed
// stub of benchmark/http/server.js), apart from the Date value.
//   node benchmark/check-bytes.js [matrix=1|grid=1] [modes=legacy,native,limit]
//     [type=bytes] [len=4] [chunks=1] [chunkedEnc=0] [headers=0]
//     [shape=simple] [status=200] [method=GET] [requests=3]
// Without matrix= or grid= it checks the one configuration given; matrix=1
// checks every row of `node benchmark/compare.js matrix=1`; grid=1 checks
// status 200/204/304 x method GET/HEAD x type x len 4/1024 x chunks 1/4 x
// chunkedEnc 0/1 x headers 0/3, and the express3 shape. The limit stub's
// single chunk is compared with Node's chunks joined. Each server answers
// `requests` requests on each of two keep-alive connections; a native server
// reports how many responses took the native path. Exits 1 on a mismatch.

const net = require('node:net')
const { parseArgs, runMain } = require('./lib/args.js')
const { startServer } = require('./lib/child.js')
const { SERVER_DEFAULTS, checkConfig, parseModes, serverArgs, describe } = require('./lib/config.js')
const { describeShim } = require('./lib/measure.js')
const { parseResponse } = require('./lib/response.js')
const { matrixConfigs } = require('./compare.js')

function gridConfigs (base) {
  const configs = []
  for (const status of [200, 204, 304]) {
    for (const method of ['GET', 'HEAD']) {
      for (const type of ['bytes', 'buffer']) {
        for (const len of [4, 1024]) {
          for (const chunks of [1, 4]) {
            for (const chunkedEnc of [0, 1]) {
              for (const headers of [0, 3]) {
                configs.push({ ...base, status, method, type, len, chunks, chunkedEnc, headers, shape: 'simple' })
              }
            }
          }
        }
      }
      configs.push({ ...base, status, method, type: 'bytes', len: 4, chunks: 1, chunkedEnc: 0, headers: 0, shape: 'express3' })
    }
  }
  // Leave out what checkConfig() refuses (204/304 with a Transfer-Encoding
  // header, after which Node closes the connection).
  return configs.filter((config) => {
    try {
      checkConfig(config)
      return true
    } catch {
      return false
    }
  })
}

// Sends `count` requests one at a time on one keep-alive connection and
// returns the raw bytes of each response.
function fetchRaw (port, method, count) {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1')
    const responses = []
    let buf = Buffer.alloc(0)
    const request = Buffer.from(`${method} / HTTP/1.1\r\nHost: x\r\n\r\n`, 'latin1')
    const timer = setTimeout(() => {
      socket.destroy()
      reject(new Error(`timed out after ${responses.length} of ${count} responses; pending ${JSON.stringify(buf.toString('latin1'))}`))
    }, 5000)
    socket.on('connect', () => socket.write(request))
    socket.on('error', (err) => { clearTimeout(timer); reject(err) })
    socket.on('data', (data) => {
      buf = Buffer.concat([buf, data])
      let res
      try {
        res = parseResponse(buf, method === 'HEAD')
      } catch (err) {
        clearTimeout(timer)
        socket.destroy()
        return reject(err)
      }
      if (res === null) return
      responses.push(buf.subarray(0, res.size))
      buf = buf.subarray(res.size)
      if (responses.length < count) return socket.write(request)
      // Anything more (a body after a bodyless response) shows up here.
      setTimeout(() => {
        clearTimeout(timer)
        socket.destroy()
        if (buf.length > 0) responses.push(buf)
        resolve(responses)
      }, 20)
    })
  })
}

function normalize (bytes) {
  return bytes.toString('latin1').replace(/^Date: .*$/m, 'Date: -')
}

// The limit stub sends a chunked body as one chunk by design (see
// benchmark/README.md, "The limit server"); to compare it, Node's chunks
// are joined into one as well. Everything else must match byte for byte.
function oneChunk (text) {
  const end = text.indexOf('\r\n\r\n') + 4
  if (!/^Transfer-Encoding: chunked\r$/mi.test(text.slice(0, end)) || end === text.length) return text
  let pos = end
  let body = ''
  for (;;) {
    const eol = text.indexOf('\r\n', pos)
    const size = parseInt(text.slice(pos, eol), 16)
    if (eol === -1 || !Number.isInteger(size)) return text
    if (size === 0) return `${text.slice(0, end)}${body.length.toString(16)}\r\n${body}\r\n${text.slice(pos)}`
    body += text.slice(eol + 2, eol + 2 + size)
    pos = eol + 2 + size + 2
  }
}

async function checkConfigBytes (config, modes, requests) {
  const byMode = {}
  const shims = {}
  for (const mode of modes) {
    const server = await startServer({ nodeArgs: serverArgs(config, mode), pin: false })
    let raw
    try {
      raw = [...await fetchRaw(server.port, config.method, requests), ...await fetchRaw(server.port, config.method, requests)]
    } finally {
      shims[mode] = await server.stop()
    }
    byMode[mode] = raw.map(normalize)
  }
  const problems = []
  const ref = byMode[modes[0]]
  for (const mode of modes) {
    const got = byMode[mode]
    if (got.length !== requests * 2) problems.push(`${mode}: ${got.length} responses (or trailing bytes) for ${requests * 2} requests`)
    if (new Set(got).size !== 1) problems.push(`${mode}: its responses differ from one another`)
    const same = mode === 'limit' || modes[0] === 'limit' ? oneChunk(got[0]) === oneChunk(ref[0]) : got[0] === ref[0]
    if (mode !== modes[0] && !same) {
      problems.push(`${mode} differs from ${modes[0]}:\n${modes[0]}: ${JSON.stringify(ref[0])}\n${mode}: ${JSON.stringify(got[0])}`)
    }
  }
  return { sample: ref[0], problems, shim: shims.native }
}

async function main () {
  const opts = parseArgs(process.argv.slice(2), {
    ...SERVER_DEFAULTS,
    method: 'GET',
    modes: 'legacy,native,limit',
    matrix: 0,
    grid: 0,
    requests: 3
  })
  const modes = parseModes(opts.modes)
  const base = { ...opts, c: 1, duration: 1, warmup: 0 }
  checkConfig(base)
  let configs = [base]
  if (opts.matrix === 1) configs = matrixConfigs(base)
  else if (opts.grid === 1) configs = gridConfigs(base)
  let failed = 0
  for (const config of configs) {
    checkConfig(config)
    const { sample, problems, shim } = await checkConfigBytes(config, modes, opts.requests)
    const size = Buffer.byteLength(sample, 'latin1')
    let line = `${problems.length === 0 ? 'ok  ' : 'FAIL'} ${describe(config).padEnd(44)} ${String(size).padStart(6)} B`
    if (shim !== undefined) line += `  ${describeShim(shim)}`
    console.log(line)
    for (const p of problems) console.log(`     ${p}`)
    if (problems.length > 0) failed++
  }
  console.log(`${configs.length - failed} of ${configs.length} configurations identical in ${modes.join(', ')} (Date blanked)`)
  if (failed > 0) process.exitCode = 1
}

runMain(main)
