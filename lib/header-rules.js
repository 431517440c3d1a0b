'use strict'

// Node's character rules for header fields, as lib/_http_common.js states
// them (checkIsHttpToken, checkInvalidHeaderChar), in one place for every
// part of lib/ that checks a name or a value in JS. The C core holds the
// same rules as byte tables (src/http_message.c) and validates every byte
// it writes; JS needs them only to decide a fallback before calling C, and
// to explain a rejection with the error Node would throw.
// test/header-rules.test.js checks both against the running Node for every char.
//
// Global flags are never set: test() keeps no lastIndex between calls.

// RFC 9110 section 5.6.2 token: a header name.
const TOKEN = /^[\^_`a-zA-Z\-0-9!#$%&'*+.|~]+$/

// A char Node refuses in a header value or a status message: anything but
// HTAB, visible ASCII, SP and obs-text (RFC 9110 section 5.5).
const INVALID_HEADER_CHAR = /[^\t\x20-\x7e\x80-\xff]/

module.exports = { TOKEN, INVALID_HEADER_CHAR }
