'use strict'

// The errors buildHttpMessage() throws, with the class, `code` and message Node's http throws for
// the same input (Node's lib/internal/errors.js). `stackStart`: frames above it are left out.

const { format, inspect } = require('node:util')

function codedError (Base, code, message, stackStart) {
  const err = new Base(message)
  // V8 renders the stack's first line from `name` when the stack is first
  // read; Node sets `name` to `TypeError [ERR_X]` for that moment only.
  err.name = `${Base.name} [${code}]`
  Error.captureStackTrace(err, stackStart)
  err.stack // eslint-disable-line no-unused-expressions
  delete err.name
  Object.defineProperty(err, 'toString', {
    value: function toString () { return `${this.name} [${code}]: ${this.message}` },
    writable: true,
    configurable: true
  })
  err.code = code
  return err
}

// As Node's ERR_INVALID_ARG_TYPE describes the value (determineSpecificType).
function describeReceived (value) {
  if (value == null) return ` Received ${value}`
  if (typeof value === 'function') return ` Received function ${value.name || '<anonymous>'}`
  if (typeof value === 'object') {
    if (value.constructor?.name) return ` Received an instance of ${value.constructor.name}`
    return ` Received ${inspect(value, { depth: -1 })}`
  }
  let inspected = inspect(value, { colors: false })
  if (inspected.length > 28) inspected = `${inspected.slice(0, 25)}...`
  return ` Received type ${typeof value} (${inspected})`
}

// `name`: the argument, or an `options.x` property.
function invalidArgType (name, expected, actual, stackStart) {
  const kind = name.includes('.') ? 'property' : 'argument'
  return codedError(TypeError, 'ERR_INVALID_ARG_TYPE',
    `The "${name}" ${kind} must be ${expected}.${describeReceived(actual)}`, stackStart)
}

function invalidArgValue (name, value, stackStart) {
  let inspected = inspect(value)
  if (inspected.length > 128) inspected = `${inspected.slice(0, 128)}...`
  const kind = name.includes('.') ? 'property' : 'argument'
  return codedError(TypeError, 'ERR_INVALID_ARG_VALUE',
    `The ${kind} '${name}' is invalid. Received ${inspected}`, stackStart)
}

function invalidStatusCode (original, stackStart) {
  return codedError(RangeError, 'ERR_HTTP_INVALID_STATUS_CODE',
    format('Invalid status code: %s', original), stackStart)
}

function invalidHttpToken (name, stackStart) {
  return codedError(TypeError, 'ERR_INVALID_HTTP_TOKEN',
    format('%s must be a valid HTTP token ["%s"]', 'Header name', name), stackStart)
}

// `field`: the header name, undefined for the status message.
function invalidChar (what, field, stackStart) {
  let msg = `Invalid character in ${what}`
  if (field !== undefined) msg += ` ["${field}"]`
  return codedError(TypeError, 'ERR_INVALID_CHAR', msg, stackStart)
}

function invalidHeaderValue (value, name, stackStart) {
  return codedError(TypeError, 'ERR_HTTP_INVALID_HEADER_VALUE',
    format('Invalid value "%s" for header "%s"', value, name), stackStart)
}

/** ERR_HM_REJECTED: the addon refused what the JS validation accepted (a bug). */
function rejected (code, stackStart) {
  const name = require('./codes.js').errorName(code)
  const message = `The native serializer rejected a response the JS validation accepted (${name}, code ${code})`
  return Object.assign(codedError(Error, 'ERR_HM_REJECTED', message, stackStart), { errno: code })
}

module.exports = {
  invalidArgType, invalidArgValue, invalidStatusCode, invalidHttpToken, invalidChar, invalidHeaderValue, rejected
}
