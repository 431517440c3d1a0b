// Checked by `npm run test:types` (tsc --noEmit), never run. A CommonJS
// file: 'http-oneshot' resolves through the "require" condition to
// index.d.ts. Each @ts-expect-error line is a mistake the declarations must
// reject; tsc fails when one of them compiles.

import type { ServerResponse } from 'node:http'
import {
  FALLBACK, buildHttpMessage, fallbackReason, install, isActive, isInstalled, isNative,
  loadError, resetStats, stats, uninstall
} from 'http-oneshot'
import type { FallbackReason, InactiveReason, InstallOptions, Stats } from 'http-oneshot'
import oneshot = require('http-oneshot')

// True when A and B are the same type (not merely assignable either way).
type Equal<A, B> =
  (<T>() => T extends A ? 1 : 2) extends (<T>() => T extends B ? 1 : 2) ? true : false
function assertType<A, B> (same: Equal<A, B>): Equal<A, B> {
  return same
}

// FALLBACK: exact keys and values, read-only.
assertType<typeof FALLBACK.NO_BINDING, 'no-binding'>(true)
assertType<typeof FALLBACK.UNSUPPORTED_NODE, 'unsupported-node'>(true)
assertType<typeof FALLBACK.PATCHED, 'patched'>(true)
assertType<typeof FALLBACK.INVALID, 'invalid'>(true)
assertType<keyof typeof FALLBACK,
  'NO_BINDING' | 'UNSUPPORTED_NODE' | 'DEBUG' | 'FINISHED' | 'DESTROYED' | 'HEADERS_SENT' |
  'NO_SOCKET' | 'NOT_SOCKET_OWNER' | 'SOCKET_UNWRITABLE' | 'SOCKET_BUSY' | 'PATCHED' |
  'HTTP_VERSION' | 'HEAD' | 'NO_BODY_STATUS' | 'EXPECT' | 'STRICT_CONTENT_LENGTH' | 'TRAILERS' |
  'TRANSFER_ENCODING' | 'CHUNKED' | 'ENCODING' | 'CHUNK_TYPE' | 'BODY_TOO_LARGE' |
  'HEADER_VALUE' | 'NON_ASCII' | 'STREAMED' | 'NODE_RENDERED' | 'KEEP_ALIVE_MAX' | 'INVALID'>(true)
assertType<FallbackReason,
  'no-binding' | 'unsupported-node' | 'debug' | 'finished' | 'destroyed' | 'headers-sent' |
  'no-socket' | 'not-socket-owner' | 'socket-unwritable' | 'socket-busy' | 'patched' |
  'http-version' | 'head' | 'no-body-status' | 'expect' | 'strict-content-length' | 'trailers' |
  'transfer-encoding' | 'chunked' | 'encoding' | 'chunk-type' | 'body-too-large' |
  'header-value' | 'non-ascii' | 'streamed' | 'node-rendered' | 'keep-alive-max' | 'invalid'>(true)
// @ts-expect-error: a misspelled key
console.log(FALLBACK.NO_BINDNG)
// @ts-expect-error: FALLBACK is frozen
FALLBACK.PATCHED = 'patched'
// @ts-expect-error: not a reason
const notAReason: FallbackReason = 'no-bindings'
console.log(notAReason)

// install(): options as the runtime reads them.
const un: () => void = install()
install({})
install(undefined)
install({ maxBodySize: 1024 })
install({ maxBodySize: undefined })
// @ts-expect-error: maxBodySize is a number
install({ maxBodySize: '1024' })
// @ts-expect-error: a misspelled option
install({ maxBodysize: 1024 })
// @ts-expect-error: null throws a TypeError at run time
install(null)
// @ts-expect-error: so does a number
install(1024)
const options: InstallOptions = { maxBodySize: 0 }
install(options)
un()
uninstall()
assertType<ReturnType<typeof uninstall>, void>(true)
assertType<ReturnType<typeof isInstalled>, boolean>(true)
assertType<ReturnType<typeof isActive>, boolean>(true)

// stats() and resetStats().
const s: Stats = stats()
assertType<typeof s.native, number>(true)
assertType<typeof s.direct, number>(true)
assertType<typeof s.partial, number>(true)
const patched: number | undefined = s.reasons.patched
console.log(patched, s.reasons['no-socket'])
// @ts-expect-error: reasons are keyed by FALLBACK values
console.log(s.reasons.NO_SOCKET)
const pending: number | undefined = s.reasons['probe-pending']
console.log(pending)
assertType<typeof s.inactiveReason, InactiveReason | null>(true)
const inactiveWhy: InactiveReason | null = s.inactiveReason
if (inactiveWhy === 'unsupported-node' || inactiveWhy === 'probe-pending' || inactiveWhy === null) console.log(inactiveWhy)
// @ts-expect-error: not an inactive reason
const notAReason: InactiveReason = 'headers-sent'
console.log(notAReason)
resetStats()

// fallbackReason(): null or a reason.
declare const res: ServerResponse
const reason = fallbackReason(res, 'hello', 'utf8')
assertType<typeof reason, FallbackReason | null>(true)
if (reason === FALLBACK.NO_SOCKET) console.log(reason)
fallbackReason(res)
// @ts-expect-error: the response is required
fallbackReason()

// buildHttpMessage() and the load state.
const message: Buffer = buildHttpMessage(200, undefined, ['Content-Length', 5], 'hello')
buildHttpMessage(404, 'Not Found', { 'Set-Cookie': ['a=1', 'b=2'], 'X-N': 1 }, Buffer.from('x'),
  { encoding: 'latin1', chunked: true, headerEncoding: 'utf8' })
buildHttpMessage(204, null, null, null, null)
// @ts-expect-error: not an encoding it accepts
buildHttpMessage(200, undefined, [], 'x', { encoding: 'base64' })
// @ts-expect-error: chunked is a boolean
buildHttpMessage(200, undefined, [], 'x', { chunked: 1 })
// @ts-expect-error: a body is a string or a Uint8Array
buildHttpMessage(200, undefined, [], 42)
const native: boolean = isNative
const why: Error | null = loadError
console.log(message, native, why)

// The CommonJS module object carries the same members.
assertType<typeof oneshot.install, typeof install>(true)
assertType<typeof oneshot.FALLBACK, typeof FALLBACK>(true)
