'use strict'

// ServerResponse#end, #write and #uncork (docs/architecture.md, "The path of one response").

const http = require('node:http')
const util = require('node:util')
const internals = require('./internals.js')
const decide = require('./decide.js')
const render = require('./render.js')
const { FLAGS } = require('./codes.js')
const { FALLBACK, REASON } = require('./rules.js')
const {
  Message, countLines, sendEnd, finishSent, reportingWrites, tcpHandle, directCounts, resetDirectStats
} = require('./send.js')
const { writeReason, writeChunk, tailReason, endAfterWrites } = require('./protocol/chunked20.js')
const { uncorkReason, flushChunks } = require('./protocol/chunked24.js')
const { streamedReason, sendWaiting } = require('./protocol/streamed.js')
const { ownerOf, swap } = require('./patches.js')

const debug = util.debuglog('http-oneshot')
const debugEnabled = debug.enabled // a getter; NODE_DEBUG is read at start-up

const { maxBodySize, fallbackReason } = decide

const stats = { native: 0, fallback: 0, reasons: reasonCounts(), writes: { native: 0, fallback: 0 } }

// Fast mode (Object.create(null) starts as a dictionary, dearer per count()); reset by replacing.
function reasonCounts () {
  return Object.setPrototypeOf({}, null)
}

function resetStats () {
  stats.native = 0
  stats.fallback = 0
  stats.writes.native = 0
  stats.writes.fallback = 0
  stats.reasons = reasonCounts()
  resetDirectStats()
}

function counts () {
  const direct = directCounts()
  return {
    native: stats.native,
    fallback: stats.fallback,
    direct: direct.direct,
    partial: direct.partial,
    reasons: Object.assign({}, stats.reasons),
    writes: { native: stats.writes.native, fallback: stats.writes.fallback }
  }
}

// One record for every write; cleared of the response after it (test/retention.test.js).
const message = new Message()

function releaseMessage () {
  message.body = null
  message.handle = null
}

const { byteLength } = Buffer // the global Buffer is a getter

const { OutgoingMessage } = http
// Null where a wrapper was there before install(): no method equals them then.
const { end: legacyEnd, write: legacyWrite, uncork: legacyUncork } = internals === null ? {} : internals

function count (reason, res) {
  stats.fallback++
  stats.reasons[reason] = (stats.reasons[reason] || 0) + 1
  if (debugEnabled) {
    const req = res.req
    debug('fallback: %s %s %s %s', reason, req ? req.method : '-', req ? req.url : '-', res.statusCode)
  }
}

function bodyLength (chunk, encoding) {
  if (typeof chunk === 'string') {
    return typeof encoding === 'string' && encoding === 'latin1' ? chunk.length : byteLength(chunk, 'utf8')
  }
  return chunk.byteLength
}

// Measures the body. False when Node's own end() must run (from the header, if rendered).
function nativeEnd (res, chunk, encoding, callback, block, dropped) {
  let flags = 0
  let len = 0
  // UTF-8 after a cached block is taken to be ASCII, unmeasured; C refuses it unsent otherwise.
  let guessed = false
  if (dropped) {
    // write_() sets _contentLength from the chunk it drops.
    if (res._header === null) len = bodyLength(chunk, encoding)
  } else if (chunk) {
    if (typeof chunk === 'string') {
      // typeof first: a strict comparison of a string with undefined would be a call.
      if (typeof encoding === 'string' && encoding === 'latin1') {
        flags = FLAGS.BODY_LATIN1
      } else {
        flags = FLAGS.HEAD_UTF8 | FLAGS.ASCII_ONLY
        guessed = block !== null && block.slot >= 0
      }
    }
    len = guessed ? chunk.length : bodyLength(chunk, encoding)
    if (len > maxBodySize()) {
      count(REASON.BODY_TOO_LARGE, res)
      return false
    }
    // Non-ASCII text goes out as UTF-8, head included, as Node merges the two.
    if (!guessed && (flags & FLAGS.ASCII_ONLY) !== 0 && len !== chunk.length) flags = FLAGS.HEAD_UTF8
  }
  const m = message
  m.block = block
  m.body = dropped ? null : chunk
  m.flags = flags
  m.dropped = dropped
  return endWithHeader(res, callback, len, guessed)
}

