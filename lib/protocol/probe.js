'use strict'

// Classifies Node's own end() and write() by behaviour (docs/protocols.md, "What the probe
// classifies") on a fake request and a recording socket, the write callbacks run as Writable would.
// Nothing global changes: no Date, keep-alive or default reason phrase (26.12+ caches them), no
// 'http.server.response.created' subscriber sees it.

const http = require('node:http')
const util = require('node:util')
const EventEmitter = require('node:events')
const dc = require('node:diagnostics_channel')
const path = require('node:path')
const cache = require('./cache.js')
const remembered = require('./answer.js')
const { findSymbol } = remembered

const BODY = 'ok'
const REASON = 'Probe'

function symbolNames (obj) {
  return Object.getOwnPropertySymbols(obj).map((sym) => sym.description)
}

// The private fields the probe reads, by description: their symbols, null where Node has none.
const KEY_NAMES = ['corked', 'kEndCallbacks', 'kWritableFinished', 'kFlushError', 'kChunkedBuffer',
  'kChunkedLength', 'kOutHeaders']
function keysOf (res) {
  return Object.fromEntries(KEY_NAMES.map((name) => [name, findSymbol(res, name)]))
}

// `fn()`'s answer, or `fallback` where it throws (a probe on a line unlike those known).
function attempt (fn, fallback) {
  try {
    return fn()
  } catch {
    return fallback
  }
}

// With a subscriber on 'http.server.response.created' (24+), built by
// OutgoingMessage's constructor with the fields ServerResponse's sets.
function newResponse (SR, OM) {
  const req = { method: 'GET', url: '/', httpVersionMajor: 1, httpVersionMinor: 1, headers: {}, rawHeaders: [] }
  const channel = dc.channel('http.server.response.created')
  if (!channel.hasSubscribers) return new SR(req)
  return Object.assign(Reflect.construct(OM, [], SR), { req, sendDate: true, _sent100: false, _expect_continue: false })
}

function noop () {}

// Records cork(), uncork() and write(); as a net.Socket whose handle takes
// every write at once, it buffers only while corked.
function fakeSocket () {
  const socket = new EventEmitter()
  const state = { corked: 0 }
  const calls = []
  const writes = []
  let buffered = 0
  Object.assign(socket, { _httpMessage: null, writable: true, destroyed: false, errored: null, _hadError: false },
    { writableHighWaterMark: 16384, _writableState: state })
  Object.defineProperties(socket, { writableCorked: { get: () => state.corked }, writableLength: { get: () => buffered } })
  socket.cork = function cork () {
    calls.push('cork')
    state.corked++
  }
  socket.uncork = function uncork () {
    calls.push('uncork')
    if (state.corked > 0) state.corked--
    if (state.corked === 0) buffered = 0
  }
  socket.write = function write (chunk, encoding, callback) {
    if (typeof encoding === 'function') {
      callback = encoding
      encoding = null
    }
    calls.push('write')
    const cb = typeof callback === 'function' ? callback : null
    writes.push({ chunk, encoding: encoding === undefined ? null : encoding, callback: cb, corked: state.corked })
    if (state.corked > 0) buffered += typeof chunk === 'string' ? chunk.length : chunk.byteLength
    return true
  }
  return { socket, state, calls, writes }
}

// `read(sym)`: a private field, undefined where Node has no such symbol.
function attach (SR, res) {
  res.sendDate = false
  res.shouldKeepAlive = false
  const recorder = fakeSocket()
  SR.prototype.assignSocket.call(res, recorder.socket)
  recorder.read = (sym) => (sym === null ? undefined : res[sym])
  return recorder
}

// The state at 'prefinish', and right after the first end().
function endState (res, recorder, keys) {
  return {
    writableFinished: res.writableFinished,
    headerSent: res._headerSent,
    finished: res.finished,
    corked: recorder.read(keys.corked),
    socketCorked: recorder.state.corked
  }
}

