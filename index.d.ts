/// <reference types="node" />
import type { ServerResponse } from 'node:http'

/** Header input for buildHttpMessage: a flat [name, value, ...] array or a plain object. */
export type HeaderValue = string | number | ReadonlyArray<string | number>
export type Headers =
  | ReadonlyArray<string | number | ReadonlyArray<string | number>>
  | Readonly<Record<string, HeaderValue>>

export interface BuildOptions {
  /** Encoding of a string body: 'utf8' (default), 'latin1' or 'ascii' (written as latin1). */
  encoding?: 'utf8' | 'utf-8' | 'latin1' | 'ascii' | undefined
  /** Frame the body as one chunk of chunked transfer coding plus the last chunk. */
  chunked?: boolean | undefined
  /**
   * How header strings become bytes: 'latin1' (default), as Node writes a header block,
   * or 'utf8', as Node sends it when it joins the block with a UTF-8 string body.
   */
  headerEncoding?: 'latin1' | 'utf8' | 'utf-8' | undefined
}

/**
 * Serializes a status line, headers and an optional body into one Buffer.
 * Throws the errors Node throws for the same mistakes (ERR_INVALID_HTTP_TOKEN,
 * ERR_INVALID_CHAR, ERR_HTTP_INVALID_HEADER_VALUE, ERR_INVALID_ARG_TYPE,
 * ERR_INVALID_ARG_VALUE, ERR_HTTP_INVALID_STATUS_CODE).
 *
 * Each header value (a getter, a proxy trap) is read once per call. The last
 * few validated header blocks are reused when a call's status, reason,
 * header names and values (compared by value each call) and header encoding
 * equal an earlier call's. Results up to 8 KiB (with a UTF-8 string body,
 * up to 32 Ki chars of head and body) are slices of a shared 64 KiB
 * ArrayBuffer, as Buffer.allocUnsafe() slices Node's pool: they never share
 * bytes, but a kept result keeps its slab alive.
 */
export function buildHttpMessage (
  statusCode: number,
  reason?: string | null,
  headers?: Headers | null,
  body?: string | Uint8Array | null,
  options?: BuildOptions | null
): Buffer

/** True when the native addon is loaded; false when the JS implementation runs. */
export const isNative: boolean

/** Why the addon did not load (null when it did); also logged with NODE_DEBUG=http-oneshot. */
export const loadError: Error | null

/**
 * The options install() reads. Any other key is ignored at run time; here it
 * is a compile error, which catches a misspelled option.
 */
export interface InstallOptions {
  /**
   * Bodies above this many bytes take Node's own path (default
   * Number.MAX_SAFE_INTEGER: no limit; a body above 4 KiB takes the native
   * path only when it can be written straight to the socket). A
   * non-negative safe integer; anything else throws a RangeError with code
   * 'ERR_OUT_OF_RANGE'. Left out (or undefined), the value an earlier
   * install() set stays.
   */
  maxBodySize?: number | undefined
}

/**
 * Patches http.ServerResponse.prototype.end (and writeHead). Idempotent; does
 * nothing when HTTP_ONESHOT=0 or off. Sets only the options given: a later
 * call without them keeps what an earlier call set. Where the native path
 * cannot run, leaves Node untouched (isInstalled() false) and emits, once
 * per process, a warning with code 'HTTP_ONESHOT_INACTIVE' ("http-oneshot
 * is not installed: <why>"); the preload (http-oneshot/register) never
 * warns. Where the behaviour probe's answer for this Node binary is not
 * stored yet, waits for the probe (once per binary). Returns uninstall().
 */
export function install (options?: InstallOptions): () => void

/**
 * Restores what install() replaced, and only that: a wrapper another module
 * put on ServerResponse#end or #writeHead after install() stays. Idempotent.
 */
export function uninstall (): void

/**
 * Whether the patch is in place. install() leaves Node untouched (and this
 * false) where the native path can never run: no addon, or a Node line whose
 * http internals the shim does not reproduce.
 */
export function isInstalled (): boolean

/**
 * Whether responses can take the native path: installed, the addon loaded,
 * and the Node line is one whose http internals the shim reproduces.
 */
export function isActive (): boolean

/**
 * The reasons a response takes Node's own end(), as lib/decide.js defines
 * them: a frozen object, so both its keys and its values are fixed.
 */
