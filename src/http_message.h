/* http_message: serializes an HTTP/1.1 response (status line, header fields,
 * optional body) into caller-owned memory.
 *
 * The core includes no Node header, never allocates, does no I/O and keeps no
 * global state. Callers measure first (hm_measure), allocate exactly the size
 * it reports, then write (hm_write). Validation mirrors Node's outgoing rules
 * (lib/_http_common.js checkIsHttpToken / checkInvalidHeaderChar and the
 * status range check in lib/_http_server.js writeHead), byte for byte.
 */
#ifndef HTTP_MESSAGE_H
#define HTTP_MESSAGE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Every rejection code, with a one-line description: the core's, then
 * ENONASCII, which only callers that promise ASCII report (the addon, for
 * its ASCII_ONLY flag). One list, so one name function (hm_err_name())
 * names every code the addon hands to JS. */
#define HM_ERRNO_MAP(XX)                                                   \
  XX(EINVAL_STATUS, "status code is not in 100..999")                      \
  XX(EINVAL_REASON, "reason phrase contains a byte Node rejects")          \
  XX(EINVAL_NAME, "header name is not an HTTP token")                      \
  XX(EINVAL_VALUE, "header value contains a byte Node rejects")            \
  XX(EINVAL_HEAD, "header block is not in the form the serializer writes") \
  XX(EINVAL_ARG, "argument is out of range or a required pointer is NULL") \
  XX(EOVERFLOW, "response size does not fit in size_t")                    \
  XX(E2BIG, "destination buffer is too small")                             \
  XX(ENONASCII, "a byte >= 0x80 where the caller promised ASCII")

typedef enum {
  HM_OK = 0,
#define HM_ERRNO_GEN(name, _) HM_##name,
  HM_ERRNO_MAP(HM_ERRNO_GEN)
#undef HM_ERRNO_GEN
} hm_err_t;

/* How many codes there are, HM_OK included: they are 0..HM_ERR_COUNT-1
 * (ENONASCII ends the map; test/c/test_http_message.c checks that
 * hm_err_name() knows no code from HM_ERR_COUNT on). */
#define HM_ERR_COUNT (HM_ENONASCII + 1)

/* A view of `len` bytes at `base`, owned by the caller. Not NUL-terminated.
 * `base` may be NULL only when `len` is 0. */
typedef struct {
  const char *base;
  size_t len;
} hm_str_t;

typedef enum {
  /* The body follows the header block as is. */
  HM_FRAMING_RAW = 0,
  /* The body is sent as one chunk of chunked transfer coding followed by the
   * last chunk: `<hex len>\r\n<body>\r\n0\r\n\r\n`. An empty body is just
   * `0\r\n\r\n` (RFC 9112 section 7.1). */
  HM_FRAMING_CHUNKED = 1
} hm_framing_t;

typedef struct hm_response_s {
  /* 100..999, as Node's writeHead accepts. */
  unsigned status;
  /* The reason phrase. When `reason.base` is NULL the default phrase for
   * `status` is used (hm_default_reason()). An empty phrase with a non-NULL
   * base renders `HTTP/1.1 200 \r\n`, as Node does for statusMessage ''. */
  hm_str_t reason;
  /* `num_headers` pairs, stored flat: headers[2*i] is a name and
   * headers[2*i+1] its value. Emitted in order as `name: value\r\n`. */
  const hm_str_t *headers;
  size_t num_headers;
  /* The body bytes; empty when `body.len` is 0. */
  hm_str_t body;
  hm_framing_t framing;
} hm_response_t;

/* Validates `res` and stores the exact serialized size in `*len`.
 * Returns HM_OK, or an error code without touching `*len`. Never allocates.
 * `res` and everything it points to are only read during the call. */
hm_err_t hm_measure(const hm_response_t *res, size_t *len);

/* Writes `res` into `dst` (`dst_len` bytes) and stores the count in
 * `*written`. Validates like hm_measure(); returns HM_E2BIG, without writing
 * anything, when `dst_len` is shorter than the measured size. On any error
 * `dst` and `*written` are untouched. */
hm_err_t hm_write(const hm_response_t *res, char *dst, size_t dst_len, size_t *written);

/* Measures and writes a response whose header fields are joined in one
 * buffer, with one validation pass, for callers that write into shared
 * memory and only learn the size from the core. `fields_len` bytes at
 * `fields` hold exactly `res->num_headers` lines of the form
 * `<name> NUL <value> CR LF`; `res->headers` must be NULL; `views` (room
 * for 2 * `res->num_headers`, scratch owned by the caller) receives the
 * names and values as views into `fields`. NUL, CR and LF are valid in no
 * name or value, so a name or value holding one of them cannot pass for a
 * line of its own: a line without a NUL, a name or value with another byte
 * Node rejects, or another line count is rejected. Validates once (status,
 * reason, then each line) and stores the exact serialized size in `*len`,
 * then writes the message into `dst` when it fits (`dst_len` >= `*len`).
 * Returns HM_OK when the message is at `dst`; HM_E2BIG when it does not
 * fit, with `*len` set and `dst` untouched (`dst` may be NULL when
 * `dst_len` is 0, which measures only); or the error, with `*len` and `dst`
 * untouched. The bytes are those of hm_write() for the same fields. `views`
 * is unspecified after an error. */
