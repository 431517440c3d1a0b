/* arena: the growable scratch memory the binding copies JS strings into.
 * Plain C; no Node header, so `cc -std=c11 -c src/arena.c` builds alone.
 *
 * An arena is one realloc'ed block. A call copies each string argument to
 * `base + used` and records it as an offset (hb_span_t in napi_args.h),
 * because a later string may grow, and so move, the block; views into it are
 * made only once the last string is in. The arena belongs to one addon
 * instance (napi.h, hb_instance_t), which frees it with hb_arena_free().
 */
#ifndef HB_ARENA_H
#define HB_ARENA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The smallest block an arena allocates, and the largest it keeps between
 * calls: after a call needed more, hb_arena_trim() releases it, so one large
 * string body does not pin memory for the life of the process. */
#define HB_ARENA_MIN      16384
#define HB_ARENA_KEEP_MAX ((size_t)1024 * 1024)

typedef struct hb_arena_s {
  char *base; /* NULL until the first reserve */
  size_t cap; /* bytes allocated at `base` */
} hb_arena_t;

/* Grows the realloc'ed array `*base` of `*cap` elements of `size` bytes to
 * hold at least `need` elements, doubling (at least 64 elements), without
 * any size computation overflowing.
 * Returns true (with `*base`, `*cap` updated, or untouched when `need` fits
 * already), or false when the size does not fit in size_t or memory runs
 * out; `*base` and `*cap` are then untouched and `*base` still valid. */
bool hb_grow(void **base, size_t *cap, size_t need, size_t size);

/* Makes room for `extra` more bytes after the first `used` bytes of `a`
 * (and at least HB_ARENA_MIN in all). `a->base` may move; the first `used`
 * bytes are kept. Returns true, or false when `used + extra` overflows or
 * memory runs out (then `a` is untouched). Inline: every string argument of
 * every call asks, and nearly always the room is there. */
static inline bool hb_arena_reserve(hb_arena_t *a, size_t used, size_t extra)
{
  if (extra > SIZE_MAX - used) {
    return false;
  }
  size_t need = used + extra;
  if (need <= a->cap) {
    return true;
  }
  if (need < HB_ARENA_MIN) {
    need = HB_ARENA_MIN;
  }
  return hb_grow((void **)&a->base, &a->cap, need, 1);
}

/* Releases the block; `a` is empty (and reusable) afterwards. */
void hb_arena_free(hb_arena_t *a);

/* Called at the end of each call: releases the block when it grew past
 * HB_ARENA_KEEP_MAX. Any view into the arena is invalid afterwards. Inline:
 * every call ends with it. */
static inline void hb_arena_trim(hb_arena_t *a)
{
  if (a->cap > HB_ARENA_KEEP_MAX) {
    hb_arena_free(a);
  }
}

#endif /* HB_ARENA_H */
