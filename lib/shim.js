'use strict'

// The replacement for ServerResponse#end (and #write, #uncork where the
// probe found Node's chunked write()), from end() down to the write, and
// install()/uninstall() of them and of lib/write-head.js's writeHead.
// end() calls each file below it once on the way down: it takes the block
// the renderer put on the response (lib/render.js takeBlock()), hands it as
// a value to lib/decide.js fallbackReason(), which picks the path (and
// says whether Node drops the body), then nativeEnd() renders a fresh
// header if needed (lib/render.js renderFresh(), for a response without
// one) and fills the write's inputs, a lib/send.js Message, for sendEnd(),
// which writes and finishes. Node's own end() runs whenever the decision
// says so, before anything on the response changed.

const http = require('node:http')
const util = require('node:util')
const binding = require('./binding.js')
const internals = require('./internals.js')
const decide = require('./decide.js')
const render = require('./render.js')
const writeHeadShim = require('./write-head.js')
const headers = require('./headers.js')
const patches = require('./patches.js')
const { FLAGS, ERRORS } = require('./codes.js')
const {
  Message, COPY_MAX_BODY, SEND_TOO_LARGE, SEND_BUSY, SEND_REPORT, SEND_ENCODING, SEND_HEADER_GONE, countLines, sendEnd,
  finishSent, writeChunk, endAfterWrites, flushChunks, sendWaiting, reportingWrites,
  tcpHandle, directStats, directCounts, resetDirectStats
} = require('./send.js')

const debug = util.debuglog('http-oneshot')
const { ENONASCII } = ERRORS
// Read once: NODE_DEBUG is read at start-up, and `enabled` is a getter.
const debugEnabled = debug.enabled

const {
  FALLBACK, BODY_DROPPED, DEFAULT_MAX_BODY, WRITE, maxBodySize, fallbackReason, writeReason, tailReason, uncorkReason,
  streamedReason
} = decide
const { RENDER_BY_NODE } = render

// end() calls by path (and fallback reason); write() calls by path.
const stats = { native: 0, fallback: 0, reasons: reasonCounts(), writes: { native: 0, fallback: 0 } }

// The fallback counts by reason: an object whose prototype was set to null
// after it was created stays in fast mode while it holds a few keys, where
// Object.create(null) starts as a dictionary, whose keyed load and store
// count() would pay on every response that falls back (lib/headers.js
// explains the same choice for the header store).
function reasonCounts () {
  return Object.setPrototypeOf({}, null)
}

// stats() starts again from zero (lib/index.js resetStats()).
function resetStats () {
  stats.native = 0
  stats.fallback = 0
  stats.writes.native = 0
  stats.writes.fallback = 0
  // A fresh object: deleting its keys would turn it into a dictionary.
  stats.reasons = reasonCounts()
  resetDirectStats()
}

/**
 * The counters, as a copy: what lib/index.js stats() reports (before the
 * responses it counts itself).
 * @returns {{ native: number, fallback: number, direct: number, partial: number,
 *   reasons: Record<string, number>, writes: { native: number, fallback: number } }}
 */
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

// The inputs of the one write (lib/send.js), filled by nativeEnd() and
// endWithHeader() for each call and read by sendEnd() before anything of
// the user's can run: one record, not one per response. What refers to
// the response (its body, its socket's handle) is cleared once the write
// is done with it (lib/send.js sendEnd(), releaseMessage()), so that the
// record keeps nothing of a finished response (test/retention.test.js).
const message = new Message()

// The record's references to a response whose write did not happen, or
// no longer needs them: Node's own end() takes over, or endStreamed()'s
// write returned.
function releaseMessage () {
  message.body = null
  message.handle = null
}

// Read once: the global Buffer is a getter.
const { byteLength } = Buffer

