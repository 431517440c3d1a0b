'use strict'

// A minimal HTTP/1.1 response parser for the benchmark clients
// (benchmark/instructions.js, benchmark/lib/rawload.js,
// benchmark/check-bytes.js). It frames a response as RFC 9112 section 6.3
// says: no body after a HEAD request or for 1xx, 204 and 304, whatever
// Content-Length says; else chunked transfer coding or Content-Length.

/**
 * Parses one complete HTTP/1.1 response at the start of `buf`.
 *
 * @param {Buffer} buf received bytes
 * @param {boolean} [head] the request was HEAD: the response has no body
 * @returns {{status: number, head: string, body: number, size: number}|null}
 *   null while the response is incomplete; `body` is the body length
 *   (0 for a bodyless response), `size` the response's length in bytes
 */
function parseResponse (buf, head = false) {
  const end = buf.indexOf('\r\n\r\n')
  if (end === -1) return null
  const text = buf.toString('latin1', 0, end)
  const lines = text.split('\r\n')
  const m = /^HTTP\/1\.1 (\d{3}) /.exec(lines[0])
  if (m === null) throw new Error(`bad status line: ${JSON.stringify(lines[0])}`)
  const status = Number(m[1])
  let pos = end + 4
  if (head || status < 200 || status === 204 || status === 304) {
    return { status, head: text, body: 0, size: pos }
  }
  let length = -1
  let chunked = false
  for (let i = 1; i < lines.length; i++) {
    const colon = lines[i].indexOf(':')
    const name = lines[i].slice(0, colon).trim().toLowerCase()
    const value = lines[i].slice(colon + 1).trim()
    if (name === 'content-length') length = Number(value)
    else if (name === 'transfer-encoding' && /chunked/i.test(value)) chunked = true
  }
  if (chunked) {
    let body = 0
    for (;;) {
      const eol = buf.indexOf('\r\n', pos)
      if (eol === -1) return null
      const size = parseInt(buf.toString('latin1', pos, eol).split(';')[0], 16)
      if (!Number.isInteger(size)) throw new Error('bad chunk size line')
      pos = eol + 2
      if (size === 0) {
        // Trailer fields, if any, up to the empty line.
        for (;;) {
          const next = buf.indexOf('\r\n', pos)
          if (next === -1) return null
          const empty = next === pos
          pos = next + 2
          if (empty) break
        }
        return { status, head: text, body, size: pos }
      }
      if (buf.length < pos + size + 2) return null
      body += size
      pos += size + 2
    }
  }
  if (!Number.isInteger(length) || length < 0) throw new Error('response has neither Content-Length nor chunked framing')
  if (buf.length < pos + length) return null
  return { status, head: text, body: length, size: pos + length }
}

module.exports = { parseResponse }
