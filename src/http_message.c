/* http_message: the response serializer. See http_message.h for the contract.
 *
 * Every public entry point validates first and only then touches its
 * out-parameters, so a rejected response leaves the caller's memory as it was.
 * Sizes are summed through hm__add() alone, which refuses to wrap; the writers
 * below take a `d`/`end` pair and assert that each copy fits, because
 * hm_write() has already checked the whole size against the buffer.
 */
#include "http_message.h"

#include <assert.h>
#include <stdint.h>
#include <string.h>

/* The fixed parts of the output. */
#define HM__VERSION     "HTTP/1.1 "
#define HM__CRLF        "\r\n"
#define HM__SEP         ": "
#define HM__LAST_CHUNK  "0\r\n\r\n"
#define HM__LITLEN(lit) (sizeof(lit) - 1)

/* A size_t needs at most two hex digits per byte; the chunk-size writer relies
 * on this bound when it counts digits. */
#define HM__SIZE_HEX_LONGEST (sizeof(size_t) * 2)
_Static_assert(sizeof(size_t) <= 8, "HM__SIZE_HEX_LONGEST assumes at most a 64-bit size_t");

/* RFC 9110 tchar, as Node's checkIsHttpToken accepts it: ALPHA, DIGIT and
 * ! # $ % & ' * + - . ^ _ ` | ~ (lib/_http_common.js tokenRegExp). */
static const unsigned char hm__token_table[256] = {
    /* 0x00 */ 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    /* 0x10 */ 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    /* 0x20    SP !  "  #  $  %  &  '  (  )  *  +  ,  -  .  / */
    /* 0x20 */ 0, 1, 0, 1, 1, 1, 1, 1, 0, 0, 1, 1, 0, 1, 1, 0,
    /* 0x30    0  1  2  3  4  5  6  7  8  9  :  ;  <  =  >  ? */
    /* 0x30 */ 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0,
    /* 0x40    @  A-O */
    /* 0x40 */ 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    /* 0x50    P-Z                       [  \  ]  ^  _ */
    /* 0x50 */ 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 1, 1,
    /* 0x60    `  a-o */
    /* 0x60 */ 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    /* 0x70    p-z                       {  |  }  ~  DEL */
    /* 0x70 */ 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 0, 1, 0,
    /* 0x80..0xFF are not tokens; the remaining entries are zero. */
};

/* The bytes Node's checkInvalidHeaderChar lets through: HTAB, 0x20..0x7E and
 * 0x80..0xFF (lib/_http_common.js headerCharRegex). */
static const unsigned char hm__field_table[256] = {
    /* 0x00 */ 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0,
    /* 0x10 */ 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    /* 0x20 */ 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    /* 0x30 */ 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    /* 0x40 */ 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    /* 0x50 */ 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    /* 0x60 */ 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    /* 0x70 */ 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0,
    /* 0x80 */ 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    /* 0x90 */ 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    /* 0xA0 */ 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    /* 0xB0 */ 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    /* 0xC0 */ 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    /* 0xD0 */ 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    /* 0xE0 */ 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    /* 0xF0 */ 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
};

const char *hm_err_name(hm_err_t err)
{
  switch (err) {
  case HM_OK:
    return "HM_OK";
#define HM__NAME_GEN(name, _) \
  case HM_##name:             \
    return "HM_" #name;
    HM_ERRNO_MAP(HM__NAME_GEN)
#undef HM__NAME_GEN
  }
  return "HM_UNKNOWN";
}

const char *hm_strerror(hm_err_t err)
{
  switch (err) {
  case HM_OK:
    return "success";
#define HM__STR_GEN(name, msg) \
  case HM_##name:              \
    return msg;
    HM_ERRNO_MAP(HM__STR_GEN)
#undef HM__STR_GEN
  }
  return "unknown error";
}

