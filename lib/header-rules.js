'use strict'

// Node's header-field rules (lib/_http_common.js), for JS to decide a
// fallback before calling C, which holds them as byte tables
// (src/http_message.c). test/header-rules.test.js checks both against Node.

// RFC 9110 5.6.2 token: a header name.
const TOKEN = /^[\^_`a-zA-Z\-0-9!#$%&'*+.|~]+$/

// A char Node refuses in a value or status message (RFC 9110 5.5).
const INVALID_HEADER_CHAR = /[^\t\x20-\x7e\x80-\xff]/

module.exports = { TOKEN, INVALID_HEADER_CHAR }
