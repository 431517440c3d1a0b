/// <reference types="node" />
import type { ServerResponse } from 'node:http'

/** Header input for buildHttpMessage: a flat [name, value, ...] array or a plain object. */
export type HeaderValue = string | number | ReadonlyArray<string | number>
export type Headers =
  | ReadonlyArray<string | number | ReadonlyArray<string | number>>
  | Readonly<Record<string, HeaderValue>>

export interface BuildOptions {
  /** Encoding of a string body: 'utf8' (default), 'latin1' or 'ascii' (written as latin1). */
  encoding?: 'utf8' | 'utf-8' | 'latin1' | 'ascii'
  /** Frame the body as one chunk of chunked transfer coding plus the last chunk. */
  chunked?: boolean
  /**
   * How header strings become bytes: 'latin1' (default), as Node writes a header block,
   * or 'utf8', as Node sends it when it joins the block with a UTF-8 string body.
   */
  headerEncoding?: 'latin1' | 'utf8'
}

/**
 * Serializes a status line, headers and an optional body into one Buffer.
 * Throws the errors Node throws for the same mistakes (ERR_INVALID_HTTP_TOKEN,
 * ERR_INVALID_CHAR, ERR_HTTP_INVALID_HEADER_VALUE, ERR_INVALID_ARG_TYPE,
 * ERR_INVALID_ARG_VALUE, ERR_HTTP_INVALID_STATUS_CODE).
 */
export function buildHttpMessage (
  statusCode: number,
  reason?: string | null,
  headers?: Headers | null,
  body?: string | Uint8Array | null,
  options?: BuildOptions
): Buffer

/** True when the native addon is loaded; false when the JS implementation runs. */
export const isNative: boolean

/** Why the addon did not load (null when it did); also logged with NODE_DEBUG=http-oneshot. */
export const loadError: Error | null

export interface InstallOptions {
  /** Bodies above this many bytes take Node's own path (default 4096). */
  maxBodySize?: number
}

/**
 * Patches http.ServerResponse.prototype.end (and writeHead). Idempotent; does
 * nothing when HTTP_ONESHOT=0 or off. Sets only the options given: a later
 * call without them keeps what an earlier call set. Emits one warning with
 * code 'HTTP_ONESHOT_INACTIVE' when the native path can never run (see
 * isActive()). Returns uninstall().
 */
export function install (options?: InstallOptions): () => void

/**
 * Restores what install() replaced, and only that: a wrapper another module
 * put on ServerResponse#end or #writeHead after install() stays. Idempotent.
 */
export function uninstall (): void

/** Whether the patch is in place. */
export function isInstalled (): boolean

/**
 * Whether responses can take the native path: installed, the addon loaded,
 * and the Node line is one whose http internals the shim reproduces.
 */
export function isActive (): boolean

export type FallbackReason =
  | 'no-binding' | 'unsupported-node' | 'debug' | 'finished' | 'destroyed'
  | 'headers-sent' | 'no-socket' | 'not-socket-owner' | 'socket-unwritable'
  | 'socket-busy' | 'patched' | 'http-version' | 'head' | 'no-body-status'
  | 'expect' | 'strict-content-length' | 'trailers' | 'transfer-encoding'
  | 'chunked' | 'encoding' | 'chunk-type' | 'body-too-large' | 'header-value'
  | 'non-ascii' | 'invalid'

export const FALLBACK: Readonly<Record<string, FallbackReason>>

export interface Stats {
  /** Responses sent by the native path. */
  native: number
  /** Responses handed to Node's own end(). */
  fallback: number
  /** Native responses written whole to the socket's descriptor by C. */
  direct: number
  /** Native responses the kernel took in part; the rest went through socket.write(). */
  partial: number
  /** Fallbacks per reason. */
  reasons: Partial<Record<FallbackReason, number>>
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
  chunk: unknown,
  encoding: unknown
): FallbackReason | null
