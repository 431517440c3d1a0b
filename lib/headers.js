'use strict'

// The header store of a fresh response, kept in the form V8 reads fastest.
//
// On Node 20 to 24 the first setHeader() stores the headers in
// `{ __proto__: null }`, which V8 keeps in dictionary mode: every end()
// that renders them (lib/render.js, renderFresh()) then pays for a
// hash-table walk and a sort to list the keys in insertion order, and for a
// hash lookup per value, about 2k instructions per response on the express
// shape (benchmark/instructions.js, express3). An object whose prototype was
// set to null after it was created has the same prototype, the same keys in
// the same order and the same behaviour, in fast mode.
//
// So setHeader() on a response with no headers yet hands Node's own
// setHeader() such an object to fill, in place of the one it would create,
// where nothing can tell the two apart: a string name and a string or number
// value (validation then runs no user code), Node's setHeader() and
// _isLenientHeaderValidation() unpatched. If Node throws, the response gets
// back the null it had. Any other call is Node's alone. Node 26 stores
// headers in an OutgoingHeaders instance, kept in fast mode already: there,
// and wherever the probe saw another store, setHeader() is left as it is.
//
// A fast-mode object that gets more than FAST_MAX properties by keyed
// stores is turned into a dictionary by V8 itself, which costs more than
// starting with one. The size of the last response end() rendered picks the
// store of the next: an application whose responses carry many headers
// gets Node's own kind of store.
// Refs: benchmark/instructions.js (express3: 42.7k -> 40.7k; headers=20
// unchanged)

const http = require('node:http')
const internals = require('./internals.js')

const { OutgoingMessage, ServerResponse } = http
const nodeSetHeader = OutgoingMessage.prototype.setHeader
// Called by setHeader() on 24.19+ and 26.4+ between the checks and the
// store: a replaced one is user code that could see the store early.
const nodeLenient = OutgoingMessage.prototype._isLenientHeaderValidation
const kOutHeaders = internals === null ? null : internals.kOutHeaders
const { setPrototypeOf } = Object

// V8 keeps an object literal's 4 in-object properties and 12 more in fast
// mode when they are added by keyed stores.
const FAST_MAX = 16

// Whether this Node line stores headers in a null-prototype object.
const applies = internals !== null && internals.nullProtoHeaders === true &&
  typeof nodeSetHeader === 'function'

// The store the next response gets: fast unless the last rendered
// response had more headers than a fast store keeps.
let fast = true

/**
 * Records how many headers the response being rendered stored.
 * @param {number} n
 */
function observe (n) {
  fast = n <= FAST_MAX
}

/**
 * ServerResponse#setHeader: Node's own, given a fast-mode store to fill on
 * a response without headers.
 * @returns {http.ServerResponse} this, as Node's returns it
 */
function setHeader (name, value) {
  // Looked up per call: a wrapper installed on OutgoingMessage later still
  // runs, and then Node creates the store itself.
  const set = OutgoingMessage.prototype.setHeader
  if (!fast || set !== nodeSetHeader || this[kOutHeaders] !== null ||
      typeof name !== 'string' || (typeof value !== 'string' && typeof value !== 'number') ||
      this._isLenientHeaderValidation !== nodeLenient) {
    return set.call(this, name, value)
  }
  this[kOutHeaders] = setPrototypeOf({}, null)
  try {
    return set.call(this, name, value)
  } catch (err) {
    this[kOutHeaders] = null
    throw err
  }
}

let previous = null

// Puts setHeader() on ServerResponse.prototype when it applies and nothing
// replaced Node's own there.
function install () {
  if (!applies || previous !== null || ServerResponse.prototype.setHeader !== nodeSetHeader) return
  previous = Object.getOwnPropertyDescriptor(ServerResponse.prototype, 'setHeader') || false
  Object.defineProperty(ServerResponse.prototype, 'setHeader', {
    value: setHeader, writable: true, enumerable: false, configurable: true
  })
}

// Takes it away again, unless another module replaced it since.
function uninstall () {
  if (previous === null) return
  const proto = ServerResponse.prototype
  const own = Object.getOwnPropertyDescriptor(proto, 'setHeader')
  if (own !== undefined && own.value === setHeader) {
    if (previous === false) {
      delete proto.setHeader
    } else {
      Object.defineProperty(proto, 'setHeader', previous)
    }
  }
  previous = null
}

module.exports = { FAST_MAX, install, uninstall, observe, setHeader }
