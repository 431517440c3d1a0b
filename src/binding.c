/* Node-API binding for http_message: turns JS arguments into an
 * hm_response_t, measures it, allocates the result Buffer once and writes
 * into it. This is the only file that includes node_api.h.
 *
 * Exports:
 *   build(statusCode, reason, headers, body, flags) -> Buffer | error code
 *   fill(fields, numHeaders, statusCode, reason, body, flags, dst, offset)
 *                                                    -> length | Buffer | -(error code)
 *   buildFromHead(head, numHeaders, body, flags)     -> Buffer | error code
 *   cacheSet(slot, prefix, suffix, numHeaders)      -> error code
 *   fillCached(dst, key, length, body)               -> error code
 *   sendCached(fd, key, length, body)                -> bytes written | < 0
 *     key = slot | flags << keyShift | (repeat the slot's last length ? keyRepeat : 0)
 *           | (check for a pending socket error first ? keyCheck : 0)
 *           | (body a string ? keyString : a Uint8Array ? keyBytes : none ? keyEmpty : 0)
 *     below 0: -1 not written, -(sendFailed + errno) failed, -(100 + code) rejected
 *   canSend  false where sendCached() can never write (no POSIX sockets)
 *   flags  {CHUNKED, BODY_LATIN1, HEAD_UTF8, ASCII_ONLY}
 *   errors {<core error name without HM_>: code, ENONASCII: 64}
 *
 * Misuse (wrong argument count or type) throws a TypeError. A response the
 * core rejects returns the error code as a number, so the caller can fall
 * back to Node's own path and let Node throw its own error.
 */
/* binding.gyp defines both as well; the guards keep a plain compiler
 * invocation building the same thing. */
#ifndef NAPI_VERSION
#define NAPI_VERSION 8
#endif
#ifndef NODE_API_NO_EXTERNAL_BUFFERS_ALLOWED
#define NODE_API_NO_EXTERNAL_BUFFERS_ALLOWED /* Electron / V8 sandbox forbid them */
#endif
#include <node_api.h>

#include <assert.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http_message.h"
#include "send.h"

#define CALL(env, call)      \
  do {                       \
    if ((call) != napi_ok) { \
      throw_last_error(env); \
      return NULL;           \
    }                        \
  } while (0)

/* The flag bits shared with lib/. */
#define FLAG_CHUNKED     1u
#define FLAG_BODY_LATIN1 2u
#define FLAG_HEAD_UTF8   4u
#define FLAG_ASCII_ONLY  8u
/* fillFromHead only: the caller guarantees the head holds no char above
 * 0xFF (it rendered the block from validated strings), so the head is read
 * with the cheaper latin1 copy. The core still checks every byte. */
#define FLAG_HEAD_ONE_BYTE 16u
#define FLAG_ALL           31u

/* Returned when FLAG_ASCII_ONLY is set and a header string or a string body
 * holds a char >= 0x80. Kept clear of the core's codes, which count from 1. */
#define ERR_NONASCII 64

/* Scratch memory kept above this size is released after the call, so one
 * large string body does not pin memory for the life of the process. */
#define ARENA_KEEP_MAX (1024 * 1024)
#define ARENA_MIN      16384

/* Where a string argument ended up in the arena. */
typedef struct span_s {
  size_t off;
  size_t len;
} span_t;

/* Per-instance scratch state (napi_set_instance_data), so the addon holds no
 * mutable statics and can be loaded by several contexts (worker threads).
 * `arena` receives the bytes of every string argument of one call; strings
 * are recorded as offsets until the arena stops growing. */
/* How many rendered header blocks the shim keeps (lib/render.js CACHE_SIZE
 * must match). */
#define SLOT_COUNT 8

/* One cached header block, checked once by hm_check_head() when it was
 * stored: with the digit '0' at `hole` standing in for Content-Length
 * (raw framing), or without a hole (HM_NO_HOLE) for a body framed as
 * chunked. */
typedef struct {
  char *block;
  size_t len;
  size_t hole;
  hm_framing_t framing;
  /* The Content-Length digits of the slot's last response, which a length
   * argument of -1 asks for again (most responses repeat them). */
  char last[HM_LENGTH_DIGITS_MAX + 1];
  size_t last_len;
  bool has_last;
  /* The block with those digits in its hole, as hm_block_parts() laid it
   * out for a repeat (raw framing only; room for the longest digits):
   * a further repeat sends it as one part, with no second check of
   * digits the core accepted already. Valid while `filled_ok`. */
  char *filled;
  size_t filled_len;
  bool filled_ok;
} slot_t;

typedef struct {
  slot_t slots[SLOT_COUNT];
  char *arena;
  size_t arena_cap;
  hm_str_t *fields;
  size_t fields_cap;
  struct span_s *spans;
  size_t spans_cap;
  /* sendCached(): a small message gathered for one send() (src/send.h). */
  char send_scratch[HM_SEND_COPY_MAX];
} instance_t;

/* Reads the pending Node-API error before any other call resets it, then
 * throws it unless an exception is already pending (which would carry the
 * better message, for example from a getter that threw). */
static void throw_last_error(napi_env env)
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

static napi_value throw_type_error(napi_env env, const char *msg)
{
  napi_throw_type_error(env, "ERR_INVALID_ARG_TYPE", msg);
  return NULL;
}

/* Grows a realloc'ed array to hold at least `need` elements of `size`.
 * Returns false (leaving it untouched) when memory runs out. */
static bool grow(void **base, size_t *cap, size_t need, size_t size)
{
  if (need <= *cap) {
    return true;
  }
  size_t n = *cap < 64 ? 64 : *cap;
  while (n < need) {
    if (n > SIZE_MAX / 2) {
      n = need;
      break;
    }
    n *= 2;
  }
  if (n > SIZE_MAX / size) {
    return false;
  }
  void *p = realloc(*base, n * size);
  if (p == NULL) {
    return false;
  }
  *base = p;
  *cap = n;
  return true;
}

static bool arena_reserve(instance_t *inst, size_t used, size_t extra)
{
  if (extra > SIZE_MAX - used) {
    return false;
  }
  size_t need = used + extra;
  if (need < ARENA_MIN) {
    need = ARENA_MIN;
  }
  return grow((void **)&inst->arena, &inst->arena_cap, need, 1);
}

static void arena_trim(instance_t *inst)
{
  if (inst->arena_cap > ARENA_KEEP_MAX) {
    free(inst->arena);
    inst->arena = NULL;
    inst->arena_cap = 0;
  }
}

/* Node-API passes `bufsize - 1` to V8 as an int. */
static size_t clamp_bufsize(size_t n)
{
  return n > (size_t)INT_MAX ? (size_t)INT_MAX : n;
}

/* One of Node-API's two string readers. */
typedef napi_status (*string_reader_t)(napi_env env, napi_value value, char *buf, size_t bufsize,
                                       size_t *result);

/* Copies string `v` to `inst->arena + *used` with `reader`, and stores where
 * in `*span`. First tries the room already there: V8 writes only whole
 * characters, so a result at least `slack` bytes short of the room (the
 * longest character plus the terminator) cannot be truncated. Otherwise asks
 * for the exact length and retries. Returns napi_ok or the failing status. */
