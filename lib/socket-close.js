'use strict'

// ServerResponse#assignSocket() and #detachSocket() as Node's, with the response's 'close' listener
// added to and removed from socket._events in place, in the states Node's on() and removeListener()
// leave, without their calls (docs/architecture.md, "The response's 'close' listener"). Any other
// state, or any method on the way that is not Node's, and Node's own methods run.

const stream = require('node:stream')
const internals = require('./internals.js')
const { fingerprint } = require('./node-methods.js')

const nodes = internals === null ? null : internals.closeMethods
const socketProto = require('node:net').Socket.prototype
const EventEmitter = require('node:events')

// Node's onServerResponseClose(), and the symbol its listener arrays carry (26: events.emitting,
// 0 when not emitting; null on lines without), both learned from Node's first assignSocket().
let listener = null
let kEmitting = null
// The on() per socket (a closure each) -> whether it is the one Node's server puts there; and the
// last one that was (no socket in it): a WeakMap lookup costs more than the rest of the check.
const serverOns = new WeakMap()
let lastServerOn = null
const counts = { added: 0, removed: 0 } // in place (test/socket-close.test.js)

function isServerOn (on) {
  let known = serverOns.get(on)
  if (known === undefined) serverOns.set(on, known = fingerprint(on) === nodes.serverSocketOn)
  if (known) lastServerOn = on
  return known
}

// Whether socket.on('close', fn) would run Node's EventEmitter#on() and nothing else.
function addsPlainly (socket, events) {
  const on = socket.on
  return events.newListener === undefined && socket._maxListeners === undefined &&
    (on === lastServerOn || on === nodes.socketOn || isServerOn(on)) &&
    (on === nodes.socketOn || socket.parser) && socketProto.on === nodes.socketOn &&
    stream.prototype.on === nodes.streamOn
}

// Whether `list` is a listener array no emit() is going through (Node 26 copies it then).
function idle (list) {
  return Array.isArray(list) && (kEmitting === null || list[kEmitting] === 0)
}

// Whether `count` 'close' listeners stay within Node's limit (past it, on() warns).
function underLimit (count) {
  const max = EventEmitter.defaultMaxListeners
  return !(max > 0 && count > max)
}

function assignSocket (socket) {
  const events = socket._events
  const close = events?.close
  if (listener === null || socket._httpMessage || close === undefined || !addsPlainly(socket, events)) {
    return listener === null ? learn(this, socket) : nodes.assignSocket.call(this, socket)
  }
  if (typeof close === 'function' && underLimit(2)) {
    const list = [close, listener]
    if (kEmitting !== null) list[kEmitting] = 0
    events.close = list
  } else if (idle(close) && underLimit(close.length + 1)) {
    close.push(listener)
  } else {
    return nodes.assignSocket.call(this, socket)
  }
  socket._httpMessage = this
  counts.added++
  this.socket = socket
  this.emit('socket', socket)
  this._flush()
}

// Node's removeListener(): the last entry that is the listener (or wraps it) goes.
function detachSocket (socket) {
  const events = socket._events
  const list = events?.close
  if (socket._httpMessage !== this || !idle(list) || events.removeListener !== undefined ||
      socket.removeListener !== nodes.socketRemoveListener ||
      stream.prototype.removeListener !== nodes.streamRemoveListener) {
    return nodes.detachSocket.call(this, socket)
  }
  let i = list.length - 1
  while (i >= 0 && list[i] !== listener && list[i].listener !== listener) i--
  if (i < 0) return nodes.detachSocket.call(this, socket)
  for (; i + 1 < list.length; i++) list[i] = list[i + 1]
  list.pop()
  if (list.length === 1) events.close = list[0]
  counts.removed++
  socket._httpMessage = null
  this.socket = null
}

// Node's assignSocket(), learning what it added where the socket was in the plain state.
function learn (res, socket) {
  const events = socket._events
  const before = events?.close
  const plain = typeof before === 'function' && addsPlainly(socket, events)
  const result = nodes.assignSocket.call(res, socket)
  const list = plain ? events.close : undefined
  if (socket._events === events && Array.isArray(list) && list.length === 2 &&
      list[0] === before && list[1].name === 'onServerResponseClose') {
    const [symbol, more] = Object.getOwnPropertySymbols(list)
    if (more === undefined && (symbol === undefined || list[symbol] === 0)) {
      kEmitting = symbol ?? null
      listener = list[1]
    }
  }
  return result
}

module.exports = { applies: nodes !== null, assignSocket, detachSocket, counts }
