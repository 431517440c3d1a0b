'use strict'

// Errors thrown by buildHttpMessage(). They are plain TypeError, RangeError
// and Error instances carrying the same `code` and message text as the
// errors Node's own http module throws for the same input (lib/internal/
// errors.js), so code that inspects `err.code` or `err.message` sees no
// difference. The stack's first line reads `TypeError [ERR_X]: message` and
// `toString()` returns the same, as for Node's errors; `name` stays the class
// name.

const { format, inspect } = require('node:util')

/**
 * Creates an error with Node's shape.
 *
 * @param {ErrorConstructor} Base TypeError, RangeError or Error.
 * @param {string} code The `code` property, for example 'ERR_INVALID_CHAR'.
 * @param {string} message The message text.
 * @param {Function} [stackStart] Frames above this function are left out of
 *   the stack, as Node hides its internal frames.
 * @returns {Error}
 */
function codedError (Base, code, message, stackStart = codedError) {
  const err = new Base(message)
  // V8 renders the stack's first line from `name` when the stack is first
  // read; Node sets `name` to `TypeError [ERR_X]` for that moment only.
  err.name = `${Base.name} [${code}]`
  Error.captureStackTrace(err, stackStart)
  err.stack // eslint-disable-line no-unused-expressions
  delete err.name
  Object.defineProperty(err, 'toString', {
    value: function toString () { return `${this.name} [${code}]: ${this.message}` },
    enumerable: false,
    writable: true,
    configurable: true
  })
  err.code = code
  return err
}

// Describes a received value the way Node's ERR_INVALID_ARG_TYPE does
// (determineSpecificType in lib/internal/errors.js).
function describeReceived (value) {
  if (value == null) return ` Received ${value}`
  if (typeof value === 'function') {
    return ` Received function ${value.name || '<anonymous>'}`
  }
  if (typeof value === 'object') {
    if (value.constructor && value.constructor.name) {
      return ` Received an instance of ${value.constructor.name}`
    }
    return ` Received ${inspect(value, { depth: -1 })}`
  }
  let inspected = inspect(value, { colors: false })
  if (inspected.length > 28) inspected = `${inspected.slice(0, 25)}...`
  return ` Received type ${typeof value} (${inspected})`
}

/**
 * ERR_INVALID_ARG_TYPE, TypeError.
 *
 * @param {string} name The argument (or `options.x` property) at fault.
 * @param {string} expected What was expected, for example 'of type string'.
 * @param {*} actual The value received.
 * @param {Function} [stackStart]
 * @returns {TypeError}
 */
function invalidArgType (name, expected, actual, stackStart) {
  const kind = name.includes('.') ? 'property' : 'argument'
  return codedError(TypeError, 'ERR_INVALID_ARG_TYPE',
    `The "${name}" ${kind} must be ${expected}.${describeReceived(actual)}`, stackStart)
}

/**
 * ERR_INVALID_ARG_VALUE, TypeError, worded as Node words it
 * (`The argument 'headers' is invalid. Received [ 'a' ]`).
 *
 * @param {string} name
 * @param {*} value
 * @param {string} [reason]
 * @param {Function} [stackStart]
 * @returns {TypeError}
 */
function invalidArgValue (name, value, reason = 'is invalid', stackStart) {
  let inspected = inspect(value)
  if (inspected.length > 128) inspected = `${inspected.slice(0, 128)}...`
  const kind = name.includes('.') ? 'property' : 'argument'
  return codedError(TypeError, 'ERR_INVALID_ARG_VALUE',
    `The ${kind} '${name}' ${reason}. Received ${inspected}`, stackStart)
}

/**
 * ERR_HTTP_INVALID_STATUS_CODE, RangeError: `Invalid status code: <original>`,
 * with the value formatted by util.format('%s'), as Node's message does.
 *
 * @param {*} original The status code as passed in.
 * @param {Function} [stackStart]
 * @returns {RangeError}
 */
function invalidStatusCode (original, stackStart) {
  return codedError(RangeError, 'ERR_HTTP_INVALID_STATUS_CODE',
    format('Invalid status code: %s', original), stackStart)
}

/**
 * ERR_INVALID_HTTP_TOKEN, TypeError: `Header name must be a valid HTTP token ["<name>"]`.
 *
 * @param {*} name
 * @param {Function} [stackStart]
 * @returns {TypeError}
 */
function invalidHttpToken (name, stackStart) {
  return codedError(TypeError, 'ERR_INVALID_HTTP_TOKEN',
    format('%s must be a valid HTTP token ["%s"]', 'Header name', name), stackStart)
}

/**
 * ERR_INVALID_CHAR, TypeError: `Invalid character in header content ["<name>"]`,
 * or `Invalid character in statusMessage` when `field` is undefined.
 *
 * @param {string} what 'header content' or 'statusMessage'.
 * @param {string} [field] The header name.
 * @param {Function} [stackStart]
 * @returns {TypeError}
 */
function invalidChar (what, field, stackStart) {
  let msg = `Invalid character in ${what}`
  if (field !== undefined) msg += ` ["${field}"]`
  return codedError(TypeError, 'ERR_INVALID_CHAR', msg, stackStart)
}

/**
 * ERR_HTTP_INVALID_HEADER_VALUE, TypeError: `Invalid value "undefined" for header "<name>"`.
 *
 * @param {*} value
 * @param {string} name
 * @param {Function} [stackStart]
 * @returns {TypeError}
 */
function invalidHeaderValue (value, name, stackStart) {
  return codedError(TypeError, 'ERR_HTTP_INVALID_HEADER_VALUE',
    format('Invalid value "%s" for header "%s"', value, name), stackStart)
}

/**
 * ERR_HM_REJECTED, Error: the native serializer refused a response that the
 * JS validation accepted. This means the two disagree, which is a bug.
 *
 * @param {string} name The core's error name, for example 'EINVAL_VALUE'.
 * @param {number} code The numeric code the addon returned.
 * @param {Function} [stackStart]
 * @returns {Error}
 */
function rejected (name, code, stackStart) {
  const err = codedError(Error, 'ERR_HM_REJECTED',
    `The native serializer rejected a response the JS validation accepted (${name}, code ${code})`,
    stackStart)
  err.errno = code
  return err
}

module.exports = {
  invalidArgType,
  invalidArgValue,
  invalidStatusCode,
  invalidHttpToken,
  invalidChar,
  invalidHeaderValue,
  rejected
}
