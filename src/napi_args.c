/* napi_args: JS argument values -> C views; the contract is in
 * napi_args.h. Also the misuse and result helpers of napi.h. */
#include "napi_args.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

/* Returns false from a bool reader when a Node-API call fails. */
#define CALL_BOOL(env, call)    \
  do {                          \
    if ((call) != napi_ok) {    \
      hb_throw_last_error(env); \
      return false;             \
    }                           \
  } while (0)

/* Reads the pending Node-API error before any other call resets it, then
 * throws it unless an exception is already pending (which would carry the
 * better message, for example from a getter that threw). */
void hb_throw_last_error(napi_env env)
{
  const napi_extended_error_info *info = NULL;
  const char *msg = "Node-API call failed";
  if (napi_get_last_error_info(env, &info) == napi_ok && info != NULL &&
      info->error_message != NULL) {
    msg = info->error_message;
  }
  bool pending = false;
  if (napi_is_exception_pending(env, &pending) == napi_ok && !pending) {
    napi_throw_error(env, NULL, msg);
  }
}

napi_value hb_throw_type_error(napi_env env, const char *msg)
{
  napi_throw_type_error(env, "ERR_INVALID_ARG_TYPE", msg);
  return NULL;
}

/* Node-API passes `bufsize - 1` to V8 as an int. */
static size_t clamp_bufsize(size_t n)
{
  return n > (size_t)INT_MAX ? (size_t)INT_MAX : n;
}

/* One of Node-API's two string readers. */
typedef napi_status (*string_reader_t)(napi_env env, napi_value value, char *buf, size_t bufsize,
                                       size_t *result);

/* Copies string `v` to `inst->arena.base + *used` with `reader`, and stores where
 * in `*span`. First tries the room already there: V8 writes only whole
 * characters, so a result at least `slack` bytes short of the room (the
 * longest character plus the terminator) cannot be truncated. Otherwise asks
 * for the exact length and retries. Returns napi_ok or the failing status. */
static napi_status read_string(napi_env env, hb_instance_t *inst, napi_value v, size_t *used,
                               hb_span_t *span, string_reader_t reader, size_t slack)
{
  napi_status st;
  size_t copied = 0;
  if (!hb_arena_reserve(&inst->arena, *used, 64)) {
    return napi_generic_failure;
  }
  size_t room = clamp_bufsize(inst->arena.cap - *used);
  st = reader(env, v, inst->arena.base + *used, room, &copied);
  if (st != napi_ok) {
    return st;
  }
  if (copied + slack >= room) {
    size_t len = 0;
    st = reader(env, v, NULL, 0, &len);
    if (st != napi_ok) {
      return st;
    }
    if (len >= (size_t)INT_MAX || !hb_arena_reserve(&inst->arena, *used, len + 1)) {
      return napi_generic_failure;
    }
    st = reader(env, v, inst->arena.base + *used, len + 1, &copied);
    if (st != napi_ok) {
      return st;
    }
    if (copied != len) {
      return napi_generic_failure;
    }
  }
  span->off = *used;
  span->len = copied;
  *used += copied;
  return napi_ok;
}

/* The UTF-8 form of `v`, exactly as napi_get_value_string_utf8 (and
 * Buffer.from(str, 'utf8')) encode it: lone surrogates become EF BF BD. */
napi_status hb_read_utf8(napi_env env, hb_instance_t *inst, napi_value v, size_t *used,
                         hb_span_t *span)
{
  return read_string(env, inst, v, used, span, napi_get_value_string_utf8, 4);
}

/* The low byte of each UTF-16 code unit of `v`, as
 * Buffer.from(str, 'latin1') does. */
napi_status hb_read_latin1(napi_env env, hb_instance_t *inst, napi_value v, size_t *used,
                           hb_span_t *span)
{
  return read_string(env, inst, v, used, span, napi_get_value_string_latin1, 1);
}

/* Under HB_FLAG_ASCII_ONLY hb_read_body() reads a string body of fewer units than
 * this, less one, as UTF-16 (read_short_ascii()). */
