'use strict'

// HTTP_ONESHOT_REPORT=1: what the package did, printed to stderr at exit, and on SIGINT/SIGTERM
// while nothing else listens (docs/architecture.md, "The exit report"). Loaded only then.

const dc = require('node:diagnostics_channel')

const SIGNALS = ['SIGINT', 'SIGTERM']
const REQUEST_START = 'http.server.request.start'
const OWN_PATH = 'Node\'s own path is required here'
const THROWS = OWN_PATH + ' (it throws)'
const LOAD_FIRST = 'load http-oneshot before it (node -r http-oneshot/register)'

// What the user can change, per FALLBACK reason and lib/index.js's probe-pending.
const ADVICE = {
  'no-binding': 'the addon did not load: run "npm rebuild http-oneshot --foreground-scripts" to see why',
  'unsupported-node': 'this Node release\'s http internals are not ones the shim reproduces: ' +
    'run a line it supports (20, 22, 24.21+, 26.8+)',
  debug: 'NODE_DEBUG=http is set: Node prints from end(); unset it',
  finished: 'end() was called on a response that had ended: ' + OWN_PATH + ' (it reports the error)',
  destroyed: 'res.destroy() ran before end(): ' + OWN_PATH,
  'headers-sent': 'write() or flushHeaders() sent the header before end(): ' +
    'send a body known in full with res.end(body)',
  'no-socket': 'no net.Socket (inject(), a standalone response): ' + OWN_PATH,
  'not-socket-owner': 'a pipelined request waited for the one before it: ' + OWN_PATH,
  'socket-unwritable': 'the client went away or the socket was ended: ' + OWN_PATH,
  'socket-busy': 'the socket was corked or still writing (res.cork(), writes just before end()): ' +
    'end without them where you can, else ' + OWN_PATH,
  patched: 'another module replaced a method end() uses (an APM agent, compression, on-headers): ' +
    'drop the wrapper where you do not need it, else ' + OWN_PATH,
  'http-version': 'not an HTTP/1.0 or 1.1 request (or useChunkedEncodingByDefault is not a boolean): ' + OWN_PATH,
  head: 'a body given to a HEAD response under rejectNonStandardBodyWrites: ' + THROWS,
  'no-body-status': 'a body given to a 1xx, 204 or 304 response under rejectNonStandardBodyWrites: ' + THROWS,
  expect: 'Expect: 100-continue handling or an Expect header set by the app: ' + OWN_PATH,
  'strict-content-length': 'res.strictContentLength is set: unset it where the Content-Length is right',
  trailers: 'addTrailers() or a Trailer header: ' + OWN_PATH,
  'transfer-encoding': 'the app set Transfer-Encoding: leave framing to Node (no header) or send ' +
    'the body with res.end(body)',
  chunked: 'chunked framing on a header block the renderer did not cache: ' +
    'send the body in one res.end(body) (a Content-Length instead of chunks)',
  encoding: 'a string body in an encoding other than utf8 or latin1: pass a Buffer or a utf8 string',
  'chunk-type': 'a body that is neither a string nor a Uint8Array: ' + THROWS,
  'body-too-large': 'a body above install({ maxBodySize }), or above 4 KiB where no direct write ' +
    'was possible (TLS, a header block Node rendered): raise maxBodySize, or ' + OWN_PATH,
  'header-value': 'a header value whose conversion to a string runs code (an object with toString()): ' +
    'set strings, numbers or arrays of them',
  'non-ascii': 'a header or status message with characters outside ASCII in a UTF-8 message: ' +
    'encode them (encodeURIComponent) where you can, else ' + OWN_PATH,
  streamed: 'write() calls with a Content-Length, then end(), on a header block Node rendered ' +
    '(an array value, a header only Node renders) or a socket the addon does not write to (TLS, ' +
    'a UNIX domain socket): pass header values as strings, or ' + OWN_PATH,
  'node-rendered': 'a string body after a header block Node rendered (_contentLength set by hand, ' +
    'as @hono/node-server does, or a header only Node renders), on Node 24.21+ or 26.8+, where ' +
    'Node\'s own end() costs less: nothing to change (on Node 20 and 22 such responses are native)',
  'keep-alive-max': 'server.maxRequestsPerSocket is not a 32-bit integer: set an integer',
  invalid: 'Node would throw for this response (or the core refused it): ' + THROWS,
  'probe-pending': 'served before the probe of this Node binary answered; its answer is stored, ' +
    'so the next process starts native (set HTTP_ONESHOT_CACHE_DIR to a writable directory if ' +
    'every run shows this)'
}

