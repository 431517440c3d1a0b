/* napi.h: what the binding's files share (internal; prefix hb_).
 *
 * The binding is src/binding.c (module init and the export table) and the
 * src/napi_*.c files it puts in that table. They, and only they, include
 * node_api.h, and only through this header: the core (src/http_message.c,
 * src/send.c, src/arena.c) includes no Node header, so a C test or the
 * fuzzer builds it with a plain compiler.
 *
 * Conventions of every binding function:
 * - Node-API statuses are all checked. A function returning napi_value
 *   returns NULL with an exception pending when a call fails (HB_CALL); one
 *   returning bool returns false then. An entry point that finished also
 *   returns NULL, with no exception: JS gets undefined (hb_result_t).
 * - Misuse (wrong argument count or type) throws a TypeError with code
 *   ERR_INVALID_ARG_TYPE naming the function and the argument.
 * - A response the core rejects is a result, never a throw: the shim falls
 *   back to Node's own path and lib/build.js throws Node's error.
 */
#ifndef HB_NAPI_H
#define HB_NAPI_H

/* binding.gyp defines both as well; the guards keep a plain compiler
 * invocation building the same thing. */
#ifndef NAPI_VERSION
#define NAPI_VERSION 8
#endif
#ifndef NODE_API_NO_EXTERNAL_BUFFERS_ALLOWED
#define NODE_API_NO_EXTERNAL_BUFFERS_ALLOWED /* Electron / V8 sandbox forbid them */
#endif
#include <node_api.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arena.h"
#include "http_message.h"
#include "send.h"

/* Runs a Node-API call; on failure throws its error and returns NULL. */
#define HB_CALL(env, call)      \
  do {                          \
    if ((call) != napi_ok) {    \
      hb_throw_last_error(env); \
      return NULL;              \
    }                           \
  } while (0)

/* The bits of the `flags` argument, exported as binding.flags. */
#define HB_FLAG_CHUNKED     1u /* frame the body as one chunk and the last chunk */
#define HB_FLAG_BODY_LATIN1 2u /* a string body is written as latin1, else UTF-8 */
#define HB_FLAG_HEAD_UTF8   4u /* chars 0x80..0xFF of the head become UTF-8, else latin1 */
#define HB_FLAG_ASCII_ONLY  8u /* any char >= 0x80 in the head or a string body: HM_ENONASCII */
/* fillFromHead only: the caller guarantees the head holds no char above
 * 0xFF (it rendered the block from validated strings), so the head is read
 * with the cheaper latin1 copy. The core still checks every byte. */
#define HB_FLAG_HEAD_ONE_BYTE 16u
#define HB_FLAG_ALL           31u

/* How many rendered header blocks the shim keeps in C, exported as
 * binding.key.SLOT_COUNT (lib/render.js sizes its cache from it). */
#define HB_SLOT_COUNT 8

/* One cached header block (src/napi_cache.c owns it), checked once by
 * hm_check_head() when it was stored: with the digit '0' at `hole` standing
 * in for Content-Length (raw framing), or without a hole (HM_NO_HOLE) for a
 * body framed as chunked. */
typedef struct hb_slot_s {
  char *block;
  size_t len;
  size_t hole;
  hm_framing_t framing;
  /* The Content-Length digits of the slot's last response, which the key's
   * REPEAT bit asks for again: most responses repeat them. */
  char last[HM_LENGTH_DIGITS_MAX + 1];
  size_t last_len;
  bool has_last;
  /* The block with those digits in its hole, as hm_block_parts() laid it
   * out for a repeat (raw framing only; room for the longest digits): a
   * further repeat sends it as one part, with no second check of digits
   * the core accepted already. Valid while `filled_ok`. */
  char *filled;
  size_t filled_len;
  bool filled_ok;
} hb_slot_t;

/* What an entry point returns when it did not simply finish, exported as
 * binding.result. Finished (for sendCached(): the whole message written)
 * is undefined, which costs nothing to return; every other result is one
 * of these, with its detail in the instance's record (hb_instance_t
 * `detail`, binding.detail[0] in JS):
 *   PART       sendCached() wrote part of the message; detail: the bytes
 *              written, fewer than the message. The rest is the caller's.
 *   NOT_READY  sendCached() wrote nothing (the socket would block, has an
 *              error pending or was hung up); detail: 0.
 *   REJECTED   nothing written; detail: the rejection code (hm_err_t).
 *   FAILED     sendCached()'s write failed, nothing written; detail: the
 *              errno, which the caller must report as its own write would.
 * fill() also leaves its message's length in the record when it returns
 * undefined. Each entry point's possible results are listed where it is
 * declared (napi_entry.h, napi_cache.h). */