const { ServerResponse, OutgoingMessage } = http
// Node's own methods; null where a wrapper was there before install()
// (lib/node-methods.js): no method is then equal to them, and every call
// goes to what is there.
const legacyEnd = internals === null ? null : internals.end
const legacyWrite = internals === null ? null : internals.write
const legacyUncork = internals === null ? null : internals.uncork

// Counts a fallback of `res`; under NODE_DEBUG=http-oneshot it also names
// the response (the line is built only then).
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

/**
 * The native end(): measures the body, then endWithHeader() renders the
 * header if needed (or takes the block writeHead() rendered) and sends the
 * response in one write. The body's description goes to endWithHeader() in
 * the write's record (`message`: `block`, `body`, `flags`, `dropped`), its
 * length and whether that is a guess as arguments; the rare cases
 * (renderedByNode(), sentAgain()) are helpers no common response calls.
 * @param {object|null} block lib/render.js takeBlock() for `res`
 * @param {boolean} dropped Node drops the chunk (fallbackReason() answered
 *   BODY_DROPPED): HEAD, 1xx, 204, 304
 * @returns {boolean} false when Node's own end() must run instead (the
 * header may have been rendered, which legacy end() continues from)
 */
function nativeEnd (res, chunk, encoding, callback, block, dropped) {
  let flags = 0
  let len = 0
  // A UTF-8 string body after a block writeHead() cached is taken to be
  // ASCII, with as many bytes as chars, without measuring it: C reads it as
  // UTF-8 and rejects it, before it writes anything, unless it is ASCII
  // (the cached block is). Other text is measured then and sent again.
  let guessed = false
  if (dropped) {
    // write_: a HEAD, 1xx, 204 or 304 response drops the chunk after it set
    // _contentLength from it; only the header block goes out, as latin1.
    // Measured only to set _contentLength before the header is rendered,
    // as write_() measures it.
    if (res._header === null) len = bodyLength(chunk, encoding)
  } else if (chunk) {
    if (typeof chunk === 'string') {
      // (The typeof first: `encoding` is a string or not given, and a
      // strict comparison of the two kinds would otherwise be a call.)
      if (typeof encoding === 'string' && encoding === 'latin1') {
        flags = FLAGS.BODY_LATIN1
      } else {
        flags = FLAGS.HEAD_UTF8 | FLAGS.ASCII_ONLY
        guessed = block !== null && block.slot >= 0
      }
    }
    // A guess is the least the byte length can be.
    len = guessed ? chunk.length : bodyLength(chunk, encoding)
    if (len > maxBodySize()) {
      count(FALLBACK.BODY_TOO_LARGE, res)
      return false
    }
    // A UTF-8 string has as many bytes as chars only when it is ASCII.
    // Other text goes out as UTF-8, head included as Node merges it
    // (lib/send.js keeps Node's char-based stream readings for it).
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
 * nativeEnd()'s second step: takes the header block (renders a fresh one
 * when the response has none yet), completes the write's record and sends
 * the response (lib/send.js sendEnd(): the handle, the write, the finish).
 * A compilation unit of its own on Node 24 and 26 (on Node 20 nativeEnd()
 * is) (docs/architecture.md, "The inlining budget").
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
  // Blocks rendered here hold only validated chars up to 0xFF, so the C
  // side may copy them as latin1; a block Node rendered may not (its
  // Content-Disposition handling can decode UTF-8), so it is read in full.
  let slot = -1
  let lines
  let chunked = false
  if (res._header === null) {
    const previousLength = res._contentLength
    res._contentLength = len
    const fresh = render.renderFresh(res, len)
    // An Entry on the common responses; the strings are left to a helper.
    if (typeof fresh !== 'string') {
      block = fresh
    } else if (!renderedByNode(res, fresh, previousLength, chunk)) {
      return false
    }
  }
  if (block !== null) {
    slot = block.slot
    lines = block.lines
    // fallbackReason() let a chunked block through only when it is cached.
    chunked = block.chunked
    flags |= FLAGS.HEAD_ONE_BYTE
  } else {
    lines = countLines(res._header)
    // A block Node's writeHead() rendered with chunked framing (fallbackReason()
    // let it through): C frames the body as end() does, with a body only.
    chunked = !!res.chunkedEncoding && res._hasBody === true
  }
  // A cached block is ASCII, and so is a UTF-8 string body whose byte
  // length equals its length: C copies such a body as latin1, the cheaper
  // read, with the same bytes. (`chunk` is null when the body is dropped.)
  if (slot >= 0 && typeof chunk === 'string' && !guessed && len === chunk.length) {
    flags = FLAGS.BODY_LATIN1
  }
  // C frames the body of a chunked block.
  if (chunked) flags |= FLAGS.CHUNKED
  m.block = block
  m.slot = slot
  m.lines = lines
  m.bodyLength = m.dropped ? 0 : len
  m.flags = flags
  // Counted first: sendEnd() ends with 'prefinish', whose listener may
  // throw. sentAgain() takes it back when the write was refused.
  stats.native++
  const code = sendEnd(res, m, callback)
  return code === 0 || sentAgain(res, m, callback, code, guessed)
}