#define ASCII_SCAN_MAX 64

/* A string body under HB_FLAG_ASCII_ONLY shorter than ASCII_SCAN_MAX - 1
 * units, read as UTF-16 and narrowed to a byte per unit in the arena: for
 * a few words V8 copies units for less than it encodes UTF-8 and checks
 * that (Refs: benchmark/instructions.js, the writehead shape). `*fits` false: the string
 * may be longer, and nothing was kept. `*ascii`: every unit is below 0x80,
 * so the bytes are its UTF-8 (and latin1) form. */
static napi_status read_short_ascii(napi_env env, hb_instance_t *inst, napi_value v, size_t *used,
                                    hb_span_t *span, bool *fits, bool *ascii)
{
  char16_t units[ASCII_SCAN_MAX];
  size_t n = 0;
  napi_status st = napi_get_value_string_utf16(env, v, units, ASCII_SCAN_MAX, &n);
  if (st != napi_ok) {
    return st;
  }
  /* The buffer keeps one unit for the terminator: a copy that filled the
   * rest may have been cut short. */
  *fits = n < ASCII_SCAN_MAX - 1;
  if (!*fits) {
    return napi_ok;
  }
  if (!hb_arena_reserve(&inst->arena, *used, n)) {
    return napi_generic_failure;
  }
  unsigned char *p = (unsigned char *)inst->arena.base + *used;
  unsigned all = 0;
  for (size_t i = 0; i < n; i++) {
    all |= units[i];
    p[i] = (unsigned char)units[i];
  }
  *ascii = all < 0x80;
  span->off = *used;
  span->len = n;
  *used += n;
  return napi_ok;
}

/* True when no byte of `p[0..len)` is 0x80 or above; eight at a time. */
bool hb_is_ascii(const unsigned char *p, size_t len)
{
  size_t i = 0;
  for (; len - i >= 8; i += 8) {
    uint64_t w;
    memcpy(&w, p + i, sizeof w);
    if ((w & UINT64_C(0x8080808080808080)) != 0) {
      return false;
    }
  }
  for (; i < len; i++) {
    if (p[i] >= 0x80) {
      return false;
    }
  }
  return true;
}

/* Checks a header string just read as UTF-8 and converts it in place to the
 * bytes the response carries. A code unit above 0xFF (UTF-8 lead byte above
 * C3, which includes the EF BF BD of a lone surrogate) can never be sent:
 * Node's checkInvalidHeaderChar rejects it, and truncating it to its low
 * byte would turn U+0D0A into a bare LF. Chars 0x80..0xFF stay two UTF-8
 * bytes with HB_FLAG_HEAD_UTF8, else become one latin1 byte.
 * Returns 0, `bad` for a char above 0xFF, or HM_ENONASCII. */
static int convert_head_string(char *arena, size_t *used, hb_span_t *span, unsigned flags, int bad,
                               size_t *bad_at)
{
  unsigned char *p = (unsigned char *)arena + span->off;
  size_t len = span->len;
  size_t i = 0;
  /* Headers are nearly always ASCII: test eight bytes at a time. */
  while (len - i >= 8) {
    uint64_t w;
    memcpy(&w, p + i, sizeof w);
    if ((w & UINT64_C(0x8080808080808080)) != 0) {
      break;
    }
    i += 8;
  }
  while (i < len && p[i] < 0x80) {
    i++;
  }
  if (i == len) {
    return 0;
  }
  /* Every lead byte must be C2 or C3 (U+0080..U+00FF). V8 emits valid
   * UTF-8, so such a lead is always followed by one continuation byte. */
  for (size_t j = i; j < len; j++) {
    if (p[j] >= 0x80) {
      if (p[j] != 0xC2 && p[j] != 0xC3) {
        *bad_at = j;
        return bad;
      }
      j++;
    }
  }
  if (flags & HB_FLAG_ASCII_ONLY) {
    return HM_ENONASCII;
  }
  if (flags & HB_FLAG_HEAD_UTF8) {
    return 0;
  }
  size_t d = i;
  for (size_t j = i; j < len; j++) {
    if (p[j] >= 0xC2) {
      p[d++] = (unsigned char)(((p[j] & 0x03U) << 6) | (p[j + 1] & 0x3FU));
      j++;
    } else {
      p[d++] = p[j];
    }
  }
  span->len = d;
  /* The arena tail is free again; later strings may reuse it. */
  *used = span->off + d;
  return 0;
}

