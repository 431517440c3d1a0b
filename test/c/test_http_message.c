/* Unit tests for the serializer core. Prints TAP.
 *
 * The core is included as source so its static helpers can be tested directly.
 * Every output buffer is exactly the measured size and ends at a PROT_NONE
 * page, and every parsed head ends at one too, so a single byte written or
 * read past the end crashes the test instead of passing silently.
 */
#include "../../src/http_message.c"
/* The binding's scratch memory is plain C too (src/arena.h). */
#include "../../src/arena.c"

#include "tap.h"

#include <limits.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

/* A view of a string literal, embedded NULs included. */
#define S(lit)               \
  {                          \
    (lit), (sizeof(lit) - 1) \
  }
/* The same as an expression (a compound literal). */
#define V(lit) ((hm_str_t){(lit), sizeof(lit) - 1})
#define NO_REASON \
  {               \
    NULL, 0       \
  }
#define MAX_ROW_HEADERS 4

/* ---- guarded memory ---------------------------------------------------- */

typedef struct {
  void *map;
  size_t map_len;
  char *p; /* `len` usable bytes, immediately followed by a PROT_NONE page */
} guard_t;

static guard_t guard_alloc(size_t len)
{
  const size_t page = (size_t)sysconf(_SC_PAGESIZE);
  const size_t data = (len + page - 1) / page * page;
  guard_t g;
  g.map_len = data + page;
  g.map = mmap(NULL, g.map_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANON, -1, 0);
  if (g.map == MAP_FAILED) {
    perror("mmap");
    exit(2);
  }
  if (mprotect((char *)g.map + data, page, PROT_NONE) != 0) {
    perror("mprotect");
    exit(2);
  }
  g.p = (char *)g.map + data - len;
  return g;
}

static void guard_free(guard_t g)
{
  munmap(g.map, g.map_len);
}

/* Copies `n` bytes into a fresh guarded buffer. */
static guard_t guard_copy(const char *src, size_t n)
{
  guard_t g = guard_alloc(n);
  if (n > 0)
    memcpy(g.p, src, n);
  return g;
}

/* ---- accepted responses ----------------------------------------------- */

typedef struct {
  const char *name;
  unsigned status;
  hm_str_t reason;
  size_t num_headers;
  hm_str_t headers[2 * MAX_ROW_HEADERS];
  hm_str_t body;
  hm_framing_t framing;
  hm_str_t want;
} ok_row_t;

static const ok_row_t ok_rows[] = {
    {"200 default reason, nothing else",
     200,
     NO_REASON,
     0,
     {{0}},
     {0},
     HM_FRAMING_RAW,
     S("HTTP/1.1 200 OK\r\n\r\n")},
    {"100 default reason",
     100,
     NO_REASON,
     0,
     {{0}},
     {0},
     HM_FRAMING_RAW,
     S("HTTP/1.1 100 Continue\r\n\r\n")},
    {"418 default reason has a capital T",
     418,
     NO_REASON,
     0,
     {{0}},
     {0},
     HM_FRAMING_RAW,
     S("HTTP/1.1 418 I'm a Teapot\r\n\r\n")},
    {"203 default reason",
     203,
     NO_REASON,
     0,
     {{0}},
     {0},
     HM_FRAMING_RAW,
     S("HTTP/1.1 203 Non-Authoritative Information\r\n\r\n")},
    {"511 default reason",
     511,
     NO_REASON,
     0,
     {{0}},
     {0},
     HM_FRAMING_RAW,
     S("HTTP/1.1 511 Network Authentication Required\r\n\r\n")},
    {"306 is unlisted",
     306,
     NO_REASON,
     0,
     {{0}},
     {0},
     HM_FRAMING_RAW,
     S("HTTP/1.1 306 unknown\r\n\r\n")},
    {"999 is unlisted",
     999,
     NO_REASON,
     0,
     {{0}},
     {0},
     HM_FRAMING_RAW,
     S("HTTP/1.1 999 unknown\r\n\r\n")},
    {"custom reason",
     200,
     S("Fine"),
     0,
     {{0}},
     {0},
     HM_FRAMING_RAW,
     S("HTTP/1.1 200 Fine\r\n\r\n")},
    {"custom reason that does not match the code",
     404,
     S("OK"),
     0,
     {{0}},
     {0},
     HM_FRAMING_RAW,
     S("HTTP/1.1 404 OK\r\n\r\n")},
    {"empty reason", 200, S(""), 0, {{0}}, {0}, HM_FRAMING_RAW, S("HTTP/1.1 200 \r\n\r\n")},
    {"reason with HTAB and latin1",
     200,
     S("Ol\xe9\tok\xff"),
     0,
     {{0}},
     {0},
     HM_FRAMING_RAW,
     S("HTTP/1.1 200 Ol\xe9\tok\xff\r\n\r\n")},
    {"one header and a raw body",
     200,
     NO_REASON,
     1,
     {S("Content-Length"), S("5")},
     S("hello"),
     HM_FRAMING_RAW,
     S("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello")},
    {"four headers in order, duplicates kept",
     201,
     NO_REASON,
     4,
     {S("Set-Cookie"), S("a=1"), S("Set-Cookie"), S("b=2"), S("X-A"), S("1"), S("x-a"), S("2")},
     {0},
     HM_FRAMING_RAW,
     S("HTTP/1.1 201 Created\r\nSet-Cookie: a=1\r\nSet-Cookie: b=2\r\nX-A: 1\r\nx-a: 2\r\n\r\n")},
    {"empty value",
     204,
     NO_REASON,
     1,
     {S("X-Empty"), S("")},
     {0},
     HM_FRAMING_RAW,
     S("HTTP/1.1 204 No Content\r\nX-Empty: \r\n\r\n")},
    {"latin1 value",
     200,
     NO_REASON,
     1,
     {S("X-Name"), S("caf\xe9 \x80\xff")},
     {0},
     HM_FRAMING_RAW,
     S("HTTP/1.1 200 OK\r\nX-Name: caf\xe9 \x80\xff\r\n\r\n")},
    {"value with HTAB, outer spaces and ': '",
     200,
     NO_REASON,
     1,
     {S("X-V"), S(" \ta: b:c\t ")},
     {0},
     HM_FRAMING_RAW,
     S("HTTP/1.1 200 OK\r\nX-V:  \ta: b:c\t \r\n\r\n")},
    {"every token punctuation in a name",
     200,
     NO_REASON,
     1,
     {S("!#$%&'*+-.^_`|~09AZaz"), S("v")},
     {0},
     HM_FRAMING_RAW,
     S("HTTP/1.1 200 OK\r\n!#$%&'*+-.^_`|~09AZaz: v\r\n\r\n")},
    {"raw body is copied as is",
     200,
     NO_REASON,
     0,
     {{0}},
     S("a\r\n\0\xff\r\n\r\n"),
     HM_FRAMING_RAW,
     S("HTTP/1.1 200 OK\r\n\r\na\r\n\0\xff\r\n\r\n")},
    {"chunked, empty body",
     200,
     NO_REASON,
     1,
     {S("Transfer-Encoding"), S("chunked")},
     {0},
     HM_FRAMING_CHUNKED,
     S("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n")},
    {"chunked, empty body with a non-NULL base",
     200,
     NO_REASON,
     0,
     {{0}},
     S(""),
     HM_FRAMING_CHUNKED,
     S("HTTP/1.1 200 OK\r\n\r\n0\r\n\r\n")},
    {"chunked, 5 bytes",
     200,
     NO_REASON,
     1,
     {S("Transfer-Encoding"), S("chunked")},
     S("hello"),
     HM_FRAMING_CHUNKED,
     S("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n")},
    {"chunked, 10 bytes is 'a'",
     200,
     NO_REASON,
     0,
     {{0}},
     S("0123456789"),
     HM_FRAMING_CHUNKED,
     S("HTTP/1.1 200 OK\r\n\r\na\r\n0123456789\r\n0\r\n\r\n")},
    {"chunked, 26 bytes is '1a'",
     500,
     NO_REASON,
     0,
     {{0}},
     S("abcdefghijklmnopqrstuvwxyz"),
     HM_FRAMING_CHUNKED,
     S("HTTP/1.1 500 Internal Server Error\r\n\r\n1a\r\nabcdefghijklmnopqrstuvwxyz\r\n0\r\n\r\n")},
};