/* The phrase Node's http.STATUS_CODES gives `status`, with its length, or
 * "unknown" as writeHead uses for unlisted codes (lib/_http_server.js).
 * Long because it is the table itself, one case per code
 * (test/c/test_http_message.c, test_default_reasons()). */
static hm_str_t hm__default_reason(unsigned status)
{
#define HM__R(lit)       \
  {                      \
    lit, HM__LITLEN(lit) \
  }
  switch (status) {
#define HM__CASE(code, lit)        \
  case code: {                     \
    const hm_str_t r = HM__R(lit); \
    return r;                      \
  }
    HM__CASE(100, "Continue")
    HM__CASE(101, "Switching Protocols")
    HM__CASE(102, "Processing")
    HM__CASE(103, "Early Hints")
    HM__CASE(200, "OK")
    HM__CASE(201, "Created")
    HM__CASE(202, "Accepted")
    HM__CASE(203, "Non-Authoritative Information")
    HM__CASE(204, "No Content")
    HM__CASE(205, "Reset Content")
    HM__CASE(206, "Partial Content")
    HM__CASE(207, "Multi-Status")
    HM__CASE(208, "Already Reported")
    HM__CASE(226, "IM Used")
    HM__CASE(300, "Multiple Choices")
    HM__CASE(301, "Moved Permanently")
    HM__CASE(302, "Found")
    HM__CASE(303, "See Other")
    HM__CASE(304, "Not Modified")
    HM__CASE(305, "Use Proxy")
    HM__CASE(307, "Temporary Redirect")
    HM__CASE(308, "Permanent Redirect")
    HM__CASE(400, "Bad Request")
    HM__CASE(401, "Unauthorized")
    HM__CASE(402, "Payment Required")
    HM__CASE(403, "Forbidden")
    HM__CASE(404, "Not Found")
    HM__CASE(405, "Method Not Allowed")
    HM__CASE(406, "Not Acceptable")
    HM__CASE(407, "Proxy Authentication Required")
    HM__CASE(408, "Request Timeout")
    HM__CASE(409, "Conflict")
    HM__CASE(410, "Gone")
    HM__CASE(411, "Length Required")
    HM__CASE(412, "Precondition Failed")
    HM__CASE(413, "Payload Too Large")
    HM__CASE(414, "URI Too Long")
    HM__CASE(415, "Unsupported Media Type")
    HM__CASE(416, "Range Not Satisfiable")
    HM__CASE(417, "Expectation Failed")
    HM__CASE(418, "I'm a Teapot")
    HM__CASE(421, "Misdirected Request")
    HM__CASE(422, "Unprocessable Entity")
    HM__CASE(423, "Locked")
    HM__CASE(424, "Failed Dependency")
    HM__CASE(425, "Too Early")
    HM__CASE(426, "Upgrade Required")
    HM__CASE(428, "Precondition Required")
    HM__CASE(429, "Too Many Requests")
    HM__CASE(431, "Request Header Fields Too Large")
    HM__CASE(451, "Unavailable For Legal Reasons")
    HM__CASE(500, "Internal Server Error")
    HM__CASE(501, "Not Implemented")
    HM__CASE(502, "Bad Gateway")
    HM__CASE(503, "Service Unavailable")
    HM__CASE(504, "Gateway Timeout")
    HM__CASE(505, "HTTP Version Not Supported")
    HM__CASE(506, "Variant Also Negotiates")
    HM__CASE(507, "Insufficient Storage")
    HM__CASE(508, "Loop Detected")
    HM__CASE(509, "Bandwidth Limit Exceeded")
    HM__CASE(510, "Not Extended")
    HM__CASE(511, "Network Authentication Required")
#undef HM__CASE
  default: {
    const hm_str_t r = HM__R("unknown");
    return r;
  }
  }
#undef HM__R
}

const char *hm_default_reason(unsigned status)
{
  return hm__default_reason(status).base;
}

/* Adds `n` to `*total`, or reports HM_EOVERFLOW leaving `*total` as it was.
 * This is the only place sizes are summed. */