/* Names the part of a rendered head (status line, then `name: value` lines) that holds
 * byte `at`: the status line's reason, a header name or a header value. */
static int head_part_at(const char *head, size_t at)
{
  size_t line = at;
  while (line > 0 && head[line - 1] != '\n') {
    line--;
  }
  if (line == 0) {
    return HM_EINVAL_REASON;
  }
  for (size_t i = line; i < at; i++) {
    if (head[i] == ':') {
      return HM_EINVAL_VALUE;
    }
  }
  return HM_EINVAL_NAME;
}

/* Reads `v` as a header string and converts it. Returns napi_ok, storing a
 * rejection code in `*reject` unless an earlier string already did (the
 * first problem wins, and later arguments are still type-checked).
 * `bad` < 0 means `v` is a whole head, whose failing part is located. */
napi_status hb_read_head_string(napi_env env, hb_instance_t *inst, napi_value v, size_t *used,
                                hb_span_t *span, unsigned flags, int bad, int *reject)
{
  napi_status st = hb_read_utf8(env, inst, v, used, span);
  if (st != napi_ok) {
    return st;
  }
  if (*reject != 0) {
    return napi_ok;
  }
  size_t bad_at = 0;
  int r = convert_head_string(inst->arena.base, used, span, flags, bad, &bad_at);
  if (r == bad && bad < 0) {
    r = head_part_at(inst->arena.base + span->off, bad_at);
  }
  *reject = r;
  return napi_ok;
}

/* A string body, read the cheapest way `flags` allow: under
 * HB_FLAG_ASCII_ONLY, which must see every char, as UTF-16 (a short one) or
 * UTF-8, which for pure ASCII text are byte-identical to latin1; under
 * HB_FLAG_BODY_LATIN1 as latin1; else as UTF-8. `*ascii` turns false when
 * HB_FLAG_ASCII_ONLY finds a char >= 0x80. Returns napi_ok,
 * napi_string_expected, or the failing status. */
static napi_status read_string_body(napi_env env, hb_instance_t *inst, napi_value v, unsigned flags,
                                    size_t *used, hb_span_t *span, bool *ascii)
{
  bool fits = false;
  napi_status st = napi_ok;
  *ascii = true;
  if (flags & HB_FLAG_ASCII_ONLY) {
    st = read_short_ascii(env, inst, v, used, span, &fits, ascii);
  } else if (flags & HB_FLAG_BODY_LATIN1) {
    st = hb_read_latin1(env, inst, v, used, span);
    fits = true;
  }
  if (st == napi_ok && !fits) {
    st = hb_read_utf8(env, inst, v, used, span);
  }
  if (st == napi_ok && (flags & HB_FLAG_ASCII_ONLY) && !fits) {
    /* Text is ASCII exactly when its UTF-8 form has a byte per UTF-16
     * unit: any other char takes two or three bytes per unit (a lone
     * surrogate three, a pair four). Asking V8 for the length costs less
     * than reading the bytes again. */
    size_t units = 0;
    st = napi_get_value_string_utf16(env, v, NULL, 0, &units);
    *ascii = units == span->len;
  }
  return st;
}

/* A Uint8Array or Uint8ClampedArray body, read in place: `body->kind`
 * becomes HB_BODY_BYTES; for any other value (`type` as napi_typeof() gave
 * it, or napi_object under HB_HINT_BYTES) it stays as it was. Returns napi_ok
 * or the failing status. */