/* Joins the header views of `res` as hm_serialize_joined() takes them,
 * `name NUL value CR LF` per line, into a guarded buffer; `*len` receives
 * the length. */
static guard_t join_fields(const hm_response_t *res, size_t *len)
{
  size_t n = 0;
  for (size_t i = 0; i < res->num_headers; i++)
    n += res->headers[2 * i].len + 1 + res->headers[2 * i + 1].len + 2;
  guard_t g = guard_alloc(n);
  char *d = g.p;
  for (size_t i = 0; i < res->num_headers; i++) {
    const hm_str_t name = res->headers[2 * i];
    const hm_str_t value = res->headers[2 * i + 1];
    if (name.len > 0)
      memcpy(d, name.base, name.len);
    d += name.len;
    *d++ = '\0';
    if (value.len > 0)
      memcpy(d, value.base, value.len);
    d += value.len;
    *d++ = '\r';
    *d++ = '\n';
  }
  *len = n;
  return g;
}

/* Checks hm_serialize_joined() on an accepted response of `want_len`
 * bytes: exact guarded buffer, one byte short (HM_E2BIG with the size
 * stored and nothing written) and measuring with no buffer. */
static void check_serialize_ok(const hm_response_t *res, const char *want, size_t want_len)
{
  size_t flen = 0;
  guard_t fields = join_fields(res, &flen);
  hm_str_t views[2 * MAX_ROW_HEADERS + 2];
  hm_response_t jres = *res;
  jres.headers = NULL;

  guard_t out = guard_alloc(want_len);
  size_t len = 0;
  hm_err_t err = hm_serialize_joined(&jres, fields.p, flen, views, out.p, want_len, &len);
  tap_ok(err == HM_OK && len == want_len, "  serialize_joined into the exact size is HM_OK");
  tap_mem_eq(out.p, len, want, want_len, "  serialized bytes");
  guard_free(out);

  guard_t small = guard_alloc(want_len - 1);
  memset(small.p, 0xA5, want_len - 1);
  len = 0;
  err = hm_serialize_joined(&jres, fields.p, flen, views, small.p, want_len - 1, &len);
  int untouched = 1;
  for (size_t i = 0; i + 1 < want_len; i++)
    untouched = untouched && (unsigned char)small.p[i] == 0xA5;
  tap_ok(err == HM_E2BIG && len == want_len && untouched,
         "  serialize_joined one byte short is HM_E2BIG with the size and writes nothing");
  guard_free(small);

  len = 0;
  err = hm_serialize_joined(&jres, fields.p, flen, views, NULL, 0, &len);
  tap_ok(err == HM_E2BIG && len == want_len, "  serialize_joined with no buffer measures");
  guard_free(fields);
}

/* Checks measure, write (exact guarded buffer), E2BIG with one byte less, and
 * the parse_head round trip of the head part. */
static void check_ok_row(const ok_row_t *row)
{
  hm_response_t res = {row->status,      row->reason, row->headers,
                       row->num_headers, row->body,   row->framing};
  size_t len = 12345;
  hm_err_t err = hm_measure(&res, &len);
  if (!tap_int_eq(err, HM_OK, row->name))
    return;
  tap_int_eq((long long)len, (long long)row->want.len, "  measured size");

  guard_t out = guard_alloc(len);
  size_t written = 0;
  err = hm_write(&res, out.p, len, &written);
  tap_ok(err == HM_OK && written == len, "  write returns HM_OK and the measured size");
  tap_mem_eq(out.p, written, row->want.base, row->want.len, "  bytes");
  guard_free(out);
  check_serialize_ok(&res, row->want.base, row->want.len);

  /* One byte short: HM_E2BIG, nothing written, *written untouched. */
  guard_t small = guard_alloc(len - 1);
  memset(small.p, 0xA5, len - 1);
  written = 777;
  err = hm_write(&res, small.p, len - 1, &written);
  int untouched = written == 777;
  for (size_t i = 0; i + 1 < len; i++)
    untouched = untouched && (unsigned char)small.p[i] == 0xA5;
  tap_ok(err == HM_E2BIG && untouched, "  one byte short is HM_E2BIG and writes nothing");
  guard_free(small);

  /* The head as written parses back into the same response. */
  const char *hend = NULL;
  for (size_t i = 0; i + 4 <= row->want.len; i++) {
    if (memcmp(row->want.base + i, "\r\n\r\n", 4) == 0) {
      hend = row->want.base + i + 4;
      break;
    }
  }
  const size_t head_len = (size_t)(hend - row->want.base);
  guard_t head = guard_copy(row->want.base, head_len);
  hm_str_t fields[2 * MAX_ROW_HEADERS];
  hm_response_t back = {0};
  back.body = row->body;
  back.framing = row->framing;
  err = hm_parse_head(head.p, head_len, &back, fields, 2 * row->num_headers);
  if (tap_int_eq(err, HM_OK, "  parse_head accepts the written head")) {
    tap_int_eq((long long)back.num_headers, (long long)row->num_headers, "  parsed header count");
    guard_t again = guard_alloc(len);
    err = hm_write(&back, again.p, len, &written);
    tap_ok(err == HM_OK && written == len, "  parsed head writes again");
    tap_mem_eq(again.p, written, row->want.base, row->want.len, "  rewritten bytes");
    guard_free(again);
  }
  guard_free(head);
}

/* ---- rejected responses ------------------------------------------------ */

typedef struct {
  const char *name;
  hm_err_t want;
  unsigned status;
  hm_str_t reason;
  size_t num_headers;
  hm_str_t headers[2 * MAX_ROW_HEADERS];
  hm_str_t body;
  int framing;
} err_row_t;

static const err_row_t err_rows[] = {
    {"status 0", HM_EINVAL_STATUS, 0, NO_REASON, 0, {{0}}, {0}, HM_FRAMING_RAW},
    {"status 99", HM_EINVAL_STATUS, 99, NO_REASON, 0, {{0}}, {0}, HM_FRAMING_RAW},
    {"status 1000", HM_EINVAL_STATUS, 1000, NO_REASON, 0, {{0}}, {0}, HM_FRAMING_RAW},
    {"status UINT_MAX", HM_EINVAL_STATUS, UINT_MAX, NO_REASON, 0, {{0}}, {0}, HM_FRAMING_RAW},
    {"status 1099 (not truncated to 99)",
     HM_EINVAL_STATUS,
     1099,
     S("x"),
     0,
     {{0}},
     {0},
     HM_FRAMING_RAW},
    {"reason with CR", HM_EINVAL_REASON, 200, S("O\rK"), 0, {{0}}, {0}, HM_FRAMING_RAW},
    {"reason with LF", HM_EINVAL_REASON, 200, S("O\nK"), 0, {{0}}, {0}, HM_FRAMING_RAW},
    {"reason with CRLF", HM_EINVAL_REASON, 200, S("OK\r\nX: y"), 0, {{0}}, {0}, HM_FRAMING_RAW},
    {"reason with NUL", HM_EINVAL_REASON, 200, S("O\0K"), 0, {{0}}, {0}, HM_FRAMING_RAW},
    {"reason with DEL", HM_EINVAL_REASON, 200, S("\x7f"), 0, {{0}}, {0}, HM_FRAMING_RAW},
    {"empty name", HM_EINVAL_NAME, 200, NO_REASON, 1, {S(""), S("v")}, {0}, HM_FRAMING_RAW},
    {"name with SP", HM_EINVAL_NAME, 200, NO_REASON, 1, {S("X A"), S("v")}, {0}, HM_FRAMING_RAW},
    {"name with ':'", HM_EINVAL_NAME, 200, NO_REASON, 1, {S("X:"), S("v")}, {0}, HM_FRAMING_RAW},
    {"name with latin1",
     HM_EINVAL_NAME,
     200,
     NO_REASON,
     1,
     {S("caf\xe9"), S("v")},
     {0},
     HM_FRAMING_RAW},
    {"name with CRLF",
     HM_EINVAL_NAME,
     200,
     NO_REASON,
     1,
     {S("X\r\n"), S("v")},
     {0},
     HM_FRAMING_RAW},
    {"second name bad",
     HM_EINVAL_NAME,
     200,
     NO_REASON,
     2,
     {S("A"), S("1"), S("(B)"), S("2")},
     {0},
     HM_FRAMING_RAW},
    {"value with lone CR",
     HM_EINVAL_VALUE,
     200,
     NO_REASON,
     1,
     {S("X"), S("a\rb")},
     {0},
     HM_FRAMING_RAW},
    {"value with lone LF",
     HM_EINVAL_VALUE,
     200,
     NO_REASON,
     1,
     {S("X"), S("a\nb")},
     {0},
     HM_FRAMING_RAW},
    {"value smuggling a header",
     HM_EINVAL_VALUE,
     200,
     NO_REASON,
     1,
     {S("X"), S("a\r\nY: b")},
     {0},
     HM_FRAMING_RAW},
    {"value with NUL", HM_EINVAL_VALUE, 200, NO_REASON, 1, {S("X"), S("\0")}, {0}, HM_FRAMING_RAW},
    {"value with DEL",
     HM_EINVAL_VALUE,
     200,
     NO_REASON,
     1,
     {S("X"), S("\x7f")},
     {0},
     HM_FRAMING_RAW},
    {"value with ESC",
     HM_EINVAL_VALUE,
     200,
     NO_REASON,
     1,
     {S("X"), S("\x1b[0m")},
     {0},
     HM_FRAMING_RAW},
    {"status checked before reason",
     HM_EINVAL_STATUS,
     42,
     S("\r"),
     1,
     {S(""), S("\n")},
     {0},
     HM_FRAMING_RAW},
    {"reason checked before names",
     HM_EINVAL_REASON,
     200,
     S("\r"),
     1,
     {S(""), S("\n")},
     {0},
     HM_FRAMING_RAW},
    {"headers checked in order",
     HM_EINVAL_VALUE,
     200,
     NO_REASON,
     2,
     {S("A"), S("\n"), S(""), S("1")},
     {0},
     HM_FRAMING_RAW},
    {"unknown framing", HM_EINVAL_ARG, 200, NO_REASON, 0, {{0}}, {0}, 2},
    {"body NULL with a length", HM_EINVAL_ARG, 200, NO_REASON, 0, {{0}}, {NULL, 3}, HM_FRAMING_RAW},
    {"name NULL with a length",
     HM_EINVAL_ARG,
     200,
     NO_REASON,
     1,
     {{NULL, 1}, S("v")},
     {0},
     HM_FRAMING_RAW},
    {"value NULL with a length",
     HM_EINVAL_ARG,
     200,
     NO_REASON,
     1,
     {S("X"), {NULL, 1}},
     {0},
     HM_FRAMING_RAW},
};