static hm_err_t hm__add(size_t *total, size_t n)
{
  if (n > SIZE_MAX - *total)
    return HM_EOVERFLOW;
  *total += n;
  return HM_OK;
}

/* A view is usable when it has bytes behind it or is empty. */
static int hm__str_ok(hm_str_t s)
{
  return s.base != NULL || s.len == 0;
}

/* Word-at-a-time scanning of field chars (values, reasons). A run of field chars ends at
 * the first byte below 0x20 (CR, LF, controls and HTAB, which the byte loop
 * then judges) or at DEL; bytes 0x80..0xFF continue the run. The tests
 * below are exact about whether such a byte is present (Bit Twiddling
 * Hacks, "Determine if a word has a byte less than n"), so whole words
 * without one are skipped and the rest is left to the table.
 * Refs: benchmark/core.c (callgrind, check of a 150-byte head) */
#define HM__ONES UINT64_C(0x0101010101010101)
#define HM__HIGH UINT64_C(0x8080808080808080)

static uint64_t hm__field_stop(uint64_t w)
{
  const uint64_t del = w ^ (HM__ONES * 0x7F);
  return ((w - HM__ONES * 0x20) & ~w & HM__HIGH) | ((del - HM__ONES) & ~del & HM__HIGH);
}

static const unsigned char *hm__skip_field_chars(const unsigned char *p, const unsigned char *end)
{
  while (end - p >= 8) {
    uint64_t w;
    memcpy(&w, p, sizeof w);
    if (hm__field_stop(w) != 0)
      break;
    p += 8;
  }
  while (p < end && hm__field_table[*p])
    p++;
  return p;
}

static int hm__all_field_chars(hm_str_t s)
{
  /* An empty view may have a NULL base; no pointer arithmetic on it. */
  if (s.len == 0)
    return 1;
  const unsigned char *p = (const unsigned char *)s.base;
  return hm__skip_field_chars(p, p + s.len) == p + s.len;
}

static int hm__is_token(hm_str_t s)
{
  if (s.len == 0)
    return 0;
  const unsigned char *p = (const unsigned char *)s.base;
  for (size_t i = 0; i < s.len; i++) {
    if (!hm__token_table[p[i]])
      return 0;
  }
  return 1;
}

/* The number of lowercase hex digits `n` takes, at least one. */
static size_t hm__hex_len(size_t n)
{
  size_t digits = 1;
  while (n > 15) {
    n >>= 4;
    digits++;
  }
  assert(digits <= HM__SIZE_HEX_LONGEST);
  return digits;
}

/* The reason phrase the response will carry: its own, or the default. */
static hm_str_t hm__reason(const hm_response_t *res)
{
  return res->reason.base != NULL ? res->reason : hm__default_reason(res->status);
}

/* Rejects malformed arguments: NULL pointers, views without bytes behind them,
 * an unknown framing, or a header count that cannot be indexed. */
static hm_err_t hm__check_args(const hm_response_t *res, const size_t *len)
{
  if (res == NULL || len == NULL)
    return HM_EINVAL_ARG;
  if (res->framing != HM_FRAMING_RAW && res->framing != HM_FRAMING_CHUNKED)
    return HM_EINVAL_ARG;
  if (!hm__str_ok(res->body))
    return HM_EINVAL_ARG;
  /* Two views per header must be addressable, or headers[2 * i] would wrap. */
  if (res->num_headers > SIZE_MAX / (2 * sizeof(hm_str_t)))
    return HM_EINVAL_ARG;
  if (res->headers == NULL && res->num_headers != 0)
    return HM_EINVAL_ARG;
  return HM_OK;
}