// Records 'finish' and the returned end callbacks' calls, and 'prefinish''s state.
function recordEvents (res, out, recorder, keys, writeError) {
  const read = recorder.read
  // Stands in for the server's resOnFinish, added before 'request'.
  res.on('finish', function onFinishEvent () {
    out.events.push({ name: 'finish', args: arguments.length, writableFinished: res.writableFinished })
  })
  res.on('prefinish', () => { out.atPrefinish = endState(res, recorder, keys) })
  function endCallback (name) {
    return function (err) {
      const pending = read(keys.kEndCallbacks)
      out.events.push({
        name,
        args: arguments.length,
        err: err === undefined ? 'undefined' : err === null ? null : (err === writeError ? 'write-error' : err.code),
        writableFinished: res.writableFinished,
        pending: Array.isArray(pending) ? pending.length : pending
      })
    }
  }
  return { cb1: endCallback('cb1'), cb2: endCallback('cb2'), cb3: endCallback('cb3') }
}

function queuedNames (queued, names) {
  if (!Array.isArray(queued)) return queued
  return queued.map((cb) => names.get(cb) || 'other')
}

// Right after the first end(BODY, cb1), before any write completed.
function afterFirstEnd (probed, callbacks) {
  const { res, out, recorder, keys, finishListeners } = probed
  const read = recorder.read
  return {
    ...endState(res, recorder, keys),
    finishListenersAdded: res.listenerCount('finish') - finishListeners,
    endCallbacks: queuedNames(read(keys.kEndCallbacks), new Map([[callbacks.cb1, 'cb1']])),
    writableFinishedField: read(keys.kWritableFinished),
    flushError: read(keys.kFlushError),
    symbols: symbolNames(res),
    events: out.events.length
  }
}

// A later end(cb): what it called at once, and the callbacks queued (named, or counted).
function laterEnd (end, probed, callback, names) {
  const { res, out, recorder, keys, finishListeners } = probed
  const eventsBefore = out.events.length
  end.call(res, callback)
  const queued = recorder.read(keys.kEndCallbacks)
  return {
    calledSync: out.events.slice(eventsBefore).map((e) => e.name + ':' + e.err),
    [names ? 'endCallbacks' : 'queued']: names
      ? queuedNames(queued, names)
      : Array.isArray(queued) ? queued.length : queued,
    finishListenersAdded: res.listenerCount('finish') - finishListeners
  }
}

function completeWrites (res, recorder, keys, writeError) {
  const { writes, read } = recorder
  for (const w of writes.filter((write) => write.callback !== null)) w.callback(writeError)
  const flushError = read(keys.kFlushError)
  return {
    writableFinished: res.writableFinished,
    writableFinishedField: read(keys.kWritableFinished),
    flushError: flushError === writeError && writeError !== null ? 'write-error' : flushError,
    endCallbacks: read(keys.kEndCallbacks)
  }
}

// One run of end(): writeHead() or not, end(BODY, cb1), end(cb2) before the writes complete, the
// write callbacks run with `writeError` (null: success), then end(cb3).
function run (fns, withWriteHead, writeError) {
  const { SR, OM, end, writeHead } = fns
  const res = newResponse(SR, OM)
  const out = { writes: null, atPrefinish: null, afterEnd: null, second: null, events: [], afterWrites: null, third: null }
  const recorder = attach(SR, res)
  const keys = keysOf(res)
  const callbacks = recordEvents(res, out, recorder, keys, writeError)
  const probed = { res, out, recorder, keys, finishListeners: res.listenerCount('finish') }
  if (withWriteHead) writeHead.call(res, 200, REASON, { 'Content-Length': String(BODY.length) })
  else res.statusMessage = REASON
  end.call(res, BODY, callbacks.cb1)
  out.writes = recorder.writes.map((w) => ({ chunk: w.chunk, encoding: w.encoding, callback: w.callback !== null, corked: w.corked }))
  out.afterEnd = afterFirstEnd(probed, callbacks)
  out.second = laterEnd(end, probed, callbacks.cb2, new Map([[callbacks.cb1, 'cb1'], [callbacks.cb2, 'cb2']]))
  out.afterWrites = completeWrites(res, recorder, keys, writeError)
  // After a flush error Node may defer it past the probe's return.
  out.third = laterEnd(end, probed, writeError === null ? callbacks.cb3 : noop, null)
  out.events = out.events.map((e) => e.name + '(' + [e.args, e.err, e.writableFinished, e.pending].join(',') + ')')
  return out
}

