'use strict'

// A byte-level HTTP client for tests: it writes request text exactly as
// given and keeps every byte the server sends, so framing mistakes (a wrong
// Content-Length, a missing terminator, bytes in the wrong encoding) show up
// instead of being smoothed over by a real HTTP client.

const net = require('node:net')
const tls = require('node:tls')

const { parseResponse } = require('./llhttp.js')

class RawClient {
  /**
   * @param {object} options
   * @param {number} [options.port] The server's port on 127.0.0.1.
   * @param {string} [options.path] The server's UNIX domain socket instead.
   * @param {boolean} [options.tls] Connect with TLS, accepting any certificate.
   * @param {string|string[]} [options.method='GET'] Request method the
   *   parser assumes, or one per response (see parseResponse()).
   */
  constructor ({ port, path, tls: useTls = false, method = 'GET' }) {
    this.method = method
    this.chunks = []
    this.closed = false
    this.errors = []
    this.waiters = []
    const where = path === undefined ? { port, host: '127.0.0.1' } : { path }
    this.socket = useTls
      ? tls.connect({ ...where, rejectUnauthorized: false, servername: 'localhost' })
      : net.connect(where)
    this.ready = new Promise((resolve, reject) => {
      this.socket.once(useTls ? 'secureConnect' : 'connect', resolve)
      this.socket.once('error', reject)
    })
    this.socket.on('data', chunk => {
      this.chunks.push(chunk)
      this.wake()
    })
    this.socket.on('error', err => this.errors.push(err.code ?? err.message))
    this.socket.on('close', () => {
      this.closed = true
      this.wake()
    })
  }

  /** @returns {Buffer} Every byte received so far. */
  bytes () {
    return Buffer.concat(this.chunks)
  }

  /**
   * Parses what has arrived so far.
   *
   * @param {boolean} [eof] Treat the input as ended; defaults to whether the
   *   connection has closed.
   * @returns {{messages: object[], error: object|null}} See parseResponse().
   */
  parse (eof = this.closed) {
    return parseResponse(this.bytes(), { method: this.method, eof })
  }

  /**
   * Writes request text as latin1 bytes once connected.
   *
   * @param {string} text Raw request bytes.
   * @returns {Promise<void>} Settles when the data was handed to the kernel.
   */
  async send (text) {
    await this.ready
    await new Promise((resolve, reject) => {
      this.socket.write(text, 'latin1', err => (err ? reject(err) : resolve()))
    })
  }

  wake () {
    const waiters = this.waiters
    this.waiters = []
    for (const check of waiters) check()
  }

  /**
   * Resolves once `n` final (non-1xx) responses have arrived complete, or
   * the connection closed, or `timeout` ms passed.
   *
   * @param {number} n How many final responses to wait for in total.
   * @param {number} [timeout=2000]
   * @returns {Promise<{messages: object[], error: object|null, closed: boolean, timedOut: boolean}>}
   */
  waitFor (n, timeout = 2000) {
    return new Promise(resolve => {
      let timer = null
      const check = () => {
        const parsed = this.parse()
        const finals = parsed.messages.filter(m => m.statusCode >= 200).length
        if (finals >= n || this.closed || parsed.error !== null) {
          clearTimeout(timer)
          resolve({ ...parsed, closed: this.closed, timedOut: false })
        } else {
          this.waiters.push(check)
        }
      }
      timer = setTimeout(() => {
        this.waiters = this.waiters.filter(w => w !== check)
        resolve({ ...this.parse(), closed: this.closed, timedOut: true })
      }, timeout)
      check()
    })
  }

  /**
   * Resolves once the server closed the connection, or after `timeout` ms.
   *
   * @param {number} [timeout=2000]
   * @returns {Promise<boolean>} Whether the connection closed.
   */
  waitClose (timeout = 2000) {
    return new Promise(resolve => {
      let timer = null
      const check = () => {
        if (this.closed) {
          clearTimeout(timer)
          resolve(true)
        } else {
          this.waiters.push(check)
        }
      }
      timer = setTimeout(() => {
        this.waiters = this.waiters.filter(w => w !== check)
        resolve(false)
      }, timeout)
      check()
    })
  }

  destroy () {
    this.socket.destroy()
  }
}

module.exports = { RawClient }
