/* napi_entry: the entry points that serialize a whole response; the
 * contract is in napi_entry.h. */
#include "napi_entry.h"

#include <assert.h>

#include "napi_args.h"

/* Measures `res`, allocates the Buffer once and writes into it. Returns the
 * Buffer, HB_REJECTED, or NULL with an exception. */
static napi_value emit(napi_env env, const hb_instance_t *inst, const hm_response_t *res)
{
  size_t len = 0;
  hm_err_t err = hm_measure(res, &len);
  if (err != HM_OK) {
    return hb_code_result(env, inst, (int)err);
  }
  void *data = NULL;
  napi_value buf;
  HB_CALL(env, napi_create_buffer(env, len, &data, &buf));
  size_t written = 0;
  err = hm_write(res, data, len, &written);
  /* hm_measure accepted the same input, so the write cannot fail. */
  assert(err == HM_OK && written == len);
  if (err != HM_OK) {
    return hb_code_result(env, inst, (int)err);
  }
  return buf;
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
      hb_throw_last_error(env);
      return false;
    }
    if (type == napi_undefined || type == napi_null) {
      return true;
    }
    hb_throw_type_error(env, "fill: argument 'dst' must be an ArrayBuffer, null or undefined");
    return false;
  }
  uint32_t off = 0;
  if (napi_get_value_uint32(env, off_v, &off) != napi_ok || (size_t)off > len) {
    hb_throw_type_error(env, "fill: argument 'offset' must be an integer within 'dst'");
    return false;
  }
  /* An empty ArrayBuffer may have no data pointer; nothing fits then. */
  if (data != NULL) {
    *dst = (char *)data + off;
    *room = len - off;
  }
  return true;
}

/* fill()'s strings and body, read into the arena in wire order. */
typedef struct {
  hb_span_t reason;
  bool has_reason; /* false: undefined or null, the default phrase */
  hb_span_t fields;
  hb_body_t body;
} fill_strings_t;

/* Reads fill()'s `reason` (argv[3]), `fields` (argv[0]) and `body`
 * (argv[4]) into `*f`, the first rejection into `*reject`. Returns false
 * with an exception pending on misuse or Node-API failure. */
static bool read_fill_strings(napi_env env, hb_instance_t *inst, const napi_value *argv,
                              unsigned flags, fill_strings_t *f, int *reject)
{
  size_t used = 0;
  /* The reason first, as the status line comes first. */
  f->reason = (hb_span_t){0, 0};
  napi_status st =
      hb_read_head_string(env, inst, argv[3], &used, &f->reason, flags, HM_EINVAL_REASON, reject);
  f->has_reason = st == napi_ok;
  if (st == napi_string_expected) {
    napi_valuetype type;
    if (napi_typeof(env, argv[3], &type) != napi_ok) {
      hb_throw_last_error(env);
      return false;
    }
    if (type != napi_undefined && type != napi_null) {
      hb_throw_type_error(env, "fill: argument 'reason' must be a string or undefined");
      return false;
    }
  } else if (st != napi_ok) {
    hb_throw_last_error(env);
    return false;
  }
  st = hb_read_head_string(env, inst, argv[0], &used, &f->fields, flags, HM_EINVAL_VALUE, reject);
  if (st == napi_string_expected) {
    hb_throw_type_error(env, "fill: argument 'fields' must be a string");
    return false;
  }
  if (st != napi_ok) {
    hb_throw_last_error(env);
    return false;
  }
  return hb_read_body(env, inst, argv[4], "fill", flags, HB_HINT_ANY, &used, &f->body, reject);
}

/* fill(fields, numHeaders, statusCode, reason, body, flags, dst, offset);
 * the contract is in napi_entry.h. The fields come joined in one string,
 * read with one Node-API call instead of two per field. Longer than most:
 * its three results each need the response the core checked, so they are
 * made here, side by side. */