// `fns`' methods, the prototypes' where one is not given.
function nodeFns (fns = {}) {
  const { ServerResponse: SR, OutgoingMessage: OM } = http
  const pick = (name, proto) => typeof fns[name] === 'function' ? fns[name] : proto[name]
  const om = OM.prototype
  return { SR, OM, end: pick('end', om), writeHead: pick('writeHead', SR.prototype), write: pick('write', om), uncork: pick('uncork', om) }
}

// One chunked write(), then the uncork() write_()'s tick runs on 24.22+ and 26.10+.
function writeRun (fns) {
  const { SR, OM, write, writeHead, uncork } = fns
  const res = newResponse(SR, OM)
  const { state, calls, writes, read } = attach(SR, res)
  const { corked: kCorked, kChunkedBuffer, kChunkedLength } = keysOf(res)
  writeHead.call(res, 200, REASON, {})
  const header = res._header
  const callback = noop
  const text = (chunk) => typeof chunk === 'string'
    ? chunk
    : 'bytes:' + Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength).toString('latin1')
  const seen = (from) => ({
    calls: calls.slice(from.calls),
    headerFirst: writes.length > from.writes && writes[from.writes].chunk === header + BODY.length.toString(16),
    writes: writes.slice(from.writes).map((w, i) => ({
      chunk: i === 0 ? null : text(w.chunk),
      encoding: w.encoding,
      callback: w.callback === callback ? 'callback' : w.callback === null ? null : 'other',
      corked: w.corked
    })),
    headerSent: res._headerSent,
    corked: read(kCorked),
    socketCorked: state.corked,
    buffered: Array.isArray(read(kChunkedBuffer))
      ? read(kChunkedBuffer).map((x) => (x === callback ? 'callback' : x))
      : null,
    bufferedLength: read(kChunkedLength)
  })
  const ret = write.call(res, BODY, callback)
  const afterWrite = seen({ calls: 0, writes: 0 })
  let afterUncork = null
  if (afterWrite.corked === 1) {
    const from = { calls: calls.length, writes: writes.length }
    uncork.call(res)
    afterUncork = seen(from)
  }
  const chunkedHeader = typeof header === 'string' && header.endsWith('\r\nTransfer-Encoding: chunked\r\n\r\n')
  return { ret, header: chunkedHeader, afterWrite, afterUncork }
}

// The four writes of a framed chunk: the header with the size line
// (latin1), CRLF, the chunk, and CRLF carrying `last` (the callback).
function framedChunk (corked, last) {
  return [
    { chunk: null, encoding: 'latin1', callback: null, corked },
    { chunk: 'bytes:\r\n', encoding: null, callback: null, corked },
    { chunk: BODY, encoding: null, callback: null, corked },
    { chunk: 'bytes:\r\n', encoding: null, callback: last, corked }
  ]
}

/**
 * Classifies Node's chunked write() (docs/protocols.md): 'node20' (four writes on the corked
 * socket), 'node24' (held until the response's uncork()), or null.
 * @param {object} [fns] Node's own { write, writeHead, uncork }
 * @returns {'node20'|'node24'|null}
 */
function probeWrite (fns) {
  return attempt(() => writeProtocol(writeRun(nodeFns(fns))), null)
}