/* Checks that measure and write both reject `res` with `want` and leave every
 * out-parameter and the destination untouched. */
static void check_rejected(const hm_response_t *res, hm_err_t want, const char *name)
{
  size_t len = 4242;
  hm_err_t err = hm_measure(res, &len);
  tap_ok(err == want && len == 4242, "%s: measure is %s", name, hm_err_name(want));
  if (err != want)
    tap_diag("  got %s", hm_err_name(err));

  char dst[64];
  memset(dst, 0x5A, sizeof(dst));
  size_t written = 4343;
  err = hm_write(res, dst, sizeof(dst), &written);
  int untouched = written == 4343;
  for (size_t i = 0; i < sizeof(dst); i++)
    untouched = untouched && dst[i] == 0x5A;
  tap_ok(err == want && untouched, "%s: write is %s and writes nothing", name, hm_err_name(want));
  if (err != want)
    tap_diag("  got %s", hm_err_name(err));

  /* Joined, the same fields are rejected too, though a NUL, CR or LF may
   * move the blame to another part. Views without bytes cannot be joined. */
  if (res == NULL || res->headers == NULL || res->num_headers > MAX_ROW_HEADERS ||
      res->framing > HM_FRAMING_CHUNKED || !hm__str_ok(res->body))
    return;
  for (size_t i = 0; i < 2 * res->num_headers; i++) {
    if (!hm__str_ok(res->headers[i]))
      return;
  }
  size_t flen = 0;
  guard_t fields = join_fields(res, &flen);
  hm_str_t views[2 * MAX_ROW_HEADERS];
  hm_response_t jres = *res;
  jres.headers = NULL;
  memset(dst, 0x5A, sizeof(dst));
  len = 4242;
  err = hm_serialize_joined(&jres, fields.p, flen, views, dst, sizeof(dst), &len);
  untouched = len == 4242;
  for (size_t i = 0; i < sizeof(dst); i++)
    untouched = untouched && dst[i] == 0x5A;
  tap_ok(err != HM_OK && err != HM_E2BIG && untouched,
         "%s: serialize_joined rejects it and writes nothing", name);
  if (err == HM_OK || err == HM_E2BIG)
    tap_diag("  got %s", hm_err_name(err));
  guard_free(fields);
}

static void check_err_row(const err_row_t *row)
{
  hm_response_t res = {row->status,      row->reason, row->headers,
                       row->num_headers, row->body,   (hm_framing_t)row->framing};
  check_rejected(&res, row->want, row->name);
}

static void test_bad_arguments(void)
{
  const hm_str_t hdr[2] = {S("X"), S("y")};
  hm_response_t res = {200, NO_REASON, NULL, 0, {0}, HM_FRAMING_RAW};
  size_t len;
  char buf[64];
  size_t written;

  tap_int_eq(hm_measure(NULL, &len), HM_EINVAL_ARG, "measure(NULL res) is HM_EINVAL_ARG");
  tap_int_eq(hm_measure(&res, NULL), HM_EINVAL_ARG, "measure(NULL len) is HM_EINVAL_ARG");
  tap_int_eq(hm_write(NULL, buf, sizeof(buf), &written), HM_EINVAL_ARG,
             "write(NULL res) is HM_EINVAL_ARG");
  tap_int_eq(hm_write(&res, NULL, 0, &written), HM_EINVAL_ARG, "write(NULL dst) is HM_EINVAL_ARG");
  tap_int_eq(hm_write(&res, buf, sizeof(buf), NULL), HM_EINVAL_ARG,
             "write(NULL written) is HM_EINVAL_ARG");
  tap_int_eq(hm_write(&res, buf, 0, &written), HM_E2BIG, "write into 0 bytes is HM_E2BIG");

  res.num_headers = 1;
  check_rejected(&res, HM_EINVAL_ARG, "headers NULL with a count");
  /* A count whose views could not even be addressed; never dereferenced. */
  res.headers = hdr;
  res.num_headers = SIZE_MAX / 2;
  check_rejected(&res, HM_EINVAL_ARG, "header count past the address space");
}

/* ---- size overflow ----------------------------------------------------- */

static void test_overflow(void)
{
  /* Body bytes are never read by measure, so a huge length can point at one
   * real byte. "HTTP/1.1 200 OK\r\n\r\n" is 19 bytes. */
  static const char one = 'x';
  hm_response_t res = {200, NO_REASON, NULL, 0, {&one, SIZE_MAX - 19}, HM_FRAMING_RAW};
  size_t len = 0;
  tap_ok(hm_measure(&res, &len) == HM_OK && len == SIZE_MAX,
         "raw body that sums to exactly SIZE_MAX is measured");

  res.body.len = SIZE_MAX - 18;
  check_rejected(&res, HM_EOVERFLOW, "raw body one past SIZE_MAX");
  res.body.len = SIZE_MAX;
  check_rejected(&res, HM_EOVERFLOW, "raw body of SIZE_MAX");

  /* Chunked: head 19 + 16 hex digits + CRLF + body + CRLF + "0\r\n\r\n" (5). */
  res.framing = HM_FRAMING_CHUNKED;
  const size_t framing = 19 + HM__SIZE_HEX_LONGEST + 2 + 2 + 5;
  res.body.len = SIZE_MAX - framing;
  tap_ok(hm_measure(&res, &len) == HM_OK && len == SIZE_MAX,
         "chunked body that sums to exactly SIZE_MAX is measured");
  res.body.len = SIZE_MAX - framing + 1;
  check_rejected(&res, HM_EOVERFLOW, "chunked body one past SIZE_MAX");
  res.body.len = SIZE_MAX - 30;
  check_rejected(&res, HM_EOVERFLOW, "chunked body whose framing overflows");

  /* A long reason plus a huge body overflows in a later addition. */
  const hm_str_t hdr[2] = {S("Content-Length"), S("0")};
  res =
      (hm_response_t){200, S("A longer reason"), hdr, 1, {&one, SIZE_MAX / 2 + 1}, HM_FRAMING_RAW};
  tap_ok(hm_measure(&res, &len) == HM_OK, "half of SIZE_MAX is measured");
  res.body.len = SIZE_MAX - 40;
  check_rejected(&res, HM_EOVERFLOW, "headers plus body past SIZE_MAX");
}

