'use strict'

// The response's 'close' listener on its socket, which lib/socket-close.js adds and removes in place
// of Node's on() and removeListener(): on both paths the socket's listeners, their order and the
// events around them are the same, in the common state and in each state that goes to Node's methods.

const t = require('tap')
const http = require('node:http')

const { checkParity } = require('./helpers/dual-path.js')
const { shimActive } = require('./helpers/expect-path.js')
const { requests: { CLOSE, KEEP } } = require('./fixtures/responses.js')
const shim = require('../lib/index.js')
const socketClose = require('../lib/socket-close.js')

t.jobs = 1

const UPGRADE = 'GET / HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: test\r\n\r\n'

function names (socket) {
  return socket.listeners('close').map(fn => fn.name || '(anonymous)')
}

// The listeners while the response holds the socket, and once it let go of it.
function answer (req, res, ctx, body = 'ok') {
  const socket = req.socket
  ctx.record('assigned', names(socket))
  res.on('close', () => ctx.record('detached', names(socket)))
  res.end(body)
}

// checkParity() with how many listeners went in place during the run (its patched half).
async function inPlace (t, fx) {
  const before = { ...socketClose.counts }
  const result = await checkParity(t, fx)
  return {
    ...result,
    added: socketClose.counts.added - before.added,
    removed: socketClose.counts.removed - before.removed
  }
}

const active = shimActive && socketClose.applies

t.test('installed over Node\'s methods, and taken off again', async t => {
  const proto = http.ServerResponse.prototype
  const nodes = { assignSocket: proto.assignSocket, detachSocket: proto.detachSocket }
  const uninstall = shim.install()
  if (active) t.equal(proto.assignSocket, socketClose.assignSocket, 'assignSocket() is the package\'s')
  uninstall()
  t.strictSame({ assignSocket: proto.assignSocket, detachSocket: proto.detachSocket }, nodes, 'Node\'s again')
})

t.test('keep-alive responses one after another', async t => {
  const requests = [KEEP, KEEP, KEEP, KEEP, CLOSE]
  const { native, added, removed } = await inPlace(t, {
    name: 'five in a row',
    request: requests,
    sequential: true,
    path: { native: 5 },
    handler: answer
  })
  const [assigned, detached] = native.state[1].records.map(r => r[1])
  t.same([assigned.length, assigned[1], detached.length], [2, 'onServerResponseClose', 1],
    'Node\'s listener while the response holds the socket')
  // The process's first response teaches the package Node's listener.
  if (active) t.ok(added >= 4 && removed >= 4, `in place (${added} added, ${removed} removed)`)
})

t.test('pipelined requests', async t => {
  const { added } = await inPlace(t, {
    name: 'pipelined',
    request: [KEEP, KEEP, CLOSE],
    path: { native: 3 },
    // Once the response has the socket (after the previous one finished), as it is then sent natively.
    handler (req, res, ctx) {
      if (res.socket) return answer(req, res, ctx)
      res.on('socket', () => answer(req, res, ctx))
    }
  })
  if (active) t.ok(added >= 3, `in place (${added})`)
})

t.test('a close listener the application adds during a response', async t => {
  const { native } = await inPlace(t, {
    name: 'listener added',
    request: [KEEP, KEEP, CLOSE],
    sequential: true,
    path: { native: 3 },
    handler (req, res, ctx) {
      req.socket.on('close', function appClose () {})
      answer(req, res, ctx)
    }
  })
  t.strictSame(native.state[1].records[0][1].slice(1), ['appClose', 'onServerResponseClose', 'appClose'],
    'in the order Node adds them')
})

t.test('other close listeners on the socket: the request\'s abort signal (Node 26), one per request', async t => {
  const { native, added, removed } = await inPlace(t, {
    name: 'abort signals',
    request: [KEEP, KEEP, KEEP, CLOSE],
    sequential: true,
    path: { native: 4 },
    handler (req, res, ctx) {
      ctx.record('signal', typeof req.signal)
      answer(req, res, ctx)
    }
  })
  t.ok(native.state[2].records.find(r => r[0] === 'assigned')[1].length >= 2, 'listeners kept')
  if (active) t.ok(added >= 3 && removed >= 3, `in place (${added} added, ${removed} removed)`)
})

