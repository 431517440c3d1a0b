'use strict'

// The header store of a fresh response, kept in the form V8 reads fastest.
//
// On Node 20 to 24 the first setHeader() stores the headers in
// `{ __proto__: null }`, which V8 keeps in dictionary mode: every end()
// that renders them (lib/render.js, renderFresh()) then pays for a
// hash-table walk and a sort to list the keys in insertion order, and for a
// hash lookup per value, on every response of the express shape
// (benchmark/RESULTS.md, benchmark/instructions.js shapes=express3). An object whose prototype was
// set to null after it was created has the same prototype, the same keys in
// the same order and the same behaviour, in fast mode.
//
// So setHeader() on a response with no headers yet hands Node's own
// setHeader() such an object to fill, in place of the one it would create,
// where nothing can tell the two apart: a string name and a string or number
// value (validation then runs no user code), Node's setHeader() and
// _isLenientHeaderValidation() unpatched. If Node throws, the response gets
// back the null it had. Any other call is Node's alone.
//
// V8 keeps an object in fast mode while the properties added to it by keyed
// stores (setHeader()'s `headers[key] = ...`) fit in its in-object slots or
// number at most max(12, in-object slots) beyond them; one more turns it
// into a dictionary, which costs more than starting with one. The size of
// the last response end() rendered picks the store of the next:
// - up to FAST_MAX headers, an object literal's (4 in-object slots): on 20
//   to 24 only, as Node 26's own OutgoingHeaders store is fast-mode already;
// - up to WIDE_MAX, a WideStore: 32 in-object slots, so 64 headers stay in
//   fast mode, on every line, with the store's own prototype (null on 20
//   to 24, OutgoingHeaders' empty prototype on 26, read off the first store
//   Node made);
// - more, Node's own store.
// Refs: benchmark/instructions.js shapes express3 and headers20; the
// figures are in benchmark/RESULTS.md ("wide header stores").
//
// Where Node's own store is fast-mode already (26), the wrapper would only
// pass small stores through at a cost per call (express3 on 26.12.1): it
// goes on ServerResponse.prototype only once a WideStore is
// wanted, the first time a response with more than FAST_MAX headers is
// rendered, and stays there until uninstall().

const http = require('node:http')
const util = require('node:util')
const internals = require('./internals.js')
const { INSPECT } = require('./protocol/answer.js')
const patches = require('./patches.js')

const { OutgoingMessage, ServerResponse } = http
// Node's own (lib/internals.js), null where a wrapper was there first: a
// wrapper then gets Node's store.
const nodeSetHeader = internals === null ? null : internals.setHeader
// Called by setHeader() on 24.19+ and 26.4+ between the checks and the
// store: a replaced one is user code that could see the store early.
const nodeLenient = internals === null ? undefined : internals.isLenient
const kOutHeaders = internals === null ? null : internals.kOutHeaders
const { getPrototypeOf, setPrototypeOf, defineProperty } = Object
const { ownKeys } = Reflect

// An object literal's 4 in-object slots and 12 more.
const FAST_MAX = 16
// A store's 32 in-object slots and 32 more.
const WIDE_MAX = 64

const applies = internals !== null && typeof nodeSetHeader === 'function'

// Whether `store`, holding the probe's one header, prints as Node's own
// store did in the probe (lib/protocol/probe.js, responseShape()):
// console.log(res) prints the store, with the name V8 gives its
// constructor. `store` is a throwaway.
function printsAsNode (store) {
  store['x-probe'] = ['x-probe', '1']
  return util.inspect(store, INSPECT) === internals.storeShown
}

// Node 20 to 24 store headers in a null-prototype object literal, which an
// object literal whose prototype was set to null prints alike.
const nullProto = applies && internals.nullProtoHeaders === true &&
  printsAsNode(setPrototypeOf({}, null))

// A constructor V8 gives 32 in-object slots: it counts the properties the
// body assigns (24) and adds 8. The body never runs with `init`. It is
// made anonymous (no name, none inferred) because V8 names an object's
// constructor in util.inspect() after it: Node 20 to 24 (V8 11 and 12)
// then print `[Object: null prototype]`, as for Node's own stores, and
// Node 26 (V8 13) prints the function's `name`, which settleWide() sets to
// that of Node's store class where the store must print so.
function anonymousConstructor () {
  return function (init) {
    if (init) {
      this.a0 = 0; this.a1 = 0; this.a2 = 0; this.a3 = 0; this.a4 = 0; this.a5 = 0
      this.a6 = 0; this.a7 = 0; this.a8 = 0; this.a9 = 0; this.a10 = 0; this.a11 = 0
      this.a12 = 0; this.a13 = 0; this.a14 = 0; this.a15 = 0; this.a16 = 0; this.a17 = 0
      this.a18 = 0; this.a19 = 0; this.a20 = 0; this.a21 = 0; this.a22 = 0; this.a23 = 0
    }
  }
}
const WideStore = anonymousConstructor()
// The class name of Node 26's stores.
const STORE_CLASS = 'OutgoingHeaders'