function writeProtocol (r) {
  if (r.ret !== true || !r.header) return null
  const w = r.afterWrite
  if (w.headerFirst && w.headerSent === true && w.corked === 0 && w.socketCorked === 1 &&
      same(w.calls, ['cork', 'write', 'write', 'write', 'write']) && same(w.writes, framedChunk(1, 'callback'))) {
    return 'node20'
  }
  const u = r.afterUncork
  if (!w.headerSent && w.corked === 1 && w.socketCorked === 1 && same(w.calls, ['cork']) &&
      w.writes.length === 0 && same(w.buffered, [BODY, null, 'callback']) && w.bufferedLength === 2 &&
      u !== null && u.headerFirst && u.headerSent === true && u.corked === 0 && u.socketCorked === 0 &&
      same(u.calls, ['write', 'write', 'write', 'write', 'uncork']) &&
      same(u.writes, framedChunk(1, 'other')) && same(u.buffered, []) && u.bufferedLength === 0) {
    return 'node24'
  }
  return null
}

function isHead (chunk) {
  return typeof chunk === 'string' && chunk.startsWith('HTTP/1.1 200 ' + REASON + '\r\n') &&
    chunk.endsWith('\r\n\r\n' + BODY) && chunk.includes('\r\nContent-Length: ' + BODY.length + '\r\n') &&
    chunk.includes('\r\nConnection: close\r\n')
}

function same (a, b) {
  return JSON.stringify(a) === JSON.stringify(b)
}

// Whether `actual` has each field of `expected`, compared as JSON.
function fits (actual, expected) {
  return Object.keys(expected).every((key) => same(actual[key], expected[key]))
}

const FINISHED_ERROR = 'ERR_STREAM_ALREADY_FINISHED'

function isNode20 (r) {
  for (const run of [r.explicit, r.implicit, r.error]) {
    const w = run.writes
    if (w.length !== 2 || !isHead(w[0].chunk) || !fits(w[0], { encoding: null, corked: 1 }) ||
        !fits(w[1], { chunk: '', encoding: 'latin1', callback: true, corked: 1 }) ||
        !fits(run.afterEnd, { headerSent: true, finished: true, corked: 0, socketCorked: 0, finishListenersAdded: 1 }) ||
        run.afterEnd.endCallbacks !== undefined || run.afterEnd.symbols.includes('kEndCallbacks') ||
        !same(run.atPrefinish && run.atPrefinish.finished, true)) {
      return false
    }
  }
  const ok = r.explicit
  // cb1 is once('finish'); later end(cb)s get the error synchronously. A
  // write error still emits 'finish' (onFinish ignores it).
  return same(ok.second.calledSync, ['cb2:' + FINISHED_ERROR]) &&
    same(ok.events, [`cb2(1,${FINISHED_ERROR},true,)`, 'finish(0,,true,)', 'cb1(0,undefined,true,)',
      `cb3(1,${FINISHED_ERROR},true,)`]) &&
    same(ok.third.calledSync, ['cb3:' + FINISHED_ERROR]) &&
    same(r.error.events, [`cb2(1,${FINISHED_ERROR},true,)`, 'finish(0,,true,)', 'cb1(0,undefined,true,)'])
}

function isNode24 (r) {
  for (const run of [r.explicit, r.implicit, r.error]) {
    const w = run.writes
    // The second end(cb) before the write completed is queued behind cb1.
    if (w.length !== 1 || !isHead(w[0].chunk) || !fits(w[0], { encoding: null, callback: true, corked: 1 }) ||
        !fits(run.afterEnd, { headerSent: true, finished: true, writableFinished: false, corked: 0, socketCorked: 0 }) ||
        !fits(run.afterEnd, { finishListenersAdded: 0, endCallbacks: ['cb1'], writableFinishedField: false }) ||
        !fits(run.afterEnd, { flushError: null, events: 0 }) ||
        !same(run.atPrefinish, { writableFinished: false, headerSent: true, finished: true, corked: 0, socketCorked: 0 }) ||
        !same(run.second, { calledSync: [], endCallbacks: ['cb1', 'cb2'], finishListenersAdded: 0 })) {
      return false
    }
  }
  const ok = r.explicit
  const bad = r.error
  // A later end(cb) after a write error is deferred with the flush error.
  return same(ok.events, ['cb1(1,,true,)', 'cb2(1,,true,)', 'finish(0,,true,)', `cb3(1,${FINISHED_ERROR},true,)`]) &&
    fits(ok.afterWrites, { endCallbacks: null, writableFinishedField: true }) &&
    same(ok.third, { calledSync: ['cb3:' + FINISHED_ERROR], queued: null, finishListenersAdded: 0 }) &&
    same(bad.events, ['cb1(1,write-error,false,)', 'cb2(1,write-error,false,)']) &&
    fits(bad.afterWrites, { flushError: 'write-error', writableFinished: false, endCallbacks: null }) &&
    same(bad.third, { calledSync: [], queued: null, finishListenersAdded: 0 })
}