/* ---- every byte against Node's rules ----------------------------------- */

/* Node's checkIsHttpToken: ALPHA, DIGIT and ! # $ % & ' * + - . ^ _ ` | ~. */
static int node_token_char(int c)
{
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         (c != 0 && strchr("!#$%&'*+-.^_`|~", c) != NULL);
}

/* Node's checkInvalidHeaderChar: anything but HTAB, 0x20..0x7E, 0x80..0xFF. */
static int node_field_char(int c)
{
  return c == '\t' || (c >= 0x20 && c <= 0x7E) || (c >= 0x80 && c <= 0xFF);
}

/* Serializes a response whose name, value or reason holds byte `c` between
 * 'a' and 'b'. Returns 1 when it is accepted and written exactly, -1 when it
 * is accepted but written wrongly, 0 when rejected (the error in `*got`). */
static int byte_case(int c, int where, hm_err_t *got)
{
  static const char want_name[] = "HTTP/1.1 200 OK\r\na?b: v\r\n\r\n";
  static const char want_value[] = "HTTP/1.1 200 OK\r\nX: a?b\r\n\r\n";
  static const char want_reason[] = "HTTP/1.1 200 a?b\r\nX: v\r\n\r\n";
  const char b[3] = {'a', (char)c, 'b'};
  hm_str_t hdr[2] = {S("X"), S("v")};
  hm_response_t res = {200, NO_REASON, hdr, 1, {0}, HM_FRAMING_RAW};
  char want[64];
  const char *tmpl = where == 0 ? want_name : where == 1 ? want_value : want_reason;
  const size_t want_len = strlen(tmpl);
  memcpy(want, tmpl, want_len);
  *strchr(want, '?') = (char)c;
  if (where == 0)
    hdr[0] = (hm_str_t){b, 3};
  else if (where == 1)
    hdr[1] = (hm_str_t){b, 3};
  else
    res.reason = (hm_str_t){b, 3};
  size_t len;
  *got = hm_measure(&res, &len);
  if (*got != HM_OK)
    return 0;
  guard_t out = guard_alloc(len);
  size_t written;
  const int exact = hm_write(&res, out.p, len, &written) == HM_OK && written == want_len &&
                    memcmp(out.p, want, want_len) == 0;
  guard_free(out);
  return exact ? 1 : -1;
}

static void test_all_bytes(void)
{
  static const char *const where_name[] = {"header name", "header value", "reason"};
  static const hm_err_t where_err[] = {HM_EINVAL_NAME, HM_EINVAL_VALUE, HM_EINVAL_REASON};
  int table_bad = 0;
  for (int c = 0; c < 256; c++) {
    if (!hm__token_table[(unsigned char)c] != !node_token_char(c) ||
        !hm__field_table[(unsigned char)c] != !node_field_char(c)) {
      tap_diag("  byte 0x%02x: token %d/%d field %d/%d (core/Node)", c,
               hm__token_table[(unsigned char)c], node_token_char(c),
               hm__field_table[(unsigned char)c], node_field_char(c));
      table_bad++;
    }
  }
  tap_ok(table_bad == 0, "the token and field tables match Node for all 256 bytes");

  for (int where = 0; where < 3; where++) {
    int bad = 0, accepted = 0;
    for (int c = 0; c < 256; c++) {
      const int allowed = where == 0 ? node_token_char(c) : node_field_char(c);
      hm_err_t err;
      const int r = byte_case(c, where, &err);
      accepted += r == 1;
      if (allowed ? r != 1 : err != where_err[where]) {
        tap_diag("  byte 0x%02x in %s: %s", c, where_name[where], hm_err_name(err));
        bad++;
      }
    }
    tap_ok(bad == 0, "all 256 bytes in a %s: accepted exactly or rejected as %s (%d accepted)",
           where_name[where], hm_err_name(where_err[where]), accepted);
  }

  /* Machine-readable bitmaps, so test/core.test.js can compare them with the
   * running Node's http.validateHeaderName and validateHeaderValue. */
  printf("# token-bitmap ");
  for (int c = 0; c < 256; c += 4) {
    printf("%x", hm__token_table[(unsigned char)c] | hm__token_table[(unsigned char)(c + 1)] << 1 |
                     hm__token_table[(unsigned char)(c + 2)] << 2 |
                     hm__token_table[(unsigned char)(c + 3)] << 3);
  }
  printf("\n# field-bitmap ");
  for (int c = 0; c < 256; c += 4) {
    printf("%x", hm__field_table[(unsigned char)c] | hm__field_table[(unsigned char)(c + 1)] << 1 |
                     hm__field_table[(unsigned char)(c + 2)] << 2 |
                     hm__field_table[(unsigned char)(c + 3)] << 3);
  }
  printf("\n");
}

/* ---- default reasons ---------------------------------------------------- */

static void test_default_reasons(void)
{
  static const struct {
    unsigned status;
    const char *want;
  } rows[] = {
      {100, "Continue"},
      {103, "Early Hints"},
      {226, "IM Used"},
      {308, "Permanent Redirect"},
      {413, "Payload Too Large"},
      {418, "I'm a Teapot"},
      {425, "Too Early"},
      {451, "Unavailable For Legal Reasons"},
      {509, "Bandwidth Limit Exceeded"},
      {104, "unknown"},
      {209, "unknown"},
      {419, "unknown"},
      {0, "unknown"},
      {1000, "unknown"},
  };
  for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
    const char *got = hm_default_reason(rows[i].status);
    tap_mem_eq(got, strlen(got), rows[i].want, strlen(rows[i].want), rows[i].want);
  }
  /* The count of listed codes matches Node's STATUS_CODES (63 entries). */
  int listed = 0, lengths_ok = 1;
  for (unsigned s = 0; s < 1100; s++) {
    const hm_str_t r = hm__default_reason(s);
    listed += strcmp(r.base, "unknown") != 0;
    lengths_ok = lengths_ok && strlen(r.base) == r.len;
  }
  tap_int_eq(listed, 63, "63 codes have a phrase, as in Node's STATUS_CODES");
  tap_ok(lengths_ok, "every default phrase's stored length matches strlen");
}

/* ---- error names ------------------------------------------------------- */

static void test_error_names(void)
{
  static const struct {
    hm_err_t err;
    const char *name;
  } rows[] = {
      {HM_OK, "HM_OK"},
      {HM_EINVAL_STATUS, "HM_EINVAL_STATUS"},
      {HM_EINVAL_REASON, "HM_EINVAL_REASON"},
      {HM_EINVAL_NAME, "HM_EINVAL_NAME"},
      {HM_EINVAL_VALUE, "HM_EINVAL_VALUE"},
      {HM_EINVAL_HEAD, "HM_EINVAL_HEAD"},
      {HM_EINVAL_ARG, "HM_EINVAL_ARG"},
      {HM_EOVERFLOW, "HM_EOVERFLOW"},
      {HM_E2BIG, "HM_E2BIG"},
      {HM_ENONASCII, "HM_ENONASCII"},
      {(hm_err_t)HM_ERR_COUNT, "HM_UNKNOWN"},
      {(hm_err_t)99, "HM_UNKNOWN"},
  };
  /* The table covers every code, and the addon's export (src/binding.c)
   * walks 0..HM_ERR_COUNT-1. */
  tap_ok(sizeof(rows) / sizeof(rows[0]) == HM_ERR_COUNT + 2, "every code has a row");
  for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
    const char *got = hm_err_name(rows[i].err);
    tap_mem_eq(got, strlen(got), rows[i].name, strlen(rows[i].name), rows[i].name);
  }
  tap_mem_eq(hm_strerror(HM_E2BIG), strlen(hm_strerror(HM_E2BIG)),
             "destination buffer is too small", 31, "hm_strerror(HM_E2BIG)");
  tap_mem_eq(hm_strerror(HM_EINVAL_STATUS), strlen(hm_strerror(HM_EINVAL_STATUS)),
             "status code is not in 100..999", 30, "hm_strerror(HM_EINVAL_STATUS)");
  tap_ok(strcmp(hm_strerror((hm_err_t)99), "unknown error") == 0, "hm_strerror(99)");
  tap_ok(strcmp(hm_strerror(HM_OK), "success") == 0, "hm_strerror(HM_OK)");
}

