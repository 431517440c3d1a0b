'use strict'

// The HTTP benchmark configuration shared by benchmark/http/simple.js,
// benchmark/compare.js, benchmark/profile.js and the server child. The keys
// and their meaning follow Node core's benchmark/http/simple.js.

const path = require('node:path')

// Keys that shape the response; they are passed on to the server child.
const SERVER_DEFAULTS = Object.freeze({
  type: 'bytes', // 'bytes': string body of 'C's; 'buffer': Buffer body
  len: 4, // body length in bytes
  chunks: 1, // > 1: the body goes out in that many write()/end() calls
  chunkedEnc: 0, // 1: no Content-Length, so Node frames the body as chunked
  headers: 0, // > 0: that many setHeader() calls and end(body), no writeHead
  // 'simple': the handler above; 'express3': what express's res.send() does,
  // three setHeader() calls (Content-Type, Content-Length as a string, ETag)
  // and end(Buffer); 'stored': setHeader('Content-Type'), then writeHead()
  // with no headers of its own (so no Content-Length: chunked framing), as
  // plain http servers write it, then end(body); 'hooked': express3 on a
  // response whose writeHead on-headers replaced, as morgan does on every
  // response; 'streamed': writeHead() with Content-Length, the body in
  // `chunks` write() calls, then end() without a chunk (h3, hapi, send)
  shape: 'simple',
  // Response status: 204 and 304 responses carry no body (Node drops the
  // chunk end() is given); the handler's calls stay the same
  status: 200,
  // 1: the handler sets res.strictContentLength first, which the shim
  // leaves to Node (its byte accounting is Node's): every response falls
  // back, and the run measures what the shim's wrappers cost then; 2: also
  // a Connection header in writeHead()'s object, which only Node renders,
  // so the shim's renderer hands the whole header over to Node too; 3:
  // that header without strictContentLength: Node renders the header, the
  // shim sends it
  strict: 0
})

const SHAPES = ['simple', 'express3', 'stored', 'hooked', 'streamed']
const STATUSES = [200, 204, 304]
const METHODS = ['GET', 'HEAD']

// Keys that shape the load.
const LOAD_DEFAULTS = Object.freeze({
  c: 50, // concurrent keep-alive connections
  duration: 5, // measured seconds per run (plus 1 s warm-up)
  warmup: 1, // warm-up seconds before each measured run
  method: 'GET' // request method; HEAD responses carry no body
})

const MODES = ['legacy', 'native', 'limit']
const SERVER_SCRIPT = path.join(__dirname, '..', 'http', 'server.js')

function checkConfig (config) {
  if (config.type !== 'bytes' && config.type !== 'buffer') {
    throw usage(`type must be bytes or buffer, got "${config.type}"`)
  }
  for (const key of ['len', 'chunks', 'c', 'duration']) {
    if (!Number.isInteger(config[key]) || config[key] < 1) {
      throw usage(`${key} must be a positive integer, got ${config[key]}`)
    }
  }
  if (config.chunkedEnc !== 0 && config.chunkedEnc !== 1) {
    throw usage(`chunkedEnc must be 0 or 1, got ${config.chunkedEnc}`)
  }
  if (!Number.isInteger(config.headers) || config.headers < 0) {
    throw usage(`headers must be a non-negative integer, got ${config.headers}`)
  }
  if (!SHAPES.includes(config.shape)) {
    throw usage(`shape must be ${SHAPES.join(' or ')}, got "${config.shape}"`)
  }
  if ((config.shape === 'express3' || config.shape === 'hooked') &&
      (config.chunks !== 1 || config.chunkedEnc !== 0 || config.headers !== 0)) {
    throw usage(`shape=${config.shape} takes only len (its body is always one Buffer): chunks=1 chunkedEnc=0 headers=0`)
  }
  if (config.shape === 'stored' && (config.chunks !== 1 || config.chunkedEnc !== 1 || config.headers !== 0)) {
    throw usage('shape=stored is chunked framing without Content-Length: chunks=1 chunkedEnc=1 headers=0')
  }
  if (![0, 1, 2, 3].includes(config.strict)) {
    throw usage(`strict must be 0, 1, 2 or 3, got ${config.strict}`)
  }
  if (!STATUSES.includes(config.status)) {
    throw usage(`status must be ${STATUSES.join(', ')}, got ${config.status}`)
  }
  if (config.status !== 200 && config.headers > 0 && config.chunkedEnc === 1) {
    // A 204 or 304 with a Transfer-Encoding set by setHeader(): Node sends
    // Connection: close and closes the socket, so it is no keep-alive run.
    throw usage(`status=${config.status} with headers > 0 and chunkedEnc=1: Node closes the connection after each response`)
  }
  if (!METHODS.includes(config.method)) {
    throw usage(`method must be ${METHODS.join(' or ')}, got "${config.method}"`)
  }
  if (!Number.isInteger(config.warmup) || config.warmup < 0) {
    throw usage(`warmup must be a non-negative integer, got ${config.warmup}`)
  }
  return config
}

/**
 * Parses a comma-separated list of modes.
 *
 * @param {string} list for example 'legacy,native'
 * @returns {string[]}
 */
function parseModes (list) {
  const modes = list.split(',').map((m) => m.trim()).filter(Boolean)
  for (const mode of modes) {
    if (!MODES.includes(mode)) throw usage(`unknown mode "${mode}" (use ${MODES.join(', ')})`)
  }
  if (modes.length === 0) throw usage('no mode given')
  return modes
}

function usage (message) {
  const err = new Error(message)
  err.code = 'ERR_BENCH_USAGE'
  return err
}

/**
 * Node arguments that start benchmark/http/server.js for `config` in `mode`.
 *
 * @param {object} config
 * @param {string} mode legacy, native or limit
 * @param {string[]} [nodeFlags] flags for node itself (e.g. --cpu-prof)
 * @returns {string[]}
 */
function serverArgs (config, mode, nodeFlags = []) {
  const args = Object.keys(SERVER_DEFAULTS).map((key) => `${key}=${config[key]}`)
  return [...nodeFlags, SERVER_SCRIPT, `mode=${mode}`, ...args]
}

/**
 * Short label of a configuration, e.g. "bytes/4/1 chunkedEnc=0".
 *
 * @param {object} config
 * @returns {string}
 */
function describe (config) {
  let label = `${config.type}/${config.len}/${config.chunks} chunkedEnc=${config.chunkedEnc}`
  if (config.headers > 0) label += ` headers=${config.headers}`
  if (config.shape !== 'simple') label += ` shape=${config.shape}`
  if (config.status !== 200) label += ` status=${config.status}`
  if (config.strict !== 0) label += ` strict=${config.strict}`
  if (config.method !== 'GET') label += ` method=${config.method}`
  return label
}

/**
 * Whether a response of `status` to a `method` request has no body (RFC 9110
 * 6.4.1): HEAD, 1xx, 204 and 304. Content-Length, if any, does not frame it.
 *
 * @param {string} method
 * @param {number} status
 * @returns {boolean}
 */
function bodyless (method, status) {
  return method === 'HEAD' || (status >= 100 && status < 200) || status === 204 || status === 304
}

module.exports = {
  SERVER_DEFAULTS,
  LOAD_DEFAULTS,
  MODES,
  bodyless,
  checkConfig,
  parseModes,
  serverArgs,
  describe
}
