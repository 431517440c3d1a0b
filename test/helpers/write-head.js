'use strict'

/**
 * The handler body of the writeHead() tests: `res.writeHead(status,
 * headers)`, then `res.end(body)`; when writeHead() throws (a header Node
 * rejects, a getter that throws), the error is recorded and the response
 * ends as a 500 without Content-Length. Node's writeHead() set statusCode
 * and statusMessage before it threw: the 500 after it shows which message
 * stuck, and without Content-Length Node frames the body as chunked, so
 * that end() is Node's own on both paths.
 * @param {import('node:http').ServerResponse} res
 * @param {{ error: (err: Error) => void }} ctx the dual-path recorder
 * @param {number} status
 * @param {object} headers
 * @param {string} body
 */
function writeHeadThenEnd (res, ctx, status, headers, body) {
  try {
    res.writeHead(status, headers)
  } catch (err) {
    ctx.error(err)
    res.statusCode = 500
    res.removeHeader('Content-Length')
    res.end('after')
    return
  }
  res.end(body)
}

module.exports = { writeHeadThenEnd }