/* ---- static helpers ---------------------------------------------------- */

static void test_helpers(void)
{
  static const struct {
    size_t n;
    const char *want;
  } hex[] = {
      {0, "0"},
      {1, "1"},
      {9, "9"},
      {10, "a"},
      {15, "f"},
      {16, "10"},
      {255, "ff"},
      {256, "100"},
      {4096, "1000"},
      {0xabcdef, "abcdef"},
      {0xFFFFFFFFu, "ffffffff"},
  };
  for (size_t i = 0; i < sizeof(hex) / sizeof(hex[0]); i++) {
    const size_t want_len = strlen(hex[i].want);
    guard_t g = guard_alloc(want_len);
    char *d = hm__put_hex(g.p, g.p + want_len, hex[i].n);
    tap_ok(hm__hex_len(hex[i].n) == want_len && d == g.p + want_len, "hex length of %s",
           hex[i].want);
    tap_mem_eq(g.p, want_len, hex[i].want, want_len, "  hex digits");
    guard_free(g);
  }
  {
    /* SIZE_MAX takes every digit the bound allows. */
    char buf[HM__SIZE_HEX_LONGEST];
    char want[HM__SIZE_HEX_LONGEST];
    memset(want, 'f', sizeof(want));
    tap_int_eq((long long)hm__hex_len(SIZE_MAX), (long long)HM__SIZE_HEX_LONGEST,
               "hex length of SIZE_MAX is HM__SIZE_HEX_LONGEST");
    hm__put_hex(buf, buf + sizeof(buf), SIZE_MAX);
    tap_mem_eq(buf, sizeof(buf), want, sizeof(want), "  SIZE_MAX in hex");
  }

  size_t total = SIZE_MAX - 1;
  tap_ok(hm__add(&total, 1) == HM_OK && total == SIZE_MAX, "hm__add reaches SIZE_MAX");
  tap_ok(hm__add(&total, 1) == HM_EOVERFLOW && total == SIZE_MAX,
         "hm__add refuses to wrap and keeps the total");
  total = 1;
  tap_ok(hm__add(&total, SIZE_MAX) == HM_EOVERFLOW && total == 1, "hm__add(1, SIZE_MAX)");
  total = 0;
  tap_ok(hm__add(&total, SIZE_MAX) == HM_OK && total == SIZE_MAX, "hm__add(0, SIZE_MAX)");

  for (unsigned s = 100; s <= 999; s++) {
    char got[3];
    char want[4];
    want[0] = (char)('0' + s / 100);
    want[1] = (char)('0' + s / 10 % 10);
    want[2] = (char)('0' + s % 10);
    hm__put_status(got, got + 3, s);
    if (memcmp(got, want, 3) != 0) {
      tap_mem_eq(got, 3, want, 3, "status digits");
      return;
    }
  }
  tap_ok(1, "status digits for 100..999");
}

/* ---- hm_parse_head ------------------------------------------------------ */

typedef struct {
  const char *name;
  hm_str_t head;
  size_t fields_cap;
  hm_err_t parse;   /* what hm_parse_head returns */
  hm_err_t measure; /* what hm_measure returns on the parsed head, if parsed */
  size_t num_headers;
  hm_str_t want_reason;
  hm_str_t want_fields[4];
} parse_row_t;

static const parse_row_t parse_rows[] = {
    {"no headers", S("HTTP/1.1 200 OK\r\n\r\n"), 0, HM_OK, HM_OK, 0, S("OK"), {{0}}},
    {"value holding ': '",
     S("HTTP/1.1 200 OK\r\na: b: c\r\n\r\n"),
     2,
     HM_OK,
     HM_OK,
     1,
     S("OK"),
     {S("a"), S("b: c")}},
    {"empty value and empty reason",
     S("HTTP/1.1 599 \r\nX-E: \r\nY: 1\r\n\r\n"),
     4,
     HM_OK,
     HM_OK,
     2,
     S(""),
     {S("X-E"), S(""), S("Y"), S("1")}},
    {"value with a colon but no space",
     S("HTTP/1.1 200 OK\r\nX: a:b\r\n\r\n"),
     3,
     HM_OK,
     HM_OK,
     1,
     S("OK"),
     {S("X"), S("a:b")}},
    {"value of spaces",
     S("HTTP/1.1 200 OK\r\nX:   \r\n\r\n"),
     2,
     HM_OK,
     HM_OK,
     1,
     S("OK"),
     {S("X"), S("  ")}},
    {"empty name parses, measure rejects it",
     S("HTTP/1.1 200 OK\r\n: v\r\n\r\n"),
     2,
     HM_OK,
     HM_EINVAL_NAME,
     1,
     S("OK"),
     {S(""), S("v")}},
    {"name with SP parses, measure rejects it",
     S("HTTP/1.1 200 OK\r\nA B: v\r\n\r\n"),
     2,
     HM_OK,
     HM_EINVAL_NAME,
     1,
     S("OK"),
     {S("A B"), S("v")}},
    {"value with NUL parses, measure rejects it",
     S("HTTP/1.1 200 OK\r\nA: \0\r\n\r\n"),
     2,
     HM_OK,
     HM_EINVAL_VALUE,
     1,
     S("OK"),
     {S("A"), S("\0")}},
    {"reason with DEL parses, measure rejects it",
     S("HTTP/1.1 200 \x7f\r\n\r\n"),
     0,
     HM_OK,
     HM_EINVAL_REASON,
     0,
     S("\x7f"),
     {{0}}},
    {"empty input", S(""), 2, HM_EINVAL_HEAD, HM_OK, 0, {0}, {{0}}},
    {"HTTP/1.0", S("HTTP/1.0 200 OK\r\n\r\n"), 2, HM_EINVAL_HEAD, HM_OK, 0, {0}, {{0}}},
    {"lowercase version", S("http/1.1 200 OK\r\n\r\n"), 2, HM_EINVAL_HEAD, HM_OK, 0, {0}, {{0}}},
    {"two-digit status", S("HTTP/1.1 20 OK\r\n\r\n"), 2, HM_EINVAL_HEAD, HM_OK, 0, {0}, {{0}}},
    {"four-digit status", S("HTTP/1.1 2000 OK\r\n\r\n"), 2, HM_EINVAL_HEAD, HM_OK, 0, {0}, {{0}}},
    {"status with a leading zero",
     S("HTTP/1.1 099 OK\r\n\r\n"),
     2,
     HM_EINVAL_HEAD,
     HM_OK,
     0,
     {0},
     {{0}}},
    {"non-digit status", S("HTTP/1.1 2x0 OK\r\n\r\n"), 2, HM_EINVAL_HEAD, HM_OK, 0, {0}, {{0}}},
    {"no space after status", S("HTTP/1.1 200OK\r\n\r\n"), 2, HM_EINVAL_HEAD, HM_OK, 0, {0}, {{0}}},
    {"status line without reason space",
     S("HTTP/1.1 200\r\n\r\n"),
     2,
     HM_EINVAL_HEAD,
     HM_OK,
     0,
     {0},
     {{0}}},
    {"truncated status line", S("HTTP/1.1 200 OK"), 2, HM_EINVAL_HEAD, HM_OK, 0, {0}, {{0}}},
    {"no final CRLF", S("HTTP/1.1 200 OK\r\n"), 2, HM_EINVAL_HEAD, HM_OK, 0, {0}, {{0}}},
    {"no final CRLF after a field",
     S("HTTP/1.1 200 OK\r\nA: b\r\n"),
     2,
     HM_EINVAL_HEAD,
     HM_OK,
     0,
     {0},
     {{0}}},
    {"half a final CRLF", S("HTTP/1.1 200 OK\r\n\r"), 2, HM_EINVAL_HEAD, HM_OK, 0, {0}, {{0}}},
    {"trailing byte", S("HTTP/1.1 200 OK\r\n\r\nX"), 2, HM_EINVAL_HEAD, HM_OK, 0, {0}, {{0}}},
    {"trailing CRLF", S("HTTP/1.1 200 OK\r\n\r\n\r\n"), 2, HM_EINVAL_HEAD, HM_OK, 0, {0}, {{0}}},
    {"bare LF ends the status line",
     S("HTTP/1.1 200 OK\n\r\n"),
     2,
     HM_EINVAL_HEAD,
     HM_OK,
     0,
     {0},
     {{0}}},
    {"bare LF in the reason",
     S("HTTP/1.1 200 O\nK\r\n\r\n"),
     2,
     HM_EINVAL_HEAD,
     HM_OK,
     0,
     {0},
     {{0}}},
    {"bare CR in the reason",
     S("HTTP/1.1 200 O\rK\r\n\r\n"),
     2,
     HM_EINVAL_HEAD,
     HM_OK,
     0,
     {0},
     {{0}}},
    {"bare CR in a value",
     S("HTTP/1.1 200 OK\r\nA: b\rc\r\n\r\n"),
     2,
     HM_EINVAL_HEAD,
     HM_OK,
     0,
     {0},
     {{0}}},
    {"CR CR LF in a value",
     S("HTTP/1.1 200 OK\r\nA: b\r\r\n\r\n"),
     2,
     HM_EINVAL_HEAD,
     HM_OK,
     0,
     {0},
     {{0}}},
    {"bare CR swallowing the next byte in the reason",
     S("HTTP/1.1 200 O\rX\r\n"),
     2,
     HM_EINVAL_HEAD,
     HM_OK,
     0,
     {0},
     {{0}}},
    {"bare CR swallowing the next byte in a value",
     S("HTTP/1.1 200 OK\r\nA: b\rX\r\n"),
     2,
     HM_EINVAL_HEAD,
     HM_OK,
     0,
     {0},
     {{0}}},
    {"bare LF in a value",
     S("HTTP/1.1 200 OK\r\nA: b\nc\r\n\r\n"),
     2,
     HM_EINVAL_HEAD,
     HM_OK,
     0,
     {0},
     {{0}}},
    {"field line ended by LF",
     S("HTTP/1.1 200 OK\r\nA: b\n\r\n"),
     2,
     HM_EINVAL_HEAD,
     HM_OK,
     0,
     {0},
     {{0}}},
    {"final line is a bare LF",
     S("HTTP/1.1 200 OK\r\nA: b\r\n\n"),
     2,
     HM_EINVAL_HEAD,
     HM_OK,
     0,
     {0},
     {{0}}},
    {"bare CR at the very end",
     S("HTTP/1.1 200 OK\r\nA: b\r"),
     2,
     HM_EINVAL_HEAD,
     HM_OK,
     0,
     {0},
     {{0}}},
    {"no colon", S("HTTP/1.1 200 OK\r\nA b\r\n\r\n"), 2, HM_EINVAL_HEAD, HM_OK, 0, {0}, {{0}}},
    {"colon without space",
     S("HTTP/1.1 200 OK\r\nA:b\r\n\r\n"),
     2,
     HM_EINVAL_HEAD,
     HM_OK,
     0,
     {0},
     {{0}}},
    {"colon at the end of the line",
     S("HTTP/1.1 200 OK\r\nA:\r\n\r\n"),
     2,
     HM_EINVAL_HEAD,
     HM_OK,
     0,
     {0},
     {{0}}},
    {"colon and tab",
     S("HTTP/1.1 200 OK\r\nA:\tb\r\n\r\n"),
     2,
     HM_EINVAL_HEAD,
     HM_OK,
     0,
     {0},
     {{0}}},
    {"obs-fold continuation line",
     S("HTTP/1.1 200 OK\r\nA: b\r\n c\r\n\r\n"),
     4,
     HM_EINVAL_HEAD,
     HM_OK,
     0,
     {0},
     {{0}}},
    {"more lines than fields_cap/2",
     S("HTTP/1.1 200 OK\r\nA: 1\r\nB: 2\r\n\r\n"),
     3,
     HM_EINVAL_HEAD,
     HM_OK,
     0,
     {0},
     {{0}}},
    {"a line with fields_cap 0",
     S("HTTP/1.1 200 OK\r\nA: 1\r\n\r\n"),
     0,
     HM_EINVAL_HEAD,
     HM_OK,
     0,
     {0},
     {{0}}},
    {"fields_cap 1 holds no line",
     S("HTTP/1.1 200 OK\r\nA: 1\r\n\r\n"),
     1,
     HM_EINVAL_HEAD,
     HM_OK,
     0,
     {0},
     {{0}}},
};

