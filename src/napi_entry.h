/* napi_entry: the entry points that serialize a response given whole
 * (internal; prefix hb_). Each reads its arguments (napi_args.h), hands the
 * core (http_message.h) views of them and returns its result; none keeps
 * anything after the call.
 *
 * Entry points (JS signature -> every possible result). REJECTED leaves
 * the rejection code in the record (napi.h): HM_EINVAL_STATUS,
 * HM_EINVAL_REASON, HM_EINVAL_NAME, HM_EINVAL_VALUE, HM_EINVAL_HEAD,
 * HM_EINVAL_ARG, HM_EOVERFLOW, HM_E2BIG or HM_ENONASCII (a char >= 0x80
 * under ASCII_ONLY), exported by name as binding.errors.
 *
 *   fill(fields, numHeaders, statusCode, reason, body, flags, dst, offset)
 *                                          -> undefined | Buffer | REJECTED
 *     The whole message for lib/build.js: the status line (`reason`
 *     undefined or null: the default phrase), the header fields joined in
 *     one string, `name NUL value CR LF` per line, and the body. undefined:
 *     the message is in the ArrayBuffer `dst` at `offset`, its length in
 *     the record. A Buffer: it did not fit there (or `dst` is null), and
 *     has a Buffer of its own. REJECTED: nothing written.
 *
 *   fillFromHead(dst, head, numHeaders, body, flags) -> undefined | REJECTED
 *     The shim's path when no cache slot applies: `head` and the body
 *     written into the Uint8Array `dst` the caller sized exactly (with
 *     CHUNKED: head, size line, body, last chunk). undefined: written.
 *     REJECTED (HM_E2BIG when `dst` has another size): `dst` untouched.
 *
 *   checkHead(head, numHeaders) -> undefined | REJECTED
 *     Validates a head as fillFromHead() would, writing nothing. Chars
 *     above 0xFF are rejected, 0x80..0xFF allowed.
 *
 * `flags` holds HB_FLAG_* bits (napi.h). Misuse throws a TypeError (napi.h).
 */
#ifndef HB_NAPI_ENTRY_H
#define HB_NAPI_ENTRY_H

#include "napi.h"

napi_value hb_js_fill(napi_env env, napi_callback_info info);
napi_value hb_js_fill_from_head(napi_env env, napi_callback_info info);
napi_value hb_js_check_head(napi_env env, napi_callback_info info);

#endif /* HB_NAPI_ENTRY_H */