t.test('newListener and removeListener listeners on the socket', async t => {
  const { added, removed } = await inPlace(t, {
    name: 'listener events',
    request: [KEEP, CLOSE],
    sequential: true,
    path: { native: 2 },
    setup (server, { events }) {
      server.on('connection', socket => {
        socket.on('newListener', (name, fn) => events.push(`newListener:${String(name)}:${fn.name}`))
        socket.on('removeListener', (name, fn) => events.push(`removeListener:${String(name)}:${fn.name}`))
      })
    },
    handler: answer
  })
  t.same([added, removed], [0, 0], 'Node\'s methods add and remove it')
})

t.test('an on() the application put on the socket runs', async t => {
  const { native, added } = await inPlace(t, {
    name: 'own on()',
    request: [KEEP, CLOSE],
    sequential: true,
    path: { native: 2 },
    setup (server, { events }) {
      server.on('connection', socket => {
        const on = socket.on
        socket.on = function appOn (name, fn) {
          events.push('appOn:' + String(name))
          return on.call(this, name, fn)
        }
      })
    },
    handler: answer
  })
  // (Node 26 adds the request's abort listener through it too, where the harness reads req.signal.)
  t.ok(native.events.filter(e => e === 'appOn:close').length >= 2, 'for each response')
  t.equal(added, 0, 'Node\'s assignSocket() calls it')
})

t.test('a socket whose listener limit is 1', async t => {
  const { added } = await inPlace(t, {
    name: 'max listeners',
    request: [KEEP, CLOSE],
    sequential: true,
    path: { native: 2 },
    setup (server) {
      server.on('connection', socket => socket.setMaxListeners(1))
    },
    handler (req, res, ctx) {
      ctx.record('warned', req.socket._events.close.warned === true)
      answer(req, res, ctx)
    }
  })
  t.equal(added, 0, 'Node\'s on() warns')
})

t.test('the process\'s listener limit reached by the response\'s listener', async t => {
  const events = require('node:events')
  const max = events.defaultMaxListeners
  events.defaultMaxListeners = 3
  t.teardown(() => { events.defaultMaxListeners = max })
  const warnings = []
  const onWarning = w => warnings.push(w.name)
  process.on('warning', onWarning)
  t.teardown(() => process.removeListener('warning', onWarning))
  const { native, added } = await inPlace(t, {
    name: 'default max listeners',
    request: [KEEP, KEEP, KEEP, CLOSE],
    sequential: true,
    path: { native: 4 },
    handler (req, res, ctx) {
      req.socket.on('close', function appClose () {})
      ctx.record('warned', req.socket._events.close.warned === true)
      answer(req, res, ctx)
    }
  })
  t.strictSame(native.state.map(s => s.records[0][1]), [false, true, true, true], 'Node warns once past 3')
  if (active) t.ok(added >= 1, `in place below the limit (${added})`)
  await new Promise(resolve => setImmediate(resolve))
  t.equal(warnings.filter(w => w === 'MaxListenersExceededWarning').length, 2, 'once per path')
})

t.test('the socket closes during a response', async t => {
  await t.test('the first on the socket', async t => {
    const { native } = await inPlace(t, {
      name: 'reset',
      request: KEEP,
      path: {},
      client (client) {
        client.ready.then(() => setTimeout(() => client.socket.resetAndDestroy(), 20))
      },
      handler (req, res, ctx) {
        req.on('close', () => ctx.event('req-close'))
        req.on('aborted', () => ctx.event('req-aborted'))
        return new Promise(resolve => res.on('close', resolve))
      }
    })
    t.ok(native.events.includes('close'), 'the response closes')
  })
  await t.test('the second, after a response the package sent', async t => {
    const { native } = await inPlace(t, {
      name: 'reset second',
      request: [KEEP, KEEP],
      sequential: true,
      responses: 1,
      path: { native: 1 },
      client (client) {
        client.socket.once('data', () => setTimeout(() => client.socket.resetAndDestroy(), 30))
      },
      handler (req, res, ctx) {
        if (ctx.index === 0) return answer(req, res, ctx)
        req.on('close', () => ctx.event('req-close'))
        ctx.record('assigned', names(req.socket))
        return new Promise(resolve => res.on('close', resolve))
      }
    })
    t.ok(native.events.includes('1:close'), 'the second response closes')
  })
})

t.test('an upgrade after a response', async t => {
  const { native } = await inPlace(t, {
    name: 'upgrade',
    request: [KEEP, UPGRADE],
    sequential: true,
    responses: 1,
    path: { native: 1 },
    setup (server, { events }) {
      server.on('upgrade', (req, socket) => {
        events.push('upgrade:' + names(socket).join(','))
        socket.end()
      })
    },
    handler: answer
  })
  t.ok(native.events.some(e => e.startsWith('upgrade:')), 'the upgrade ran')
})
