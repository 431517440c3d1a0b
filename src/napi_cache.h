/* napi_cache: the header-block cache the shim keeps in C, and the entry
 * points that use it (internal; prefix hb_). lib/render.js renders a block
 * once and stores it in a slot with cacheSet(); each later response equal to
 * it but for its Content-Length value names the slot in a `key` and is
 * written with fillCached() (into a Buffer) or sendCached() (straight to the
 * socket). The slots live in the instance (napi.h, hb_slot_t).
 *
 * Entry points (JS signature -> every possible result):
 *
 *   cacheSet(slot, prefix, suffix, numHeaders) -> undefined | REJECTED
 *     Stores the block `prefix + "0" + suffix`, the '0' marking where the
 *     Content-Length digits go, or with `prefix` null the block `suffix`
 *     alone, with no hole, after which the body is framed as chunked (the
 *     block must end in the Transfer-Encoding: chunked line Node renders).
 *     undefined: stored. REJECTED, with the code in the record (napi.h):
 *     HM_ENONASCII (the block is not ASCII: its UTF-8 and latin1 bytes
 *     would differ), HM_EOVERFLOW, or hm_check_head()'s code
 *     (HM_EINVAL_REASON, HM_EINVAL_NAME, HM_EINVAL_VALUE, HM_EINVAL_HEAD).
 *     The slot is emptied first, so it stays empty on rejection.
 *
 *   fillCached(dst, key, length, body) -> undefined | REJECTED
 *     Writes the slot's block with `length` as its Content-Length value
 *     (none for a chunked block), then the body, into the Buffer `dst` the
 *     caller sized exactly. undefined: written. REJECTED, with the code in
 *     the record: HM_EINVAL_ARG (the slot is empty or
 *     the key's CHUNKED flag is not the block's framing), HM_ENONASCII (a
 *     string body with a char >= 0x80 under ASCII_ONLY), HM_EINVAL_VALUE
 *     (the length is not 1..HM_LENGTH_DIGITS_MAX digits, or repeats digits
 *     the slot never had), HM_EOVERFLOW, HM_E2BIG (`dst` is not the
 *     message's size). `dst` is untouched unless the result is undefined.
 *
 *   sendCached(fd, key, length, body)
 *                          -> undefined | PART | NOT_READY | REJECTED | FAILED
 *     The message fillCached() would write, written to the socket
 *     descriptor `fd` in one send() or sendmsg() (src/send.h), after a
 *     zero-timeout poll for a pending socket error when the key has CHECK.
 *     The detail is in the record (napi.h):
 *       undefined   the whole message was written;
 *       PART        detail bytes were written, fewer than the message: the
 *                   rest is the caller's;
 *       NOT_READY   nothing written (detail 0): the socket would block, has
 *                   an error pending or was hung up;
 *       REJECTED    detail is one of fillCached()'s rejection codes;
 *                   nothing written;
 *       FAILED      the write failed with errno detail, nothing written;
 *                   the caller must report that error.
 *
 * `slot` is 0..HB_SLOT_COUNT-1; `length` a non-negative safe integer or a
 * string of digits (copied as latin1; the core checks it); not read with
 * the key's REPEAT bit, which stands for the slot's last digits. Misuse throws a TypeError (napi.h).
 */
#ifndef HB_NAPI_CACHE_H
#define HB_NAPI_CACHE_H

#include "napi.h"

/* The `key` argument of fillCached() and sendCached(): the slot, the flags,
 * whether to repeat the slot's last Content-Length digits (REPEAT; then
 * `length` is not read), (sendCached() only) whether to poll for a pending
 * socket error first (CHECK), and at most one of what the body is (STRING,
 * BYTES, EMPTY: not read; none: typeof decides), in one number: one
 * Node-API read instead of four per response.
 *   key = slot | flags << HB_KEY_FLAGS_SHIFT | HB_KEY_REPEAT? | HB_KEY_CHECK?
 *         | (HB_KEY_STRING | HB_KEY_BYTES | HB_KEY_EMPTY)?
 * Exported as binding.key = { SHIFT, REPEAT, CHECK, STRING, BYTES, EMPTY,
 * SLOT_COUNT }. */
#define HB_KEY_SLOT_MASK   0xfu
#define HB_KEY_FLAGS_SHIFT 4
#define HB_KEY_REPEAT      (1u << 9)
#define HB_KEY_CHECK       (1u << 10)
#define HB_KEY_STRING      (1u << 11)
#define HB_KEY_BYTES       (1u << 12)
#define HB_KEY_EMPTY       (1u << 13)
#define HB_KEY_BODY        (HB_KEY_STRING | HB_KEY_BYTES | HB_KEY_EMPTY)
#define HB_KEY_ALL                                                                         \
  (HB_KEY_SLOT_MASK | (HB_FLAG_ALL << HB_KEY_FLAGS_SHIFT) | HB_KEY_REPEAT | HB_KEY_CHECK | \
   HB_KEY_BODY)
_Static_assert(HB_SLOT_COUNT - 1 <= HB_KEY_SLOT_MASK, "slot indexes must fit the key");
_Static_assert((HB_FLAG_ALL << HB_KEY_FLAGS_SHIFT) < HB_KEY_REPEAT,
               "flags must fit below HB_KEY_REPEAT");

napi_value hb_js_cache_set(napi_env env, napi_callback_info info);
napi_value hb_js_fill_cached(napi_env env, napi_callback_info info);
napi_value hb_js_send_cached(napi_env env, napi_callback_info info);

/* Frees every slot's memory (the instance's finalizer calls it). */
void hb_slots_free(hb_instance_t *inst);

#endif /* HB_NAPI_CACHE_H */
