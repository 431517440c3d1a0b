'use strict'

// ServerResponse#end (and #write or #uncork, where the probe found the
// chunked write() they reproduce), and install()/uninstall(). Node's own
// end() runs whenever the decision says so, before anything on the
// response changed.

const http = require('node:http')
const util = require('node:util')
const internals = require('./internals.js')
const decide = require('./decide.js')
const render = require('./render.js')
const { FLAGS, ERRORS } = require('./codes.js')
const { FALLBACK, WRITE } = require('./rules.js')
const {
  Message, SEND_TOO_LARGE, SEND_BUSY, SEND_REPORT, SEND_ENCODING, SEND_HEADER_GONE, countLines, sendEnd,
  finishSent, writeChunk, endAfterWrites, flushChunks, sendWaiting, reportingWrites,
  tcpHandle, directCounts, resetDirectStats
} = require('./send.js')

const debug = util.debuglog('http-oneshot')
const { ENONASCII } = ERRORS
// Read once: NODE_DEBUG is read at start-up, and `enabled` is a getter.
const debugEnabled = debug.enabled

const {
  BODY_DROPPED, maxBodySize, fallbackReason, writeReason, tailReason, uncorkReason, streamedReason
} = decide
const { RENDER_BY_NODE } = render

// end() calls by path (and fallback reason); write() calls by path.
const stats = { native: 0, fallback: 0, reasons: reasonCounts(), writes: { native: 0, fallback: 0 } }

// An object whose prototype was set to null after it was created stays in
// fast mode while it holds a few keys; Object.create(null) starts as a
// dictionary, whose keyed load and store count() would pay per fallback.
function reasonCounts () {
  return Object.setPrototypeOf({}, null)
}

function resetStats () {
  stats.native = 0
  stats.fallback = 0
  stats.writes.native = 0
  stats.writes.fallback = 0
  // A fresh object: deleting its keys would turn it into a dictionary.
  stats.reasons = reasonCounts()
  resetDirectStats()
}

// The counters, as a copy, for lib/index.js stats().
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

// The inputs of the one write, filled for each call and read by sendEnd()
// before anything of the user's can run: one record, not one per response.
// What refers to the response is cleared once the write is done with it,
// so that it keeps nothing of a finished response (test/retention.test.js).
const message = new Message()

function releaseMessage () {
  message.body = null
  message.handle = null
}

// Read once: the global Buffer is a getter.
const { byteLength } = Buffer

const { OutgoingMessage } = http
// Node's own methods; null where a wrapper was there before install(): no
// method is then equal to them, and every call goes to what is there.
const legacyEnd = internals === null ? null : internals.end
const legacyWrite = internals === null ? null : internals.write
const legacyUncork = internals === null ? null : internals.uncork

// Under NODE_DEBUG=http-oneshot it also names the response.
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

// The native end(): measures the body; endWithHeader() sends it. `block`:
// lib/render.js takeBlock(); `dropped`: BODY_DROPPED. False when Node's own
// end() must run (on a header maybe rendered, which it continues from).
function nativeEnd (res, chunk, encoding, callback, block, dropped) {
  let flags = 0
  let len = 0
  // A UTF-8 string body after a cached block is taken to be ASCII without
  // measuring it: C rejects it before it writes anything unless it is
  // (sentAgain() measures it then).
  let guessed = false
  if (dropped) {
    // write_() sets _contentLength from the chunk it then drops; only the
    // header block goes out.
    if (res._header === null) len = bodyLength(chunk, encoding)
  } else if (chunk) {
    if (typeof chunk === 'string') {
      // (The typeof first: a strict comparison of a string with undefined
      // would be a call.)
      if (typeof encoding === 'string' && encoding === 'latin1') {
        flags = FLAGS.BODY_LATIN1
      } else {
        flags = FLAGS.HEAD_UTF8 | FLAGS.ASCII_ONLY
        guessed = block !== null && block.slot >= 0
      }
    }
    len = guessed ? chunk.length : bodyLength(chunk, encoding)
    if (len > maxBodySize()) {
      count(FALLBACK.BODY_TOO_LARGE, res)
      return false
    }
    // Text that is not ASCII goes out as UTF-8, head included, as Node
    // merges it.
    if (!guessed && (flags & FLAGS.ASCII_ONLY) !== 0 && len !== chunk.length) flags = FLAGS.HEAD_UTF8
  }
  const m = message
  m.block = block
  m.body = dropped ? null : chunk
  m.flags = flags
  m.dropped = dropped
  return endWithHeader(res, callback, len, guessed)
}