napi_value hb_js_fill(napi_env env, napi_callback_info info)
{
  napi_value argv[9];
  hb_instance_t *inst = NULL;
  uint32_t num_headers = 0;
  unsigned flags = 0;
  if (!hb_get_args(env, info, argv, 8, &inst,
                   "fill: expected 8 arguments "
                   "(fields, numHeaders, statusCode, reason, body, flags, dst, offset)") ||
      !hb_read_count(env, argv[1], "fill", &num_headers) ||
      !hb_read_flags(env, argv[5], "fill", &flags)) {
    return NULL;
  }
  double status_d = 0;
  if (napi_get_value_double(env, argv[2], &status_d) != napi_ok) {
    return hb_throw_type_error(env, "fill: argument 'statusCode' must be a number");
  }
  char *dst = NULL;
  size_t room = 0;
  if (!read_dst(env, argv[6], argv[7], &dst, &room)) {
    return NULL;
  }
  /* The length goes to JS in the int32 record (napi.h). */
  room = room > INT32_MAX ? INT32_MAX : room;

  int reject = 0;
  fill_strings_t f;
  if (!read_fill_strings(env, inst, argv, flags, &f, &reject)) {
    hb_arena_trim(&inst->arena);
    return NULL;
  }
  if (!hb_status_ok(status_d)) {
    reject = HM_EINVAL_STATUS;
  }
  /* A line takes at least 4 bytes, so a count the string cannot hold is
   * rejected before the views are sized from it. */
  if (reject == 0 && (size_t)num_headers > f.fields.len / 4) {
    reject = HM_EINVAL_HEAD;
  }
  if (reject == 0 && !hb_grow((void **)&inst->fields, &inst->fields_cap, (size_t)num_headers * 2,
                              sizeof(hm_str_t))) {
    hb_arena_trim(&inst->arena);
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
    res.reason.base = f.has_reason ? inst->arena.base + f.reason.off : NULL;
    res.reason.len = f.reason.len;
    res.headers = NULL;
    res.num_headers = num_headers;
    res.body = hb_body_str(inst, &f.body);
    res.framing = (flags & HB_FLAG_CHUNKED) ? HM_FRAMING_CHUNKED : HM_FRAMING_RAW;
    err = hm_serialize_joined(&res, inst->arena.base + f.fields.off, f.fields.len, inst->fields,
                              dst, room, &len);
    reject = err == HM_E2BIG ? 0 : (int)err;
  }
  if (reject != 0) {
    hb_arena_trim(&inst->arena);
    return hb_code_result(env, inst, reject);
  }
  if (err == HM_OK) {
    hb_arena_trim(&inst->arena);
    *inst->detail = (int32_t)len;
    return NULL;
  }
  /* It does not fit: a Buffer of its own, written from the views the core
   * just checked. */
  res.headers = inst->fields;
  out = emit(env, inst, &res);
  hb_arena_trim(&inst->arena);
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

/* fillFromHead()'s head, read the cheapest way `flags` allow: as latin1
 * when it is chunked (Node writes it with the chunk-size line, as one
 * latin1 string) or when the caller vouches that no char is above 0xFF
 * (HB_FLAG_HEAD_ONE_BYTE; ASCII_ONLY then checks the bytes), else converted
 * as a header string. Returns as hb_read_head_string() does. */
static napi_status read_fill_head(napi_env env, hb_instance_t *inst, napi_value v, unsigned flags,
                                  size_t *used, hb_span_t *head, int *reject)
{
  if (flags & HB_FLAG_CHUNKED) {
    return hb_read_latin1(env, inst, v, used, head);
  }
  if ((flags & HB_FLAG_HEAD_ONE_BYTE) &&
      (!(flags & HB_FLAG_HEAD_UTF8) || (flags & HB_FLAG_ASCII_ONLY))) {
    napi_status st = hb_read_latin1(env, inst, v, used, head);
    if (st == napi_ok && (flags & HB_FLAG_ASCII_ONLY) && *reject == 0 &&
        !hb_is_ascii((const unsigned char *)inst->arena.base + head->off, head->len)) {
      *reject = HM_ENONASCII;
    }
    return st;
  }
  return hb_read_head_string(env, inst, v, used, head, flags, -1, reject);
}

/* Checks the head `h` (`len` bytes, `num_headers` lines) and writes it and
 * `body` into `dst`: raw, or framed as one chunk and the last chunk.
 * Returns 0 or the core's rejection code; `dst` is untouched unless 0. */
static int write_from_head(const char *h, size_t len, uint32_t num_headers, hm_str_t body,
                           bool chunked, char *dst, size_t dst_len)
{
  size_t written = 0;
  if (!chunked) {
    return (int)hm_write_head(h, len, num_headers, body, dst, dst_len, &written);
  }
  hm_parts_t parts;
  int reject = (int)hm_check_head(h, len, num_headers);
  if (reject == 0) {
    reject = (int)hm_block_parts(h, len, HM_NO_HOLE, (hm_str_t){NULL, 0}, body, HM_FRAMING_CHUNKED,
                                 &parts);
  }
  if (reject == 0) {
    reject = (int)hm_write_parts(&parts, dst, dst_len, &written);
  }
  return reject;
}

/* fillFromHead(dst, head, numHeaders, body, flags): the shim's hot path.
 * Checks `head` in one pass (hm_write_head) and writes it and the body into
 * `dst`, a Uint8Array the caller sized as head bytes plus body bytes (JS
 * takes it from Buffer's shared pool, which is much cheaper than a
 * standalone allocation per response). With HB_FLAG_CHUNKED the head is read
 * as latin1 (Node writes it with the chunk-size line, as one latin1
 * string) and the body follows as one chunk and the last chunk, as
 * hm_block_parts() frames it; `dst` is then sized for that. Returns
 * undefined, or REJECTED with `dst` untouched. */
napi_value hb_js_fill_from_head(napi_env env, napi_callback_info info)
{
  napi_value argv[6];
  hb_instance_t *inst = NULL;
  unsigned flags = 0;
  if (!hb_get_args(env, info, argv, 5, &inst,
                   "fillFromHead: expected 5 arguments (dst, head, numHeaders, body, flags)") ||
      !hb_read_flags(env, argv[4], "fillFromHead", &flags)) {
    return NULL;
  }
  const bool chunked = (flags & HB_FLAG_CHUNKED) != 0;
  napi_typedarray_type dst_type;
  size_t dst_len = 0;
  void *dst = NULL;
  HB_CALL(env, typed_bytes(env, argv[0], &dst_type, &dst, &dst_len));
  if (dst_type != napi_uint8_array) {
    return hb_throw_type_error(env, "fillFromHead: argument 'dst' must be a Uint8Array");
  }
  uint32_t num_headers = 0;
  if (!hb_read_count(env, argv[2], "fillFromHead", &num_headers)) {
    return NULL;
  }

  size_t used = 0;
  int reject = 0;
  hb_span_t head;
  napi_status st = read_fill_head(env, inst, argv[1], flags, &used, &head, &reject);
  if (st == napi_string_expected) {
    return hb_throw_type_error(env, "fillFromHead: argument 'head' must be a string");
  }
  HB_CALL(env, st);

  hb_body_t body;
  if (!hb_read_body(env, inst, argv[3], "fillFromHead", flags, HB_HINT_ANY, &used, &body,
                    &reject)) {
    return NULL;
  }
  if (reject == 0) {
    reject = write_from_head(inst->arena.base + head.off, head.len, num_headers,
                             hb_body_str(inst, &body), chunked, dst, dst_len);
  }
  hb_arena_trim(&inst->arena);
  return hb_code_result(env, inst, reject);
}

/* checkHead(head, numHeaders): validates a rendered header block as
 * fillFromHead() would, without writing anything. Returns undefined or
 * REJECTED; chars above 0xFF are rejected, 0x80..0xFF allowed. */
napi_value hb_js_check_head(napi_env env, napi_callback_info info)
{
  napi_value argv[3];
  hb_instance_t *inst = NULL;
  uint32_t num_headers = 0;
  if (!hb_get_args(env, info, argv, 2, &inst,
                   "checkHead: expected 2 arguments (head, numHeaders)") ||
      !hb_read_count(env, argv[1], "checkHead", &num_headers)) {
    return NULL;
  }
  size_t used = 0;
  int reject = 0;
  hb_span_t head;
  napi_status st = hb_read_head_string(env, inst, argv[0], &used, &head, 0, -1, &reject);
  if (st == napi_string_expected) {
    return hb_throw_type_error(env, "checkHead: argument 'head' must be a string");
  }
  HB_CALL(env, st);
  if (reject == 0) {
    reject = (int)hm_check_head(inst->arena.base + head.off, head.len, num_headers);
  }
  hb_arena_trim(&inst->arena);
  return hb_code_result(env, inst, reject);
}