/* Validates one header line and adds `name: value\r\n` to `*total`. */
static hm_err_t hm__size_header(hm_str_t name, hm_str_t value, size_t *total)
{
  if (!hm__str_ok(name) || !hm__str_ok(value))
    return HM_EINVAL_ARG;
  if (!hm__is_token(name))
    return HM_EINVAL_NAME;
  if (!hm__all_field_chars(value))
    return HM_EINVAL_VALUE;
  hm_err_t err;
  if ((err = hm__add(total, name.len)) != HM_OK ||
      (err = hm__add(total, HM__LITLEN(HM__SEP))) != HM_OK ||
      (err = hm__add(total, value.len)) != HM_OK)
    return err;
  return hm__add(total, HM__LITLEN(HM__CRLF));
}

/* Adds the framed body to `*total`: the raw bytes, or for chunked framing
 * `<hex len>\r\n<body>\r\n` (only for a non-empty body) then `0\r\n\r\n`. */
static hm_err_t hm__size_body(const hm_response_t *res, size_t *total)
{
  if (res->framing != HM_FRAMING_CHUNKED)
    return hm__add(total, res->body.len);
  hm_err_t err;
  if (res->body.len > 0) {
    if ((err = hm__add(total, hm__hex_len(res->body.len))) != HM_OK ||
        (err = hm__add(total, HM__LITLEN(HM__CRLF))) != HM_OK ||
        (err = hm__add(total, res->body.len)) != HM_OK ||
        (err = hm__add(total, HM__LITLEN(HM__CRLF))) != HM_OK)
      return err;
  }
  return hm__add(total, HM__LITLEN(HM__LAST_CHUNK));
}

/* Validates `res` and computes its serialized size; shared by hm_measure()
 * and hm_write() so both reject exactly the same inputs. Checks run in output
 * order, so the first offending part decides the error. */
static hm_err_t hm__validate_and_size(const hm_response_t *res, size_t *len)
{
  hm_err_t err = hm__check_args(res, len);
  if (err != HM_OK)
    return err;
  if (res->status < 100 || res->status > 999)
    return HM_EINVAL_STATUS;

  const hm_str_t reason = hm__reason(res);
  if (!hm__all_field_chars(reason))
    return HM_EINVAL_REASON;

  /* "HTTP/1.1 " + 3 digits + " " + reason + CRLF, then the header lines,
   * the empty line and the body. */
  size_t total = HM__LITLEN(HM__VERSION) + 3 + 1 + HM__LITLEN(HM__CRLF);
  if ((err = hm__add(&total, reason.len)) != HM_OK)
    return err;
  for (size_t i = 0; i < res->num_headers; i++) {
    if ((err = hm__size_header(res->headers[2 * i], res->headers[2 * i + 1], &total)) != HM_OK)
      return err;
  }
  if ((err = hm__add(&total, HM__LITLEN(HM__CRLF))) != HM_OK ||
      (err = hm__size_body(res, &total)) != HM_OK)
    return err;

  *len = total;
  return HM_OK;
}

hm_err_t hm_measure(const hm_response_t *res, size_t *len)
{
  return hm__validate_and_size(res, len);
}

/* Copies `n` bytes to `d`, which has room up to `end`; returns the new end. */
static char *hm__put(char *d, const char *end, const char *src, size_t n)
{
  assert(n <= (size_t)(end - d));
  (void)end;
  /* A body may be a view into the caller's free memory that `d` points
   * into as well (a slice of the output slab): memmove() is defined for
   * overlap, memcpy() is not. With a NULL source either is undefined even
   * for zero bytes. */
  if (n > 0)
    memmove(d, src, n);
  return d + n;
}

/* Writes the three decimal digits of `status` (100..999). */
static char *hm__put_status(char *d, const char *end, unsigned status)
{
  assert(status >= 100 && status <= 999);
  assert((size_t)(end - d) >= 3);
  (void)end;
  d[0] = (char)('0' + status / 100);
  d[1] = (char)('0' + status / 10 % 10);
  d[2] = (char)('0' + status % 10);
  return d + 3;
}

/* Writes `n` in lowercase hex without leading zeros, as Node's chunk-size
 * line does (`len.toString(16)` in lib/_http_outgoing.js). */