/**
 * Takes the header block (renders a fresh one when there is none yet) and
 * sends the response. One compilation unit (docs/architecture.md, "The
 * inlining budget").
 * @param {number} len the body's byte length (a guess when `guessed`;
 * when the body is dropped, its measured length or 0)
 * @param {boolean} guessed `len` is the string's length, not measured
 * @returns {boolean} as nativeEnd()
 */
function endWithHeader (res, callback, len, guessed) {
  const m = message
  let block = m.block
  const chunk = m.body
  let flags = m.flags
  // Blocks rendered here hold only validated chars up to 0xFF, which C
  // copies as latin1; a block Node rendered may not (Content-Disposition
  // can decode UTF-8), so it is read in full.
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
    flags |= FLAGS.HEAD_ONE_BYTE
  } else {
    lines = countLines(res._header)
    // C frames a body after a chunked block Node rendered, as end() does.
    chunked = !!res.chunkedEncoding && res._hasBody === true
  }
  // After a cached (ASCII) block, a UTF-8 string body whose byte length is
  // its length is ASCII too: latin1 is the cheaper read of the same bytes.
  if (slot >= 0 && typeof chunk === 'string' && !guessed && len === chunk.length) {
    flags = FLAGS.BODY_LATIN1
  }
  if (chunked) flags |= FLAGS.CHUNKED
  m.block = block
  m.slot = slot
  m.lines = lines
  m.bodyLength = m.dropped ? 0 : len
  m.flags = flags
  // Counted first: sendEnd() ends with 'prefinish', whose listener may
  // throw.
  stats.native++
  const code = sendEnd(res, m, callback)
  return code === 0 || sentAgain(res, m, callback, code, guessed)
}

/**
 * endWithHeader() when renderFresh() did not render: Node's own renderer
 * writes the header (RENDER_BY_NODE), or the response falls back with the
 * reason returned. Off the common path (docs/architecture.md, "The
 * inlining budget").
 * @param {number} previousLength `res._contentLength` before endWithHeader()
 * @param {*} chunk the body, null when Node drops it
 * @returns {boolean} true when Node rendered a block to send, false when
 * the fallback was counted
 */
function renderedByNode (res, fresh, previousLength, chunk) {
  if (fresh === RENDER_BY_NODE && decide.nodeRenderedString(res, chunk, null)) {
    // Left to Node before it renders (lib/decide.js slicedString).
    res._contentLength = previousLength
    count(FALLBACK.NODE_RENDERED, res)
    return false
  }
  if (fresh !== RENDER_BY_NODE) {
    res._contentLength = previousLength
    count(fresh, res)
    return false
  }
  res._implicitHeader()
  // Sent as a block Node rendered even where the shim's writeHead() did:
  // the renderer keeps no hand-off.
  render.takeBlock(res)
  if (res.chunkedEncoding || res._headerSent || typeof res._header !== 'string') {
    count(FALLBACK.CHUNKED, res)
    return false
  }
  return true
}

/**
 * endWithHeader() after sendEnd() refused `m` (unsent, nothing of the
 * user's ran) with `code`: sends it once more where the refusal came from
 * a guess about the text, or counts the fallback. Off the common path, as
 * renderedByNode().
 * @returns {boolean} true when the message went out, false when Node's
 * own end() must run (the fallback counted)
 */
function sentAgain (res, m, callback, code, guessed) {
  const flags = m.flags
  if (code === ENONASCII && guessed) {
    // Text that is not ASCII: measured now, and checked as it would have
    // been had it been measured first.
    const len = byteLength(m.body, 'utf8')
    if (len > maxBodySize()) {
      code = SEND_TOO_LARGE
    } else {
      m.bodyLength = len
      m.flags = flags & ~FLAGS.ASCII_ONLY
      code = sendEnd(res, m, callback)
    }
  } else if (code === ENONASCII && m.slot < 0 && (flags & FLAGS.CHUNKED) === 0 &&
      (flags & FLAGS.ASCII_ONLY) !== 0) {
    // A block Node rendered with latin1 values before ASCII text: Node
    // merges the two and writes them as UTF-8, and so does C now.
    m.flags = FLAGS.HEAD_UTF8
    code = sendEnd(res, m, callback)
  }
  if (code === 0) return true
  stats.native--
  count(code === SEND_TOO_LARGE
    ? FALLBACK.BODY_TOO_LARGE
    : code === ENONASCII ? FALLBACK.NON_ASCII : FALLBACK.INVALID, res)
  return false
}

