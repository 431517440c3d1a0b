/* binding.c: the addon's module init and its complete export table. The
 * addon turns JS arguments into views for the serializer core
 * (src/http_message.h), measures, and writes each response once.
 *
 * Exports. Every function's arguments and results are stated in full where
 * it is declared (napi_entry.h, napi_cache.h); in short, each returns
 * undefined when it finished, else a binding.result value with its detail
 * in binding.detail[0] (napi.h):
 *   fill(fields, numHeaders, statusCode, reason, body, flags, dst, offset)
 *                                     -> undefined (length in the record)
 *                                        | Buffer | REJECTED
 *   fillFromHead(dst, head, numHeaders, body, flags)  -> undefined | REJECTED
 *   checkHead(head, numHeaders)                       -> undefined | REJECTED
 *   cacheSet(slot, prefix, suffix, numHeaders)        -> undefined | REJECTED
 *   fillCached(dst, key, length, body)                -> undefined | REJECTED
 *   sendCached(fd, key, length, body)                 -> undefined | PART
 *                                         | NOT_READY | REJECTED | FAILED
 *
 * Constants (all numbers are int32; objects are frozen):
 *   flags   { CHUNKED: 1, BODY_LATIN1: 2, HEAD_UTF8: 4, ASCII_ONLY: 8,
 *             HEAD_ONE_BYTE: 16 }                  the `flags` bits (napi.h)
 *   errors  { EINVAL_STATUS: 1, EINVAL_REASON: 2, EINVAL_NAME: 3,
 *             EINVAL_VALUE: 4, EINVAL_HEAD: 5, EINVAL_ARG: 6, EOVERFLOW: 7,
 *             E2BIG: 8, ENONASCII: 9 }             every rejection code
 *             (HM_ERRNO_MAP), named by hm_err_name() without its "HM_"
 *   errorName(code) -> 'EINVAL_STATUS' ...         the same names by code
 *   result  { PART: 1, NOT_READY: 2, REJECTED: 3, FAILED: 4 }
 *                                                  (HB_RESULT_MAP, napi.h)
 *   detail    Int32Array(1): the result record, written by every result
 *             but undefined (and by fill()'s undefined); this instance's
 *             own, made once here
 *   key     { SHIFT: 4, REPEAT: 512, CHECK: 1024, STRING: 2048, BYTES: 4096,
 *             EMPTY: 8192, SLOT_COUNT: 8 }         the `key` argument of
 *             fillCached()/sendCached() (napi_cache.h); SLOT_COUNT slots
 *   canSend   boolean: false where sendCached() can never write (no POSIX
 *             sockets, src/send.h)
 *   lib/codes.js is the one place in JS that reads them.
 *
 * Misuse (wrong argument count or type) throws a TypeError. A response the
 * core rejects is a result, so the caller can fall back to Node's own path
 * and let Node throw its own error.
 */
#include "napi.h"

#include <stdlib.h>

#include "napi_cache.h"
#include "napi_entry.h"

static void instance_free(napi_env env, void *data, void *hint)
{
  (void)hint;
  hb_instance_t *inst = data;
  if (inst->detail_ref != NULL) {
    (void)napi_delete_reference(env, inst->detail_ref);
  }
  hb_arena_free(&inst->arena);
  free(inst->fields);
  hb_slots_free(inst);
  free(inst);
}

/* One name and value of a frozen object of constants. */
typedef struct {
  const char *name;
  int32_t value;
} constant_t;

/* A frozen object holding `count` int32 constants. Returns NULL with an
 * exception pending when Node-API fails. */
static napi_value make_constants(napi_env env, const constant_t *list, size_t count)
{
  napi_value obj;
  HB_CALL(env, napi_create_object(env, &obj));
  for (size_t i = 0; i < count; i++) {
    napi_value val;
    HB_CALL(env, napi_create_int32(env, list[i].value, &val));
    HB_CALL(env, napi_set_named_property(env, obj, list[i].name, val));
  }
  HB_CALL(env, napi_object_freeze(env, obj));
  return obj;
}

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static const constant_t flag_list[] = {
    {"CHUNKED", HB_FLAG_CHUNKED},
    {"BODY_LATIN1", HB_FLAG_BODY_LATIN1},
    {"HEAD_UTF8", HB_FLAG_HEAD_UTF8},
    {"ASCII_ONLY", HB_FLAG_ASCII_ONLY},
    {"HEAD_ONE_BYTE", HB_FLAG_HEAD_ONE_BYTE},
};

static const constant_t result_list[] = {
#define RESULT_GEN(name, _) {#name, HB_##name},
    HB_RESULT_MAP(RESULT_GEN)
#undef RESULT_GEN
};

static const constant_t key_list[] = {
    {"SHIFT", HB_KEY_FLAGS_SHIFT}, {"REPEAT", HB_KEY_REPEAT}, {"CHECK", HB_KEY_CHECK},
    {"STRING", HB_KEY_STRING},     {"BYTES", HB_KEY_BYTES},   {"EMPTY", HB_KEY_EMPTY},
    {"SLOT_COUNT", HB_SLOT_COUNT},
};

