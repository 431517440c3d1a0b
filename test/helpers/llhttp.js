'use strict'

// Parses HTTP/1.1 responses with the llhttp build that ships inside the
// running Node, driven the way lib/_http_client.js drives it, so a test agrees
// with what a real Node client would accept or reject.

const { HTTPParser } = require('node:_http_common')

const {
  kOnHeaders,
  kOnHeadersComplete,
  kOnBody,
  kOnMessageComplete
} = HTTPParser

/**
 * Parses every response in `buf`.
 *
 * @param {Buffer|Uint8Array} buf The raw bytes a server sent.
 * @param {object} [options]
 * @param {string|string[]} [options.method='GET'] The request method; for
 *   'HEAD' the parser is told that no body follows, as
 *   parserOnIncomingClient does. An array gives one method per message, in
 *   order (1xx messages count), its last entry for any further message.
 * @param {boolean} [options.eof=true] Whether the connection ended after
 *   `buf`; then finish() runs, which completes a body delimited by close.
 * @returns {{messages: object[], error: null|{code: string, reason: string, bytesParsed: number}}}
 *   One entry per complete message: statusCode, statusMessage, versionMajor,
 *   versionMinor, headers (flat raw names and values, decoded as latin1 as
 *   Node does), body (a Buffer owned by the caller), shouldKeepAlive, upgrade.
 */
function parseResponse (buf, { method = 'GET', eof = true } = {}) {
  const messages = []
  let error = null
  let current = null
  // llhttp hands headers over in batches through kOnHeaders when a message
  // has more fields than fit in one batch; kOnHeadersComplete then receives
  // undefined and the batches are used, as parserOnHeadersComplete does.
  let pending = []

  const parser = new HTTPParser()
  parser.initialize(HTTPParser.RESPONSE, {})

  parser[kOnHeaders] = function onHeaders (headers) {
    pending.push(...headers)
  }

  parser[kOnHeadersComplete] = function onHeadersComplete (versionMajor, versionMinor, headers,
    _method, _url, statusCode, statusMessage, upgrade, shouldKeepAlive) {
    if (headers === undefined) {
      headers = pending
    } else if (pending.length > 0) {
      headers = pending.concat(headers)
    }
    pending = []
    current = {
      statusCode,
      statusMessage,
      versionMajor,
      versionMinor,
      headers,
      chunks: [],
      shouldKeepAlive,
      upgrade
    }
    // Returning 1 tells llhttp to skip the body, which is how the client
    // handles a response to HEAD; a 1xx response has no body either and
    // llhttp knows that on its own.
    const m = Array.isArray(method) ? method[Math.min(messages.length, method.length - 1)] : method
    return m === 'HEAD' ? 1 : 0
  }

  parser[kOnBody] = function onBody (chunk) {
    // The chunk may be a view into `buf` or into the parser's own memory, so
    // it is copied before the parser moves on.
    current.chunks.push(Buffer.from(chunk))
  }

  parser[kOnMessageComplete] = function onMessageComplete () {
    const { chunks, ...rest } = current
    rest.body = Buffer.concat(chunks)
    messages.push(rest)
    current = null
  }

  const input = Buffer.isBuffer(buf) ? buf : Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength)
  let ret = parser.execute(input)
  if (ret instanceof Error) {
    error = { code: ret.code, reason: ret.reason, bytesParsed: ret.bytesParsed }
  } else if (eof) {
    ret = parser.finish()
    if (ret instanceof Error) {
      error = { code: ret.code, reason: ret.reason, bytesParsed: ret.bytesParsed }
    }
  }
  parser.close()
  if (error === null && current !== null && eof) {
    // finish() accepted the input but a message was left half-read, which
    // only happens if llhttp itself reported no error; report it anyway so a
    // truncated response can never pass as complete.
    error = { code: 'HPE_INCOMPLETE', reason: 'Message incomplete at EOF', bytesParsed: input.length }
  }
  return { messages, error }
}

module.exports = { parseResponse }
