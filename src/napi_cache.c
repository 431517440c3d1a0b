/* napi_cache: the slot cache and its entry points; the contract is in
 * napi_cache.h. */
#include "napi_cache.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "napi_args.h"

/* Reads a slot index argument. Returns NULL with a TypeError pending. */
static hb_slot_t *read_slot(napi_env env, hb_instance_t *inst, napi_value v, const char *fn)
{
  uint32_t i = 0;
  if (napi_get_value_uint32(env, v, &i) != napi_ok || i >= HB_SLOT_COUNT) {
    char msg[80];
    (void)snprintf(msg, sizeof msg, "%s: argument 'slot' must be an integer below %d", fn,
                   HB_SLOT_COUNT);
    hb_throw_type_error(env, msg);
    return NULL;
  }
  return &inst->slots[i];
}

/* Empties `slot`, freeing its memory. */
static void slot_clear(hb_slot_t *slot)
{
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
}

/* Joins `prefix` (`p`), the placeholder digit '0' (none when `chunked`) and
 * `suffix` (`s`) into a new block of `*len` bytes, and checks it as a head
 * of `num_headers` lines. Returns 0 with the block in `*block` (the
 * caller's to free); HM_ENONASCII (the UTF-8 and latin1 bytes of the block
 * would differ), HM_EOVERFLOW or hm_check_head()'s code, with `*block`
 * NULL; or -1 when memory runs out. */
static int join_block(const char *p, size_t p_len, const char *s, size_t s_len, bool chunked,
                      uint32_t num_headers, char **block, size_t *len)
{
  *block = NULL;
  if (!hb_is_ascii((const unsigned char *)p, p_len) ||
      !hb_is_ascii((const unsigned char *)s, s_len)) {
    return HM_ENONASCII;
  }
  if (s_len >= SIZE_MAX - p_len - 1) {
    return HM_EOVERFLOW;
  }
  const size_t hole_len = chunked ? 0 : 1;
  *len = p_len + hole_len + s_len;
  char *b = malloc(*len);
  if (b == NULL) {
    return -1;
  }
  memcpy(b, p, p_len);
  if (!chunked) {
    b[p_len] = '0';
  }
  memcpy(b + p_len + hole_len, s, s_len);
  int reject = (int)hm_check_head(b, *len, num_headers);
  if (reject != 0) {
    free(b);
    return reject;
  }
  *block = b;
  return 0;
}

/* cacheSet(slot, prefix, suffix, numHeaders); the contract is in
 * napi_cache.h. The slot is emptied before anything is read, so on any
 * rejection or throw it stays empty. */
napi_value hb_js_cache_set(napi_env env, napi_callback_info info)
{
  napi_value argv[5];
  hb_instance_t *inst = NULL;
  uint32_t num_headers = 0;
  if (!hb_get_args(env, info, argv, 4, &inst,
                   "cacheSet: expected 4 arguments (slot, prefix, suffix, numHeaders)") ||
      !hb_read_count(env, argv[3], "cacheSet", &num_headers)) {
    return NULL;
  }
  hb_slot_t *slot = read_slot(env, inst, argv[0], "cacheSet");
  if (slot == NULL) {
    return NULL;
  }
  slot_clear(slot);

  size_t used = 0;
  hb_span_t prefix = {0, 0};
  hb_span_t suffix;
  napi_valuetype prefix_type = napi_undefined;
  HB_CALL(env, napi_typeof(env, argv[1], &prefix_type));
  const bool chunked = prefix_type == napi_null;
  napi_status st = chunked ? napi_ok : hb_read_utf8(env, inst, argv[1], &used, &prefix);
  if (st == napi_ok) {
    st = hb_read_utf8(env, inst, argv[2], &used, &suffix);
  }
  if (st == napi_string_expected) {
    return hb_throw_type_error(
        env, "cacheSet: argument 'prefix' must be a string or null, 'suffix' a string");
  }
  HB_CALL(env, st);
  char *block = NULL;
  size_t len = 0;
  int reject = join_block(inst->arena.base + prefix.off, prefix.len, inst->arena.base + suffix.off,
                          suffix.len, chunked, num_headers, &block, &len);
  hb_arena_trim(&inst->arena);
  if (reject < 0) {
    napi_throw_error(env, NULL, "cacheSet: out of memory");
    return NULL;
  }
  if (reject != 0) {
    return hb_code_result(env, inst, reject);
  }
  slot->block = block;
  slot->len = len;
  slot->hole = chunked ? HM_NO_HOLE : prefix.len;
  slot->framing = chunked ? HM_FRAMING_CHUNKED : HM_FRAMING_RAW;
  /* Without room for it (out of memory), repeats take the three parts. */
  if (!chunked && len - 1 <= SIZE_MAX - HM_LENGTH_DIGITS_MAX) {
    slot->filled = malloc(len - 1 + HM_LENGTH_DIGITS_MAX);
  }
  return hb_code_result(env, inst, 0);
}