// One unit: docs/architecture.md, "The inlining budget". `len`: char length when `guessed`.
function endWithHeader (res, callback, len, guessed) {
  const m = message
  let block = m.block
  const chunk = m.body
  let flags = m.flags
  let slot = -1
  let lines
  let chunked = false
  if (res._header === null) {
    const previousLength = res._contentLength
    res._contentLength = len
    const fresh = render.renderFresh(res, len)
    if (typeof fresh !== 'string') {
      block = fresh
    } else if (!renderedByNode(res, fresh, previousLength, chunk)) {
      return false
    }
  }
  if (block !== null) {
    slot = block.slot
    lines = block.lines
    chunked = block.chunked
    // Chars up to 0xFF, copied as latin1; Node's may hold more (Content-Disposition decodes UTF-8).
    flags |= FLAGS.HEAD_ONE_BYTE
  } else {
    lines = countLines(res._header)
    // C frames a body after a chunked block Node rendered, as end() does.
    chunked = !!res.chunkedEncoding && res._hasBody === true
  }
  // After a cached (ASCII) block, UTF-8 text whose bytes are its chars: latin1 reads cheaper.
  if (slot >= 0 && typeof chunk === 'string' && !guessed && len === chunk.length) flags = FLAGS.BODY_LATIN1
  if (chunked) flags |= FLAGS.CHUNKED
  m.block = block
  m.slot = slot
  m.lines = lines
  m.bodyLength = m.dropped ? 0 : len
  m.flags = flags
  // Counted first: a 'prefinish' listener may throw.
  stats.native++
  const reason = sendEnd(res, m, callback)
  return reason === null || sentAgain(res, m, callback, reason, guessed)
}

// renderFresh() gave a reason: true once Node rendered the header (RENDER_BY_NODE).
function renderedByNode (res, fresh, previousLength, chunk) {
  // NODE_RENDERED: left to Node before it renders (lib/decide.js slicedString).
  if (fresh !== REASON.RENDER_BY_NODE || decide.nodeRenderedString(res, chunk, null)) {
    res._contentLength = previousLength
    count(fresh === REASON.RENDER_BY_NODE ? REASON.NODE_RENDERED : fresh, res)
    return false
  }
  res._implicitHeader()
  // Sent as a block Node rendered even where the shim's writeHead() ran: no hand-off is kept.
  render.takeBlock(res)
  if (res.chunkedEncoding || res._headerSent || typeof res._header !== 'string') {
    count(REASON.CHUNKED, res)
    return false
  }
  return true
}

// sendEnd() refused `m` unsent: sent again where a guess about the text was wrong.
function sentAgain (res, m, callback, reason, guessed) {
  const flags = m.flags
  if (reason === REASON.NON_ASCII && guessed) {
    const len = byteLength(m.body, 'utf8')
    if (len > maxBodySize()) {
      reason = REASON.BODY_TOO_LARGE
    } else {
      m.bodyLength = len
      m.flags = flags & ~FLAGS.ASCII_ONLY
      reason = sendEnd(res, m, callback)
    }
  } else if (reason === REASON.NON_ASCII && m.slot < 0 && (flags & FLAGS.CHUNKED) === 0 &&
      (flags & FLAGS.ASCII_ONLY) !== 0) {
    // Node's block with latin1 values, then ASCII text: Node writes both as UTF-8, and so does C.
    m.flags = FLAGS.HEAD_UTF8
    reason = sendEnd(res, m, callback)
  }
  if (reason === null) return true
  stats.native--
  count(reason, res)
  return false
}