/**
 * Classifies Node's end() protocol by behaviour: three runs, writeHead() or an implicit header,
 * the write succeeding or failing.
 * @param {object} [fns] Node's own { end, writeHead }, taken before any patching (default: the prototypes')
 * @returns {'node20'|'node24'|null}
 */
function probeProtocol (fns) {
  return attempt(() => {
    const all = nodeFns(fns)
    const error = new Error('probe write error')
    const report = { explicit: run(all, true, null), implicit: run(all, false, null), error: run(all, true, error) }
    if (isNode20(report)) return 'node20'
    return isNode24(report) ? 'node24' : null
  }, null)
}

// The fields of a ServerResponse the shim reads and writes.
const OWN_FIELDS = [
  'outputData', 'outputSize', '_last', 'chunkedEncoding', 'shouldKeepAlive', 'maxRequestsOnConnectionReached',
  '_defaultKeepAlive', 'useChunkedEncodingByDefault', 'sendDate', '_removedConnection', '_removedContLen',
  '_removedTE', 'strictContentLength', '_contentLength', '_hasBody', '_trailer', 'finished', '_headerSent',
  'socket', '_header', '_keepAliveTimeout', '_onPendingData', 'req', '_sent100', '_expect_continue'
]

/**
 * What a fresh response carries once one header is set (docs/protocols.md):
 * the header map a null-prototype object or (26.12+) an OutgoingHeaders.
 * @returns {{symbols: string[], headersMap: boolean, nullProtoHeaders: boolean,
 *   storeShown: string|null, corked: *, missing: string[]}}
 */
function responseShape () {
  const res = newResponse(http.ServerResponse, http.OutgoingMessage)
  res.setHeader('x-probe', '1')
  const { kOutHeaders, corked: kCorked } = keysOf(res)
  let headersMap = false
  let nullProtoHeaders = false
  let storeShown = null
  const map = kOutHeaders === null ? null : res[kOutHeaders]
  if (map !== null && typeof map === 'object') {
    const proto = Object.getPrototypeOf(map)
    nullProtoHeaders = proto === null
    headersMap = (proto === null || (Object.getPrototypeOf(proto) === null &&
      Reflect.ownKeys(proto).every((key) => key === 'constructor'))) &&
      Array.isArray(map['x-probe']) && map['x-probe'][0] === 'x-probe' && map['x-probe'][1] === '1'
    if (headersMap && Reflect.ownKeys(map).length === 1) storeShown = util.inspect(map, remembered.INSPECT)
  }
  return {
    symbols: symbolNames(res),
    headersMap,
    nullProtoHeaders,
    storeShown,
    corked: kCorked === null ? null : res[kCorked],
    missing: OWN_FIELDS.filter((field) => !(field in res))
  }
}

// The probe runs in a child, not a worker thread: docs/protocols.md, "Where
// the probe runs". A probe child never starts another.
const IN_CHILD = 'HTTP_ONESHOT_PROBE_CHILD'
const CHILD_TIMEOUT_MS = 10000