/* read_length() without keeping the digits. */
static bool read_length_value(napi_env env, napi_value v, const char *fn, char *buf, hm_str_t *out)
{
  napi_valuetype type;
  if (napi_typeof(env, v, &type) != napi_ok) {
    hb_throw_last_error(env);
    return false;
  }
  if (type == napi_number) {
    int64_t n = -1;
    if (napi_get_value_int64(env, v, &n) != napi_ok) {
      hb_throw_last_error(env);
      return false;
    }
    /* Out of range values give no digits; the core rejects the empty view. */
    out->base = buf;
    out->len = 0;
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
      hb_throw_last_error(env);
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
  hb_throw_type_error(env, msg);
  return false;
}

/* Reads a Content-Length argument as its decimal digits into `buf`
 * (HM_LENGTH_DIGITS_MAX + 1 bytes): a non-negative safe integer, or a
 * string, copied as latin1 and checked by the core. The digits read are kept
 * as the slot's last, for the key's REPEAT bit. Returns false with an
 * exception pending on misuse. */
static bool read_length(napi_env env, napi_value v, const char *fn, hb_slot_t *slot, char *buf,
                        hm_str_t *out)
{
  if (!read_length_value(env, v, fn, buf, out)) {
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
  const hb_slot_t *slot;
  uint32_t key;
  char digits[HM_LENGTH_DIGITS_MAX + 1];
  hm_str_t length;
  hm_str_t body;
  hm_parts_t parts;
  /* How many leading parts hold the message: 2 for a repeat of a slot's
   * filled block (the block, the body), else HM_BLOCK_PARTS. */
  size_t count;
} holed_t;

/* Lays out the message of `h` (its length and body read) in `h->parts`
 * and `h->count`: with `use_filled` as the slot's filled block and the body;
 * otherwise as hm_block_parts() frames it, keeping the block with the
 * digits filled in for later repeats when `repeat` and the core accepted
 * them. Returns 0, HM_EOVERFLOW or hm_block_parts()'s rejection code. */
static int lay_out(hb_slot_t *slot, bool repeat, bool use_filled, holed_t *h)
{
  if (use_filled) {
    if (h->body.len > SIZE_MAX - slot->filled_len) {
      return HM_EOVERFLOW;
    }
    /* The body right after the block, the other parts empty (in output
     * order, as hm_write_parts() reads them all). */
    hm_str_t *part = h->parts.part;
    memset(part, 0, sizeof h->parts.part);
    part[0] = (hm_str_t){slot->filled, slot->filled_len};
    part[1] = h->body;
    h->parts.total = slot->filled_len + h->body.len;
    h->count = 2;
    return 0;
  }
  int reject = (int)hm_block_parts(slot->block, slot->len, slot->hole, h->length, h->body,
                                   slot->framing, &h->parts);
  if (reject == 0 && repeat && slot->filled != NULL) {
    /* The core accepted the repeated digits: keep the block as laid out,
     * its first three parts (at most len - 1 + DIGITS_MAX bytes). */
    size_t n = 0;
    for (size_t i = 0; i < 3; i++) {
      memcpy(slot->filled + n, h->parts.part[i].base, h->parts.part[i].len);
      n += h->parts.part[i].len;
    }
    slot->filled_len = n;
    slot->filled_ok = true;
  }
  return reject;
}

/* Reads `key, length, body` from `argv` into `h`. Returns false with an
 * exception pending on misuse; a rejection (an empty slot, a non-ASCII
 * string body under HB_FLAG_ASCII_ONLY, a repeat with no digits kept) goes to
 * `*reject`. The body may live in the arena until arena_trim(). */
static bool read_holed(napi_env env, hb_instance_t *inst, napi_value *argv, const char *fn,
                       holed_t *h, int *reject)
{
  uint32_t key = 0;
  if (napi_get_value_uint32(env, argv[0], &key) != napi_ok || (key & ~HB_KEY_ALL) != 0 ||
      (key & HB_KEY_SLOT_MASK) >= HB_SLOT_COUNT ||
      ((key & HB_KEY_BODY) & ((key & HB_KEY_BODY) - 1)) != 0) {
    char msg[96];
    (void)snprintf(msg, sizeof msg, "%s: argument 'key' must be slot | flags << %d | repeat (0x%x)",
                   fn, HB_KEY_FLAGS_SHIFT, (unsigned)HB_KEY_REPEAT);
    hb_throw_type_error(env, msg);
    return false;
  }
  const unsigned flags = (key >> HB_KEY_FLAGS_SHIFT) & HB_FLAG_ALL;
  hb_slot_t *slot = &inst->slots[key & HB_KEY_SLOT_MASK];
  h->slot = slot;
  h->key = key;
  h->length = (hm_str_t){h->digits, 0};
  h->count = HM_BLOCK_PARTS;
  const bool repeat = (key & HB_KEY_REPEAT) != 0 && slot->framing == HM_FRAMING_RAW;
  const bool use_filled = repeat && slot->filled_ok;
  if (slot->framing == HM_FRAMING_RAW && !use_filled) {
    if (key & HB_KEY_REPEAT) {
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
  hb_body_t body;
  const hb_body_hint_t hint = (key & HB_KEY_STRING)  ? HB_HINT_STRING
                              : (key & HB_KEY_BYTES) ? HB_HINT_BYTES
                              : (key & HB_KEY_EMPTY) ? HB_HINT_NONE
                                                     : HB_HINT_ANY;
  if (!hb_read_body(env, inst, argv[2], fn, flags, hint, &used, &body, reject)) {
    return false;
  }
  h->body = hb_body_str(inst, &body);
  /* HB_FLAG_CHUNKED says which framing the caller sized the message for: it
   * must be the block's. */
  if (*reject == 0 && (h->slot->block == NULL ||
                       ((flags & HB_FLAG_CHUNKED) != 0) != (slot->framing == HM_FRAMING_CHUNKED))) {
    *reject = HM_EINVAL_ARG;
  }
  if (*reject == 0) {
    *reject = lay_out(slot, repeat, use_filled, h);
  }
  return true;
}

/* fillCached(dst, key, length, body): writes the block cached in the key's
 * slot with `length` (or, with HB_KEY_REPEAT, the slot's last digits) as its
 * Content-Length value, then the body, into `dst`, a Buffer the caller
 * sized exactly. Returns undefined or REJECTED (an empty slot is
 * HM_EINVAL_ARG); `dst` is untouched on rejection. */
napi_value hb_js_fill_cached(napi_env env, napi_callback_info info)
{
  napi_value argv[6];
  hb_instance_t *inst = NULL;
  if (!hb_get_args(env, info, argv, 4, &inst,
                   "fillCached: expected 4 arguments (dst, key, length, body)")) {
    return NULL;
  }
  void *dst = NULL;
  size_t dst_len = 0;
  bool is_buffer = false;
  HB_CALL(env, napi_is_buffer(env, argv[0], &is_buffer));
  if (!is_buffer) {
    return hb_throw_type_error(env, "fillCached: argument 'dst' must be a Buffer");
  }
  HB_CALL(env, napi_get_buffer_info(env, argv[0], &dst, &dst_len));
  int reject = 0;
  holed_t h;
  if (!read_holed(env, inst, argv + 1, "fillCached", &h, &reject)) {
    hb_arena_trim(&inst->arena);
    return NULL;
  }
  if (reject == 0) {
    size_t written = 0;
    reject = (int)hm_write_parts(&h.parts, dst, dst_len, &written);
  }
  hb_arena_trim(&inst->arena);
  return hb_code_result(env, inst, reject);
}

/* sendCached(fd, key, length, body): writes the response fillCached()
 * would build straight to the socket descriptor `fd`, in one send() or
 * sendmsg() (src/send.c), after a check for a pending socket error when the
 * key has HB_KEY_CHECK. Its results are listed in napi_cache.h. */
napi_value hb_js_send_cached(napi_env env, napi_callback_info info)
{
  napi_value argv[6];
  hb_instance_t *inst = NULL;
  int32_t fd = -1;
  if (!hb_get_args(env, info, argv, 4, &inst,
                   "sendCached: expected 4 arguments (fd, key, length, body)")) {
    return NULL;
  }
  if (napi_get_value_int32(env, argv[0], &fd) != napi_ok) {
    return hb_throw_type_error(env, "sendCached: argument 'fd' must be a number");
  }
  int reject = 0;
  holed_t h;
  if (!read_holed(env, inst, argv + 1, "sendCached", &h, &reject)) {
    hb_arena_trim(&inst->arena);
    return NULL;
  }
  if (reject != 0) {
    hb_arena_trim(&inst->arena);
    return hb_code_result(env, inst, reject);
  }
  int err = 0;
  const long sent =
      hm_send(fd, h.parts.part, h.count, (h.key & HB_KEY_CHECK) != 0, inst->send_scratch, &err);
  hb_arena_trim(&inst->arena);
  return hb_send_result(env, inst, sent, err, h.parts.total);
}

void hb_slots_free(hb_instance_t *inst)
{
  for (size_t i = 0; i < HB_SLOT_COUNT; i++) {
    slot_clear(&inst->slots[i]);
  }
}
