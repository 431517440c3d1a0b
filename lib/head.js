'use strict'

// The head text of Node's writeHead() and _storeHeader(), and of src/http_message.c hm_write().

function statusLine (code, message) {
  return 'HTTP/1.1 ' + code + ' ' + message + '\r\n'
}

function fieldLine (name, value) {
  return name + ': ' + value + '\r\n'
}

// A field line up to its value: the Content-Length hole of a cached block.
function fieldStart (name) {
  return name + ': '
}

const LINE_END = '\r\n'

module.exports = { statusLine, fieldLine, fieldStart, LINE_END }