static napi_status read_string(napi_env env, instance_t *inst, napi_value v, size_t *used,
                               span_t *span, string_reader_t reader, size_t slack)
{
  napi_status st;
  size_t copied = 0;
  if (!arena_reserve(inst, *used, 64)) {
    return napi_generic_failure;
  }
  size_t room = clamp_bufsize(inst->arena_cap - *used);
  st = reader(env, v, inst->arena + *used, room, &copied);
  if (st != napi_ok) {
    return st;
  }
  if (copied + slack >= room) {
    size_t len = 0;
    st = reader(env, v, NULL, 0, &len);
    if (st != napi_ok) {
      return st;
    }
    if (len >= (size_t)INT_MAX || !arena_reserve(inst, *used, len + 1)) {
      return napi_generic_failure;
    }
    st = reader(env, v, inst->arena + *used, len + 1, &copied);
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
static napi_status read_utf8(napi_env env, instance_t *inst, napi_value v, size_t *used,
                             span_t *span)
{
  return read_string(env, inst, v, used, span, napi_get_value_string_utf8, 4);
}

/* The low byte of each UTF-16 code unit of `v`, as
 * Buffer.from(str, 'latin1') does. */
static napi_status read_latin1(napi_env env, instance_t *inst, napi_value v, size_t *used,
                               span_t *span)
{
  return read_string(env, inst, v, used, span, napi_get_value_string_latin1, 1);
}

/* Under FLAG_ASCII_ONLY read_body() reads a string body of fewer units than
 * this, less one, as UTF-16 (read_short_ascii()). */
#define ASCII_SCAN_MAX 64

/* A string body under FLAG_ASCII_ONLY shorter than ASCII_SCAN_MAX - 1
 * units, read as UTF-16 and narrowed to a byte per unit in the arena: for
 * a few words V8 copies units for less than it encodes UTF-8 and checks
 * that (about 0.15k instructions a response). `*fits` false: the string
 * may be longer, and nothing was kept. `*ascii`: every unit is below 0x80,
 * so the bytes are its UTF-8 (and latin1) form. */
static napi_status read_short_ascii(napi_env env, instance_t *inst, napi_value v, size_t *used,
                                    span_t *span, bool *fits, bool *ascii)
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
  if (!arena_reserve(inst, *used, n)) {
    return napi_generic_failure;
  }
  unsigned char *p = (unsigned char *)inst->arena + *used;
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
static bool is_ascii(const unsigned char *p, size_t len)
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
 * bytes with FLAG_HEAD_UTF8, else become one latin1 byte.
 * Returns 0, `bad` for a char above 0xFF, or ERR_NONASCII. */
static int convert_head_string(char *arena, size_t *used, span_t *span, unsigned flags, int bad,
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
  if (flags & FLAG_ASCII_ONLY) {
    return ERR_NONASCII;
  }
  if (flags & FLAG_HEAD_UTF8) {
    return 0;
  }
  size_t d = i;
  for (size_t j = i; j < len; j++) {
    if (p[j] >= 0xC2) {
      p[d++] = (unsigned char)(((p[j] & 0x03u) << 6) | (p[j + 1] & 0x3Fu));
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

/* Names the part of a rendered head (as hm_parse_head splits it) that holds
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
static napi_status read_head_string(napi_env env, instance_t *inst, napi_value v, size_t *used,
                                    span_t *span, unsigned flags, int bad, int *reject)
{
  napi_status st = read_utf8(env, inst, v, used, span);
  if (st != napi_ok) {
    return st;
  }
  if (*reject != 0) {
    return napi_ok;
  }
  size_t bad_at = 0;
  int r = convert_head_string(inst->arena, used, span, flags, bad, &bad_at);
  if (r == bad && bad < 0) {
    r = head_part_at(inst->arena + span->off, bad_at);
  }
  *reject = r;
  return napi_ok;
}

/* The body argument: nothing, a string already copied to the arena, or a
 * Uint8Array read in place. */
typedef struct {
  enum { BODY_NONE, BODY_ARENA, BODY_BYTES } kind;
  span_t span;
  const char *bytes;
  size_t len;
} body_t;

/* What the caller says the body is, which saves asking V8: any value
 * (typeof decides), a string, a Uint8Array, or nothing (not read). A body
 * that is not what it is said to be is misuse, reported as any other wrong
 * body. */
typedef enum { HINT_ANY, HINT_STRING, HINT_BYTES, HINT_NONE } body_hint_t;

/* Reads the body argument. Returns NULL with an exception pending on misuse
 * or Node-API failure; otherwise a non-NULL sentinel, with `*reject` set to
 * ERR_NONASCII when FLAG_ASCII_ONLY rejects the string. */
static const void *read_body(napi_env env, instance_t *inst, napi_value v, const char *fn,
                             unsigned flags, body_hint_t hint, size_t *used, body_t *body,
                             int *reject)
{
  static const char ok = 0;
  napi_valuetype type = napi_undefined;
  napi_status st;
  body->kind = BODY_NONE;
  if (hint == HINT_NONE) {
    return &ok;
  }
  if (hint == HINT_STRING) {
    type = napi_string;
  } else if (hint == HINT_BYTES) {
    type = napi_object;
  } else {
    CALL(env, napi_typeof(env, v, &type));
  }
  if (type == napi_undefined || type == napi_null) {
    return &ok;
  }
  if (type == napi_string) {
    /* ASCII_ONLY must see every char, so the string is read as UTF-16 or
     * UTF-8 then; for pure ASCII text either is byte-identical to latin1. */
    bool fits = false;
    bool ascii = true;
    st = napi_ok;
    if (flags & FLAG_ASCII_ONLY) {
      st = read_short_ascii(env, inst, v, used, &body->span, &fits, &ascii);
    } else if (flags & FLAG_BODY_LATIN1) {
      st = read_latin1(env, inst, v, used, &body->span);
      fits = true;
    }
    if (st == napi_ok && !fits) {
      st = read_utf8(env, inst, v, used, &body->span);
    }
    if (st == napi_string_expected) {
      goto wrong_type;
    }
    CALL(env, st);
    if ((flags & FLAG_ASCII_ONLY) && !fits) {
      /* Text is ASCII exactly when its UTF-8 form has a byte per UTF-16
       * unit: any other char takes two or three bytes per unit (a lone
       * surrogate three, a pair four). Asking V8 for the length costs less
       * than reading the bytes again. */
      size_t units = 0;
      CALL(env, napi_get_value_string_utf16(env, v, NULL, 0, &units));
      ascii = units == body->span.len;
    }
    if (!ascii && *reject == 0) {
      *reject = ERR_NONASCII;
    }
    body->kind = BODY_ARENA;
    return &ok;
  }
  bool is_ta = hint == HINT_BYTES;
  if (type == napi_object && !is_ta) {
    CALL(env, napi_is_typedarray(env, v, &is_ta));
  }
  if (is_ta) {
    napi_typedarray_type ta_type;
    size_t length = 0;
    void *data = NULL;
    /* `data` already points at the first element: Node-API adds the view's
     * byte_offset, so a Buffer sliced from the shared pool reads the right
     * bytes. Any value that is not a TypedArray gives napi_invalid_arg. */
    st = napi_get_typedarray_info(env, v, &ta_type, &length, &data, NULL, NULL);
    if (st == napi_invalid_arg && hint == HINT_BYTES) {
      goto wrong_type;
    }
    CALL(env, st);
    if (ta_type == napi_uint8_array || ta_type == napi_uint8_clamped_array) {
      body->kind = BODY_BYTES;
      body->bytes = length == 0 ? NULL : data;
      body->len = length;
      return &ok;
    }
  }
wrong_type:;
  char msg[96];
  (void)snprintf(msg, sizeof msg, "%s: argument 'body' must be undefined, a string or a Uint8Array",
                 fn);
  throw_type_error(env, msg);
  return NULL;
}

/* Reads `flags` (a uint32 with only known bits). */
static bool read_flags(napi_env env, napi_value v, const char *fn, unsigned *flags)
{
  uint32_t f = 0;
  if (napi_get_value_uint32(env, v, &f) != napi_ok) {
    char msg[64];
    (void)snprintf(msg, sizeof msg, "%s: argument 'flags' must be a number", fn);
    throw_type_error(env, msg);
    return false;
  }
  if (f & ~FLAG_ALL) {
    char msg[80];
    (void)snprintf(msg, sizeof msg, "%s: argument 'flags' has unknown bits 0x%x", fn,
                   (unsigned)(f & ~FLAG_ALL));
    throw_type_error(env, msg);
    return false;
  }
  *flags = f;
  return true;
}

static napi_value make_code(napi_env env, int code)
{
  napi_value result;
  CALL(env, napi_create_uint32(env, (uint32_t)code, &result));
  return result;
}

/* Measures `res`, allocates the Buffer once and writes into it. Returns the
 * Buffer, the core's error code as a number, or NULL with an exception. */
static napi_value emit(napi_env env, const hm_response_t *res)
{
  size_t len = 0;
  hm_err_t err = hm_measure(res, &len);
  if (err != HM_OK) {
    return make_code(env, (int)err);
  }
  void *data = NULL;
  napi_value buf;
  CALL(env, napi_create_buffer(env, len, &data, &buf));
  size_t written = 0;
  err = hm_write(res, data, len, &written);
  /* hm_measure accepted the same input, so the write cannot fail. */
  assert(err == HM_OK && written == len);
  if (err != HM_OK) {
    return make_code(env, (int)err);
  }
  return buf;
}

static void set_body(hm_response_t *res, const instance_t *inst, const body_t *body)
{
  switch (body->kind) {
  case BODY_ARENA:
    res->body.base = inst->arena + body->span.off;
    res->body.len = body->span.len;
    break;
  case BODY_BYTES:
    res->body.base = body->bytes;
    res->body.len = body->len;
    break;
  default:
    res->body.base = NULL;
    res->body.len = 0;
    break;
  }
}

/* Reads exactly `want` arguments into `argv` (room for `want + 1`) and the
 * instance data. Returns false, with a TypeError or the Node-API error
 * pending, when the call has another count. */
static bool get_args(napi_env env, napi_callback_info info, napi_value *argv, size_t want,
                     instance_t **inst, const char *usage)
{
  size_t argc = want + 1;
  void *data = NULL;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, &data) != napi_ok) {
    throw_last_error(env);
    return false;
  }
  if (argc != want) {
    throw_type_error(env, usage);
    return false;
  }
  *inst = data;
  return true;
}

/* Reads the `numHeaders` argument. Returns false with a TypeError pending. */
static bool read_count(napi_env env, napi_value v, const char *fn, uint32_t *count)
{
  if (napi_get_value_uint32(env, v, count) != napi_ok) {
    char msg[80];
    (void)snprintf(msg, sizeof msg, "%s: argument 'numHeaders' must be a number", fn);
    throw_type_error(env, msg);
    return false;
  }
  return true;
}

/* The core rejects codes out of 100..999; NaN, fractions and values that
 * would not survive the cast to unsigned are rejected by the callers the
 * same way. The status line comes first on the wire, so its error wins. */
static bool status_ok(double status)
{
  return status >= 0 && status <= 100000 && status == (double)(unsigned)status;
}

/* build(statusCode, reason, headers, body, flags) */
static napi_value js_build(napi_env env, napi_callback_info info)
{
  napi_value argv[6];
  instance_t *inst = NULL;
  if (!get_args(env, info, argv, 5, &inst,
                "build: expected 5 arguments (statusCode, reason, headers, body, flags)")) {
    return NULL;
  }

  unsigned flags = 0;
  if (!read_flags(env, argv[4], "build", &flags)) {
    return NULL;
  }

  double status_d = 0;
  if (napi_get_value_double(env, argv[0], &status_d) != napi_ok) {
    return throw_type_error(env, "build: argument 'statusCode' must be a number");
  }

  napi_valuetype reason_type;
  CALL(env, napi_typeof(env, argv[1], &reason_type));
  if (reason_type != napi_string && reason_type != napi_undefined && reason_type != napi_null) {
    return throw_type_error(env, "build: argument 'reason' must be a string or undefined");
  }

  bool is_array = false;
  CALL(env, napi_is_array(env, argv[2], &is_array));
  if (!is_array) {
    return throw_type_error(env, "build: argument 'headers' must be an array");
  }
  uint32_t n = 0;
  CALL(env, napi_get_array_length(env, argv[2], &n));
  if (n % 2 != 0) {
    return throw_type_error(env, "build: argument 'headers' must have an even length");
  }

  if (!grow((void **)&inst->spans, &inst->spans_cap, (size_t)n, sizeof(span_t)) ||
      !grow((void **)&inst->fields, &inst->fields_cap, (size_t)n, sizeof(hm_str_t))) {
    napi_throw_error(env, NULL, "build: out of memory");
    return NULL;
  }
  span_t *spans = inst->spans;

  size_t used = 0;
  int reject = 0;
  span_t reason = {0, 0};
  if (reason_type == napi_string) {
    CALL(env,
         read_head_string(env, inst, argv[1], &used, &reason, flags, HM_EINVAL_REASON, &reject));
  }
  for (uint32_t i = 0; i < n; i++) {
    napi_value el;
    CALL(env, napi_get_element(env, argv[2], i, &el));
    napi_status st = read_head_string(env, inst, el, &used, &spans[i], flags,
                                      i % 2 == 0 ? HM_EINVAL_NAME : HM_EINVAL_VALUE, &reject);
    if (st == napi_string_expected) {
      char msg[80];
      (void)snprintf(msg, sizeof msg, "build: argument 'headers[%u]' must be a string",
                     (unsigned)i);
      return throw_type_error(env, msg);
    }
    CALL(env, st);
  }

  body_t body;
  if (read_body(env, inst, argv[3], "build", flags, HINT_ANY, &used, &body, &reject) == NULL) {
    return NULL;
  }
  if (!status_ok(status_d)) {
    reject = HM_EINVAL_STATUS;
  }
  if (reject != 0) {
    arena_trim(inst);
    return make_code(env, reject);
  }

  /* The arena has stopped moving; turn offsets into views. */
  for (uint32_t i = 0; i < n; i++) {
    inst->fields[i].base = inst->arena + spans[i].off;
    inst->fields[i].len = spans[i].len;
  }
  hm_response_t res;
  res.status = (unsigned)status_d;
  res.reason.base = reason_type == napi_string ? inst->arena + reason.off : NULL;
  res.reason.len = reason.len;
  res.headers = inst->fields;
  res.num_headers = n / 2;
  set_body(&res, inst, &body);
  res.framing = (flags & FLAG_CHUNKED) ? HM_FRAMING_CHUNKED : HM_FRAMING_RAW;

  napi_value out = emit(env, &res);
  arena_trim(inst);
  return out;
}

/* Reads fill()'s `dst, offset` pair: an ArrayBuffer and an offset no
 * larger than its length, or null or undefined (no room). Returns false
 * with a TypeError pending on misuse. */
static bool read_dst(napi_env env, napi_value dst_v, napi_value off_v, char **dst, size_t *room)
{
  *dst = NULL;
  *room = 0;
  void *data = NULL;
  size_t len = 0;
  /* The common case first: one call, no napi_typeof(). */
  if (napi_get_arraybuffer_info(env, dst_v, &data, &len) != napi_ok) {
    napi_valuetype type;
    if (napi_typeof(env, dst_v, &type) != napi_ok) {
      throw_last_error(env);
      return false;
    }
    if (type == napi_undefined || type == napi_null) {
      return true;
    }
    throw_type_error(env, "fill: argument 'dst' must be an ArrayBuffer, null or undefined");
    return false;
  }
  uint32_t off = 0;
  if (napi_get_value_uint32(env, off_v, &off) != napi_ok || (size_t)off > len) {
    throw_type_error(env, "fill: argument 'offset' must be an integer within 'dst'");
    return false;
  }
  /* An empty ArrayBuffer may have no data pointer; nothing fits then. */
  if (data != NULL) {
    *dst = (char *)data + off;
    *room = len - off;
  }
  return true;
}

/* fill(fields, numHeaders, statusCode, reason, body, flags, dst, offset):
 * build() for lib/build.js. The header fields come joined in one string,
 * `name NUL value CR LF` per line, read with one Node-API call instead of
 * two per field; the message is validated and sized once
 * (hm_serialize_joined()) and written at `offset` into `dst`, an
 * ArrayBuffer the caller hands out in pieces, when it fits there.
 *
 * Returns the message's length when it is in `dst` at `offset`; a Buffer
 * of its own holding the message when it does not fit (or `dst` is null);
 * or -(code) when the core rejects it, which lib/build.js explains with
 * Node's error. */
static napi_value js_fill(napi_env env, napi_callback_info info)
{
  napi_value argv[9];
  instance_t *inst = NULL;
  uint32_t num_headers = 0;
  unsigned flags = 0;
  if (!get_args(env, info, argv, 8, &inst,
                "fill: expected 8 arguments "
                "(fields, numHeaders, statusCode, reason, body, flags, dst, offset)") ||
      !read_count(env, argv[1], "fill", &num_headers) ||
      !read_flags(env, argv[5], "fill", &flags)) {
    return NULL;
  }
  double status_d = 0;
  if (napi_get_value_double(env, argv[2], &status_d) != napi_ok) {
    return throw_type_error(env, "fill: argument 'statusCode' must be a number");
  }
  char *dst = NULL;
  size_t room = 0;
  if (!read_dst(env, argv[6], argv[7], &dst, &room)) {
    return NULL;
  }

  size_t used = 0;
  int reject = 0;
  /* The reason first, as the status line comes first. */
  span_t reason = {0, 0};
  napi_status st =
      read_head_string(env, inst, argv[3], &used, &reason, flags, HM_EINVAL_REASON, &reject);
  bool has_reason = st == napi_ok;
  if (st == napi_string_expected) {
    napi_valuetype type;
    CALL(env, napi_typeof(env, argv[3], &type));
    if (type != napi_undefined && type != napi_null) {
      return throw_type_error(env, "fill: argument 'reason' must be a string or undefined");
    }
  } else {
    CALL(env, st);
  }
  span_t fields;
  st = read_head_string(env, inst, argv[0], &used, &fields, flags, HM_EINVAL_VALUE, &reject);
  if (st == napi_string_expected) {
    return throw_type_error(env, "fill: argument 'fields' must be a string");
  }
  CALL(env, st);
  body_t body;
  if (read_body(env, inst, argv[4], "fill", flags, HINT_ANY, &used, &body, &reject) == NULL) {
    arena_trim(inst);
    return NULL;
  }
  if (!status_ok(status_d)) {
    reject = HM_EINVAL_STATUS;
  }
  /* A line takes at least 4 bytes, so a count the string cannot hold is
   * rejected before the views are sized from it. */
  if (reject == 0 && (size_t)num_headers > fields.len / 4) {
    reject = HM_EINVAL_HEAD;
  }
  if (reject == 0 &&
      !grow((void **)&inst->fields, &inst->fields_cap, (size_t)num_headers * 2, sizeof(hm_str_t))) {
    arena_trim(inst);
    napi_throw_error(env, NULL, "fill: out of memory");
    return NULL;
  }
  napi_value out;
  hm_response_t res;
  size_t len = 0;
  hm_err_t err = HM_OK;
  if (reject == 0) {
    /* The arena has stopped moving; views into it stay valid. */
    res.status = (unsigned)status_d;
    res.reason.base = has_reason ? inst->arena + reason.off : NULL;
    res.reason.len = reason.len;
    res.headers = NULL;
    res.num_headers = num_headers;
    set_body(&res, inst, &body);
    res.framing = (flags & FLAG_CHUNKED) ? HM_FRAMING_CHUNKED : HM_FRAMING_RAW;
    err = hm_serialize_joined(&res, inst->arena + fields.off, fields.len, inst->fields, dst, room,
                              &len);
    reject = err == HM_E2BIG ? 0 : (int)err;
  }
  if (reject != 0) {
    arena_trim(inst);
    CALL(env, napi_create_int32(env, -reject, &out));
    return out;
  }
  if (err == HM_OK) {
    arena_trim(inst);
    CALL(env, napi_create_double(env, (double)len, &out));
    return out;
  }
  /* It does not fit: a Buffer of its own, written from the views the core
   * just checked. */
  res.headers = inst->fields;
  out = emit(env, &res);
  arena_trim(inst);
  return out;
}

/* The element type, data and length of `v` when it is a typed array;
 * napi_int8_array (a type no caller accepts), NULL and 0 when it is not. */
static napi_status typed_bytes(napi_env env, napi_value v, napi_typedarray_type *type, void **data,
                               size_t *len)
{
  *type = napi_int8_array;
  *data = NULL;
  *len = 0;
  bool is_ta = false;
  napi_status status = napi_is_typedarray(env, v, &is_ta);
  if (status != napi_ok || !is_ta) {
    return status;
  }
  return napi_get_typedarray_info(env, v, type, len, data, NULL, NULL);
}
/* buildFromHead(head, numHeaders, body, flags) */
static napi_value js_build_from_head(napi_env env, napi_callback_info info)
{
  napi_value argv[5];
  instance_t *inst = NULL;
  unsigned flags = 0;
  uint32_t num_headers = 0;
  if (!get_args(env, info, argv, 4, &inst,
                "buildFromHead: expected 4 arguments (head, numHeaders, body, flags)") ||
      !read_flags(env, argv[3], "buildFromHead", &flags) ||
      !read_count(env, argv[1], "buildFromHead", &num_headers)) {
    return NULL;
  }

  size_t used = 0;
  int reject = 0;
  span_t head;
  napi_status st = read_head_string(env, inst, argv[0], &used, &head, flags, -1, &reject);
  if (st == napi_string_expected) {
    return throw_type_error(env, "buildFromHead: argument 'head' must be a string");
  }
  CALL(env, st);

  body_t body;
  if (read_body(env, inst, argv[2], "buildFromHead", flags, HINT_ANY, &used, &body, &reject) ==
      NULL) {
    return NULL;
  }
  if (reject != 0) {
    arena_trim(inst);
    return make_code(env, reject);
  }

  /* A header line takes at least 5 bytes ("a: \r\n"), so a count the head
   * cannot hold is rejected before anything is sized from it. */
  if ((size_t)num_headers > head.len / 5) {
    arena_trim(inst);
    return make_code(env, HM_EINVAL_HEAD);
  }
  size_t cap = (size_t)num_headers * 2;
  if (!grow((void **)&inst->fields, &inst->fields_cap, cap == 0 ? 1 : cap, sizeof(hm_str_t))) {
    napi_throw_error(env, NULL, "buildFromHead: out of memory");
    return NULL;
  }

  hm_response_t res;
  memset(&res, 0, sizeof res);
  hm_err_t err = hm_parse_head(inst->arena + head.off, head.len, &res, inst->fields, cap);
  if (err == HM_OK && res.num_headers != num_headers) {
    err = HM_EINVAL_HEAD;
  }
  if (err != HM_OK) {
    arena_trim(inst);
    return make_code(env, (int)err);
  }
  set_body(&res, inst, &body);
  res.framing = (flags & FLAG_CHUNKED) ? HM_FRAMING_CHUNKED : HM_FRAMING_RAW;

  napi_value out = emit(env, &res);
  arena_trim(inst);
  return out;
}

/* fillFromHead(dst, head, numHeaders, body, flags): the shim's hot path.
 * Checks `head` in one pass (hm_write_head) and writes it and the body into
 * `dst`, a Uint8Array the caller sized as head bytes plus body bytes (JS
 * takes it from Buffer's shared pool, which is much cheaper than a
 * standalone allocation per response). With FLAG_CHUNKED the head is read
 * as latin1 (Node writes it with the chunk-size line, as one latin1
 * string) and the body follows as one chunk and the last chunk, as
 * hm_block_parts() frames it; `dst` is then sized for that. Returns 0, or
 * the rejection code; `dst` is untouched on rejection. */
static napi_value js_fill_from_head(napi_env env, napi_callback_info info)
{
  napi_value argv[6];
  instance_t *inst = NULL;
  unsigned flags = 0;
  if (!get_args(env, info, argv, 5, &inst,
                "fillFromHead: expected 5 arguments (dst, head, numHeaders, body, flags)") ||
      !read_flags(env, argv[4], "fillFromHead", &flags)) {
    return NULL;
  }
  const bool chunked = (flags & FLAG_CHUNKED) != 0;
  napi_typedarray_type dst_type;
  size_t dst_len = 0;
  void *dst = NULL;
  CALL(env, typed_bytes(env, argv[0], &dst_type, &dst, &dst_len));
  if (dst_type != napi_uint8_array) {
    return throw_type_error(env, "fillFromHead: argument 'dst' must be a Uint8Array");
  }
  uint32_t num_headers = 0;
  if (!read_count(env, argv[2], "fillFromHead", &num_headers)) {
    return NULL;
  }

  size_t used = 0;
  int reject = 0;
  span_t head;
  napi_status st;
  if (chunked) {
    st = read_latin1(env, inst, argv[1], &used, &head);
  } else if ((flags & FLAG_HEAD_ONE_BYTE) &&
             (!(flags & FLAG_HEAD_UTF8) || (flags & FLAG_ASCII_ONLY))) {
    st = read_latin1(env, inst, argv[1], &used, &head);
    if (st == napi_ok && (flags & FLAG_ASCII_ONLY) &&
        !is_ascii((const unsigned char *)inst->arena + head.off, head.len)) {
      reject = ERR_NONASCII;
    }
  } else {
    st = read_head_string(env, inst, argv[1], &used, &head, flags, -1, &reject);
  }
  if (st == napi_string_expected) {
    return throw_type_error(env, "fillFromHead: argument 'head' must be a string");
  }
  CALL(env, st);

  body_t body;
  if (read_body(env, inst, argv[3], "fillFromHead", flags, HINT_ANY, &used, &body, &reject) ==
      NULL) {
    return NULL;
  }
  if (reject == 0) {
    hm_response_t res;
    set_body(&res, inst, &body);
    size_t written = 0;
    const char *const h = inst->arena + head.off;
    if (chunked) {
      hm_parts_t parts;
      reject = (int)hm_check_head(h, head.len, num_headers);
      if (reject == 0) {
        reject = (int)hm_block_parts(h, head.len, HM_NO_HOLE, (hm_str_t){NULL, 0}, res.body,
                                     HM_FRAMING_CHUNKED, &parts);
      }
      if (reject == 0) {
        reject = (int)hm_write_parts(&parts, dst, dst_len, &written);
      }
    } else {
      reject = (int)hm_write_head(h, head.len, num_headers, res.body, dst, dst_len, &written);
    }
  }
  arena_trim(inst);
  return make_code(env, reject);
}

/* Reads a slot index argument. Returns NULL with a TypeError pending. */
static slot_t *read_slot(napi_env env, instance_t *inst, napi_value v, const char *fn)
{
  uint32_t i = 0;
  if (napi_get_value_uint32(env, v, &i) != napi_ok || i >= SLOT_COUNT) {
    char msg[80];
    (void)snprintf(msg, sizeof msg, "%s: argument 'slot' must be an integer below %d", fn,
                   SLOT_COUNT);
    throw_type_error(env, msg);
    return NULL;
  }
  return &inst->slots[i];
}

/* cacheSet(slot, prefix, suffix, numHeaders): stores the header block
 * `prefix + "0" + suffix` in `slot` once hm_check_head() accepts it with
 * `numHeaders` lines; the '0' marks where fillCached() puts the
 * Content-Length digits. With `prefix` null the block is `suffix` alone,
 * with no hole, and fillCached() frames the body as chunked after it (the
 * block must then end in the Transfer-Encoding: chunked line Node renders,
 * which the shim's renderer guarantees). Returns 0, ENONASCII for a block that is not
 * ASCII (its UTF-8 and latin1 bytes differ), or the core's rejection code;
 * the slot is emptied on rejection. */
static napi_value js_cache_set(napi_env env, napi_callback_info info)
{
  napi_value argv[5];
  instance_t *inst = NULL;
  uint32_t num_headers = 0;
  if (!get_args(env, info, argv, 4, &inst,
                "cacheSet: expected 4 arguments (slot, prefix, suffix, numHeaders)") ||
      !read_count(env, argv[3], "cacheSet", &num_headers)) {
    return NULL;
  }
  slot_t *slot = read_slot(env, inst, argv[0], "cacheSet");
  if (slot == NULL) {
    return NULL;
  }
  free(slot->block);
  slot->block = NULL;
  slot->len = 0;
  slot->hole = 0;
  slot->framing = HM_FRAMING_RAW;
  slot->has_last = false;
  slot->last_len = 0;
  free(slot->filled);
  slot->filled = NULL;
  slot->filled_ok = false;

  size_t used = 0;
  span_t prefix = {0, 0};
  span_t suffix;
  napi_valuetype prefix_type = napi_undefined;
  CALL(env, napi_typeof(env, argv[1], &prefix_type));
  const bool chunked = prefix_type == napi_null;
  napi_status st = chunked ? napi_ok : read_utf8(env, inst, argv[1], &used, &prefix);
  if (st == napi_ok) {
    st = read_utf8(env, inst, argv[2], &used, &suffix);
  }
  if (st == napi_string_expected) {
    return throw_type_error(
        env, "cacheSet: argument 'prefix' must be a string or null, 'suffix' a string");
  }
  CALL(env, st);
  int reject = 0;
  const char *p = inst->arena + prefix.off;
  const char *s = inst->arena + suffix.off;
  if (!is_ascii((const unsigned char *)p, prefix.len) ||
      !is_ascii((const unsigned char *)s, suffix.len)) {
    reject = ERR_NONASCII;
  } else if (suffix.len >= SIZE_MAX - prefix.len - 1) {
    reject = HM_EOVERFLOW;
  }
  char *block = NULL;
  /* The placeholder digit, for a block with a hole. */
  const size_t hole_len = chunked ? 0 : 1;
  size_t len = prefix.len + hole_len + suffix.len;
  if (reject == 0) {
    block = malloc(len);
    if (block == NULL) {
      arena_trim(inst);
      napi_throw_error(env, NULL, "cacheSet: out of memory");
      return NULL;
    }
    memcpy(block, p, prefix.len);
    if (!chunked) {
      block[prefix.len] = '0';
    }
    memcpy(block + prefix.len + hole_len, s, suffix.len);
    reject = (int)hm_check_head(block, len, num_headers);
  }
  arena_trim(inst);
  if (reject != 0) {
    free(block);
    return make_code(env, reject);
  }
  slot->block = block;
  slot->len = len;
  slot->hole = chunked ? HM_NO_HOLE : prefix.len;
  slot->framing = chunked ? HM_FRAMING_CHUNKED : HM_FRAMING_RAW;
  /* Without room for it (out of memory), repeats take the three parts. */
  if (!chunked && len - 1 <= SIZE_MAX - HM_LENGTH_DIGITS_MAX) {
    slot->filled = malloc(len - 1 + HM_LENGTH_DIGITS_MAX);
  }
  return make_code(env, 0);
}

/* read_length() without keeping the digits. */
static bool read_length_value(napi_env env, napi_value v, const char *fn, const slot_t *slot,
                              char *buf, hm_str_t *out)
{
  napi_valuetype type;
  if (napi_typeof(env, v, &type) != napi_ok) {
    throw_last_error(env);
    return false;
  }
  if (type == napi_number) {
    int64_t n = -1;
    if (napi_get_value_int64(env, v, &n) != napi_ok) {
      throw_last_error(env);
      return false;
    }
    /* Out of range values give no digits; the core rejects the empty view. */
    out->base = buf;
    out->len = 0;
    if (n == -1) {
      if (slot->has_last) {
        memcpy(buf, slot->last, slot->last_len);
        out->len = slot->last_len;
      }
      return true;
    }
    if (n < 0 || n > INT64_C(9007199254740991)) {
      return true;
    }
    char tmp[HM_LENGTH_DIGITS_MAX];
    size_t k = 0;
    do {
      tmp[k++] = (char)('0' + (n % 10));
      n /= 10;
    } while (n > 0 && k < sizeof tmp);
    for (size_t i = 0; i < k; i++) {
      buf[i] = tmp[k - 1 - i];
    }
    out->len = k;
    return true;
  }
  if (type == napi_string) {
    size_t copied = 0;
    if (napi_get_value_string_latin1(env, v, buf, HM_LENGTH_DIGITS_MAX + 1, &copied) != napi_ok) {
      throw_last_error(env);
      return false;
    }
    size_t full = 0;
    if (copied == HM_LENGTH_DIGITS_MAX &&
        napi_get_value_string_latin1(env, v, NULL, 0, &full) == napi_ok && full != copied) {
      /* Longer than any length the shim caches: make the core reject it. */
      buf[0] = 'x';
    }
    out->base = buf;
    out->len = copied;
    return true;
  }
  char msg[80];
  (void)snprintf(msg, sizeof msg, "%s: argument 'length' must be a number or a string", fn);
  throw_type_error(env, msg);
  return false;
}

/* Reads a Content-Length argument as its decimal digits into `buf`
 * (HM_LENGTH_DIGITS_MAX + 1 bytes): a non-negative safe integer, or a
 * string, copied as latin1 and checked by the core; or -1, the digits of
 * `slot`'s last response (none when it has had none since it was stored,
 * which the core rejects). The digits read are kept as the slot's last.
 * Returns false with an exception pending on misuse. */
static bool read_length(napi_env env, napi_value v, const char *fn, slot_t *slot, char *buf,
                        hm_str_t *out)
{
  if (!read_length_value(env, v, fn, slot, buf, out)) {
    return false;
  }
  /* out->len <= HM_LENGTH_DIGITS_MAX: both readers stop there. */
  memcpy(slot->last, out->base, out->len);
  slot->last_len = out->len;
  slot->has_last = true;
  slot->filled_ok = false;
  return true;
}
/* The arguments fillCached() and sendCached() share: a cached block, the
 * Content-Length value to fill in (none for a chunked block) and the body,
 * and the message they make. */
typedef struct {
  const slot_t *slot;
  uint32_t key;
  char digits[HM_LENGTH_DIGITS_MAX + 1];
  hm_str_t length;
  hm_str_t body;
  hm_parts_t parts;
  /* How many leading parts hold the message: 2 for a repeat of a slot's
   * filled block (the block, the body), else HM_BLOCK_PARTS. */
  size_t count;
} holed_t;

/* The `key` argument of fillCached() and sendCached(): the slot, the flags,
 * whether to repeat the slot's last Content-Length digits, (sendCached()
 * only) whether to check for a pending socket error first, and at most one
 * of what the body is (a string, bytes, none: not read), in one number
 * (one Node-API read instead of four per response). */
#define KEY_SLOT_MASK   0xfu
#define KEY_FLAGS_SHIFT 4
#define KEY_REPEAT      (1u << 9)
#define KEY_CHECK       (1u << 10)
#define KEY_STRING      (1u << 11)
#define KEY_BYTES       (1u << 12)
#define KEY_EMPTY       (1u << 13)
#define KEY_BODY        (KEY_STRING | KEY_BYTES | KEY_EMPTY)
#define KEY_ALL         (KEY_SLOT_MASK | (FLAG_ALL << KEY_FLAGS_SHIFT) | KEY_REPEAT | KEY_CHECK | KEY_BODY)
_Static_assert(SLOT_COUNT - 1 <= KEY_SLOT_MASK, "slot indexes must fit the key");
_Static_assert((FLAG_ALL << KEY_FLAGS_SHIFT) < KEY_REPEAT, "flags must fit below KEY_REPEAT");

/* Reads `key, length, body` from `argv` into `h`. Returns false with an
 * exception pending on misuse; a rejection (an empty slot, a non-ASCII
 * string body under FLAG_ASCII_ONLY, a repeat with no digits kept) goes to
 * `*reject`. The body may live in the arena until arena_trim(). */
static bool read_holed(napi_env env, instance_t *inst, napi_value *argv, const char *fn, holed_t *h,
                       int *reject)
{
  uint32_t key = 0;
  if (napi_get_value_uint32(env, argv[0], &key) != napi_ok || (key & ~KEY_ALL) != 0 ||
      (key & KEY_SLOT_MASK) >= SLOT_COUNT || ((key & KEY_BODY) & ((key & KEY_BODY) - 1)) != 0) {
    char msg[96];
    (void)snprintf(msg, sizeof msg, "%s: argument 'key' must be slot | flags << %d | repeat (0x%x)",
                   fn, KEY_FLAGS_SHIFT, (unsigned)KEY_REPEAT);
    throw_type_error(env, msg);
    return false;
  }
  const unsigned flags = (key >> KEY_FLAGS_SHIFT) & FLAG_ALL;
  slot_t *slot = &inst->slots[key & KEY_SLOT_MASK];
  h->slot = slot;
  h->key = key;
  h->length = (hm_str_t){h->digits, 0};
  h->count = HM_BLOCK_PARTS;
  const bool repeat = (key & KEY_REPEAT) != 0 && slot->framing == HM_FRAMING_RAW;
  const bool use_filled = repeat && slot->filled_ok;
  if (slot->framing == HM_FRAMING_RAW && !use_filled) {
    if (key & KEY_REPEAT) {
      /* The digits of the slot's last response; none since it was stored
       * leaves the length empty, which the core rejects. */
      if (slot->has_last) {
        memcpy(h->digits, slot->last, slot->last_len);
        h->length.len = slot->last_len;
      }
    } else if (!read_length(env, argv[1], fn, slot, h->digits, &h->length)) {
      return false;
    }
  }
  /* A chunked block has no hole: its length argument is not read. */
  size_t used = 0;
  body_t body;
  const body_hint_t hint = (key & KEY_STRING)  ? HINT_STRING
                           : (key & KEY_BYTES) ? HINT_BYTES
                           : (key & KEY_EMPTY) ? HINT_NONE
                                               : HINT_ANY;
  if (read_body(env, inst, argv[2], fn, flags, hint, &used, &body, reject) == NULL) {
    return false;
  }
  hm_response_t res;
  set_body(&res, inst, &body);
  h->body = res.body;
  /* FLAG_CHUNKED says which framing the caller sized the message for: it
   * must be the block's. */
  if (*reject == 0 && (h->slot->block == NULL ||
                       ((flags & FLAG_CHUNKED) != 0) != (slot->framing == HM_FRAMING_CHUNKED))) {
    *reject = HM_EINVAL_ARG;
  }
  if (*reject == 0 && use_filled) {
    if (h->body.len > SIZE_MAX - slot->filled_len) {
      *reject = HM_EOVERFLOW;
    } else {
      /* The body right after the block, the other parts empty (in output
       * order, as hm_write_parts() reads them all). */
      hm_str_t *part = h->parts.part;
      memset(part, 0, sizeof h->parts.part);
      part[0] = (hm_str_t){slot->filled, slot->filled_len};
      part[1] = h->body;
      h->parts.total = slot->filled_len + h->body.len;
      h->count = 2;
    }
  } else if (*reject == 0) {
    *reject = (int)hm_block_parts(slot->block, slot->len, slot->hole, h->length, h->body,
                                  slot->framing, &h->parts);
    if (*reject == 0 && repeat && slot->filled != NULL) {
      /* The core accepted the repeated digits: keep the block as laid
       * out, its first three parts (at most len - 1 + DIGITS_MAX bytes). */
      size_t n = 0;
      for (size_t i = 0; i < 3; i++) {
        memcpy(slot->filled + n, h->parts.part[i].base, h->parts.part[i].len);
        n += h->parts.part[i].len;
      }
      slot->filled_len = n;
      slot->filled_ok = true;
    }
  }
  return true;
}

/* fillCached(dst, key, length, body): writes the block cached in the key's
 * slot with `length` (or, with KEY_REPEAT, the slot's last digits) as its
 * Content-Length value, then the body, into `dst`, a Buffer the caller
 * sized exactly. Returns 0 or the rejection code (an empty slot is
 * HM_EINVAL_ARG); `dst` is untouched on rejection. */
static napi_value js_fill_cached(napi_env env, napi_callback_info info)
{
  napi_value argv[6];
  instance_t *inst = NULL;
  if (!get_args(env, info, argv, 4, &inst,
                "fillCached: expected 4 arguments (dst, key, length, body)")) {
    return NULL;
  }
  void *dst = NULL;
  size_t dst_len = 0;
  bool is_buffer = false;
  CALL(env, napi_is_buffer(env, argv[0], &is_buffer));
  if (!is_buffer) {
    return throw_type_error(env, "fillCached: argument 'dst' must be a Buffer");
  }
  CALL(env, napi_get_buffer_info(env, argv[0], &dst, &dst_len));
  int reject = 0;
  holed_t h;
  if (!read_holed(env, inst, argv + 1, "fillCached", &h, &reject)) {
    arena_trim(inst);
    return NULL;
  }
  if (reject == 0) {
    size_t written = 0;
    reject = (int)hm_write_parts(&h.parts, dst, dst_len, &written);
  }
  arena_trim(inst);
  return make_code(env, reject);
}

/* What sendCached() returns for a rejected response, and for a write that
 * failed with an errno: below every other result, so JS reads the core's
 * code back as -(result) - SEND_REJECT and the errno as -(result) -
 * SEND_FAILED. */
#define SEND_REJECT 100
#define SEND_FAILED 1000
_Static_assert(SEND_REJECT + ERR_NONASCII < SEND_FAILED, "rejections stay above failures");

/* sendCached(fd, key, length, body): writes the response fillCached()
 * would build straight to the socket descriptor `fd`, in one send() or
 * sendmsg() (src/send.c), after a check for a pending socket error when the
 * key has KEY_CHECK. Returns undefined when the whole message was written,
 * else the bytes written (the rest is the caller's to write),
 * HM_SEND_NOT_READY (-1) when nothing was written,
 * -(SEND_FAILED + errno) when the write failed (nothing written; the
 * caller reports the error), or -(SEND_REJECT + code) when the core
 * rejects the response (nothing written either). */
static napi_value js_send_cached(napi_env env, napi_callback_info info)
{
  napi_value argv[6];
  instance_t *inst = NULL;
  int32_t fd = -1;
  if (!get_args(env, info, argv, 4, &inst,
                "sendCached: expected 4 arguments (fd, key, length, body)")) {
    return NULL;
  }
  if (napi_get_value_int32(env, argv[0], &fd) != napi_ok) {
    return throw_type_error(env, "sendCached: argument 'fd' must be a number");
  }
  int reject = 0;
  holed_t h;
  if (!read_holed(env, inst, argv + 1, "sendCached", &h, &reject)) {
    arena_trim(inst);
    return NULL;
  }
  long result;
  if (reject != 0) {
    result = -(long)(SEND_REJECT + reject);
  } else {
    int err = 0;
    result = hm_send(fd, h.parts.part, h.count, (h.key & KEY_CHECK) != 0, inst->send_scratch, &err);
    if (result == HM_SEND_FAILED)
      result =
          err > 0 && err < INT32_MAX - SEND_FAILED ? -(long)(SEND_FAILED + err) : HM_SEND_NOT_READY;
  }
  arena_trim(inst);
  /* The whole message written, the common case, returns undefined: no
   * value to create. */
  if (reject == 0 && result >= 0 && (size_t)result == h.parts.total) {
    return NULL;
  }
  /* An int32 result (every one a socket below its high-water mark gives)
   * becomes a small integer, which costs V8 no allocation. */
  napi_value out;
  if (result >= INT32_MIN && result <= INT32_MAX) {
    CALL(env, napi_create_int32(env, (int32_t)result, &out));
  } else {
    CALL(env, napi_create_double(env, (double)result, &out));
  }
  return out;
}

/* checkHead(head, numHeaders): validates a rendered header block as
 * fillFromHead() would, without writing anything. Returns 0 or the
 * rejection code; chars above 0xFF are rejected, 0x80..0xFF allowed. */
static napi_value js_check_head(napi_env env, napi_callback_info info)
{
  napi_value argv[3];
  instance_t *inst = NULL;
  uint32_t num_headers = 0;
  if (!get_args(env, info, argv, 2, &inst, "checkHead: expected 2 arguments (head, numHeaders)") ||
      !read_count(env, argv[1], "checkHead", &num_headers)) {
    return NULL;
  }
  size_t used = 0;
  int reject = 0;
  span_t head;
  napi_status st = read_head_string(env, inst, argv[0], &used, &head, 0, -1, &reject);
  if (st == napi_string_expected) {
    return throw_type_error(env, "checkHead: argument 'head' must be a string");
  }
  CALL(env, st);
  if (reject == 0) {
    reject = (int)hm_check_head(inst->arena + head.off, head.len, num_headers);
  }
  arena_trim(inst);
  return make_code(env, reject);
}

static void instance_free(napi_env env, void *data, void *hint)
{
  (void)env;
  (void)hint;
  instance_t *inst = data;
  free(inst->arena);
  free(inst->fields);
  free(inst->spans);
  for (size_t i = 0; i < SLOT_COUNT; i++) {
    free(inst->slots[i].block);
    free(inst->slots[i].filled);
  }
  free(inst);
}

static napi_value set_uint32(napi_env env, napi_value obj, const char *name, uint32_t v)
{
  napi_value val;
  CALL(env, napi_create_uint32(env, v, &val));
  CALL(env, napi_set_named_property(env, obj, name, val));
  return obj;
}

static napi_value make_flags(napi_env env)
{
  napi_value obj;
  CALL(env, napi_create_object(env, &obj));
  if (set_uint32(env, obj, "CHUNKED", FLAG_CHUNKED) == NULL ||
      set_uint32(env, obj, "BODY_LATIN1", FLAG_BODY_LATIN1) == NULL ||
      set_uint32(env, obj, "HEAD_UTF8", FLAG_HEAD_UTF8) == NULL ||
      set_uint32(env, obj, "ASCII_ONLY", FLAG_ASCII_ONLY) == NULL ||
      set_uint32(env, obj, "HEAD_ONE_BYTE", FLAG_HEAD_ONE_BYTE) == NULL) {
    return NULL;
  }
  CALL(env, napi_object_freeze(env, obj));
  return obj;
}

static napi_value make_errors(napi_env env)
{
  napi_value obj;
  CALL(env, napi_create_object(env, &obj));
#define ERR_GEN(name, _)                                \
  if (set_uint32(env, obj, #name, HM_##name) == NULL) { \
    return NULL;                                        \
  }
  HM_ERRNO_MAP(ERR_GEN)
#undef ERR_GEN
  if (set_uint32(env, obj, "ENONASCII", ERR_NONASCII) == NULL) {
    return NULL;
  }
  CALL(env, napi_object_freeze(env, obj));
  return obj;
}

NAPI_MODULE_INIT(/* napi_env env, napi_value exports */)
{
  instance_t *inst = calloc(1, sizeof *inst);
  if (inst == NULL) {
    napi_throw_error(env, NULL, "http-oneshot: out of memory");
    return NULL;
  }
  if (napi_set_instance_data(env, inst, instance_free, NULL) != napi_ok) {
    free(inst);
    throw_last_error(env);
    return NULL;
  }

  napi_value flags = make_flags(env);
  if (flags == NULL) {
    return NULL;
  }
  napi_value errors = make_errors(env);
  if (errors == NULL) {
    return NULL;
  }
  napi_value slot_count;
  CALL(env, napi_create_uint32(env, SLOT_COUNT, &slot_count));
  napi_value key_shift;
  CALL(env, napi_create_uint32(env, KEY_FLAGS_SHIFT, &key_shift));
  napi_value key_repeat;
  CALL(env, napi_create_uint32(env, KEY_REPEAT, &key_repeat));
  napi_value key_check;
  CALL(env, napi_create_uint32(env, KEY_CHECK, &key_check));
  napi_value key_string;
  CALL(env, napi_create_uint32(env, KEY_STRING, &key_string));
  napi_value key_bytes;
  CALL(env, napi_create_uint32(env, KEY_BYTES, &key_bytes));
  napi_value key_empty;
  CALL(env, napi_create_uint32(env, KEY_EMPTY, &key_empty));
  napi_value send_failed;
  CALL(env, napi_create_uint32(env, SEND_FAILED, &send_failed));
  napi_value can_send;
  CALL(env, napi_get_boolean(env, hm_send_available() != 0, &can_send));

  napi_property_descriptor props[] = {
      {"build", NULL, js_build, NULL, NULL, NULL, napi_enumerable, inst},
      {"fill", NULL, js_fill, NULL, NULL, NULL, napi_enumerable, inst},
      {"buildFromHead", NULL, js_build_from_head, NULL, NULL, NULL, napi_enumerable, inst},
      {"fillFromHead", NULL, js_fill_from_head, NULL, NULL, NULL, napi_enumerable, inst},
      {"checkHead", NULL, js_check_head, NULL, NULL, NULL, napi_enumerable, inst},
      {"cacheSet", NULL, js_cache_set, NULL, NULL, NULL, napi_enumerable, inst},
      {"fillCached", NULL, js_fill_cached, NULL, NULL, NULL, napi_enumerable, inst},
      {"sendCached", NULL, js_send_cached, NULL, NULL, NULL, napi_enumerable, inst},
      {"canSend", NULL, NULL, NULL, NULL, can_send, napi_enumerable, NULL},
      {"flags", NULL, NULL, NULL, NULL, flags, napi_enumerable, NULL},
      {"errors", NULL, NULL, NULL, NULL, errors, napi_enumerable, NULL},
      {"slotCount", NULL, NULL, NULL, NULL, slot_count, napi_enumerable, NULL},
      {"keyShift", NULL, NULL, NULL, NULL, key_shift, napi_enumerable, NULL},
      {"keyRepeat", NULL, NULL, NULL, NULL, key_repeat, napi_enumerable, NULL},
      {"keyCheck", NULL, NULL, NULL, NULL, key_check, napi_enumerable, NULL},
      {"keyString", NULL, NULL, NULL, NULL, key_string, napi_enumerable, NULL},
      {"keyBytes", NULL, NULL, NULL, NULL, key_bytes, napi_enumerable, NULL},
      {"keyEmpty", NULL, NULL, NULL, NULL, key_empty, napi_enumerable, NULL},
      {"sendFailed", NULL, NULL, NULL, NULL, send_failed, napi_enumerable, NULL},
  };
  CALL(env, napi_define_properties(env, exports, sizeof props / sizeof props[0], props));
  return exports;
}
