'use strict'

// The Date line of a block the renderer caches (lib/render.js,
// currentDate()): Node renders the string its utcDate() cache holds, which
// a timer resets about once a second; the renderer keeps a copy only while
// the clock stays in the second that string names. A clock set back leaves
// that second too, and then the renderer must ask Node again rather than
// repeat its copy until the clock catches up.

const http = require('node:http')
const { setTimeout: sleep } = require('node:timers/promises')

const t = require('tap')

const shim = require('../lib/index.js')
const { blockOf } = require('../lib/render.js')

const req = { method: 'GET', httpVersionMajor: 1, httpVersionMinor: 1, headers: {} }

// Waits until the clock is well inside a second, so that a string taken
// now and the time read next name the same one.
async function midSecond () {
  for (;;) {
    const ms = Date.now() % 1000
    if (ms >= 100 && ms < 600) return
    await sleep(ms < 100 ? 100 - ms : 1100 - ms)
  }
}

function render () {
  const res = new http.ServerResponse(req)
  res.writeHead(200, { 'Content-Type': 'text/plain', 'Content-Length': '2' })
  return { res, date: /\r\nDate: ([^\r]*)\r\n/.exec(res._header)[1] }
}

t.test('a clock set back: the Date line Node renders, not an earlier copy', async t => {
  const uninstall = shim.install()
  const realNow = Date.now
  try {
    if (!shim.isActive()) {
      t.pass('inactive shim: Node renders every Date line')
      return
    }
    await midSecond()
    const first = render()
    t.not(blockOf(first.res), null, 'the renderer rendered the block')
    t.equal(first.date, new Date().toUTCString(), 'the current second')
    t.equal(render().date, first.date, 'the same second again')

    // An hour back, as an NTP step might set it. Node's cache is reset by
    // its timer; the next string it renders is the time then.
    Date.now = () => realNow() - 3600 * 1000
    await sleep(1100)
    await midSecond()
    const later = render()
    t.not(blockOf(later.res), null, 'the renderer rendered the block')
    t.equal(later.date, new Date().toUTCString(), 'the string Node renders now')
    t.not(later.date, first.date, 'not the copy taken before')
  } finally {
    Date.now = realNow
    uninstall()
  }
})
