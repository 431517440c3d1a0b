'use strict'

// Load generation: wrk when it is installed, autocannon otherwise.
// wrk is a C program and keeps up with a Node server on one core; autocannon
// is JavaScript, saturates its own core near the server's speed and so
// understates any server-side gain. Responses without a body (a HEAD
// request, status 204 or 304) go to lib/rawload.js instead: wrk 4.1 and
// autocannon wait for the body a Content-Length announces even there.

const { execFile } = require('node:child_process')
const fs = require('node:fs')
const path = require('node:path')
const { pinned } = require('./cpu.js')

const LOAD_CPU = 1

let wrkPath

function findWrk () {
  if (wrkPath === undefined) {
    wrkPath = null
    for (const dir of (process.env.PATH || '').split(':')) {
      if (dir && fs.existsSync(`${dir}/wrk`)) {
        wrkPath = `${dir}/wrk`
        break
      }
    }
  }
  return wrkPath
}

let warned = false

/**
 * Name of the load generator that runLoad() will use.
 *
 * @param {boolean} [bodyless] the responses have no body (HEAD, 204, 304)
 * @returns {'wrk'|'autocannon'|'node-raw'}
 */
function loadTool (bodyless = false) {
  if (bodyless) return 'node-raw'
  if (findWrk() !== null) return 'wrk'
  if (!warned) {
    warned = true
    process.stderr.write('warning: wrk not found, using autocannon. On a 2-core machine ' +
      'autocannon saturates its own core and understates any server-side gain; ' +
      'install wrk (Debian package "wrk") for figures that matter.\n')
  }
  return 'autocannon'
}

function run (file, args) {
  const [cmd, cmdArgs] = pinned(LOAD_CPU, file, args)
  return new Promise((resolve, reject) => {
    execFile(cmd, cmdArgs, { maxBuffer: 16 << 20 }, (err, stdout, stderr) => {
      if (err) {
        err.message += `\n${stderr}`
        reject(err)
      } else {
        resolve(stdout)
      }
    })
  })
}

const LATENCY_UNITS = { us: 1e-3, ms: 1, s: 1e3 }

function parseLatency (text, label) {
  const m = new RegExp(`^\\s*${label}\\s+([\\d.]+)(us|ms|s)\\s*$`, 'm').exec(text)
  return m ? Number(m[1]) * LATENCY_UNITS[m[2]] : NaN
}

function parseWrk (out) {
  const rps = /^Requests\/sec:\s+([\d.]+)/m.exec(out)
  const total = /^\s*(\d+) requests in ([\d.]+)(us|ms|s|m)/m.exec(out)
  if (rps === null || total === null) throw new Error(`cannot parse wrk output:\n${out}`)
  const sock = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out)
  const non2xx = /Non-2xx or 3xx responses: (\d+)/.exec(out)
  return {
    tool: 'wrk',
    rps: Number(rps[1]),
    requests: Number(total[1]),
    p50: parseLatency(out, '50%'),
    p99: parseLatency(out, '99%'),
    errors: sock ? sock.slice(1).reduce((a, b) => a + Number(b), 0) : 0,
    non2xx: non2xx ? Number(non2xx[1]) : 0
  }
}

function parseAutocannon (out) {
  const result = JSON.parse(out)
  return {
    tool: 'autocannon',
    rps: result.requests.total / result.duration,
    requests: result.requests.total,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.timeouts,
    non2xx: result.non2xx
  }
}

const RAWLOAD = path.join(__dirname, 'rawload.js')

async function once (url, connections, duration, method, bodyless) {
  const tool = loadTool(bodyless)
  if (tool === 'node-raw') {
    const out = await run(process.execPath, [RAWLOAD, `port=${new URL(url).port}`, `c=${connections}`,
      `duration=${duration}`, `method=${method}`])
    return JSON.parse(out)
  }
  if (method !== 'GET') throw new Error(`${tool} runs only GET here; ${method} goes to lib/rawload.js`)
  if (tool === 'wrk') {
    const out = await run(findWrk(), ['-t1', `-c${connections}`, `-d${duration}s`, '--latency', url])
    return parseWrk(out)
  }
  const cli = path.join(path.dirname(require.resolve('autocannon/package.json')), 'autocannon.js')
  const out = await run(process.execPath, [cli, '-j', '-c', String(connections), '-d', String(duration), url])
  return parseAutocannon(out)
}

/**
 * Warms the server up for `warmup` seconds, then measures for `duration`
 * seconds. `beforeMeasure` and `afterMeasure` run just around the measured
 * window (to sample the server's CPU time).
 *
 * @param {object} options
 * @param {string} options.url target URL
 * @param {number} options.connections concurrent keep-alive connections
 * @param {number} options.duration measured seconds
 * @param {number} [options.warmup] warm-up seconds (default 1, 0 for none)
 * @param {string} [options.method] request method (default GET)
 * @param {boolean} [options.bodyless] the responses have no body (a HEAD
 *   request, status 204 or 304): lib/rawload.js generates the load
 * @param {() => void} [options.beforeMeasure]
 * @param {() => void} [options.afterMeasure]
 * @returns {Promise<{tool: string, rps: number, requests: number, p50: number,
 *   p99: number, errors: number, non2xx: number}>} latencies in ms
 */
async function runLoad ({ url, connections, duration, warmup = 1, method = 'GET', bodyless = false, beforeMeasure, afterMeasure }) {
  if (warmup > 0) await once(url, connections, warmup, method, bodyless)
  if (beforeMeasure) beforeMeasure()
  const result = await once(url, connections, duration, method, bodyless)
  if (afterMeasure) afterMeasure()
  return result
}

module.exports = { runLoad, loadTool, parseWrk }
