'use strict'

// The header store of a fresh response, in V8's fast mode, handed to Node's setHeader() where
// nothing can tell it from Node's (docs/architecture.md, "The header store"). On 26 the wrapper
// goes on only once a WideStore is wanted. Refs: benchmark/RESULTS.md ("wide header stores")

const http = require('node:http')
const util = require('node:util')
const internals = require('./internals.js')
const { INSPECT } = require('./protocol/answer.js')

const { OutgoingMessage } = http
// Null where a wrapper was there first: a wrapper gets Node's store.
const nodeSetHeader = internals === null ? null : internals.setHeader
// setHeader() calls it (24.19+, 26.4+) before it stores: a replaced one could see the store early.
const nodeLenient = internals === null ? undefined : internals.isLenient
const kOutHeaders = internals === null ? null : internals.kOutHeaders
const { getPrototypeOf, setPrototypeOf, defineProperty } = Object
const { ownKeys } = Reflect

// An object literal's 4 in-object slots and 12 more.
const FAST_MAX = 16
// A store's 32 in-object slots and 32 more.
const WIDE_MAX = 64

const applies = internals !== null && typeof nodeSetHeader === 'function'

// console.log(res) shows the store.
function printsAsNode (store) {
  store['x-probe'] = ['x-probe', '1']
  return util.inspect(store, INSPECT) === internals.storeShown
}

const nullProto = applies && internals.nullProtoHeaders === true && printsAsNode(setPrototypeOf({}, null))

// A constructor V8 gives 32 in-object slots: the 24 its body assigns (never
// run) and 8. Anonymous: util.inspect() names an object after it, so 20 to
// 24 print `[Object: null prototype]` and 26 the `name` settleWide() may set.
const WideStore = (() => function (init) {
  if (init) {
    this.a0 = 0; this.a1 = 0; this.a2 = 0; this.a3 = 0; this.a4 = 0; this.a5 = 0
    this.a6 = 0; this.a7 = 0; this.a8 = 0; this.a9 = 0; this.a10 = 0; this.a11 = 0
    this.a12 = 0; this.a13 = 0; this.a14 = 0; this.a15 = 0; this.a16 = 0; this.a17 = 0
    this.a18 = 0; this.a19 = 0; this.a20 = 0; this.a21 = 0; this.a22 = 0; this.a23 = 0
  }
})()
const STORE_CLASS = 'OutgoingHeaders'

// Whether a WideStore of prototype `proto` prints as Node's, as is or named STORE_CLASS. Eight
// stores of 32 keys settle V8's slack tracking (it shrinks a constructor's objects after seven).
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

// Node's stores' prototype: null on 20 to 24, else learnt by learnProto(); undefined: no WideStore.
let storeProto = nullProto && settleWide(null) ? null : undefined
let protoRead = nullProto

const SMALL = 0
const WIDE = 1
const NODE = 2

let kind = nullProto ? SMALL : NODE
let lastWide = null
let onWide = null

// Records the size of the store being rendered, which picks the next.
function observe (n, store) {
  if (!protoRead && n > FAST_MAX) learnProto(store)
  if (n <= FAST_MAX) {
    kind = nullProto ? SMALL : NODE
  } else {
    kind = n <= WIDE_MAX && storeProto !== undefined ? WIDE : NODE
    if (kind === WIDE && onWide !== null) onWide()
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

// The last WideStore setHeader() made is fast-mode unless a header was removed since.
function isWide (store) {
  return store === lastWide
}

// For a store Node renders: kept, it would outlive its response.
function forgetWide () {
  lastWide = null
}

function setHeader (name, value) {
  // Per call: a wrapper put on OutgoingMessage later runs, with Node's store.
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

function setOnWide (fn) {
  onWide = fn
}

// Whether install() puts setHeader() on at once: stores start small (20 to 24), or wide.
function storeWanted () {
  return nullProto || kind === WIDE
}

module.exports = {
  FAST_MAX, WIDE_MAX, applies, setHeader, setOnWide, storeWanted, observe, isWide, forgetWide
}