/* The name of rejection code `code`: hm_err_name()'s, without its "HM_". */
static const char *error_name(int code)
{
  return hm_err_name((hm_err_t)code) + sizeof "HM_" - 1;
}

/* binding.errors (name -> code, codes 1 and up), from hm_err_name(), the
 * one table of names. Returns NULL with an exception pending when
 * Node-API fails. */
static napi_value make_errors(napi_env env)
{
  napi_value errors;
  HB_CALL(env, napi_create_object(env, &errors));
  for (int code = 1; code < HM_ERR_COUNT; code++) {
    napi_value val;
    HB_CALL(env, napi_create_int32(env, code, &val));
    HB_CALL(env, napi_set_named_property(env, errors, error_name(code), val));
  }
  HB_CALL(env, napi_object_freeze(env, errors));
  return errors;
}

/* errorName(code): the name of a rejection code, as binding.errors has it
 * ("UNKNOWN" for any other number). A function rather than a frozen array,
 * which slowed Node's own tick functions on every request
 * (benchmark/RESULTS.md, "lib/ from 7,226 to 6,171 lines"). */
static napi_value js_error_name(napi_env env, napi_callback_info info)
{
  napi_value argv[2];
  hb_instance_t *inst = NULL;
  int32_t code = -1;
  if (!hb_get_args(env, info, argv, 1, &inst, "errorName: expected 1 argument (code)")) {
    return NULL;
  }
  if (napi_get_value_int32(env, argv[0], &code) != napi_ok) {
    return hb_throw_type_error(env, "errorName: argument 'code' must be a number");
  }
  napi_value name;
  HB_CALL(env, napi_create_string_utf8(env, error_name(code), NAPI_AUTO_LENGTH, &name));
  return name;
}

/* Makes the instance's result record: an Int32Array of one element whose
 * memory C keeps in `inst->detail`, and a reference that keeps it alive as
 * long as the instance, whatever JS does with the array. Returns the array,
 * or NULL with an exception pending. */
static napi_value make_record(napi_env env, hb_instance_t *inst)
{
  void *data = NULL;
  napi_value buffer;
  napi_value array;
  HB_CALL(env, napi_create_arraybuffer(env, sizeof(int32_t), &data, &buffer));
  HB_CALL(env, napi_create_typedarray(env, napi_int32_array, 1, buffer, 0, &array));
  HB_CALL(env, napi_create_reference(env, buffer, 1, &inst->detail_ref));
  inst->detail = data;
  *inst->detail = 0;
  return array;
}

napi_value hb_result(napi_env env, const hb_instance_t *inst, hb_result_t result, int32_t detail)
{
  *inst->detail = detail;
  napi_value out;
  HB_CALL(env, napi_create_int32(env, (int32_t)result, &out));
  return out;
}

NAPI_MODULE_INIT(/* napi_env env, napi_value exports */)
{
  hb_instance_t *inst = calloc(1, sizeof *inst);
  if (inst == NULL) {
    napi_throw_error(env, NULL, "http-oneshot: out of memory");
    return NULL;
  }
  if (napi_set_instance_data(env, inst, instance_free, NULL) != napi_ok) {
    free(inst);
    hb_throw_last_error(env);
    return NULL;
  }

  napi_value errors = make_errors(env);
  napi_value flags = errors == NULL ? NULL : make_constants(env, flag_list, COUNT(flag_list));
  napi_value result = flags == NULL ? NULL : make_constants(env, result_list, COUNT(result_list));
  napi_value key = result == NULL ? NULL : make_constants(env, key_list, COUNT(key_list));
  napi_value detail = key == NULL ? NULL : make_record(env, inst);
  if (detail == NULL) {
    return NULL;
  }
  napi_value can_send;
  HB_CALL(env, napi_get_boolean(env, hm_send_available() != 0, &can_send));

  const napi_property_attributes e = napi_enumerable;
  napi_property_descriptor props[] = {
      {"fill", NULL, hb_js_fill, NULL, NULL, NULL, e, inst},
      {"fillFromHead", NULL, hb_js_fill_from_head, NULL, NULL, NULL, e, inst},
      {"checkHead", NULL, hb_js_check_head, NULL, NULL, NULL, e, inst},
      {"cacheSet", NULL, hb_js_cache_set, NULL, NULL, NULL, e, inst},
      {"fillCached", NULL, hb_js_fill_cached, NULL, NULL, NULL, e, inst},
      {"sendCached", NULL, hb_js_send_cached, NULL, NULL, NULL, e, inst},
      {"canSend", NULL, NULL, NULL, NULL, can_send, e, NULL},
      {"flags", NULL, NULL, NULL, NULL, flags, e, NULL},
      {"errors", NULL, NULL, NULL, NULL, errors, e, NULL},
      {"errorName", NULL, js_error_name, NULL, NULL, NULL, e, inst},
      {"result", NULL, NULL, NULL, NULL, result, e, NULL},
      {"detail", NULL, NULL, NULL, NULL, detail, e, NULL},
      {"key", NULL, NULL, NULL, NULL, key, e, NULL},
  };
  HB_CALL(env, napi_define_properties(env, exports, COUNT(props), props));
  return exports;
}