// Arguments are shuffled as OutgoingMessage#end does.
function end (chunk, encoding, callback) {
  let c = chunk
  let e = encoding
  let cb = callback
  if (typeof c === 'function') {
    cb = c
    c = null
    e = null
  } else if (typeof e === 'function') {
    cb = e
    e = null
  }
  // A wrapper of OutgoingMessage#end put on after install() is Node's end() here.
  const nodeEnd = OutgoingMessage.prototype.end
  // Called after uninstall() by a wrapper that captured it: Node's end(), arguments as they came.
  if (!installed) {
    render.takeBlock(this)
    return nodeEnd.apply(this, arguments)
  }
  if (internals !== null && internals.learned.pending) internals.learn(this)
  let block = this._header === null ? null : render.takeBlock(this)
  let reason = nodeEnd !== legacyEnd ? REASON.PATCHED : fallbackReason(this, c, e, block)
  if (reason === REASON.PATCHED && nodeEnd === legacyEnd && decide.headerFirst(this)) {
    if (!renderFirst(this, c, e)) {
      count(REASON.PATCHED, this)
      return endByNode(endAfterHeaderCall, nodeEnd, this, arguments)
    }
    block = render.takeBlock(this)
    reason = fallbackReason(this, c, e, block)
  }
  let counted = reason
  if (reason === null || reason === REASON.BODY_DROPPED) {
    if (nativeEnd(this, c, e, cb, block, reason === REASON.BODY_DROPPED)) return this
    releaseMessage()
    return this._header === null
      ? endByNode(callNodeEnd, nodeEnd, this, arguments)
      : nodeEnd.apply(this, arguments)
  }
  if (reason === REASON.HEADERS_SENT && this.chunkedEncoding === false) {
    // write()s with Content-Length framing (h3, hapi, send, pipe()).
    counted = endStreamed(this, c, e, cb, block)
    if (counted === null) return this
    if (counted === REASON.REPORT) return endReporting(this, nodeEnd, arguments)
  }
  if ((reason === REASON.HEADERS_SENT || (reason === REASON.SOCKET_BUSY && heldTail)) &&
      tailEnd && (c || this.chunkedEncoding === true) && (!heldTail || heldUncork(this)) &&
      tailReason(this, c, e) === null) {
    // end() after write(). Without a chunk or chunked framing there is nothing to join: decided
    // first, so Content-Length streams cost Node's end() and no more (benchmark/instructions.js, h3).
    stats.native++
    stats.writes.native += endAfterWrites(this, c, e, cb)
    return this
  }
  count(counted, this)
  // A rendered header's block was taken above: Node's end() hands none over.
  return this._header === null
    ? endByNode(callNodeEnd, nodeEnd, this, arguments)
    : nodeEnd.apply(this, arguments)
}

function callNodeEnd (nodeEnd, res, args) {
  return nodeEnd.apply(res, args)
}

// Takes the block Node's end() may have rendered through the shim's writeHead(), even if it throws.
// A response with a header does without the try (benchmark/instructions.js shape fallback).
function endByNode (run, nodeEnd, res, args) {
  try {
    return run(nodeEnd, res, args)
  } finally {
    render.takeBlock(res)
  }
}

// docs/architecture.md, "Streamed responses". Null when done, else REPORT or the reason.
function endStreamed (res, chunk, encoding, callback, block) {
  const reason = streamedReason(res, chunk, encoding, block)
  if (reason !== null) return reason
  // 22+'s end() calls the response's uncork(), the shim's on 24.22+.
  if (res.uncork !== legacyUncork && !heldUncork(res)) return REASON.PATCHED
  const handle = tcpHandle(res.socket)
  if (handle === null) return REASON.STREAMED
  const m = message
  m.slot = block.slot
  m.contentLength = block.lengthArgument()
  m.handle = handle
  const sent = sendWaiting(res, m, chunk, encoding, callback)
  m.body = null
  if (sent !== REASON.REPORT) m.handle = null // endReporting() needs it
  if (sent === null) {
    stats.native++
    finishSent(res)
    return null
  }
  // C may have stopped before it read the length.
  block.forgetLength()
  if (sent === REASON.REPORT) stats.native++
  return sent
}

function endReporting (res, nodeEnd, args) {
  const m = message
  const handle = m.handle
  m.handle = null
  return reportingWrites(handle, m.failed, res._header.length + m.bodyLength, () => nodeEnd.apply(res, args))
}