// Whether a WideStore with prototype `proto` prints as Node's stores, as it
// is or once named STORE_CLASS; then V8 shrinks the constructor's objects,
// after its first seven, to the most slots any of them used (in-object
// slack tracking): eight stores filled with 32 keys here settle the size
// before a response gets one.
function settleWide (proto) {
  if (!printsAsNode(setPrototypeOf(new WideStore(false), proto))) {
    if (WideStore.name !== '') return false
    defineProperty(WideStore, 'name', { value: STORE_CLASS, configurable: true })
    if (!printsAsNode(setPrototypeOf(new WideStore(false), proto))) return false
  }
  for (let i = 0; i < 8; i++) {
    const settle = setPrototypeOf(new WideStore(false), proto)
    for (let k = 0; k < 32; k++) settle['k' + k] = k
  }
  return true
}

// The prototype of Node's stores: null on 20 to 24; elsewhere read off the
// first store of more than FAST_MAX headers end() renders (`protoRead`),
// and kept when it has the shape lib/protocol/probe.js checked (no own keys
// but `constructor`, and a null prototype) and a WideStore with it prints
// as Node's store. Undefined: no WideStore.
let storeProto = nullProto && settleWide(null) ? null : undefined
let protoRead = nullProto

const SMALL = 0
const WIDE = 1
const NODE = 2

// The store the next response gets, and the last WideStore handed out.
let kind = nullProto ? SMALL : NODE
let lastWide = null

/**
 * Records how many headers the response being rendered stored, and its
 * store (on Node 26 the first one tells the prototype of Node's stores).
 * @param {number} n
 * @param {object} store
 */
function observe (n, store) {
  if (!protoRead && n > FAST_MAX) learnProto(store)
  if (n <= FAST_MAX) {
    kind = nullProto ? SMALL : NODE
  } else {
    kind = n <= WIDE_MAX && storeProto !== undefined ? WIDE : NODE
    if (kind === WIDE && wanted && !patches.isPut('setHeader')) define()
  }
  lastWide = null
}

function learnProto (store) {
  protoRead = true
  const proto = getPrototypeOf(store)
  if (proto !== null && getPrototypeOf(proto) === null &&
      ownKeys(proto).every((key) => key === 'constructor')) {
    if (settleWide(proto)) storeProto = proto
  }
}

/**
 * Whether `store` is the last WideStore setHeader() made: fast-mode unless
 * a header was removed from it since.
 * @param {object} store
 * @returns {boolean}
 */
function isWide (store) {
  return store === lastWide
}

/**
 * Forgets the last WideStore, whose response's headers Node renders
 * (lib/render.js): kept, it would outlive its response.
 */
function forgetWide () {
  lastWide = null
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
  if (kind === NODE || set !== nodeSetHeader || this[kOutHeaders] !== null ||
      typeof name !== 'string' || (typeof value !== 'string' && typeof value !== 'number') ||
      this._isLenientHeaderValidation !== nodeLenient) {
    return set.apply(this, arguments)
  }
  this[kOutHeaders] = kind === SMALL
    ? setPrototypeOf({}, null)
    : (lastWide = setPrototypeOf(new WideStore(false), storeProto))
  try {
    return set.call(this, name, value)
  } catch (err) {
    this[kOutHeaders] = null
    lastWide = null
    throw err
  }
}

// Between install() and uninstall().
let wanted = false

// Puts setHeader() on ServerResponse.prototype when it applies and nothing
// replaced Node's own there: at once where the stores it hands out start
// small (20 to 24), else when observe() first wants a WideStore.
function install () {
  if (!applies || wanted) return
  wanted = true
  if (nullProto || kind === WIDE) define()
}

function define () {
  if (ServerResponse.prototype.setHeader !== nodeSetHeader) return
  patches.put(ServerResponse.prototype, 'setHeader', setHeader)
}

// Takes it away again, unless another module replaced it since.
function uninstall () {
  wanted = false
  lastWide = null
  patches.takeBack('setHeader')
}

/**
 * Whether the wrapper is on ServerResponse.prototype (for tests).
 * @returns {boolean}
 */
function isDefined () {
  return patches.isPut('setHeader')
}

module.exports = { FAST_MAX, WIDE_MAX, install, uninstall, observe, isWide, forgetWide, isDefined, setHeader }