/**
 * endWithHeader() when lib/render.js renderFresh() did not render: Node's
 * own renderer writes the header (RENDER_BY_NODE), or the response falls
 * back with the reason it returned. A helper the common responses never
 * call (docs/architecture.md, "The inlining budget").
 * @param {string} fresh renderFresh()'s result, not an Entry
 * @param {number} previousLength `res._contentLength` before
 * endWithHeader() set it to the body's length for the renderer
 * @param {*} chunk the body, null when Node drops it
 * @returns {boolean} true when Node rendered a block endWithHeader() sends
 * (res._header), false when the fallback was counted
 */
function renderedByNode (res, fresh, previousLength, chunk) {
  if (fresh === RENDER_BY_NODE && decide.nodeRenderedString(res, chunk, null)) {
    // Left to Node before it renders: see lib/decide.js, slicedString.
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
  // The shim's writeHead() may have rendered it: endWithHeader() sends it as
  // the block Node rendered, and the renderer keeps no hand-off for it.
  render.takeBlock(res)
  if (res.chunkedEncoding || res._headerSent || typeof res._header !== 'string') {
    count(FALLBACK.CHUNKED, res)
    return false
  }
  return true
}

/**
 * endWithHeader() after sendEnd() refused the message (`code`): sends it
 * once more where the refusal came from a guess about the text, or takes
 * back the native count and counts the fallback. A helper for the reason
 * renderedByNode() is one: a response sendEnd() takes never calls it.
 * @param {Message} m the message as endWithHeader() filled it: a refusal
 * leaves it unsent, and nothing of the user's ran
 * @param {boolean} guessed the body's byte length was taken to be its
 * length (a UTF-8 string after a cached block), without measuring it
 * @returns {boolean} true when the message went out, false when Node's
 * own end() must run (the fallback counted)
 */
function sentAgain (res, m, callback, code, guessed) {
  const flags = m.flags
  if (code === ENONASCII && guessed) {
    // Text that is not ASCII: measured now, and checked as it would have
    // been had it been measured first (sendEnd() checks COPY_MAX_BODY).
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

/**
 * ServerResponse#end replacement. Arguments are shuffled exactly as
 * OutgoingMessage#end does before anything else.
 */
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
  // After uninstall() a wrapper that captured this function still calls it:
  // Node's own end() then runs, uncounted.
  // Node's end() gets the arguments as they came (a wrapper of it sees
  // their number too).
  if (!installed) {
    // A block handed over before uninstall() is not kept for it.
    render.takeBlock(this)
    return nodeEnd.apply(this, arguments)
  }
  if (internals !== null && internals.learned.pending) internals.learn(this)
  // The block writeHead() rendered, taken (a response without a header has
  // none: its end() enters lib/render.js only to render it).
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
    // end() after write(): the chunk in fewer socket writes, and the
    // writes waiting on the cork joined (lib/send.js, endAfterWrites()).
    // Without a chunk or chunked framing there is nothing to join
    // (tailReason() says no): that is decided first, with one read, for
    // the responses streamed with Content-Length (h3, send, hapi), which
    // then cost Node's own end() and no more (benchmark/instructions.js, h3).
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

/**
 * Node's own end() for `res`, which has no header yet, through `run`
 * (callNodeEnd() or endAfterHeaderCall()), with end()'s arguments as they
 * came, then the block the shim's writeHead() handed over, if Node's end()
 * rendered the header through it (_implicitHeader()): no end() of the
 * shim's takes that one, and the renderer would keep the finished response
 * until the next rendering. Also when Node's end() throws
 * (strictContentLength, a mismatch). A response with a header takes Node's
 * end() directly: end() took its block, and the fallbacks of a rendered
 * block (benchmark/instructions.js shape fallback) do not pay for the try
 * block.
 * @returns {http.ServerResponse} what Node's end() returns
 */
function endByNode (run, nodeEnd, res, args) {
  try {
    return run(nodeEnd, res, args)
  } finally {
    render.takeBlock(res)
  }
}

/**
 * end() after write()s with Content-Length framing that wait on the
 * socket's cork: the cached header block and their body in one direct
 * write (lib/send.js, sendWaiting()), once lib/decide.js streamedReason()
 * said yes.
 * @param {object|null} block lib/render.js takeBlock() for `res`
 * @returns {string|null} null when done; REPORT when a pending socket error
 *   failed the write (`message` holds it); else the reason Node's own end()
 *   must run for (nothing changed)
 */
function endStreamed (res, chunk, encoding, callback, block) {
  const reason = streamedReason(res, chunk, encoding, block)
  if (reason !== null) return reason
  // Node's end() calls the response's uncork() (Node 22+), which the shim
  // replaces where Node 24.22's write() holds chunks.
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

// What endStreamed() returns when Node's own end() must meet the error a
// direct write met.
const REPORT = 'report'

// Node's own end() after a pending socket error failed endStreamed()'s
// direct write (`message` holds the errno): the socket's handle answers
// its write with that error (the response counts as native).
function endReporting (res, nodeEnd, args) {
  const m = message
  const handle = m.handle
  m.handle = null
  return reportingWrites(handle, m.failed, res._header.length + m.bodyLength,
    () => nodeEnd.apply(res, args))
}

/**
 * The start of Node's end() where a wrapper replaced writeHead()
 * (decide.headerFirst()): socket.cork(), the body's byte length in
 * _contentLength (0 without a body), then _implicitHeader(), which calls
 * the wrapper; in 24.21+ maybePrepareFinalChunk() makes the same calls in
 * the same order. The wrapper runs as it would there, with the socket
 * corked. The cork is taken back when nothing was written under it (no
 * event, no write: nothing is buffered); anything else stays for Node's
 * own end(), which finds the header rendered, skips those calls and
 * leaves the socket fully uncorked.
 * @returns {boolean} whether the wrapper left a rendered header, on which
 *   end() then takes the decision again
 */
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

/**
 * Node's end() after renderFirst() called _implicitHeader() and no header
 * came of it: its first call of _implicitHeader() on `res`, the one
 * renderFirst() made, is skipped (a wrapper would run twice), any later one
 * (write_() after maybePrepareFinalChunk() in 24.21+) goes to the method.
 * The skip goes where the method is found (ServerResponse.prototype, as a
 * rule), in place of it and for this call only: a key added to `res` would
 * show in Object.keys(res) to a 'prefinish' listener.
 */
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

// Where heldTail, end() sends held chunks as Node's end() would through
// res.uncork(): the shim's, over Node's own OutgoingMessage#uncork.
function heldUncork (res) {
  return res.uncork === uncork && OutgoingMessage.prototype.uncork === legacyUncork
}

/**
 * ServerResponse#write replacement, where the probe found Node 20's
 * chunked write() (internals.chunkedWrite): a chunk of a chunked response
 * goes to the socket in two or three writes instead of four
 * (lib/send.js, writeChunk()); anything else is Node's own write().
 */
function write (chunk, encoding, callback) {
  // A wrapper of OutgoingMessage#write installed after this one is Node's
  // write() as far as this response is concerned.
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
    // write_() renders the header here, after the checks writeReason()
    // made; Node's write() continues from a rendered header the same way.
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

/**
 * ServerResponse#uncork replacement, where the probe found Node 24.22's
 * chunked write() (internals.chunkedUncork): the chunks a response holds on
 * its own cork go to the socket with fewer writes (lib/send.js,
 * flushChunks()); anything else is Node's own uncork().
 */
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

// Whether end() after write() sends its chunk in fewer writes (lib/send.js,
// endAfterWrites()): where end() is Node 20's (lib/protocol/node20.js) and
// so is write_() (internals.chunkedWrite), or where both are Node 24.22's
// (lib/protocol/node24.js, internals.chunkedUncork: heldTail), whose writes
// endAfterWrites() reproduces. There a response that holds chunks falls
// back as socket-busy first.
const heldTail = internals !== null && internals.chunkedUncork === true &&
  internals.protocol.name === 'node24'
const tailEnd = heldTail || (internals !== null && internals.chunkedWrite === true &&
  internals.protocol.name === 'node20')

let installed = false

// Where the native path can never run (no addon, or a Node line whose
// internals lib/internals.js does not recognise) install() leaves Node's
// methods untouched: a wrapper there would only cost every response time.
const canRun = binding !== null && internals !== null

// Puts end() on ServerResponse.prototype, writeHead() where Node's own is
// there, and write() or uncork() where the probe found the chunked write()
// they reproduce and Node's own is there (lib/patches.js remembers what
// each replaced).
function install () {
  if (installed || !canRun) return
  const proto = ServerResponse.prototype
  patches.put(proto, 'end', end)
  writeHeadShim.install()
  if (internals.chunkedWrite && proto.write === legacyWrite) patches.put(proto, 'write', write)
  if (internals.chunkedUncork && proto.uncork === legacyUncork) patches.put(proto, 'uncork', uncork)
  decide.setEndMethods(proto.uncork, proto._storeHeader)
  headers.install()
  installed = true
}

// Restores what install() replaced, and only that: a method another module
// replaced since (an APM agent wrapping ServerResponse#end, say) stays, since
// putting the original back would silently drop that module's wrapper. The
// wrapper may still call this shim's end() or writeHead(), which is what it
// wrapped.
function uninstall () {
  if (!installed) return
  patches.takeBack('end')
  writeHeadShim.uninstall()
  patches.takeBack('write')
  patches.takeBack('uncork')
  decide.setEndMethods(legacyUncork, internals.resMethods._storeHeader)
  headers.uninstall()
  installed = false
}

module.exports = {
  FALLBACK,
  DEFAULT_MAX_BODY,
  COPY_MAX_BODY,
  // The public fallbackReason() of lib/index.js: for the block the
  // response carries now (left for its end() to take), null for either
  // native answer.
  fallbackReason: (res, chunk, encoding) => {
    const reason = fallbackReason(res, chunk, encoding, res ? render.blockOf(res) : null)
    return reason === BODY_DROPPED ? null : reason
  },
  end,
  write,
  uncork,
  install,
  uninstall,
  isInstalled: () => installed,
  // The counters themselves, for tests; lib/index.js reads counts().
  stats,
  resetStats,
  counts,
  directStats,
  // The install() options in force, as a copy (lib/decide.js owns them).
  get options () {
    return { maxBodySize: maxBodySize() }
  }
}
