/* Serializes one realistic response (status line, 10 headers, a 1 KiB body)
 * 10 million times with hm_measure() + hm_write() and prints ns/op.
 *
 *   make bench
 *
 * Wall-clock numbers vary between runs; for numbers that repeat exactly, run
 * fewer iterations under callgrind and compare instruction counts:
 *
 *   valgrind --tool=callgrind test/c/build/bench_core 100000
 */
#include "../src/http_message.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define DEFAULT_ITERATIONS 10000000L
#define BODY_LEN           1024

static double now_ns(void)
{
  struct timespec ts;
  if (timespec_get(&ts, TIME_UTC) != TIME_UTC)
    abort();
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
  const long iterations = argc > 1 ? strtol(argv[1], NULL, 10) : DEFAULT_ITERATIONS;
  if (iterations <= 0)
    return 2;
#define S(lit)             \
  {                        \
    (lit), sizeof(lit) - 1 \
  }
  static const hm_str_t headers[] = {
      S("Content-Type"),   S("application/json; charset=utf-8"),
      S("Content-Length"), S("1024"),
      S("Date"),           S("Thu, 01 Jan 1970 00:00:00 GMT"),
      S("Connection"),     S("keep-alive"),
      S("Keep-Alive"),     S("timeout=5"),
      S("Cache-Control"),  S("no-store"),
      S("ETag"),           S("W/\"400-5ABmGhXrJrDpWH8MvG6QLCFgo5k\""),
      S("Vary"),           S("Accept-Encoding"),
      S("X-Request-Id"),   S("6f1c1f2e-8a5b-4c1d-9f2a-0b3c4d5e6f70"),
      S("Set-Cookie"),     S("session=abc123; Path=/; HttpOnly; SameSite=Lax"),
  };
#undef S
  static char body[BODY_LEN];
  memset(body, 'x', sizeof(body));

  const hm_response_t res = {200,
                             {NULL, 0},
                             headers,
                             sizeof(headers) / sizeof(headers[0]) / 2,
                             {body, sizeof(body)},
                             HM_FRAMING_RAW};

  size_t len = 0;
  if (hm_measure(&res, &len) != HM_OK)
    abort();
  char *out = malloc(len);
  if (out == NULL)
    abort();

  /* The checksum makes every iteration's output observable, so the compiler
   * cannot drop the calls. */
  unsigned long checksum = 0;
  const double start = now_ns();
  for (long i = 0; i < iterations; i++) {
    size_t n = 0, written = 0;
    hm_err_t err = hm_measure(&res, &n);
    err |= hm_write(&res, out, n, &written);
    assert(err == HM_OK && written == len);
    checksum += (unsigned char)out[i % (long)len] + written;
  }
  const double elapsed = now_ns() - start;

  static const char head[] = "HTTP/1.1 200 OK\r\nContent-Type: application/json; charset=utf-8\r\n"
                             "Content-Length: 1024\r\n";
  if (len != 375 + BODY_LEN || memcmp(out, head, sizeof(head) - 1) != 0 ||
      memcmp(out + len - BODY_LEN, body, BODY_LEN) != 0 || checksum == 0) {
    fprintf(stderr, "unexpected output (%zu bytes)\n", len);
    return 1;
  }
  printf("hm_measure+hm_write, 10 headers, %d-byte body (%zu bytes out): %.1f ns/op over %ld "
         "iterations\n",
         BODY_LEN, len, elapsed / (double)iterations, iterations);
  free(out);
  return 0;
}
