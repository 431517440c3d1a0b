'use strict'

// What the running Node line itself does where lines differ, found by asking
// Node rather than by reading its version number: a test that pins a fact of
// Node's own path pins the fact this line shows, and still compares the
// patched run against the unpatched one.

const http = require('node:http')
const net = require('node:net')

const UV_EPIPE = -32

/**
 * Whether Node accepts a header value with a control character on a
 * response whose server was created with `serverOptions`. Node 20 and 22
 * always throw ERR_INVALID_CHAR; later lines relax the check for servers
 * with insecureHTTPParser or a lenient httpValidation, reading the option
 * from `res.req.socket.server`, which a standalone response can carry.
 *
 * @param {object} serverOptions For example { insecureHTTPParser: true }.
 * @returns {boolean} true when writeHead() lets '\x01' through.
 */
function lenientHeaderValues (serverOptions) {
  const req = {
    method: 'GET',
    httpVersionMajor: 1,
    httpVersionMinor: 1,
    headers: {},
    socket: { server: { ...serverOptions } }
  }
  const res = new http.ServerResponse(req)
  try {
    res.writeHead(200, { 'X-Probe': 'a\x01b' })
  } catch (err) {
    if (err.code === 'ERR_INVALID_CHAR') return false
    throw err
  }
  return true
}

// Node's own end(), whether or not the shim is installed while a probe runs.
const nodeEnd = http.OutgoingMessage.prototype.end

/**
 * Serves one request on a throwaway loopback server and resolves with what
 * `handler(req, res, done)` passed to `done` once the response closed.
 */
function askNode (handler) {
  return new Promise((resolve, reject) => {
    let client = null
    let answer
    const server = http.createServer((req, res) => {
      res.socket.on('error', () => {})
      res.on('close', () => setImmediate(() => {
        if (client !== null) client.destroy()
        server.close()
        if (answer === undefined) reject(new Error('a Node probe never answered'))
        else resolve(answer)
      }))
      handler(req, res, value => { answer = value })
    })
    server.on('clientError', (_, socket) => socket.destroy())
    server.listen(0, '127.0.0.1', () => {
      client = net.connect(server.address().port, '127.0.0.1', () => {
        client.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n')
      })
      client.on('error', () => {})
      client.resume()
    })
  })
}

function errorCode (err) {
  return err ? err.code ?? err.name : null
}

const probes = new Map()
function once (name, fn) {
  if (!probes.has(name)) probes.set(name, fn())
  return probes.get(name)
}

/**
 * How Node reports a final write that fails on the socket: Node 20 and 22
 * emit 'finish' and call the end() callback without an error; later lines
 * emit no 'finish' and hand the write error to the callback.
 *
 * @returns {Promise<{finish: boolean, callbackError: string|null}>}
 */
function writeErrorReport () {
  return once('write-error', () => askNode((req, res, done) => {
    const seen = { finish: false, callbackError: null }
    for (const name of ['writev', 'writeBuffer', 'writeUtf8String', 'writeLatin1String']) {
      res.socket._handle[name] = () => UV_EPIPE
    }
    res.on('finish', () => { seen.finish = true })
    nodeEnd.call(res, 'probe', failure => {
      seen.callbackError = errorCode(failure)
      done(seen)
    })
  }))
}

/**
 * What a second end(callback) gets right after end() on a real socket:
 * Node 20 and 22 call it at once with ERR_STREAM_ALREADY_FINISHED; later
 * lines queue it with the first end()'s callbacks and call it without an
 * error.
 *
 * @returns {Promise<string|null>} the error code, or null
 */
function endCallbackAfterEnd () {
  return once('end-after-end', () => askNode((req, res, done) => {
    nodeEnd.call(res, 'probe')
    nodeEnd.call(res, failure => done(errorCode(failure)))
  }))
}

module.exports = { endCallbackAfterEnd, lenientHeaderValues, writeErrorReport }