// ServerResponse#end. Arguments are shuffled as OutgoingMessage#end does.
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
  // A wrapper of OutgoingMessage#end installed after this one is Node's
  // end() as far as this response is concerned.
  const nodeEnd = OutgoingMessage.prototype.end
  // After uninstall() a wrapper that captured this function still calls
  // it. Node's end() gets the arguments as they came (a wrapper sees their
  // number too).
  if (!installed) {
    // A block handed over before uninstall() is not kept for it.
    render.takeBlock(this)
    return nodeEnd.apply(this, arguments)
  }
  if (internals !== null && internals.learned.pending) internals.learn(this)
  // A response without a header has no block: its end() enters
  // lib/render.js only to render it.
  let block = this._header === null ? null : render.takeBlock(this)
  let reason = nodeEnd !== legacyEnd ? FALLBACK.PATCHED : fallbackReason(this, c, e, block)
  if (reason === FALLBACK.PATCHED && nodeEnd === legacyEnd && decide.headerFirst(this)) {
    if (!renderFirst(this, c, e)) {
      count(FALLBACK.PATCHED, this)
      return endByNode(endAfterHeaderCall, nodeEnd, this, arguments)
    }
    // The decision again, on what the wrapper left.
    block = render.takeBlock(this)
    reason = fallbackReason(this, c, e, block)
  }
  let counted = reason
  if (reason === null || reason === BODY_DROPPED) {
    if (nativeEnd(this, c, e, cb, block, reason === BODY_DROPPED)) return this
    releaseMessage()
    return this._header === null
      ? endByNode(callNodeEnd, nodeEnd, this, arguments)
      : nodeEnd.apply(this, arguments)
  }
  if (reason === FALLBACK.HEADERS_SENT && this.chunkedEncoding === false) {
    // write()s with Content-Length framing (h3, hapi, send, pipe()).
    counted = endStreamed(this, c, e, cb, block)
    if (counted === null) return this
    if (counted === REPORT) return endReporting(this, nodeEnd, arguments)
  }
  if ((reason === FALLBACK.HEADERS_SENT || (reason === FALLBACK.SOCKET_BUSY && heldTail)) &&
      tailEnd && (c || this.chunkedEncoding === true) && (!heldTail || heldUncork(this)) &&
      tailReason(this, c, e) === null) {
    // end() after write(): the writes waiting on the cork joined. Without
    // a chunk or chunked framing there is nothing to join: decided first,
    // with one read, so that responses streamed with Content-Length cost
    // Node's own end() and no more (benchmark/instructions.js, h3).
    stats.native++
    stats.writes.native += endAfterWrites(this, c, e, cb)
    return this
  }
  count(counted, this)
  // A header rendered already was taken above: Node's end() hands none over.
  return this._header === null
    ? endByNode(callNodeEnd, nodeEnd, this, arguments)
    : nodeEnd.apply(this, arguments)
}

function callNodeEnd (nodeEnd, res, args) {
  return nodeEnd.apply(res, args)
}

// Node's own end() through `run` for `res`, which has no header yet, then
// takes the block the shim's writeHead() handed over if Node's end()
// rendered through it, also when it throws: the renderer would keep the
// finished response. A response with a header does without the try block
// (benchmark/instructions.js shape fallback).
function endByNode (run, nodeEnd, res, args) {
  try {
    return run(nodeEnd, res, args)
  } finally {
    render.takeBlock(res)
  }
}

/**
 * end() after write()s with Content-Length framing that wait on the
 * socket's cork: the cached block and their body in one direct write.
 * @returns {string|null} null when done; REPORT when a pending socket error
 *   failed the write; else the reason Node's own end() must run for
 */
function endStreamed (res, chunk, encoding, callback, block) {
  const reason = streamedReason(res, chunk, encoding, block)
  if (reason !== null) return reason
  // 22+'s end() calls the response's uncork(), the shim's on 24.22+.
  if (res.uncork !== legacyUncork && !heldUncork(res)) return FALLBACK.PATCHED
  const handle = tcpHandle(res.socket)
  if (handle === null) return FALLBACK.STREAMED
  const m = message
  m.slot = block.slot
  m.contentLength = block.lengthArgument()
  m.handle = handle
  const code = sendWaiting(res, m, chunk, encoding, callback)
  // endReporting() still needs the handle.
  m.body = null
  if (code !== SEND_REPORT) m.handle = null
  if (code === 0) {
    stats.native++
    finishSent(res)
    return null
  }
  // C may have stopped before it read the length.
  block.forgetLength()
  if (code === SEND_REPORT) {
    stats.native++
    return REPORT
  }
  if (code === SEND_HEADER_GONE) return FALLBACK.HEADERS_SENT
  if (code === SEND_BUSY) return FALLBACK.SOCKET_BUSY
  if (code === SEND_TOO_LARGE) return FALLBACK.BODY_TOO_LARGE
  if (code === ENONASCII) return FALLBACK.NON_ASCII
  return code === SEND_ENCODING ? FALLBACK.ENCODING : FALLBACK.INVALID
}

// endStreamed(): Node's own end() must meet the error a direct write met.
const REPORT = 'report'