static char *hm__put_hex(char *d, const char *end, size_t n)
{
  static const char digits[] = "0123456789abcdef";
  const size_t len = hm__hex_len(n);
  assert(len <= (size_t)(end - d));
  (void)end;
  for (size_t i = len; i > 0; i--) {
    d[i - 1] = digits[n & 15];
    n >>= 4;
  }
  return d + len;
}

/* Writes `res`, which hm__validate_and_size() accepted with size `need`, to
 * `dst` (at least `need` bytes). */
static void hm__emit(const hm_response_t *res, char *dst, size_t need)
{
  char *d = dst;
  const char *const end = dst + need;
  const hm_str_t reason = hm__reason(res);

  d = hm__put(d, end, HM__VERSION, HM__LITLEN(HM__VERSION));
  d = hm__put_status(d, end, res->status);
  d = hm__put(d, end, " ", 1);
  d = hm__put(d, end, reason.base, reason.len);
  d = hm__put(d, end, HM__CRLF, HM__LITLEN(HM__CRLF));
  for (size_t i = 0; i < res->num_headers; i++) {
    const hm_str_t name = res->headers[2 * i];
    const hm_str_t value = res->headers[2 * i + 1];
    d = hm__put(d, end, name.base, name.len);
    d = hm__put(d, end, HM__SEP, HM__LITLEN(HM__SEP));
    d = hm__put(d, end, value.base, value.len);
    d = hm__put(d, end, HM__CRLF, HM__LITLEN(HM__CRLF));
  }
  d = hm__put(d, end, HM__CRLF, HM__LITLEN(HM__CRLF));

  if (res->framing == HM_FRAMING_CHUNKED) {
    if (res->body.len > 0) {
      d = hm__put_hex(d, end, res->body.len);
      d = hm__put(d, end, HM__CRLF, HM__LITLEN(HM__CRLF));
      d = hm__put(d, end, res->body.base, res->body.len);
      d = hm__put(d, end, HM__CRLF, HM__LITLEN(HM__CRLF));
    }
    d = hm__put(d, end, HM__LAST_CHUNK, HM__LITLEN(HM__LAST_CHUNK));
  } else {
    d = hm__put(d, end, res->body.base, res->body.len);
  }

  assert(d == end);
  (void)d;
}

hm_err_t hm_write(const hm_response_t *res, char *dst, size_t dst_len, size_t *written)
{
  size_t need;
  const hm_err_t err = hm__validate_and_size(res, &need);
  if (err != HM_OK)
    return err;
  if (dst == NULL || written == NULL)
    return HM_EINVAL_ARG;
  if (dst_len < need)
    return HM_E2BIG;
  hm__emit(res, dst, need);
  *written = need;
  return HM_OK;
}

/* Checks `len` bytes of `name NUL value CR LF` lines, exactly `num_headers`
 * of them, and stores each name and value in `views`. Names must be tokens
 * and values field chars, so the NUL ending a name and the CR LF ending a
 * value are the first byte outside those sets. */
static hm_err_t hm__split_joined(const char *fields, size_t len, size_t num_headers,
                                 hm_str_t *views)
{
  const unsigned char *p = (const unsigned char *)fields;
  const unsigned char *const end = p + len;
  for (size_t i = 0; i < num_headers; i++) {
    const unsigned char *name = p;
    while (p < end && hm__token_table[*p])
      p++;
    if (p == end)
      return HM_EINVAL_HEAD;
    if (*p != '\0' || p == name)
      return HM_EINVAL_NAME;
    const unsigned char *value = p + 1;
    p = hm__skip_field_chars(value, end);
    if (end - p < 2 || p[0] != '\r' || p[1] != '\n')
      return p == end ? HM_EINVAL_HEAD : HM_EINVAL_VALUE;
    views[2 * i].base = (const char *)name;
    views[2 * i].len = (size_t)(value - 1 - name);
    views[2 * i + 1].base = (const char *)value;
    views[2 * i + 1].len = (size_t)(p - value);
    p += 2;
  }
  return p == end ? HM_OK : HM_EINVAL_HEAD;
}