#define HB_RESULT_MAP(XX) XX(PART, 1) XX(NOT_READY, 2) XX(REJECTED, 3) XX(FAILED, 4)

typedef enum {
#define HB_RESULT_GEN(name, value) HB_##name = (value),
  HB_RESULT_MAP(HB_RESULT_GEN)
#undef HB_RESULT_GEN
} hb_result_t;

/* Per-instance state (napi_set_instance_data), so the addon holds no mutable
 * statics and loads in several contexts (worker threads). Every entry point
 * receives it as its callback data. */
typedef struct hb_instance_s {
  /* The result record: the memory of the Int32Array binding.detail, made
   * once at load (src/binding.c) and kept alive by `detail_ref`, so a
   * result's detail crosses to JS as one store, with no value to create.
   * Each instance (each worker thread) has its own. JS must never transfer
   * the array's buffer (postMessage, structuredClone): C keeps writing to
   * this memory. */
  int32_t *detail;
  napi_ref detail_ref;
  hb_slot_t slots[HB_SLOT_COUNT];
  /* The bytes of every string argument of one call (napi_args.h). */
  hb_arena_t arena;
  /* Views of header fields. */
  hm_str_t *fields;
  size_t fields_cap;
  /* sendCached(): a small message gathered for one send() (src/send.h). */
  char send_scratch[HM_SEND_COPY_MAX];
} hb_instance_t;

/* Reads the pending Node-API error before any other call resets it, then
 * throws it, unless an exception is already pending (which carries the
 * better message, for example from a getter that threw). */
void hb_throw_last_error(napi_env env);

/* Throws a TypeError with code ERR_INVALID_ARG_TYPE and message `msg`.
 * Returns NULL, so an entry point can `return hb_throw_type_error(...)`. */
napi_value hb_throw_type_error(napi_env env, const char *msg);

/* Reads exactly `want` arguments into `argv` (room for `want + 1`) and the
 * instance (the callback data) into `*inst`. Returns true, or false with a
 * TypeError (`usage` as its message) pending when the call has another
 * count, or the Node-API error pending. Inline: every entry point starts
 * with it. */
static inline bool hb_get_args(napi_env env, napi_callback_info info, napi_value *argv, size_t want,
                               hb_instance_t **inst, const char *usage)
{
  size_t argc = want + 1;
  void *data = NULL;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, &data) != napi_ok) {
    hb_throw_last_error(env);
    return false;
  }
  if (argc != want) {
    hb_throw_type_error(env, usage);
    return false;
  }
  *inst = data;
  return true;
}

/* Returns `result` as a JS number with `detail` stored in the record.
 * Returns NULL with an exception pending when Node-API fails. */
napi_value hb_result(napi_env env, const hb_instance_t *inst, hb_result_t result, int32_t detail);

/* An entry point's result for the rejection code `code`: undefined (NULL)
 * for 0 (finished), else HB_REJECTED with `code` in the record. */
static inline napi_value hb_code_result(napi_env env, const hb_instance_t *inst, int code)
{
  return code == 0 ? NULL : hb_result(env, inst, HB_REJECTED, code);
}

/* sendCached()'s result for hm_send()'s return value `sent` (with `err`)
 * and a message of `total` bytes: undefined (NULL) when all went out, else
 * HB_PART, HB_NOT_READY or HB_FAILED (send.h bounds `sent` to an int32). */
static inline napi_value hb_send_result(napi_env env, const hb_instance_t *inst, long sent, int err,
                                        size_t total)
{
  if (sent >= 0 && (size_t)sent == total) {
    return NULL;
  }
  if (sent >= 0) {
    return hb_result(env, inst, HB_PART, (int32_t)sent);
  }
  if (sent == HM_SEND_FAILED && err > 0) {
    return hb_result(env, inst, HB_FAILED, err);
  }
  return hb_result(env, inst, HB_NOT_READY, 0);
}

#endif /* HB_NAPI_H */