export const FALLBACK: {
  /** The addon did not load. */
  readonly NO_BINDING: 'no-binding'
  /** An internal of Node's http the shim reads was not found at load. */
  readonly UNSUPPORTED_NODE: 'unsupported-node'
  /** NODE_DEBUG=http: Node prints debug lines from end(). */
  readonly DEBUG: 'debug'
  /** end() after end(). */
  readonly FINISHED: 'finished'
  /** res.destroy() ran. */
  readonly DESTROYED: 'destroyed'
  /** write() or flushHeaders() already sent the header. */
  readonly HEADERS_SENT: 'headers-sent'
  /** No net.Socket: fake sockets (fastify.inject()), standalone responses. */
  readonly NO_SOCKET: 'no-socket'
  /** Pipelined: the socket serves an earlier response. */
  readonly NOT_SOCKET_OWNER: 'not-socket-owner'
  /** The socket is destroyed, ended or has no handle. */
  readonly SOCKET_UNWRITABLE: 'socket-unwritable'
  /** Corked, or data queued or in flight. */
  readonly SOCKET_BUSY: 'socket-busy'
  /** A method end() relies on was replaced by another module. */
  readonly PATCHED: 'patched'
  /** Not HTTP/1.1. */
  readonly HTTP_VERSION: 'http-version'
  /** A HEAD request given a body under rejectNonStandardBodyWrites: Node throws. */
  readonly HEAD: 'head'
  /** 1xx, 204 or 304 given a body under rejectNonStandardBodyWrites: Node throws. */
  readonly NO_BODY_STATUS: 'no-body-status'
  /** Expect: 100-continue, or a user Expect header. */
  readonly EXPECT: 'expect'
  /** res.strictContentLength is set. */
  readonly STRICT_CONTENT_LENGTH: 'strict-content-length'
  /** addTrailers() or a Trailer header. */
  readonly TRAILERS: 'trailers'
  /** A user Transfer-Encoding header. */
  readonly TRANSFER_ENCODING: 'transfer-encoding'
  /** Chunked framing on a header block the renderer did not cache. */
  readonly CHUNKED: 'chunked'
  /** A string body in an encoding other than utf8 or latin1. */
  readonly ENCODING: 'encoding'
  /** A chunk that is neither a string nor a Uint8Array. */
  readonly CHUNK_TYPE: 'chunk-type'
  /** A body above maxBodySize bytes, or above 4 KiB without a direct write. */
  readonly BODY_TOO_LARGE: 'body-too-large'
  /** A stored header value whose stringification runs user code. */
  readonly HEADER_VALUE: 'header-value'
  /** Non-ASCII UTF-8 text in a message of at least the socket's high-water mark. */
  readonly NON_ASCII: 'non-ascii'
  /** end() after write()s with Content-Length framing on a header block Node rendered, or a socket without a direct write (TLS, a UNIX domain socket). */
  readonly STREAMED: 'streamed'
  /** A string body after a header block Node rendered, where the end() protocol of 24.21+ and 26.8+ makes Node's end() cheaper. */
  readonly NODE_RENDERED: 'node-rendered'
  /** A maxRequestsPerSocket that is not an int32: Node lines render Keep-Alive's max differently. */
  readonly KEEP_ALIVE_MAX: 'keep-alive-max'
  /** Node would throw, or the core rejected the message. */
  readonly INVALID: 'invalid'
}

/** One of the values of FALLBACK. */
export type FallbackReason = typeof FALLBACK[keyof typeof FALLBACK]

/**
 * Why the native path is not running (Stats#inactiveReason):
 * - 'not-installed': install() has not run (the preload waits for the
 *   application to load http), or uninstall() ran;
 * - 'disabled': HTTP_ONESHOT=0 (or off, false, no);
 * - 'addon-disabled': HTTP_ONESHOT_NATIVE=0;
 * - 'addon-not-loaded': the native addon did not load;
 * - 'unsupported-node': a Node release whose http internals the shim does
 *   not reproduce;
 * - 'end-replaced': another module defined ServerResponse#end first;
 * - 'wrapped': another module wrapped OutgoingMessage#_storeHeader first,
 *   which the package would otherwise call to read Node's Date
 *   (Stats#wrapped names it);
 * - 'probe-pending': the preload started the behaviour probe of this Node
 *   binary and has no answer yet; responses take Node's own path until it
 *   answers (counted under reasons['probe-pending']).
 */
export type InactiveReason =
  | 'not-installed'
  | 'disabled'
  | 'addon-disabled'
  | 'addon-not-loaded'
  | 'unsupported-node'
  | 'end-replaced'
  | 'wrapped'
  | 'probe-pending'

export interface Stats {
  /** Responses sent by the native path. */
  native: number
  /** Responses handed to Node's own end(). */
  fallback: number
  /** Native responses written whole to the socket's descriptor by C. */
  direct: number
  /** Native responses the kernel took in part; the rest went through socket.write(). */
  partial: number
  /**
   * Fallbacks per reason; 'probe-pending' counts the responses that started
   * before the probe's answer (see InactiveReason).
   */
  reasons: Partial<Record<FallbackReason | 'probe-pending', number>>
  /**
   * Chunks of chunked responses where the shim wraps write() (Node 20, 22)
   * or uncork() (24.22+, 26.10+): sent with fewer socket writes (native) or
   * by Node's own method (fallback).
   */
  writes: { native: number, fallback: number }
  /** Why the native path is not running; null when installed. */
  inactiveReason: InactiveReason | null
  /**
   * Wrappers (an APM agent's, say) found where Node's own methods should
   * be when the package installed: each runs as it would without the
   * package; the responses it stands in front of take Node's path
   * ('patched') or go native beneath it. NODE_DEBUG=http-oneshot and
   * HTTP_ONESHOT_REPORT=1 also name the file and the load order that fixes it.
   */
  wrapped: Array<{ method: string, wrapper: string }>
}

/** Counters since load or the last resetStats(). */
export function stats (): Stats

/** Sets every counter back to zero. */
export function resetStats (): void

/**
 * The decision function: null when res.end(chunk, encoding) may take the
 * native path, else the reason it falls back to Node's own end().
 */
export function fallbackReason (
  res: ServerResponse,
  chunk?: unknown,
  encoding?: unknown
): FallbackReason | null