hm_err_t hm_serialize_joined(const hm_response_t *res, const char *fields, size_t fields_len,
                             hm_str_t *views, char *dst, size_t dst_len, size_t *len)
{
  if (res == NULL || len == NULL || res->headers != NULL || (fields == NULL && fields_len != 0) ||
      (views == NULL && res->num_headers != 0) || (dst == NULL && dst_len != 0))
    return HM_EINVAL_ARG;
  /* The other argument checks and the status and reason, in output order,
   * as hm_measure() makes them for a response without header lines. */
  hm_response_t head = *res;
  head.num_headers = 0;
  size_t need;
  hm_err_t err = hm__validate_and_size(&head, &need);
  if (err != HM_OK)
    return err;
  /* A line takes at least 4 bytes (a one-char name, NUL, CR, LF), so a count
   * the buffer cannot hold fails before `views` is indexed by it. */
  if (res->num_headers > fields_len / 4)
    return HM_EINVAL_HEAD;
  if (fields_len > 0) {
    err = hm__split_joined(fields, fields_len, res->num_headers, views);
    if (err != HM_OK)
      return err;
  }
  /* Each line grows by one byte: NUL becomes ": ". */
  if ((err = hm__add(&need, fields_len)) != HM_OK ||
      (err = hm__add(&need, res->num_headers)) != HM_OK)
    return err;
  *len = need;
  if (dst_len < need)
    return HM_E2BIG;
  head.headers = views;
  head.num_headers = res->num_headers;
  hm__emit(&head, dst, need);
  return HM_OK;
}

/* Finds the CRLF that ends the line starting at `p`. Returns a pointer to its
 * CR, or NULL when a CR or LF appears in any other role or no CRLF is left
 * before `end`: the serializer never writes a bare CR or LF. */
static const char *hm__line_end(const char *p, const char *end)
{
  for (; p < end; p++) {
    if (*p == '\n')
      return NULL;
    if (*p == '\r')
      return (end - p >= 2 && p[1] == '\n') ? p : NULL;
  }
  return NULL;
}

hm_err_t hm_parse_head(const char *head, size_t len, hm_response_t *res, hm_str_t *fields,
                       size_t fields_cap)
{
  if (head == NULL || res == NULL || (fields == NULL && fields_cap != 0))
    return HM_EINVAL_ARG;

  const char *p = head;
  const char *const end = head + len;

  /* "HTTP/1.1 " + 3 digits + " ". A leading zero would make a status below
   * 100, which the serializer never writes. */
  const size_t prefix = HM__LITLEN(HM__VERSION) + 3 + 1;
  if (len < prefix || memcmp(p, HM__VERSION, HM__LITLEN(HM__VERSION)) != 0)
    return HM_EINVAL_HEAD;
  p += HM__LITLEN(HM__VERSION);
  if (p[0] < '1' || p[0] > '9' || p[1] < '0' || p[1] > '9' || p[2] < '0' || p[2] > '9' ||
      p[3] != ' ')
    return HM_EINVAL_HEAD;
  const unsigned status =
      (unsigned)(p[0] - '0') * 100 + (unsigned)(p[1] - '0') * 10 + (unsigned)(p[2] - '0');
  p += 4;

  const char *eol = hm__line_end(p, end);
  if (eol == NULL)
    return HM_EINVAL_HEAD;
  const hm_str_t reason = {p, (size_t)(eol - p)};
  p = eol + 2;

  size_t n = 0;
  for (;;) {
    eol = hm__line_end(p, end);
    if (eol == NULL)
      return HM_EINVAL_HEAD;
    if (eol == p) {
      /* The empty line ends the block, and the block ends the input. */
      if (eol + 2 != end)
        return HM_EINVAL_HEAD;
      break;
    }
    if (n >= fields_cap / 2)
      return HM_EINVAL_HEAD;
    /* The name runs to the first ':'; a value may contain ": " itself. */
    const char *colon = memchr(p, ':', (size_t)(eol - p));
    if (colon == NULL || eol - colon < 2 || colon[1] != ' ')
      return HM_EINVAL_HEAD;
    fields[2 * n].base = p;
    fields[2 * n].len = (size_t)(colon - p);
    fields[2 * n + 1].base = colon + 2;
    fields[2 * n + 1].len = (size_t)(eol - (colon + 2));
    n++;
    p = eol + 2;
  }

  res->status = status;
  res->reason = reason;
  res->headers = fields;
  res->num_headers = n;
  return HM_OK;
}

