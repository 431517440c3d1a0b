/* binding.c: the addon's module init and its complete export table. The
 * addon turns JS arguments into views for the serializer core
 * (src/http_message.h), measures, and writes each response once.
 *
 * Exports. Every function's arguments and results are stated in full where
 * it is declared (napi_entry.h, napi_cache.h); in short:
 *   fill(fields, numHeaders, statusCode, reason, body, flags, dst, offset)
 *                                                      -> length | Buffer | -(code)
 *   fillFromHead(dst, head, numHeaders, body, flags)  -> code
 *   checkHead(head, numHeaders)                       -> code
 *   cacheSet(slot, prefix, suffix, numHeaders)        -> code
 *   fillCached(dst, key, length, body)                -> code
 *   sendCached(fd, key, length, body)                 -> undefined | bytes written
 *                                                        | a binding.send result
 *   code: 0, or a rejection named in binding.errors.
 *
 * Constants (all numbers are uint32 unless stated; objects are frozen):
 *   flags   { CHUNKED: 1, BODY_LATIN1: 2, HEAD_UTF8: 4, ASCII_ONLY: 8,
 *             HEAD_ONE_BYTE: 16 }                  the `flags` bits (napi.h)
 *   errors  { EINVAL_STATUS: 1, EINVAL_REASON: 2, EINVAL_NAME: 3,
 *             EINVAL_VALUE: 4, EINVAL_HEAD: 5, EINVAL_ARG: 6, EOVERFLOW: 7,
 *             E2BIG: 8, ENONASCII: 64 }            every rejection code: the
 *             core's (HM_ERRNO_MAP) and the binding's HB_ENONASCII
 *   send    { NOT_READY: -1, REJECT_BASE: 100, FAILED_BASE: 1000 }
 *                                                  sendCached()'s results
 *             below 0: NOT_READY, -(REJECT_BASE + code), -(FAILED_BASE + errno)
 *             (napi_cache.h)
 *   key     { SHIFT: 4, REPEAT: 512, CHECK: 1024, STRING: 2048, BYTES: 4096,
 *             EMPTY: 8192, SLOT_COUNT: 8 }         the `key` argument of
 *             fillCached()/sendCached() (napi_cache.h); SLOT_COUNT slots
 *   canSend   boolean: false where sendCached() can never write (no POSIX
 *             sockets, src/send.h)
 *   lib/codes.js is the one place in JS that reads flags, errors, send and
 *   key.
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
  (void)env;
  (void)hint;
  hb_instance_t *inst = data;
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

static const constant_t error_list[] = {
#define ERR_GEN(name, _) {#name, HM_##name},
    HM_ERRNO_MAP(ERR_GEN)
#undef ERR_GEN
        {"ENONASCII", HB_ENONASCII},
};

static const constant_t send_list[] = {
    {"NOT_READY", HB_SEND_NOT_READY},
    {"REJECT_BASE", HB_SEND_REJECT_BASE},
    {"FAILED_BASE", HB_SEND_FAILED_BASE},
};

static const constant_t key_list[] = {
    {"SHIFT", HB_KEY_FLAGS_SHIFT}, {"REPEAT", HB_KEY_REPEAT}, {"CHECK", HB_KEY_CHECK},
    {"STRING", HB_KEY_STRING},     {"BYTES", HB_KEY_BYTES},   {"EMPTY", HB_KEY_EMPTY},
    {"SLOT_COUNT", HB_SLOT_COUNT},
};

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

  napi_value flags = make_constants(env, flag_list, COUNT(flag_list));
  napi_value errors = flags == NULL ? NULL : make_constants(env, error_list, COUNT(error_list));
  napi_value send = errors == NULL ? NULL : make_constants(env, send_list, COUNT(send_list));
  napi_value key = send == NULL ? NULL : make_constants(env, key_list, COUNT(key_list));
  if (key == NULL) {
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
      {"send", NULL, NULL, NULL, NULL, send, e, NULL},
      {"key", NULL, NULL, NULL, NULL, key, e, NULL},
  };
  HB_CALL(env, napi_define_properties(env, exports, COUNT(props), props));
  return exports;
}