static void check_parse_row(const parse_row_t *row)
{
  guard_t g = guard_copy(row->head.base, row->head.len);
  hm_str_t fields[4];
  static const char body[] = "body";
  hm_response_t res = {7, S("sentinel"), NULL, 99, {body, 4}, HM_FRAMING_CHUNKED};
  const hm_err_t err = hm_parse_head(g.p, row->head.len, &res, fields, row->fields_cap);
  if (!tap_ok(err == row->parse, "parse_head: %s is %s", row->name, hm_err_name(row->parse))) {
    tap_diag("  got %s", hm_err_name(err));
    guard_free(g);
    return;
  }
  if (err != HM_OK) {
    tap_ok(res.status == 7 && res.num_headers == 99 && res.headers == NULL && res.reason.len == 8,
           "  response untouched on failure");
    guard_free(g);
    return;
  }
  int same = res.status == (unsigned)((row->head.base[9] - '0') * 100 +
                                      (row->head.base[10] - '0') * 10 + row->head.base[11] - '0');
  same = same && res.num_headers == row->num_headers && res.headers == fields;
  same = same && res.body.base == body && res.body.len == 4 && res.framing == HM_FRAMING_CHUNKED;
  tap_ok(same, "  status, count, fields pointer, body and framing");
  tap_mem_eq(res.reason.base, res.reason.len, row->want_reason.base, row->want_reason.len,
             "  reason");
  tap_ok(res.reason.base != NULL, "  reason view is never NULL (NULL would mean default)");
  for (size_t i = 0; i < 2 * row->num_headers; i++) {
    tap_mem_eq(fields[i].base, fields[i].len, row->want_fields[i].base, row->want_fields[i].len,
               i % 2 ? "  value" : "  name");
  }
  size_t len;
  tap_int_eq(hm_measure(&res, &len), row->measure, "  measure of the parsed head");
  /* The one-pass check accepts exactly what parse and measure accept. */
  tap_ok((hm_check_head(g.p, row->head.len, row->num_headers) == HM_OK) == (row->measure == HM_OK),
         "  check_head agrees with parse_head + measure");
  tap_ok(hm_check_head(g.p, row->head.len, row->num_headers + 1) != HM_OK,
         "  check_head rejects a wrong line count");
  guard_free(g);
}

/* hm_block_parts + hm_write_parts: a cached block with its Content-Length
 * hole filled, or framing the body as one chunk and the last chunk. */