static napi_status read_bytes_body(napi_env env, napi_value v, napi_valuetype type,
                                   hb_body_hint_t hint, hb_body_t *body)
{
  bool is_ta = hint == HB_HINT_BYTES;
  if (type == napi_object && !is_ta) {
    napi_status st = napi_is_typedarray(env, v, &is_ta);
    if (st != napi_ok) {
      return st;
    }
  }
  if (!is_ta) {
    return napi_ok;
  }
  napi_typedarray_type ta_type;
  size_t length = 0;
  void *data = NULL;
  /* `data` already points at the first element: Node-API adds the view's
   * byte_offset, so a Buffer sliced from the shared pool reads the right
   * bytes. Any value that is not a TypedArray gives napi_invalid_arg. */
  napi_status st = napi_get_typedarray_info(env, v, &ta_type, &length, &data, NULL, NULL);
  if (st == napi_invalid_arg && hint == HB_HINT_BYTES) {
    return napi_ok;
  }
  if (st == napi_ok && (ta_type == napi_uint8_array || ta_type == napi_uint8_clamped_array)) {
    body->kind = HB_BODY_BYTES;
    body->bytes = length == 0 ? NULL : data;
    body->len = length;
  }
  return st;
}

bool hb_read_body(napi_env env, hb_instance_t *inst, napi_value v, const char *fn, unsigned flags,
                  hb_body_hint_t hint, size_t *used, hb_body_t *body, int *reject)
{
  napi_valuetype type = napi_undefined;
  body->kind = HB_BODY_NONE;
  if (hint == HB_HINT_NONE) {
    return true;
  }
  if (hint == HB_HINT_STRING) {
    type = napi_string;
  } else if (hint == HB_HINT_BYTES) {
    type = napi_object;
  } else {
    CALL_BOOL(env, napi_typeof(env, v, &type));
  }
  if (type == napi_undefined || type == napi_null) {
    return true;
  }
  if (type == napi_string) {
    bool ascii = true;
    napi_status st = read_string_body(env, inst, v, flags, used, &body->span, &ascii);
    if (st != napi_string_expected) {
      CALL_BOOL(env, st);
      if (!ascii && *reject == 0) {
        *reject = HM_ENONASCII;
      }
      body->kind = HB_BODY_ARENA;
      return true;
    }
  } else {
    CALL_BOOL(env, read_bytes_body(env, v, type, hint, body));
    if (body->kind == HB_BODY_BYTES) {
      return true;
    }
  }
  char msg[96];
  (void)snprintf(msg, sizeof msg, "%s: argument 'body' must be undefined, a string or a Uint8Array",
                 fn);
  hb_throw_type_error(env, msg);
  return false;
}

/* Reads `flags` (a uint32 with only known bits). */
bool hb_read_flags(napi_env env, napi_value v, const char *fn, unsigned *flags)
{
  uint32_t f = 0;
  if (napi_get_value_uint32(env, v, &f) != napi_ok) {
    char msg[64];
    (void)snprintf(msg, sizeof msg, "%s: argument 'flags' must be a number", fn);
    hb_throw_type_error(env, msg);
    return false;
  }
  if (f & ~HB_FLAG_ALL) {
    char msg[80];
    (void)snprintf(msg, sizeof msg, "%s: argument 'flags' has unknown bits 0x%x", fn,
                   (unsigned)(f & ~HB_FLAG_ALL));
    hb_throw_type_error(env, msg);
    return false;
  }
  *flags = f;
  return true;
}

/* Reads the `numHeaders` argument. Returns false with a TypeError pending. */
bool hb_read_count(napi_env env, napi_value v, const char *fn, uint32_t *count)
{
  if (napi_get_value_uint32(env, v, count) != napi_ok) {
    char msg[80];
    (void)snprintf(msg, sizeof msg, "%s: argument 'numHeaders' must be a number", fn);
    hb_throw_type_error(env, msg);
    return false;
  }
  return true;
}

/* The core rejects codes out of 100..999; NaN, fractions and values that
 * would not survive the cast to unsigned are rejected by the callers the
 * same way. The status line comes first on the wire, so its error wins. */
bool hb_status_ok(double status)
{
  return status >= 0 && status <= 100000 && status == (double)(unsigned)status;
}
