/* The binding's scratch memory; the contract is in arena.h. */
#include "arena.h"

#include <stdlib.h>

bool hb_grow(void **base, size_t *cap, size_t need, size_t size)
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
  if (size == 0 || n > SIZE_MAX / size) {
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

void hb_arena_free(hb_arena_t *a)
{
  free(a->base);
  a->base = NULL;
  a->cap = 0;
}