static void test_block_parts(void)
{
  static const char holed[] = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n";
  const size_t hl = sizeof(holed) - 1;
  const size_t hole = hl - 5;
  hm_parts_t parts;
  char out[128];
  size_t written = 0;
  tap_int_eq(hm_block_parts(holed, hl, hole, V("12"), V("hello world!"), HM_FRAMING_RAW, &parts),
             HM_OK, "block_parts: raw with a hole");
  tap_int_eq(hm_write_parts(&parts, out, parts.total, &written), HM_OK, "  written");
  tap_mem_eq(out, written, "HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\nhello world!", hl + 1 + 12,
             "  bytes");
  tap_int_eq(hm_write_parts(&parts, out, parts.total - 1, &written), HM_E2BIG,
             "  a short buffer is HM_E2BIG");
  tap_int_eq(hm_write_parts(&parts, out, parts.total + 1, &written), HM_EINVAL_ARG,
             "  a long buffer is HM_EINVAL_ARG");
  tap_int_eq(hm_block_parts(holed, hl, hole, V("1\r2"), V(""), HM_FRAMING_RAW, &parts),
             HM_EINVAL_VALUE, "block_parts: a CR in the length is HM_EINVAL_VALUE");
  tap_int_eq(hm_block_parts(holed, hl, hole, V(""), V(""), HM_FRAMING_RAW, &parts), HM_EINVAL_VALUE,
             "block_parts: an empty length is HM_EINVAL_VALUE");
  tap_int_eq(hm_block_parts(holed, hl, hole - 1, V("1"), V(""), HM_FRAMING_RAW, &parts),
             HM_EINVAL_ARG, "block_parts: a hole not on the placeholder is HM_EINVAL_ARG");
  tap_int_eq(hm_block_parts(holed, hl, HM_NO_HOLE, V("1"), V(""), HM_FRAMING_RAW, &parts),
             HM_EINVAL_ARG, "block_parts: raw framing needs a hole");

  static const char chunked[] = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
  const size_t cl = sizeof(chunked) - 1;
  tap_int_eq(hm_block_parts(chunked, cl, HM_NO_HOLE, V(""), V("0123456789abcdefg"),
                            HM_FRAMING_CHUNKED, &parts),
             HM_OK, "block_parts: chunked");
  tap_int_eq(hm_write_parts(&parts, out, parts.total, &written), HM_OK, "  written");
  static const char want[] = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                             "11\r\n0123456789abcdefg\r\n0\r\n\r\n";
  tap_mem_eq(out, written, want, sizeof(want) - 1, "  one chunk (hex size) and the last chunk");
  tap_int_eq(hm_block_parts(chunked, cl, HM_NO_HOLE, V(""), V(""), HM_FRAMING_CHUNKED, &parts),
             HM_OK, "block_parts: chunked, empty body");
  tap_int_eq(hm_write_parts(&parts, out, parts.total, &written), HM_OK, "  written");
  static const char last[] = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n";
  tap_mem_eq(out, written, last, sizeof(last) - 1, "  the last chunk alone");
  tap_int_eq(hm_block_parts(chunked, cl, 3, V(""), V("x"), HM_FRAMING_CHUNKED, &parts),
             HM_EINVAL_ARG, "block_parts: chunked framing takes no hole");
  tap_int_eq(hm_block_parts(chunked, cl, HM_NO_HOLE, V("1"), V("x"), HM_FRAMING_CHUNKED, &parts),
             HM_EINVAL_ARG, "block_parts: chunked framing takes no length");
  tap_int_eq(hm_block_parts(chunked, cl, HM_NO_HOLE, V(""), (hm_str_t){"x", SIZE_MAX - 8},
                            HM_FRAMING_CHUNKED, &parts),
             HM_EOVERFLOW, "block_parts: a total past SIZE_MAX is HM_EOVERFLOW");
  tap_int_eq(hm_block_parts(NULL, 0, HM_NO_HOLE, V(""), V(""), HM_FRAMING_CHUNKED, &parts),
             HM_EINVAL_ARG, "block_parts: a NULL block is HM_EINVAL_ARG");
}

/* hm_write_head writes head then body into a buffer of exactly that size. */
static void test_write_head(void)
{
  static const char head[] = "HTTP/1.1 200 OK\r\nA: b\r\n\r\n";
  const size_t hl = sizeof(head) - 1;
  const hm_str_t body = S("xyz");
  guard_t g = guard_alloc(hl + 3);
  size_t written = 0;
  tap_int_eq(hm_write_head(head, hl, 1, body, g.p, hl + 3, &written), HM_OK, "write_head: ok");
  tap_mem_eq(g.p, written, "HTTP/1.1 200 OK\r\nA: b\r\n\r\nxyz", hl + 3, "  bytes");
  tap_int_eq(hm_write_head(head, hl, 1, body, g.p, hl + 2, &written), HM_E2BIG,
             "write_head: short buffer is HM_E2BIG");
  tap_int_eq(hm_write_head(head, hl, 2, body, g.p, hl + 3, &written), HM_EINVAL_HEAD,
             "write_head: wrong count is HM_EINVAL_HEAD");
  static const char inj[] = "HTTP/1.1 200 OK\r\nA: b\r\nX: y\r\n\r\n";
  tap_int_eq(hm_check_head(inj, sizeof(inj) - 1, 1), HM_EINVAL_HEAD,
             "check_head: an injected line breaks the count");
  static const char bad[] = "HTTP/1.1 200 OK\r\nA: b\x01\r\n\r\n";
  tap_int_eq(hm_check_head(bad, sizeof(bad) - 1, 1), HM_EINVAL_VALUE,
             "check_head: a control char in a value is HM_EINVAL_VALUE");
  static const char lf[] = "HTTP/1.1 200 OK\r\nA: b\nC: d\r\n\r\n";
  tap_ok(hm_check_head(lf, sizeof(lf) - 1, 1) != HM_OK, "check_head: a bare LF is rejected");
  tap_int_eq(hm_check_head(NULL, 0, 0), HM_EINVAL_ARG, "check_head(NULL) is HM_EINVAL_ARG");
  guard_free(g);
}

/* A joined field list that splits differently than it was joined always
 * holds a NUL, CR or LF in a name or value, and is rejected. */
typedef struct {
  const char *name;
  hm_str_t fields;
  size_t num_headers;
  hm_err_t want;
} joined_row_t;

static const joined_row_t joined_rows[] = {
    {"no lines", S(""), 0, HM_OK},
    {"one line", S("A\0b\r\n"), 1, HM_OK},
    {"empty value", S("A\0\r\n"), 1, HM_OK},
    {"a value with punctuation and HTAB", S("A\0b: c; d=\"e\"\t\r\n"), 1, HM_OK},
    {"one line more than counted", S("A\0b\r\nC\0d\r\n"), 1, HM_EINVAL_HEAD},
    {"one line fewer than counted", S("A\0b\r\n"), 2, HM_EINVAL_HEAD},
    {"a value with CR LF and a line in it", S("A\0b\r\nC\0d\r\n"), 2, HM_OK},
    {"the same bytes counted as one line (a value with CR LF)", S("A\0b\r\nC\0d\r\n"), 1,
     HM_EINVAL_HEAD},
    {"a NUL in a value", S("A\0b\0c\r\n"), 1, HM_EINVAL_VALUE},
    {"a NUL in a name moves the rest into the value", S("A\0B\0c\r\n"), 1, HM_EINVAL_VALUE},
    {"a name with ': ' (name 'X: y')", S("X: y\0z\r\n"), 1, HM_EINVAL_NAME},
    {"an empty name", S("\0b\r\n"), 1, HM_EINVAL_NAME},
    {"a line without a NUL", S("A: b\r\n"), 1, HM_EINVAL_NAME},
    {"a bare LF in a value", S("A\0b\nc\r\n"), 1, HM_EINVAL_VALUE},
    {"a bare CR in a value", S("A\0b\rc\r\n"), 1, HM_EINVAL_VALUE},
    {"no CR LF at the end", S("A\0b"), 1, HM_EINVAL_HEAD},
    {"LF without CR at the end", S("A\0bcd\n"), 1, HM_EINVAL_VALUE},
    {"a name running to the end", S("Abcd"), 1, HM_EINVAL_HEAD},
    {"bytes after the last line", S("A\0b\r\nC"), 1, HM_EINVAL_HEAD},
    {"a count the bytes cannot hold", S("A\0b\r\n"), 1000, HM_EINVAL_HEAD},
    {"DEL in a value", S("A\0b\x7f\r\n"), 1, HM_EINVAL_VALUE},
    {"latin1 in a value", S("A\0caf\xe9\r\n"), 1, HM_OK},
    {"latin1 in a name", S("caf\xe9\0x\r\n"), 1, HM_EINVAL_NAME},
};

