/* napi_args: JS argument values -> C views (internal; prefix hb_).
 *
 * Every string argument is copied into the instance's arena (arena.h) and
 * recorded as an hb_span_t, an offset and a length: a later string may grow,
 * and so move, the arena. A call turns spans into views (hm_str_t) only once
 * its last string is in, and calls hb_arena_trim() before it returns; no
 * view outlives the call. Uint8Array bodies are read in place, not copied.
 *
 * Reader results:
 * - napi_status readers return napi_ok, napi_string_expected when the value
 *   is not a string (the caller words the TypeError), or the failing
 *   status (napi_generic_failure when the arena cannot grow); no exception
 *   is thrown by them.
 * - bool readers return false with an exception pending (misuse: a
 *   TypeError naming `fn` and the argument).
 * - A rejection (the core's or HM_ENONASCII) goes to `*reject`, which a
 *   reader sets only while it is 0: the first problem in wire order wins,
 *   and later arguments are still read and type-checked.
 */
#ifndef HB_NAPI_ARGS_H
#define HB_NAPI_ARGS_H

#include "napi.h"

/* Where a string argument ended up in the arena. */
typedef struct hb_span_s {
  size_t off;
  size_t len;
} hb_span_t;

/* The body argument: nothing, a string copied to the arena, or a
 * Uint8Array read in place (`bytes`, `len`; `bytes` NULL when empty). */
typedef struct hb_body_s {
  enum { HB_BODY_NONE, HB_BODY_ARENA, HB_BODY_BYTES } kind;
  hb_span_t span;
  const char *bytes;
  size_t len;
} hb_body_t;

/* What the caller says the body is, which saves asking V8: any value
 * (typeof decides), a string, a Uint8Array, or nothing (not read). A body
 * that is not what it is said to be is misuse, reported as any other wrong
 * body. */
typedef enum { HB_HINT_ANY, HB_HINT_STRING, HB_HINT_BYTES, HB_HINT_NONE } hb_body_hint_t;

/* Copies string `v` to the arena at `*used`, as UTF-8 exactly as
 * napi_get_value_string_utf8 (and Buffer.from(str, 'utf8')) encode it: a
 * lone surrogate becomes EF BF BD. Stores where in `*span` and advances
 * `*used`. */
napi_status hb_read_utf8(napi_env env, hb_instance_t *inst, napi_value v, size_t *used,
                         hb_span_t *span);

/* As hb_read_utf8(), but the low byte of each UTF-16 code unit, as
 * Buffer.from(str, 'latin1') does. */
napi_status hb_read_latin1(napi_env env, hb_instance_t *inst, napi_value v, size_t *used,
                           hb_span_t *span);

/* Reads `v` as a header string (reason, name, value, joined fields or a
 * whole head) and converts it in place to the bytes the response carries:
 * chars 0x80..0xFF stay two UTF-8 bytes under HB_FLAG_HEAD_UTF8, else
 * become one latin1 byte. `*reject` (when 0) receives `bad` for a char above
 * 0xFF (Node's checkInvalidHeaderChar refuses it, and its low byte could be
 * a bare LF), HM_ENONASCII for a char >= 0x80 under HB_FLAG_ASCII_ONLY, or
 * with `bad` < 0 (`v` is a whole head) the hm_err_t of the part holding the
 * char: HM_EINVAL_REASON, HM_EINVAL_NAME or HM_EINVAL_VALUE. */
napi_status hb_read_head_string(napi_env env, hb_instance_t *inst, napi_value v, size_t *used,
                                hb_span_t *span, unsigned flags, int bad, int *reject);

/* Reads the body argument `v` of function `fn` into `*body`: undefined or
 * null (none), a string (copied to the arena as HB_FLAG_BODY_LATIN1 says;
 * under HB_FLAG_ASCII_ONLY a string with a char >= 0x80 sets `*reject` to
 * HM_ENONASCII), or a Uint8Array / Uint8ClampedArray (read in place).
 * Returns true, or false with a TypeError pending for any other value. */
bool hb_read_body(napi_env env, hb_instance_t *inst, napi_value v, const char *fn, unsigned flags,
                  hb_body_hint_t hint, size_t *used, hb_body_t *body, int *reject);

/* The body as a view (empty for none). Valid until the arena moves. */
static inline hm_str_t hb_body_str(const hb_instance_t *inst, const hb_body_t *body)
{
  switch (body->kind) {
  case HB_BODY_ARENA:
    return (hm_str_t){inst->arena.base + body->span.off, body->span.len};
  case HB_BODY_BYTES:
    return (hm_str_t){body->bytes, body->len};
  default:
    return (hm_str_t){NULL, 0};
  }
}

/* Reads `flags`: a uint32 with no bit outside HB_FLAG_ALL. Returns false
 * with a TypeError pending otherwise. */
bool hb_read_flags(napi_env env, napi_value v, const char *fn, unsigned *flags);

/* Reads the `numHeaders` argument (a uint32). Returns false with a
 * TypeError pending otherwise. */
bool hb_read_count(napi_env env, napi_value v, const char *fn, uint32_t *count);

/* Whether a statusCode read as a double survives the cast to unsigned the
 * core takes (the core then rejects codes out of 100..999). NaN, fractions
 * and huge values are rejected by the callers as HM_EINVAL_STATUS. */
bool hb_status_ok(double status);

/* True when no byte of `p[0..len)` is 0x80 or above. */
bool hb_is_ascii(const unsigned char *p, size_t len);

#endif /* HB_NAPI_ARGS_H */
