'use strict'

// The text of an HTTP/1.1 response head: the status line, one line per
// header field, the blank line that ends it. Node's writeHead() and
// _storeHeader() write this text (lib/_http_server.js,
// lib/_http_outgoing.js), and src/http_message.c hm_write() writes the same
// bytes. The one place in lib/ that spells it: lib/render.js (the header
// block of a response) and lib/build.js (buildHttpMessage() without the
// addon) build their heads from these. What goes into a head (which
// fields, their order, the rules for names and values) stays with each
// renderer; the rules themselves are lib/header-rules.js.
//
// Called only where a block is rendered, never for a block taken from a
// cache; each is small enough for V8 to inline into its caller. Loads
// nothing.

/**
 * The status line: `HTTP/1.1 <code> <message>` and its line end.
 * @param {number} code
 * @param {string} message the reason phrase
 * @returns {string}
 */
function statusLine (code, message) {
  return 'HTTP/1.1 ' + code + ' ' + message + '\r\n'
}

/**
 * One header field line: `<name>: <value>` and its line end (a number
 * value as String(value)).
 * @param {string} name
 * @param {string|number} value
 * @returns {string}
 */
function fieldLine (name, value) {
  return name + ': ' + value + '\r\n'
}

/**
 * A field line up to its value, for a value filled in later (the
 * Content-Length hole of a cached block: fieldStart(name) + value +
 * LINE_END is fieldLine(name, value)).
 * @param {string} name
 * @returns {string}
 */
function fieldStart (name) {
  return name + ': '
}

// The end of a line; after the last field line, the blank line that ends
// the head.
const LINE_END = '\r\n'

module.exports = { statusLine, fieldLine, fieldStart, LINE_END }