// Per reason lib/index.js gives for being inactive.
const INACTIVE_ADVICE = {
  'not-installed': 'the application never loaded http (or uninstall() ran)',
  disabled: 'unset HTTP_ONESHOT to turn the package on',
  'addon-disabled': 'unset HTTP_ONESHOT_NATIVE to load the addon',
  'addon-not-loaded': 'run "npm rebuild http-oneshot --foreground-scripts" to see why the addon was not built',
  'unsupported-node': ADVICE['unsupported-node'],
  wrapped: 'another module wrapped OutgoingMessage#_storeHeader first: ' + LOAD_FIRST,
  'end-replaced': 'another module defined ServerResponse#end first: ' + LOAD_FIRST,
  'probe-pending': ADVICE['probe-pending']
}

let armed = false
let printed = false
let seen = 0

const onRequestStart = () => { seen++ }

/** The report, as printed. `requests`: those servers received while armed. */
function format (stats, inactive, requests, wrappers = []) {
  const lines = [`http-oneshot report (Node ${process.version}, pid ${process.pid}): ` +
    (inactive === null ? 'active' : `inactive: ${inactive.message}`)]
  if (inactive !== null && inactive.reason !== 'probe-pending') {
    lines.push(`  ${INACTIVE_ADVICE[inactive.reason] || ''}`)
  }
  if (wrappers.length !== 0) {
    lines.push('  wrappers in Node\'s place before http-oneshot installed (each runs as without it):')
    for (const w of wrappers) lines.push(`    ${w.method}: ${w.wrapper} (${w.file || 'file unknown'}): ${w.advice}`)
  }
  const other = Math.max(0, requests - stats.native - stats.fallback)
  lines.push(`  requests: ${requests}; responses: ${stats.native} native, ` +
    `${stats.fallback + (inactive !== null && inactive.reason !== 'probe-pending' ? other : 0)} on Node's own path`)
  const reasons = Object.entries(stats.reasons).sort((a, b) => b[1] - a[1])
  if (reasons.length !== 0) {
    const width = Math.max(...reasons.map(([reason]) => reason.length))
    const count = Math.max(...reasons.map(([, n]) => String(n).length))
    lines.push('  on Node\'s own path, by reason:')
    for (const [reason, n] of reasons) {
      lines.push(`    ${String(n).padStart(count)}  ${reason.padEnd(width)}  ${ADVICE[reason] || ''}`)
    }
  }
  return lines.join('\n') + '\n'
}

function print () {
  if (printed) return
  printed = true
  const oneshot = require('./index.js')
  try {
    process.stderr.write(format(oneshot.stats(), oneshot.inactiveState(), seen, oneshot.wrappers(true)))
  } catch {
    // stderr closed: nothing to tell.
  }
}

function onSignal (signal) {
  // Another listener decides what the signal does.
  if (process.listenerCount(signal) > 1) return
  print()
  process.removeListener('newListener', onNewListener)
  process.removeListener('removeListener', onRemoveListener)
  for (const sig of SIGNALS) process.removeListener(sig, onSignal)
  process.kill(process.pid, signal)
}

// Steps aside once the other listener is in place: removed before, it would leave none for a
// moment, and Node would stop watching the signal.
function onNewListener (event, listener) {
  if (listener === onSignal || !SIGNALS.includes(event)) return
  process.nextTick(() => {
    if (process.listenerCount(event) > 1) process.removeListener(event, onSignal)
  })
}

function onRemoveListener (event, listener) {
  if (listener !== onSignal && SIGNALS.includes(event) && process.listenerCount(event) === 0) {
    process.on(event, onSignal)
  }
}

/** Prints the report when the process exits. Idempotent. */
function arm () {
  if (armed) return
  armed = true
  dc.subscribe(REQUEST_START, onRequestStart)
  process.on('exit', print)
  for (const sig of SIGNALS) {
    if (process.listenerCount(sig) === 0) process.on(sig, onSignal)
  }
  process.on('newListener', onNewListener)
  process.on('removeListener', onRemoveListener)
}

module.exports = { arm, format, ADVICE, INACTIVE_ADVICE }
