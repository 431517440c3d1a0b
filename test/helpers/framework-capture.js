'use strict'

// Runs requests against a framework app on a real loopback server, once on
// Node's own path and once with the shim installed, and compares the raw
// bytes each run sent back (Date values masked). The shim's counters are
// read for the patched run only, and added to per-file totals that show how
// often the frameworks' responses took the native path, and why not.

const net = require('node:net')

const oneshot = require('../../lib/index.js')
const { UNSUPPORTED, expectedPath, shimActive } = require('./expect-path.js')
const { parseResponse } = require('./llhttp.js')
const { pathCounts } = require('./dual-path.js')

const DATE_LINE = /\r\nDate: [^\r]*\r\n/gi
const DATE_MASK = '\r\nDate: <masked>\r\n'

// A response that never completes must fail its test, not stall the file.
const TIMEOUT_MS = 3000
// After the last expected response on a connection left open, a short wait
// catches bytes a broken path would send too many.
const LINGER_MS = 20

function maskDate (text) {
  return text.replace(DATE_LINE, DATE_MASK)
}

/**
 * Builds request text.
 * @param {string} method
 * @param {string} path
 * @param {object} [headers] extra header lines, name → value
 * @param {boolean} [close] send Connection: close
 * @returns {{ method: string, text: string }}
 */
function request (method, path, headers = {}, close = true) {
  let text = `${method} ${path} HTTP/1.1\r\nHost: localhost\r\n`
  for (const [name, value] of Object.entries(headers)) text += `${name}: ${value}\r\n`
  if (close) text += 'Connection: close\r\n'
  return { method, text: text + '\r\n' }
}

/**
 * Sends requests one after another on one connection, each once the previous
 * response is complete, and keeps every byte the server sent.
 * @param {number} port
 * @param {{ method: string, text: string }[]} requests
 * @returns {Promise<{ text: string, messages: object[], closed: boolean, error: object|null }>}
 */
function exchange (port, requests) {
  return new Promise(resolve => {
    const socket = net.connect({ port, host: '127.0.0.1' })
    const chunks = []
    const messages = []
    let offset = 0
    let index = 0
    let closed = false
    let error = null
    let done = false
    let timer = null

    function finish (timedOut) {
      if (done) return
      done = true
      clearTimeout(timer)
      socket.destroy()
      const bytes = Buffer.concat(chunks)
      if (timedOut && error === null) error = { code: 'TIMEOUT', index }
      resolve({ text: maskDate(bytes.toString('latin1')), messages, closed, error })
    }

    // Each response is parsed on its own, with its own request's method, from
    // the bytes received since the previous one completed: a response that
    // sent too many bytes makes the next one fail to parse.
    function check () {
      if (done || index >= requests.length) return
      const bytes = Buffer.concat(chunks)
      const eof = closed
      const parsed = parseResponse(bytes.subarray(offset), { method: requests[index].method, eof })
      const finals = parsed.messages.filter(m => m.statusCode >= 200)
      if (finals.length > 0) {
        messages.push(finals[0])
        offset = bytes.length
        index++
        if (index < requests.length) {
          socket.write(requests[index].text, 'latin1')
        } else if (closed) {
          finish(false)
        } else if (!saysClose(finals[0])) {
          setTimeout(() => finish(false), LINGER_MS)
        }
        // A response that announces `Connection: close` is followed by the
        // server's close, which finishes the exchange (or the timeout does):
        // waiting for it keeps the comparison independent of machine load.
      } else if (parsed.error !== null || closed) {
        error = parsed.error ?? { code: 'CLOSED', index }
        finish(false)
      }
    }

    timer = setTimeout(() => finish(true), TIMEOUT_MS)
    socket.on('connect', () => socket.write(requests[0].text, 'latin1'))
    socket.on('data', chunk => {
      chunks.push(chunk)
      check()
    })
    socket.on('error', err => {
      if (!done) error = { code: err.code ?? err.message, index }
    })
    socket.on('close', () => {
      closed = true
      if (index >= requests.length) finish(false)
      else check()
    })
  })
}

function saysClose (message) {
  const h = message.headers
  for (let i = 0; i < h.length; i += 2) {
    if (h[i].toLowerCase() === 'connection' && /\bclose\b/i.test(h[i + 1])) return true
  }
  return false
}

/**
 * Totals of the patched runs' counters for one test file.
 */
// The share of real traffic the native path should take (issue: "more of
// real traffic on the native path"): of the responses on a real socket
// whose methods no other module replaced, at least this many.
const NATIVE_SHARE_MIN = 0.8

class Totals {
  constructor () {
    this.counts = {}
    // Responses on a fake socket (fastify.inject()), counted apart: they
    // can never take the native path, whatever reason they report first.
    this.fake = {}
  }