hm_err_t hm_serialize_joined(const hm_response_t *res, const char *fields, size_t fields_len,
                             hm_str_t *views, char *dst, size_t dst_len, size_t *len);

/* Splits a header block of exactly the form hm_write() produces:
 * `HTTP/1.1 <3 digits> <reason>\r\n` then `<name>: <value>\r\n` lines, then
 * `\r\n` ending the block at `head + len`. On success fills `res->status`,
 * `res->reason`, `res->headers = fields` and `res->num_headers`, leaving the
 * body and framing untouched; `fields` receives 2 views per line (into
 * `head`, which must outlive their use) and has room for `fields_cap`
 * views. Returns HM_EINVAL_HEAD when the block has another shape or more
 * lines than fit; names, values and reason are validated afterwards by
 * hm_measure()/hm_write(), so a value with a stray CR or LF is rejected.
 * The binding does not call it: the C tests and the fuzzer check
 * hm_check_head() and hm_write() against it. */
hm_err_t hm_parse_head(const char *head, size_t len, hm_response_t *res, hm_str_t *fields,
                       size_t fields_cap);

/* Validates a header block in one pass: it must have exactly the form
 * hm_write() produces (see hm_parse_head()) with `num_headers` header lines,
 * a valid status code, reason, names and values. Returns HM_OK, or
 * HM_EINVAL_HEAD for another shape or line count, or the field error
 * (HM_EINVAL_REASON, HM_EINVAL_NAME, HM_EINVAL_VALUE). Reads only. */
hm_err_t hm_check_head(const char *head, size_t len, size_t num_headers);

/* Checks `head` like hm_check_head(), then writes it followed by `body` into
 * `dst`, whose length must be exactly `len + body.len` (HM_E2BIG when short,
 * HM_EINVAL_ARG when long). The bytes are those hm_write() produces for the
 * parsed block with raw framing. On any error nothing is written. */
hm_err_t hm_write_head(const char *head, size_t len, size_t num_headers, hm_str_t body, char *dst,
                       size_t dst_len, size_t *written);

/* The longest Content-Length value hm_block_parts() fills in: the digits of
 * Number.MAX_SAFE_INTEGER, the largest length the shim caches. */
#define HM_LENGTH_DIGITS_MAX 16

/* `hole` of a cached block that has no Content-Length placeholder. */
#define HM_NO_HOLE ((size_t)-1)

/* Room for a chunk-size line: the hex digits of a size_t, then CRLF. */
#define HM_CHUNK_HEAD_MAX (sizeof(size_t) * 2 + 2)

/* How many parts a cached block's message has at most: the block before
 * its hole, the Content-Length digits, the block after the hole, the
 * chunk-size line, the body, the chunk's end with the last chunk. */
#define HM_BLOCK_PARTS 6

/* The message built from a cached header block, as parts in output order
 * (empty parts have len 0). `part` may point into `chunk_head`: use the
 * struct where hm_block_parts() filled it, without copying it. */
typedef struct {
  hm_str_t part[HM_BLOCK_PARTS];
  size_t total;
  char chunk_head[HM_CHUNK_HEAD_MAX];
} hm_parts_t;

/* Describes the message made of a header block checked earlier by
 * hm_check_head() and `body`, without copying anything:
 * - HM_FRAMING_RAW: the block has the single digit "0" at offset `hole`
 *   standing in for the Content-Length value, which `length` replaces;
 *   `length` must be 1..HM_LENGTH_DIGITS_MAX ASCII digits (HM_EINVAL_VALUE
 *   otherwise), so the block stays one hm_check_head() accepts; the body
 *   follows as is. `block[hole]` must be '0' (HM_EINVAL_ARG).
 * - HM_FRAMING_CHUNKED: `hole` must be HM_NO_HOLE and `length` empty
 *   (HM_EINVAL_ARG); the body follows as one chunk and the last chunk
 *   (`<hex len>\r\n<body>\r\n0\r\n\r\n`, or `0\r\n\r\n` alone for an
 *   empty body), as Node's end(chunk) frames it.
 * On success `out` holds the parts and their total (HM_EOVERFLOW when it
 * would not fit a size_t); on error `out` is untouched. */
hm_err_t hm_block_parts(const char *block, size_t block_len, size_t hole, hm_str_t length,
                        hm_str_t body, hm_framing_t framing, hm_parts_t *out);

/* Copies the parts of `parts` into `dst`, whose length must be exactly
 * their total (HM_E2BIG when short, HM_EINVAL_ARG when long); nothing is
 * written on error. */
hm_err_t hm_write_parts(const hm_parts_t *parts, char *dst, size_t dst_len, size_t *written);

/* Returns the default reason phrase for `status`, as Node's http.STATUS_CODES
 * has it, or "unknown" for codes it does not list (Node's writeHead falls back
 * to that word). The string is static and NUL-terminated. */
const char *hm_default_reason(unsigned status);

/* The error's symbolic name ("HM_EINVAL_NAME"), or "HM_UNKNOWN". Static.
 * The one table of names: the addon exports binding.errors and
 * binding.errorName() from it (src/binding.c). */
const char *hm_err_name(hm_err_t err);

/* The error's one-line description. Static. */
const char *hm_strerror(hm_err_t err);

#ifdef __cplusplus
}
#endif

#endif /* HTTP_MESSAGE_H */
