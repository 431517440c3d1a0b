'use strict'

// The shim's writeHead() reads a headers object at most once: where it hands
// the response to Node's own writeHead() after reading some values, Node
// must see the same reads, errors and state as if it had run alone. Each
// case runs through the dual-path harness (bytes, state, events, path).

const t = require('tap')

const { checkParity } = require('./helpers/dual-path.js')
const { writeHeadThenEnd } = require('./helpers/write-head.js')
const { renderedPath } = require('./helpers/expect-path.js')

const KEEP = 'GET / HTTP/1.1\r\nHost: x\r\n\r\n'

function counting (ctx, extra) {
  return mutating(ctx, () => {}, extra)
}

// An object whose X-Read getter runs `change(obj)` once read.
function mutating (ctx, change, extra) {
  const obj = {}
  Object.defineProperty(obj, 'X-Read', {
    enumerable: true,
    configurable: true,
    get () {
      ctx.event('getter X-Read')
      change(obj)
      return 'a'
    }
  })
  return Object.assign(obj, extra)
}

const cases = [
  {
    name: 'a getter before a Keep-Alive header is read once',
    // Node's writeHead() renders the block.
    path: renderedPath('native'),
    headers: ctx => counting(ctx, { 'Content-Length': '2', 'Keep-Alive': 'timeout=5' })
  },
  {
    name: 'a getter before an object value is read once',
    // Node's writeHead() renders the block.
    path: renderedPath('native'),
    headers: ctx => counting(ctx, { 'Content-Length': '2', 'X-Obj': { toString: () => 'o' } })
  },
  {
    name: 'a getter before an invalid value is read once, then Node throws',
    headers: ctx => counting(ctx, { 'Content-Length': '2', 'X-Bad': 'a\x01b' }),
    throws: true
  },
  {
    name: 'a getter without Content-Length is read once (chunked framing)',
    headers: ctx => counting(ctx, { 'X-Other': 'b' })
  },
  {
    name: 'a getter on the fast path is read once',
    headers: ctx => counting(ctx, { 'Content-Length': '2' })
  },
  {
    // The shim reads the names with Object.keys() (own keys only), so its
    // one for-in loop is the only walk of the chain, as on Node's path.
    name: 'a Proxy on the prototype chain sees what Node shows it',
    headers: ctx => {
      const proto = new Proxy({ 'X-Inherited': 'i' }, {
        ownKeys (target) {
          ctx.event('trap ownKeys')
          return Reflect.ownKeys(target)
        },
        getOwnPropertyDescriptor (target, key) {
          ctx.event('trap getOwnPropertyDescriptor ' + String(key))
          return Reflect.getOwnPropertyDescriptor(target, key)
        },
        has (target, key) {
          ctx.event('trap has ' + String(key))
          return Reflect.has(target, key)
        },
        get (target, key, receiver) {
          ctx.event('trap get ' + String(key))
          return Reflect.get(target, key, receiver)
        },
        getPrototypeOf (target) {
          ctx.event('trap getPrototypeOf')
          return Reflect.getPrototypeOf(target)
        }
      })
      return Object.assign(Object.create(proto), { 'Content-Length': '2', 'X-A': 'a' })
    }
  },
  {
    name: 'a Proxy on the prototype chain, then a value Node renders',
    // Node's writeHead() renders the block.
    path: renderedPath('native'),
    headers: ctx => {
      const proto = new Proxy({}, {
        ownKeys (target) {
          ctx.event('trap ownKeys')
          return Reflect.ownKeys(target)
        }
      })
      return Object.assign(Object.create(proto), { 'Content-Length': '2', 'Keep-Alive': 'timeout=5' })
    }
  },
  {
    // One pass in Node's order: what a getter changes in the object is what
    // Node's own loop would meet from there on.
    name: 'a getter that deletes a later header',
    headers: ctx => mutating(ctx, obj => { delete obj['X-Later'] }, { 'X-Later': 'l', 'Content-Length': '2' })
  },
  {
    name: 'a getter that adds a header',
    headers: ctx => mutating(ctx, obj => { obj['X-Added'] = 'n' }, { 'Content-Length': '2' })
  },
  {
    name: 'a getter that deletes a later header, then a Keep-Alive header',
    // Node's writeHead() renders the block.
    path: renderedPath('native'),
    headers: ctx => mutating(ctx, obj => { delete obj['X-Later'] },
      { 'X-Later': 'l', 'Content-Length': '2', 'Keep-Alive': 'timeout=5' })
  },
  {
    name: 'a getter that adds a header, then a Keep-Alive header',
    // Node's writeHead() renders the block.
    path: renderedPath('native'),
    headers: ctx => mutating(ctx, obj => { obj['X-Added'] = 'n' },
      { 'Content-Length': '2', 'Keep-Alive': 'timeout=5', 'X-Last': 'z' })
  },
  {
    name: 'a Keep-Alive header, then a getter Node reads that deletes a later header',
    // Node's writeHead() renders the block.
    path: renderedPath('native'),
    headers: ctx => {
      const obj = { 'Content-Length': '2', 'Keep-Alive': 'timeout=5' }
      Object.defineProperty(obj, 'X-Read', {
        enumerable: true,
        configurable: true,
        get () {
          ctx.event('getter X-Read')
          delete obj['X-Gone']
          return 'a'
        }
      })
      return Object.assign(obj, { 'X-Gone': 'g', 'X-Last': 'z' })
    }
  },
  {
    name: 'a getter that deletes an earlier header, then an object value',
    // Node's writeHead() renders the block.
    path: renderedPath('native'),
    headers: ctx => {
      const obj = { 'X-First': 'f' }
      Object.defineProperty(obj, 'X-Read', {
        enumerable: true,
        configurable: true,
        get () {
          ctx.event('getter X-Read')
          delete obj['X-First']
          return 'a'
        }
      })
      return Object.assign(obj, { 'Content-Length': '2', 'X-Obj': { toString: () => 'o' }, 'X-Last': 'z' })
    }
  },
  {
    name: 'no Content-Length and a Keep-Alive header: chunked framing by Node',
    headers: ctx => counting(ctx, { 'Keep-Alive': 'timeout=5' }),
    // Node's writeHead() renders the block; C frames the body after it.
    path: 'native'
  },
  {
    name: 'an enumerable inherited getter is never read',
    headers: ctx => {
      class Headers {
        constructor () {
          this['Content-Length'] = '2'
          this['X-Own'] = 'o'
        }
      }
      Object.defineProperty(Headers.prototype, 'X-Inherited', {
        enumerable: true,
        get () {
          ctx.event('getter X-Inherited')
          return 'i'
        }
      })
      const headers = new Headers()
      Object.defineProperty(headers, 'X-Read', {
        enumerable: true,
        get () {
          ctx.event('getter X-Read')
          return 'a'
        }
      })
      return headers
    }
  },
  {
    name: 'a throwing getter leaves the state Node leaves',
    headers: ctx => {
      const obj = { 'Content-Length': '2' }
      Object.defineProperty(obj, 'X-Boom', {
        enumerable: true,
        get () {
          ctx.event('getter X-Boom')
          throw new Error('boom')
        }
      })
      obj['X-After'] = 'c'
      return obj
    },
    throws: true
  }
]

for (const c of cases) {
  t.test(c.name, t => checkParity(t, {
    name: c.name,
    request: KEEP,
    // After a throw the handler removes Content-Length, so Node's framing
    // is chunked and the final end() is Node's too.
    path: c.throws ? 'chunked' : c.path,
    handler (req, res, ctx) {
      writeHeadThenEnd(res, ctx, 404, c.headers(ctx), 'ok')
    }
  }))
}