  /**
   * @param {object} stats the shim's stats() for some responses
   * @param {{ realSocket?: boolean }} [options] realSocket false for
   *   responses written to a fake socket
   */
  add (stats, { realSocket = true } = {}) {
    const into = realSocket ? this.counts : this.fake
    for (const [key, n] of Object.entries(pathCounts(stats))) {
      into[key] = (into[key] ?? 0) + n
    }
  }

  /**
   * The native share of the responses that could take it: on a real socket
   * (reason no-socket excluded too) and with no method replaced by another
   * module (reason patched).
   * @returns {{ native: number, eligible: number }}
   */
  share () {
    let eligible = 0
    for (const [key, n] of Object.entries(this.counts)) {
      if (key !== 'patched' && key !== 'no-socket') eligible += n
    }
    return { native: this.counts.native ?? 0, eligible }
  }

  /**
   * Asserts that the native path took at least NATIVE_SHARE_MIN of the
   * responses that could take it where the shim is active, and that none
   * reached the shim on other Node lines (install() leaves Node untouched
   * there).
   * @param {object} t a tap test
   * @param {string} label the framework's name
   */
  check (t, label) {
    if (shimActive) {
      const { native, eligible } = this.share()
      t.ok(eligible > 0 && native / eligible >= NATIVE_SHARE_MIN,
        `the native path took ${native} of ${eligible} ${label} responses on a real socket ` +
        `with Node's methods (at least ${NATIVE_SHARE_MIN * 100}%)`)
    } else {
      t.strictSame({ ...this.counts, ...this.fake }, {}, `no ${label} response reached the shim`)
    }
  }

  /** @returns {string} one line per path, with its share of end() calls */
  format (label) {
    const lines = []
    const rows = (counts, title) => {
      const total = Object.values(counts).reduce((a, b) => a + b, 0)
      if (total === 0) return
      lines.push(`${label}: ${total} end() calls ${title}`)
      for (const [key, n] of Object.entries(counts).sort((a, b) => b[1] - a[1])) {
        lines.push(`  ${key}: ${n} (${(100 * n / total).toFixed(1)}%)`)
      }
    }
    rows(this.counts, 'on a real socket with the shim installed')
    rows(this.fake, 'on a fake socket (never native)')
    const { native, eligible } = this.share()
    if (eligible > 0) {
      lines.push(`  native share without patched and no-socket: ${native} of ${eligible} ` +
        `(${(100 * native / eligible).toFixed(1)}%)`)
    }
    return lines.join('\n')
  }
}

/**
 * Runs the requests unpatched, then patched, and asserts identical bytes,
 * complete responses, and the patched run's path counts.
 * @param {object} t a tap test
 * @param {number} port
 * @param {object|object[]} requests one request() or several for one socket
 * @param {object} expected exact path counts with the shim active, e.g.
 *   { native: 1 }; expectedPath() maps them to the running Node line
 * @param {Totals} totals
 * @returns {Promise<{ legacy: object, native: object, counts: object }>}
 */
async function compare (t, port, requests, expected, totals) {
  if (!Array.isArray(requests)) requests = [requests]
  t.notOk(oneshot.isInstalled(), 'the shim starts uninstalled')
  oneshot.resetStats()
  const legacy = await exchange(port, requests)
  const counted = oneshot.stats()
  // Before any install() 'not-installed'; on a line the shim does not
  // reproduce, after one, why it stayed out.
  const whyNot = shimActive ? ['not-installed'] : ['not-installed', UNSUPPORTED]
  t.ok(whyNot.includes(counted.inactiveReason), `not installed: ${counted.inactiveReason}`)
  t.strictSame({ ...counted, inactiveReason: null }, {
    native: 0,
    fallback: 0,
    direct: 0,
    partial: 0,
    reasons: {},
    writes: { native: 0, fallback: 0 },
    inactiveReason: null,
    wrapped: []
  }, 'an uninstalled shim counts nothing')

  const uninstall = oneshot.install()
  oneshot.resetStats()
  let native
  let stats
  try {
    native = await exchange(port, requests)
    stats = oneshot.stats()
  } finally {
    uninstall()
  }
  totals.add(stats)

  t.equal(legacy.error, null, 'the unpatched responses are complete')
  t.equal(legacy.messages.length, requests.length, 'one response per request')
  t.equal(native.text, legacy.text, 'patched bytes equal unpatched bytes')
  t.equal(native.closed, legacy.closed, 'the connection closes the same way')
  const counts = pathCounts(stats)
  t.strictSame(counts, expectedPath(expected), 'paths taken: ' + JSON.stringify(counts))
  return { legacy, native, counts }
}

/**
 * Listens on 127.0.0.1 with an ephemeral port.
 * @param {import('node:http').Server} server
 * @returns {Promise<number>} the port
 */
function listen (server) {
  return new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => resolve(server.address().port))
  })
}

function close (server) {
  return new Promise(resolve => {
    server.closeAllConnections()
    server.close(() => resolve())
  })
}

module.exports = { Totals, close, compare, exchange, listen, maskDate, pathCounts, request }
