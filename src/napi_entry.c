/* napi_entry: the entry points that serialize a whole response; the
 * contract is in napi_entry.h. */
#include "napi_entry.h"

#include <assert.h>
#include <stdio.h>
#include <string.h>

#include "napi_args.h"

/* Measures `res`, allocates the Buffer once and writes into it. Returns the
 * Buffer, the core's error code as a number, or NULL with an exception. */
static napi_value emit(napi_env env, const hm_response_t *res)
{
  size_t len = 0;
  hm_err_t err = hm_measure(res, &len);
  if (err != HM_OK) {
    return hb_make_code(env, (int)err);
  }
  void *data = NULL;
  napi_value buf;
  HB_CALL(env, napi_create_buffer(env, len, &data, &buf));
  size_t written = 0;
  err = hm_write(res, data, len, &written);
  /* hm_measure accepted the same input, so the write cannot fail. */
  assert(err == HM_OK && written == len);
  if (err != HM_OK) {
    return hb_make_code(env, (int)err);
  }
  return buf;
}

/* build(statusCode, reason, headers, body, flags) */
napi_value hb_js_build(napi_env env, napi_callback_info info)
{
  napi_value argv[6];
  hb_instance_t *inst = NULL;
  if (!hb_get_args(env, info, argv, 5, &inst,
                   "build: expected 5 arguments (statusCode, reason, headers, body, flags)")) {
    return NULL;
  }

  unsigned flags = 0;
  if (!hb_read_flags(env, argv[4], "build", &flags)) {
    return NULL;
  }

  double status_d = 0;
  if (napi_get_value_double(env, argv[0], &status_d) != napi_ok) {
    return hb_throw_type_error(env, "build: argument 'statusCode' must be a number");
  }

  napi_valuetype reason_type;
  HB_CALL(env, napi_typeof(env, argv[1], &reason_type));
  if (reason_type != napi_string && reason_type != napi_undefined && reason_type != napi_null) {
    return hb_throw_type_error(env, "build: argument 'reason' must be a string or undefined");
  }

  bool is_array = false;
  HB_CALL(env, napi_is_array(env, argv[2], &is_array));
  if (!is_array) {
    return hb_throw_type_error(env, "build: argument 'headers' must be an array");
  }
  uint32_t n = 0;
  HB_CALL(env, napi_get_array_length(env, argv[2], &n));
  if (n % 2 != 0) {
    return hb_throw_type_error(env, "build: argument 'headers' must have an even length");
  }

  if (!hb_grow((void **)&inst->spans, &inst->spans_cap, (size_t)n, sizeof(hb_span_t)) ||
      !hb_grow((void **)&inst->fields, &inst->fields_cap, (size_t)n, sizeof(hm_str_t))) {
    napi_throw_error(env, NULL, "build: out of memory");
    return NULL;
  }
  hb_span_t *spans = inst->spans;

  size_t used = 0;
  int reject = 0;
  hb_span_t reason = {0, 0};
  if (reason_type == napi_string) {
    HB_CALL(env, hb_read_head_string(env, inst, argv[1], &used, &reason, flags, HM_EINVAL_REASON,
                                     &reject));
  }
  for (uint32_t i = 0; i < n; i++) {
    napi_value el;
    HB_CALL(env, napi_get_element(env, argv[2], i, &el));
    napi_status st = hb_read_head_string(env, inst, el, &used, &spans[i], flags,
                                         i % 2 == 0 ? HM_EINVAL_NAME : HM_EINVAL_VALUE, &reject);
    if (st == napi_string_expected) {
      char msg[80];
      (void)snprintf(msg, sizeof msg, "build: argument 'headers[%u]' must be a string",
                     (unsigned)i);
      return hb_throw_type_error(env, msg);
    }
    HB_CALL(env, st);
  }

  hb_body_t body;
  if (!hb_read_body(env, inst, argv[3], "build", flags, HB_HINT_ANY, &used, &body, &reject)) {
    return NULL;
  }
  if (!hb_status_ok(status_d)) {
    reject = HM_EINVAL_STATUS;
  }
  if (reject != 0) {
    hb_arena_trim(&inst->arena);
    return hb_make_code(env, reject);
  }

  /* The arena has stopped moving; turn offsets into views. */
  for (uint32_t i = 0; i < n; i++) {
    inst->fields[i].base = inst->arena.base + spans[i].off;
    inst->fields[i].len = spans[i].len;
  }
  hm_response_t res;
  res.status = (unsigned)status_d;
  res.reason.base = reason_type == napi_string ? inst->arena.base + reason.off : NULL;
  res.reason.len = reason.len;
  res.headers = inst->fields;
  res.num_headers = n / 2;
  res.body = hb_body_str(inst, &body);
  res.framing = (flags & HB_FLAG_CHUNKED) ? HM_FRAMING_CHUNKED : HM_FRAMING_RAW;

  napi_value out = emit(env, &res);
  hb_arena_trim(&inst->arena);
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

  size_t used = 0;
  int reject = 0;
  /* The reason first, as the status line comes first. */
  hb_span_t reason = {0, 0};
  napi_status st =
      hb_read_head_string(env, inst, argv[3], &used, &reason, flags, HM_EINVAL_REASON, &reject);
  bool has_reason = st == napi_ok;
  if (st == napi_string_expected) {
    napi_valuetype type;
    HB_CALL(env, napi_typeof(env, argv[3], &type));
    if (type != napi_undefined && type != napi_null) {
      return hb_throw_type_error(env, "fill: argument 'reason' must be a string or undefined");
    }
  } else {
    HB_CALL(env, st);
  }
  hb_span_t fields;
  st = hb_read_head_string(env, inst, argv[0], &used, &fields, flags, HM_EINVAL_VALUE, &reject);
  if (st == napi_string_expected) {
    return hb_throw_type_error(env, "fill: argument 'fields' must be a string");
  }
  HB_CALL(env, st);
  hb_body_t body;
  if (!hb_read_body(env, inst, argv[4], "fill", flags, HB_HINT_ANY, &used, &body, &reject)) {
    hb_arena_trim(&inst->arena);
    return NULL;
  }
  if (!hb_status_ok(status_d)) {
    reject = HM_EINVAL_STATUS;
  }
  /* A line takes at least 4 bytes, so a count the string cannot hold is
   * rejected before the views are sized from it. */
  if (reject == 0 && (size_t)num_headers > fields.len / 4) {
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
    res.reason.base = has_reason ? inst->arena.base + reason.off : NULL;
    res.reason.len = reason.len;
    res.headers = NULL;
    res.num_headers = num_headers;
    res.body = hb_body_str(inst, &body);
    res.framing = (flags & HB_FLAG_CHUNKED) ? HM_FRAMING_CHUNKED : HM_FRAMING_RAW;
    err = hm_serialize_joined(&res, inst->arena.base + fields.off, fields.len, inst->fields, dst,
                              room, &len);
    reject = err == HM_E2BIG ? 0 : (int)err;
  }
  if (reject != 0) {
    hb_arena_trim(&inst->arena);
    HB_CALL(env, napi_create_int32(env, -reject, &out));
    return out;
  }
  if (err == HM_OK) {
    hb_arena_trim(&inst->arena);
    HB_CALL(env, napi_create_double(env, (double)len, &out));
    return out;
  }
  /* It does not fit: a Buffer of its own, written from the views the core
   * just checked. */
  res.headers = inst->fields;
  out = emit(env, &res);
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
/* buildFromHead(head, numHeaders, body, flags) */
napi_value hb_js_build_from_head(napi_env env, napi_callback_info info)
{
  napi_value argv[5];
  hb_instance_t *inst = NULL;
  unsigned flags = 0;
  uint32_t num_headers = 0;
  if (!hb_get_args(env, info, argv, 4, &inst,
                   "buildFromHead: expected 4 arguments (head, numHeaders, body, flags)") ||
      !hb_read_flags(env, argv[3], "buildFromHead", &flags) ||
      !hb_read_count(env, argv[1], "buildFromHead", &num_headers)) {
    return NULL;
  }

  size_t used = 0;
  int reject = 0;
  hb_span_t head;
  napi_status st = hb_read_head_string(env, inst, argv[0], &used, &head, flags, -1, &reject);
  if (st == napi_string_expected) {
    return hb_throw_type_error(env, "buildFromHead: argument 'head' must be a string");
  }
  HB_CALL(env, st);

  hb_body_t body;
  if (!hb_read_body(env, inst, argv[2], "buildFromHead", flags, HB_HINT_ANY, &used, &body,
                    &reject)) {
    return NULL;
  }
  if (reject != 0) {
    hb_arena_trim(&inst->arena);
    return hb_make_code(env, reject);
  }

  /* A header line takes at least 5 bytes ("a: \r\n"), so a count the head
   * cannot hold is rejected before anything is sized from it. */
  if ((size_t)num_headers > head.len / 5) {
    hb_arena_trim(&inst->arena);
    return hb_make_code(env, HM_EINVAL_HEAD);
  }
  size_t cap = (size_t)num_headers * 2;
  if (!hb_grow((void **)&inst->fields, &inst->fields_cap, cap == 0 ? 1 : cap, sizeof(hm_str_t))) {
    napi_throw_error(env, NULL, "buildFromHead: out of memory");
    return NULL;
  }

  hm_response_t res;
  memset(&res, 0, sizeof res);
  hm_err_t err = hm_parse_head(inst->arena.base + head.off, head.len, &res, inst->fields, cap);
  if (err == HM_OK && res.num_headers != num_headers) {
    err = HM_EINVAL_HEAD;
  }
  if (err != HM_OK) {
    hb_arena_trim(&inst->arena);
    return hb_make_code(env, (int)err);
  }
  res.body = hb_body_str(inst, &body);
  res.framing = (flags & HB_FLAG_CHUNKED) ? HM_FRAMING_CHUNKED : HM_FRAMING_RAW;

  napi_value out = emit(env, &res);
  hb_arena_trim(&inst->arena);
  return out;
}

/* fillFromHead(dst, head, numHeaders, body, flags): the shim's hot path.
 * Checks `head` in one pass (hm_write_head) and writes it and the body into
 * `dst`, a Uint8Array the caller sized as head bytes plus body bytes (JS
 * takes it from Buffer's shared pool, which is much cheaper than a
 * standalone allocation per response). With HB_FLAG_CHUNKED the head is read
 * as latin1 (Node writes it with the chunk-size line, as one latin1
 * string) and the body follows as one chunk and the last chunk, as
 * hm_block_parts() frames it; `dst` is then sized for that. Returns 0, or
 * the rejection code; `dst` is untouched on rejection. */
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
  napi_status st;
  if (chunked) {
    st = hb_read_latin1(env, inst, argv[1], &used, &head);
  } else if ((flags & HB_FLAG_HEAD_ONE_BYTE) &&
             (!(flags & HB_FLAG_HEAD_UTF8) || (flags & HB_FLAG_ASCII_ONLY))) {
    st = hb_read_latin1(env, inst, argv[1], &used, &head);
    if (st == napi_ok && (flags & HB_FLAG_ASCII_ONLY) &&
        !hb_is_ascii((const unsigned char *)inst->arena.base + head.off, head.len)) {
      reject = HB_ENONASCII;
    }
  } else {
    st = hb_read_head_string(env, inst, argv[1], &used, &head, flags, -1, &reject);
  }
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
    hm_response_t res;
    res.body = hb_body_str(inst, &body);
    size_t written = 0;
    const char *const h = inst->arena.base + head.off;
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
  hb_arena_trim(&inst->arena);
  return hb_make_code(env, reject);
}

/* checkHead(head, numHeaders): validates a rendered header block as
 * fillFromHead() would, without writing anything. Returns 0 or the
 * rejection code; chars above 0xFF are rejected, 0x80..0xFF allowed. */
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
  return hb_make_code(env, reject);
}