static void test_serialize_joined(void)
{
  for (size_t r = 0; r < sizeof(joined_rows) / sizeof(joined_rows[0]); r++) {
    const joined_row_t *row = &joined_rows[r];
    guard_t fields = guard_copy(row->fields.base, row->fields.len);
    hm_str_t views[4];
    hm_response_t res = {200, NO_REASON, NULL, row->num_headers, S("xy"), HM_FRAMING_RAW};
    char dst[256];
    size_t len = 0;
    hm_err_t err =
        hm_serialize_joined(&res, fields.p, row->fields.len, views, dst, sizeof(dst), &len);
    if (!tap_int_eq(err, row->want, row->name))
      tap_diag("  got %s", hm_err_name(err));
    if (err == HM_OK) {
      /* The same bytes as hm_write() for the views it split. */
      res.headers = views;
      char again[256];
      size_t written = 0;
      tap_ok(hm_write(&res, again, sizeof(again), &written) == HM_OK &&
                 tap_mem_eq(dst, len, again, written, "  same bytes as hm_write()"),
             "  hm_write() agrees");
    }
    guard_free(fields);
  }

  /* Every proper prefix of a joined list is rejected. */
  static const char full[] = "A\0b\r\nCc\0d: e\r\n";
  int prefixes_rejected = 1;
  for (size_t n = 0; n + 1 < sizeof(full); n++) {
    guard_t g = guard_copy(full, n);
    hm_str_t views[4];
    hm_response_t res = {200, NO_REASON, NULL, 2, {0}, HM_FRAMING_RAW};
    size_t len = 0;
    hm_err_t err = hm_serialize_joined(&res, g.p, n, views, NULL, 0, &len);
    prefixes_rejected = prefixes_rejected && err != HM_OK && err != HM_E2BIG;
    guard_free(g);
  }
  tap_ok(prefixes_rejected, "serialize_joined: every proper prefix is rejected");

  static const char one[] = "A\0b\r\n";
  hm_str_t views[2];
  hm_response_t res = {200, NO_REASON, NULL, 1, {0}, HM_FRAMING_RAW};
  size_t len = 77;
  char dst[64];
  tap_int_eq(hm_serialize_joined(NULL, one, 5, views, dst, sizeof(dst), &len), HM_EINVAL_ARG,
             "serialize_joined(NULL res) is HM_EINVAL_ARG");
  tap_int_eq(hm_serialize_joined(&res, one, 5, views, dst, sizeof(dst), NULL), HM_EINVAL_ARG,
             "serialize_joined(NULL len) is HM_EINVAL_ARG");
  tap_int_eq(hm_serialize_joined(&res, NULL, 5, views, dst, sizeof(dst), &len), HM_EINVAL_ARG,
             "serialize_joined(NULL fields) is HM_EINVAL_ARG");
  tap_int_eq(hm_serialize_joined(&res, one, 5, NULL, dst, sizeof(dst), &len), HM_EINVAL_ARG,
             "serialize_joined(NULL views) is HM_EINVAL_ARG");
  tap_int_eq(hm_serialize_joined(&res, one, 5, views, NULL, 8, &len), HM_EINVAL_ARG,
             "serialize_joined(NULL dst with a length) is HM_EINVAL_ARG");
  const hm_str_t hdr[2] = {S("A"), S("b")};
  res.headers = hdr;
  tap_int_eq(hm_serialize_joined(&res, one, 5, views, dst, sizeof(dst), &len), HM_EINVAL_ARG,
             "serialize_joined with res->headers set is HM_EINVAL_ARG");
  tap_int_eq((long long)len, 77, "  *len untouched on errors");

  /* The size check comes before any write: a joined size that overflows. */
  hm_response_t big = {200, NO_REASON, NULL, 1, {one, SIZE_MAX - 22}, HM_FRAMING_RAW};
  tap_int_eq(hm_serialize_joined(&big, one, 5, views, NULL, 0, &len), HM_EOVERFLOW,
             "serialize_joined: a size past SIZE_MAX is HM_EOVERFLOW");
}

static void test_parse_args(void)
{
  hm_response_t res;
  hm_str_t fields[4];
  tap_int_eq(hm_parse_head(NULL, 0, &res, fields, 2), HM_EINVAL_ARG,
             "parse_head(NULL head) is HM_EINVAL_ARG");
  tap_int_eq(hm_parse_head("HTTP/1.1 200 OK\r\n\r\n", 19, NULL, fields, 2), HM_EINVAL_ARG,
             "parse_head(NULL res) is HM_EINVAL_ARG");
  tap_int_eq(hm_parse_head("HTTP/1.1 200 OK\r\n\r\n", 19, &res, NULL, 2), HM_EINVAL_ARG,
             "parse_head(NULL fields, cap 2) is HM_EINVAL_ARG");
  tap_int_eq(hm_parse_head("HTTP/1.1 200 OK\r\n\r\n", 19, &res, NULL, 0), HM_OK,
             "parse_head(NULL fields, cap 0) with no lines is HM_OK");

  /* Every proper prefix of a valid head is rejected. */
  static const char full[] = "HTTP/1.1 200 OK\r\nA: b\r\nC: d: e\r\n\r\n";
  int prefixes_rejected = 1;
  for (size_t n = 0; n + 1 < sizeof(full); n++) {
    guard_t g = guard_copy(full, n);
    prefixes_rejected =
        prefixes_rejected && hm_parse_head(g.p, n, &res, fields, 4) == HM_EINVAL_HEAD;
    guard_free(g);
  }
  tap_ok(prefixes_rejected, "every proper prefix of a head is HM_EINVAL_HEAD");
  guard_t g = guard_copy(full, sizeof(full) - 1);
  tap_int_eq(hm_parse_head(g.p, sizeof(full) - 1, &res, fields, 4), HM_OK,
             "  while the whole head parses");
  guard_free(g);
}

/* ---- the binding's arena (src/arena.h) ---------------------------------- */

static void test_arena(void)
{
  /* hb_grow(): doubling from 64 elements, untouched when it already fits,
   * refused (and untouched) when the byte size would overflow. */
  int *arr = NULL;
  size_t cap = 0;
  tap_ok(hb_grow((void **)&arr, &cap, 3, sizeof *arr) && arr != NULL && cap == 64,
         "hb_grow: the first growth allocates 64 elements");
  int *before = arr;
  tap_ok(hb_grow((void **)&arr, &cap, 64, sizeof *arr) && arr == before && cap == 64,
         "hb_grow: a need that fits leaves the array alone");
  tap_ok(hb_grow((void **)&arr, &cap, 65, sizeof *arr) && cap == 128, "hb_grow: doubles");
  tap_ok(!hb_grow((void **)&arr, &cap, SIZE_MAX / 2, sizeof *arr) && cap == 128,
         "hb_grow: an element count whose bytes overflow size_t is refused, untouched");
  tap_ok(!hb_grow((void **)&arr, &cap, SIZE_MAX, sizeof *arr) && cap == 128,
         "hb_grow: SIZE_MAX elements are refused, untouched");
  free(arr);

  /* hb_arena_reserve(): at least HB_ARENA_MIN, keeps the bytes in use,
   * refuses used + extra past SIZE_MAX. */
  hb_arena_t a = {NULL, 0};
  tap_ok(hb_arena_reserve(&a, 0, 1) && a.base != NULL && a.cap == HB_ARENA_MIN,
         "hb_arena_reserve: the first block is HB_ARENA_MIN bytes");
  memcpy(a.base, "kept", 4);
  tap_ok(hb_arena_reserve(&a, 4, HB_ARENA_MIN) && a.cap >= HB_ARENA_MIN + 4 &&
             memcmp(a.base, "kept", 4) == 0,
         "hb_arena_reserve: growth keeps the bytes in use");
  const size_t kept = a.cap;
  tap_ok(!hb_arena_reserve(&a, SIZE_MAX - 2, 3) && a.cap == kept,
         "hb_arena_reserve: used + extra past SIZE_MAX is refused, untouched");
  hb_arena_trim(&a);
  tap_ok(a.base != NULL && a.cap == kept, "hb_arena_trim: a block up to KEEP_MAX stays");
  tap_ok(hb_arena_reserve(&a, 0, HB_ARENA_KEEP_MAX + 1) && a.cap > HB_ARENA_KEEP_MAX,
         "hb_arena_reserve: grows past KEEP_MAX for one large string");
  hb_arena_trim(&a);
  tap_ok(a.base == NULL && a.cap == 0, "hb_arena_trim: a larger block is released");
  hb_arena_free(&a);
}

int main(void)
{
  test_write_head();
  test_block_parts();
  printf("TAP version 13\n");
  for (size_t i = 0; i < sizeof(ok_rows) / sizeof(ok_rows[0]); i++)
    check_ok_row(&ok_rows[i]);
  for (size_t i = 0; i < sizeof(err_rows) / sizeof(err_rows[0]); i++)
    check_err_row(&err_rows[i]);
  test_bad_arguments();
  test_overflow();
  test_all_bytes();
  test_default_reasons();
  test_error_names();
  test_helpers();
  for (size_t i = 0; i < sizeof(parse_rows) / sizeof(parse_rows[0]); i++)
    check_parse_row(&parse_rows[i]);
  test_parse_args();
  test_serialize_joined();
  test_arena();
  return tap_done();
}