// Node's own end() after a pending socket error failed endStreamed()'s
// direct write: the socket's handle answers its write with that error.
function endReporting (res, nodeEnd, args) {
  const m = message
  const handle = m.handle
  m.handle = null
  return reportingWrites(handle, m.failed, res._header.length + m.bodyLength,
    () => nodeEnd.apply(res, args))
}

// The start of Node's end() where a wrapper replaced writeHead():
// socket.cork(), the body's byte length in _contentLength, then
// _implicitHeader(), which calls the wrapper (as 24.21+'s
// maybePrepareFinalChunk() does). The cork is taken back when nothing was
// written under it; else Node's own end() skips those calls and uncorks
// fully. True when the wrapper left a rendered header to decide on again.
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

// Node's end() after renderFirst()'s _implicitHeader() rendered nothing:
// its first call of _implicitHeader() on `res` is skipped (a wrapper would
// run twice), a later one goes to the method. The skip stands in for the
// method where it is found, for this call only: a key added to `res` would
// show in Object.keys(res) to a 'prefinish' listener.
function endAfterHeaderCall (nodeEnd, res, args) {
  let owner = res
  while (owner !== null && !Object.hasOwn(owner, '_implicitHeader')) owner = Object.getPrototypeOf(owner)
  const own = owner === null ? undefined : Object.getOwnPropertyDescriptor(owner, '_implicitHeader')
  // No data property to stand in for: Node's end() calls it again.
  if (own === undefined || !own.configurable || !Object.hasOwn(own, 'value')) {
    return nodeEnd.apply(res, args)
  }
  const method = own.value
  let skipped = false
  Object.defineProperty(owner, '_implicitHeader', {
    ...own,
    value: function _implicitHeader () {
      if (this === res && !skipped) {
        skipped = true
        return
      }
      return method.call(this)
    }
  })
  try {
    return nodeEnd.apply(res, args)
  } finally {
    Object.defineProperty(owner, '_implicitHeader', own)
  }
}

// Where heldTail, end() sends held chunks as Node's would through
// res.uncork(): the shim's, over Node's own.
function heldUncork (res) {
  return res.uncork === uncork && OutgoingMessage.prototype.uncork === legacyUncork
}

// ServerResponse#write where the probe found Node 20's chunked write(): a
// chunk goes to the socket in two or three writes instead of four.
function write (chunk, encoding, callback) {
  // A wrapper of OutgoingMessage#write put on after this one is Node's.
  const nodeWrite = OutgoingMessage.prototype.write
  if (!installed) return nodeWrite.apply(this, arguments)
  let e = encoding
  let cb = callback
  if (typeof e === 'function') {
    cb = e
    e = null
  }
  let reason = nodeWrite !== legacyWrite ? FALLBACK.PATCHED : writeReason(this, chunk, e)
  if (reason === WRITE.HEADER_PENDING) {
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

// ServerResponse#uncork where the probe found Node 24.22's chunked write():
// the chunks a response holds on its own cork go out in fewer writes.
function uncork () {
  const nodeUncork = OutgoingMessage.prototype.uncork
  if (installed) {
    const reason = nodeUncork !== legacyUncork ? FALLBACK.PATCHED : uncorkReason(this)
    if (reason === null) {
      stats.writes.native += flushChunks(this)
      return
    }
    if (reason !== WRITE.NOTHING_HELD) {
      stats.writes.fallback += this[internals.kChunkedBuffer].length / 3
      if (debugEnabled) debug('uncork() by Node: %s', reason)
    }
  }
  return nodeUncork.apply(this, arguments)
}

// Whether end() after write() sends in fewer writes: where end() and
// write_() are both Node 20's, or both Node 24.22's (heldTail; a response
// that holds chunks falls back as socket-busy first).
const heldTail = internals !== null && internals.chunkedUncork === true &&
  internals.protocol.name === 'node24'
const tailEnd = heldTail || (internals !== null && internals.chunkedWrite === true &&
  internals.protocol.name === 'node20')

// Set by lib/patches.js install()/uninstall(): after uninstall() a wrapper
// that captured a replacement still calls it, and Node's method then runs.
let installed = false

function setInstalled (on) {
  installed = on
}

module.exports = {
  FALLBACK,
  // lib/index.js fallbackReason(): for the block the response carries now
  // (left for its end() to take), null for either native answer.
  fallbackReason: (res, chunk, encoding) => {
    const reason = fallbackReason(res, chunk, encoding, res ? render.blockOf(res) : null)
    return reason === BODY_DROPPED ? null : reason
  },
  end,
  write,
  uncork,
  setInstalled,
  // The counters themselves, for tests; lib/index.js reads counts().
  stats,
  resetStats,
  counts
}
