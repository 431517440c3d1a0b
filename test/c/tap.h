/* tap.h: a minimal Test Anything Protocol (TAP version 13) printer for the C
 * tests. Each check prints `ok N - name` or `not ok N - name`; failures print
 * what was got and what was wanted as `#` diagnostics; tap_done() prints the
 * plan and returns the process exit status, so `prove` and tap both read it.
 */
#ifndef TAP_H
#define TAP_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

static int tap__count;
static int tap__failed;

static inline void tap__vline(const char *prefix, const char *fmt, va_list ap)
{
  fputs(prefix, stdout);
  vprintf(fmt, ap);
  fputc('\n', stdout);
}

/* Prints a `#` diagnostic line. */
static inline void tap_diag(const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  tap__vline("# ", fmt, ap);
  va_end(ap);
}

/* Records one check; returns `cond` so callers can skip dependent checks. */
static inline int tap_ok(int cond, const char *fmt, ...)
{
  va_list ap;
  tap__count++;
  if (!cond)
    tap__failed++;
  printf("%s %d - ", cond ? "ok" : "not ok", tap__count);
  va_start(ap, fmt);
  tap__vline("", fmt, ap);
  va_end(ap);
  fflush(stdout);
  return cond;
}

/* Prints `n` bytes as a C string literal so CR, LF and latin1 bytes show. */
static inline void tap_dump(const char *label, const void *data, size_t n)
{
  const unsigned char *p = data;
  printf("#   %s (%zu bytes): \"", label, n);
  for (size_t i = 0; i < n; i++) {
    if (p[i] == '\r')
      fputs("\\r", stdout);
    else if (p[i] == '\n')
      fputs("\\n", stdout);
    else if (p[i] == '\t')
      fputs("\\t", stdout);
    else if (p[i] == '"' || p[i] == '\\')
      printf("\\%c", p[i]);
    else if (p[i] < 0x20 || p[i] >= 0x7F)
      printf("\\x%02x", p[i]);
    else
      fputc(p[i], stdout);
  }
  fputs("\"\n", stdout);
}

/* Checks that two byte ranges are equal, printing both when they are not. */
static inline int tap_mem_eq(const void *got, size_t got_len, const void *want, size_t want_len,
                             const char *name)
{
  const int same = got_len == want_len && (want_len == 0 || memcmp(got, want, want_len) == 0);
  tap_ok(same, "%s", name);
  if (!same) {
    tap_dump("got ", got, got_len);
    tap_dump("want", want, want_len);
  }
  return same;
}

/* Checks two integers for equality, printing both when they differ. */
static inline int tap_int_eq(long long got, long long want, const char *name)
{
  tap_ok(got == want, "%s", name);
  if (got != want)
    tap_diag("  got %lld, want %lld", got, want);
  return got == want;
}

/* Prints the plan and returns the exit status: 0 only if all checks passed. */
static inline int tap_done(void)
{
  printf("1..%d\n", tap__count);
  if (tap__failed)
    tap_diag("failed %d of %d", tap__failed, tap__count);
  return tap__failed ? 1 : 0;
}

#endif /* TAP_H */