/* One pass over a rendered block: the status line, then `name: value` lines
 * with a token name and field-char values, then the empty line at `end`.
 * Accepts exactly what hm_parse_head() accepts and hm_measure() then
 * validates, without building the field views. */
hm_err_t hm_check_head(const char *head, size_t len, size_t num_headers)
{
  if (head == NULL)
    return HM_EINVAL_ARG;
  const unsigned char *p = (const unsigned char *)head;
  const unsigned char *const end = p + len;

  const size_t prefix = HM__LITLEN(HM__VERSION) + 3 + 1;
  if (len < prefix || memcmp(p, HM__VERSION, HM__LITLEN(HM__VERSION)) != 0)
    return HM_EINVAL_HEAD;
  p += HM__LITLEN(HM__VERSION);
  if (p[0] < '1' || p[0] > '9' || p[1] < '0' || p[1] > '9' || p[2] < '0' || p[2] > '9' ||
      p[3] != ' ')
    return HM_EINVAL_HEAD;
  p += 4;

  /* The reason phrase: field chars up to CR LF. A CR or LF is not a field
   * char, so the scan stops at the first of either. */
  p = hm__skip_field_chars(p, end);
  if (end - p < 2 || p[0] != '\r' || p[1] != '\n')
    return p < end && *p != '\r' && *p != '\n' ? HM_EINVAL_REASON : HM_EINVAL_HEAD;
  p += 2;

  size_t n = 0;
  for (;;) {
    if (end - p >= 2 && p[0] == '\r' && p[1] == '\n') {
      if (p + 2 != end)
        return HM_EINVAL_HEAD;
      break;
    }
    const unsigned char *name = p;
    while (p < end && hm__token_table[*p])
      p++;
    if (p == end || *p != ':')
      return p < end && *p != '\r' && *p != '\n' && memchr(p, ':', (size_t)(end - p)) != NULL
                 ? HM_EINVAL_NAME
                 : HM_EINVAL_HEAD;
    if (p == name)
      return HM_EINVAL_NAME;
    if (end - p < 2 || p[1] != ' ')
      return HM_EINVAL_HEAD;
    p += 2;
    p = hm__skip_field_chars(p, end);
    if (end - p < 2 || p[0] != '\r' || p[1] != '\n')
      return p < end && *p != '\r' && *p != '\n' ? HM_EINVAL_VALUE : HM_EINVAL_HEAD;
    p += 2;
    n++;
  }
  return n == num_headers ? HM_OK : HM_EINVAL_HEAD;
}

hm_err_t hm_write_head(const char *head, size_t len, size_t num_headers, hm_str_t body, char *dst,
                       size_t dst_len, size_t *written)
{
  const hm_err_t err = hm_check_head(head, len, num_headers);
  if (err != HM_OK)
    return err;
  if (dst == NULL || written == NULL || !hm__str_ok(body))
    return HM_EINVAL_ARG;
  size_t total = len;
  if (hm__add(&total, body.len) != HM_OK)
    return HM_EOVERFLOW;
  if (dst_len != total)
    return dst_len < total ? HM_E2BIG : HM_EINVAL_ARG;
  char *d = dst;
  const char *const dend = dst + total;
  d = hm__put(d, dend, head, len);
  d = hm__put(d, dend, body.base, body.len);
  assert(d == dend);
  *written = total;
  return HM_OK;
}