// Whether process.execPath runs this process's Node, and a child may run.
function childPossible () {
  const env = process.env
  if (env[IN_CHILD] === '1' || env.HTTP_ONESHOT_PROBE === 'inline') return false
  if (process.release.name !== 'node' || process.versions.electron !== undefined || process.pkg !== undefined) return false
  const sea = attempt(() => require('node:sea'), null) // null on lines without single executable applications
  return sea === null || typeof sea.isSea !== 'function' || !sea.isSea()
}

// The child stores the answer (the key of the binary it runs is the
// parent's), so that it outlives a parent that exited first.
function childScript () {
  return 'const p = require(' + JSON.stringify(__filename) + '); ' +
    'const answer = { protocol: p.probeProtocol(), shape: p.responseShape(), write: p.probeWrite(), ' +
    'sources: require(' + JSON.stringify(path.join(__dirname, '..', 'node-methods.js')) + ').sources() }; ' +
    'const c = require(' + JSON.stringify(path.join(__dirname, 'cache.js')) + '); ' +
    'try { c.store(c.binaryKey(), answer) } catch {} ' +
    'process.stdout.write(JSON.stringify(answer))'
}

function parseAnswer (stdout) {
  const answer = attempt(() => JSON.parse(stdout), undefined)
  return cache.validAnswer(answer) ? answer : undefined
}

function spawnChild (how, options) {
  const env = { ...process.env, HTTP_ONESHOT: '0', [IN_CHILD]: '1' }
  delete env.NODE_OPTIONS
  return require('node:child_process')[how](process.execPath, ['-e', childScript()],
    { env, stdio: ['ignore', 'pipe', 'ignore'], windowsHide: true, ...options })
}

function probeInChild () {
  return attempt(() => {
    const result = spawnChild('spawnSync', { encoding: 'utf8', timeout: CHILD_TIMEOUT_MS })
    return result.error || result.status !== 0 ? undefined : parseAnswer(result.stdout)
  }, undefined)
}

/**
 * Starts the probe child without waiting for it, keeping neither this
 * process alive nor its exit waiting; false where no child can run.
 * @param {(answer: object|undefined) => void} onAnswer undefined: none
 * @returns {boolean}
 */
function probeInBackground (onAnswer) {
  if (!childPossible()) return false
  const child = attempt(() => spawnChild('spawn', {}), null)
  if (child === null) return false
  let out = ''
  let called = false
  const answer = (value) => {
    if (called) return
    called = true
    if (value !== undefined) remembered.remember(value)
    onAnswer(value)
  }
  // A child that hangs is given up on; the timer keeps nothing alive.
  const timer = setTimeout(() => child.kill(), CHILD_TIMEOUT_MS).unref()
  child.on('error', () => answer(undefined))
  child.stdout.setEncoding('utf8')
  child.stdout.on('data', (chunk) => { out += chunk })
  child.on('close', (code) => {
    clearTimeout(timer)
    answer(code === 0 ? parseAnswer(out) : undefined)
  })
  child.unref()
  child.stdout.unref()
  return true
}

/**
 * The probe's answer: stored for this binary, else from a child, else here.
 * @param {object} [fns] as for probeProtocol() and probeWrite(), used only in this process (a
 *   child probes its own, untouched http module)
 * @returns {{protocol: 'node20'|'node24'|null, shape: object|null,
 *   write: 'node20'|'node24'|null, isolated: boolean, cached: boolean}}
 */
function probeIsolated (fns) {
  const stored = remembered.storedAnswer()
  if (stored !== null) return stored
  const probed = childPossible() ? probeInChild() : undefined
  if (probed !== undefined) {
    remembered.remember(probed)
    return remembered.asProbed(probed, false)
  }
  const shape = attempt(responseShape, null)
  return { protocol: probeProtocol(fns), shape, write: probeWrite(fns), sources: null, isolated: false, cached: false }
}

module.exports = { probeProtocol, probeWrite, probeIsolated, probeInBackground, responseShape }