// The start of Node's end() under a writeHead wrapper (docs/architecture.md, "Patchers and APM
// agents"); an unused cork is taken back. True when the wrapper left a header to decide on.
function renderFirst (res, chunk, encoding) {
  const socket = res.socket
  socket.cork()
  res._contentLength = chunk
    ? typeof chunk === 'string' ? byteLength(chunk, encoding) : chunk.byteLength
    : 0
  res._implicitHeader()
  if (!res._header) return false
  if (socket.writableCorked === 1 && socket.writableLength === 0) socket.uncork()
  return true
}

// Node's end() after renderFirst() rendered nothing, skipping its first _implicitHeader() (the
// wrapper would run twice) where the method is found: a key on `res` would show at 'prefinish'.
function endAfterHeaderCall (nodeEnd, res, args) {
  const owner = ownerOf(res, '_implicitHeader')
  const own = owner === null ? undefined : Object.getOwnPropertyDescriptor(owner, '_implicitHeader')
  if (own === undefined || !own.configurable || !Object.hasOwn(own, 'value')) return nodeEnd.apply(res, args)
  const method = own.value
  let skipped = false
  swap(owner, '_implicitHeader', {
    ...own,
    value: function _implicitHeader () {
      if (this !== res || skipped) return method.call(this)
      skipped = true
    }
  })
  try {
    return nodeEnd.apply(res, args)
  } finally {
    swap(owner, '_implicitHeader', own)
  }
}

// Where heldTail, end() sends held chunks through res.uncork(): the shim's, over Node's own.
function heldUncork (res) {
  return res.uncork === uncork && OutgoingMessage.prototype.uncork === legacyUncork
}

// Where the probe found Node 20's chunked write(): a chunk in two or three socket writes, not four.
function write (chunk, encoding, callback) {
  const nodeWrite = OutgoingMessage.prototype.write // a wrapper put on later counts as Node's
  if (!installed) return nodeWrite.apply(this, arguments)
  let e = encoding
  let cb = callback
  if (typeof e === 'function') {
    cb = e
    e = null
  }
  let reason = nodeWrite !== legacyWrite ? REASON.PATCHED : writeReason(this, chunk, e)
  if (reason === REASON.HEADER_PENDING) {
    // write_() renders the header after the checks writeReason() made.
    this._implicitHeader()
    reason = writeReason(this, chunk, e)
  }
  if (reason === null) {
    stats.writes.native++
    return writeChunk(this, chunk, e, cb)
  }
  stats.writes.fallback++
  if (debugEnabled) debug('write() by Node: %s', reason)
  return nodeWrite.apply(this, arguments)
}

// Where the probe found Node 24.22's chunked write(): held chunks go out in fewer writes.
function uncork () {
  const nodeUncork = OutgoingMessage.prototype.uncork
  if (installed) {
    const reason = nodeUncork !== legacyUncork ? REASON.PATCHED : uncorkReason(this)
    if (reason === null) {
      stats.writes.native += flushChunks(this)
      return
    }
    if (reason !== REASON.NOTHING_HELD) {
      stats.writes.fallback += this[internals.kChunkedBuffer].length / 3
      if (debugEnabled) debug('uncork() by Node: %s', reason)
    }
  }
  return nodeUncork.apply(this, arguments)
}

// end() after write() joins writes where end() and write_() are both Node 20's, or both Node
// 24.22's (heldTail; a response holding chunks first falls back as socket-busy).
const heldTail = internals !== null && internals.chunkedUncork === true && internals.protocol.name === 'node24'
const tailEnd = heldTail || (internals !== null && internals.chunkedWrite === true &&
  internals.protocol.name === 'node20')

// After uninstall() a wrapper that captured a replacement still calls it: Node's method then runs.
let installed = false

function setInstalled (on) {
  installed = on
}

module.exports = {
  FALLBACK,
  // lib/index.js fallbackReason(): the block left for end() to take; null for either native answer.
  fallbackReason: (res, chunk, encoding) => {
    const reason = fallbackReason(res, chunk, encoding, res ? render.blockOf(res) : null)
    return reason === REASON.BODY_DROPPED ? null : reason
  },
  end,
  write,
  uncork,
  setInstalled,
  stats, // for tests; lib/index.js reads counts()
  resetStats,
  counts
}