/* Longer than most: the two framings share the hole and body checks, and
 * every size sum is checked in line (the contract is in http_message.h). */
hm_err_t hm_block_parts(const char *block, size_t block_len, size_t hole, hm_str_t length,
                        hm_str_t body, hm_framing_t framing, hm_parts_t *out)
{
  if (block == NULL || out == NULL || !hm__str_ok(body) || !hm__str_ok(length))
    return HM_EINVAL_ARG;
  const int chunked = framing == HM_FRAMING_CHUNKED;
  size_t total = block_len;
  if (chunked) {
    if (hole != HM_NO_HOLE || length.len != 0)
      return HM_EINVAL_ARG;
    /* The chunk-size line and the CRLF after the body, then the last chunk. */
    if (body.len > 0 &&
        (hm__add(&total, hm__hex_len(body.len) + HM__LITLEN(HM__CRLF HM__CRLF)) != HM_OK ||
         hm__add(&total, body.len) != HM_OK))
      return HM_EOVERFLOW;
    if (hm__add(&total, HM__LITLEN(HM__LAST_CHUNK)) != HM_OK)
      return HM_EOVERFLOW;
  } else if (framing == HM_FRAMING_RAW) {
    if (hole >= block_len || block[hole] != '0')
      return HM_EINVAL_ARG;
    if (length.len == 0 || length.len > HM_LENGTH_DIGITS_MAX)
      return HM_EINVAL_VALUE;
    for (size_t i = 0; i < length.len; i++) {
      if (length.base[i] < '0' || length.base[i] > '9')
        return HM_EINVAL_VALUE;
    }
    /* The block minus its placeholder digit, plus the digits and the body;
     * block_len > hole >= 0, so nothing below wraps but the sums. */
    total = block_len - 1;
    if (hm__add(&total, length.len) != HM_OK || hm__add(&total, body.len) != HM_OK)
      return HM_EOVERFLOW;
  } else {
    return HM_EINVAL_ARG;
  }

  hm_str_t *part = out->part;
  if (chunked) {
    part[0] = (hm_str_t){block, block_len};
    part[1] = (hm_str_t){NULL, 0};
    part[2] = (hm_str_t){NULL, 0};
    if (body.len > 0) {
      char *const h = out->chunk_head;
      size_t n = (size_t)(hm__put_hex(h, h + HM_CHUNK_HEAD_MAX, body.len) - h);
      h[n++] = '\r';
      h[n++] = '\n';
      part[3] = (hm_str_t){h, n};
      part[5] = (hm_str_t){HM__CRLF HM__LAST_CHUNK, HM__LITLEN(HM__CRLF HM__LAST_CHUNK)};
    } else {
      part[3] = (hm_str_t){NULL, 0};
      part[5] = (hm_str_t){HM__LAST_CHUNK, HM__LITLEN(HM__LAST_CHUNK)};
    }
  } else {
    part[0] = (hm_str_t){block, hole};
    part[1] = length;
    part[2] = (hm_str_t){block + hole + 1, block_len - hole - 1};
    part[3] = (hm_str_t){NULL, 0};
    part[5] = (hm_str_t){NULL, 0};
  }
  part[4] = body;
  out->total = total;
  return HM_OK;
}

hm_err_t hm_write_parts(const hm_parts_t *parts, char *dst, size_t dst_len, size_t *written)
{
  if (parts == NULL || dst == NULL || written == NULL)
    return HM_EINVAL_ARG;
  if (dst_len != parts->total)
    return dst_len < parts->total ? HM_E2BIG : HM_EINVAL_ARG;
  char *d = dst;
  const char *const dend = dst + parts->total;
  for (size_t i = 0; i < HM_BLOCK_PARTS; i++)
    d = hm__put(d, dend, parts->part[i].base, parts->part[i].len);
  assert(d == dend);
  *written = parts->total;
  return HM_OK;
}
