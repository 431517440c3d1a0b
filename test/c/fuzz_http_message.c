/* libFuzzer target for the serializer core.
 *
 * Input layout: bytes 0-1 pick the status (0..1099, so out-of-range codes are
 * generated too), byte 2 holds flags, byte 3 the header count, byte 4 a
 * separator. The rest splits at the separator into the reason, then name and
 * value pieces, then the body (everything left, separators included).
 *
 * Checks on every input:
 *  - hm_measure and hm_write agree with an independent statement of Node's
 *    rules (which input is rejected, and with which error);
 *  - an accepted response is written into an exactly-sized buffer and
 *    written == measured; the head ends at the one CRLFCRLF expected;
 *  - llhttp, an independent parser, reads the output as exactly one complete
 *    response with the same status, reason, header lines and body;
 *  - hm_parse_head takes the written head back to the same bytes, and for any
 *    input it accepts that hm_measure also accepts, hm_write reproduces it.
 */
#include "../../src/http_message.h"

#include <llhttp.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_HEADERS 32
/* Two views per generated header plus the framing header the harness adds. */
#define MAX_VIEWS (2 * (MAX_HEADERS + 1))

enum {
  GEN_CHUNKED = 1,        /* chunked framing */
  GEN_DEFAULT_REASON = 2, /* reason.base = NULL */
  GEN_CONTENT_LENGTH = 4, /* raw framing: add Content-Length rather than read to EOF */
  GEN_RAW_NAMES = 8       /* take names as given instead of prefixing "x-" */
};

#define CHECK(cond)                                                            \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
      abort();                                                                 \
    }                                                                          \
  } while (0)

/* ---- an independent statement of Node's validation rules --------------- */

static int node_token_char(unsigned char c)
{
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         (c != 0 && strchr("!#$%&'*+-.^_`|~", c) != NULL);
}

static int node_field_char(unsigned char c)
{
  return c == '\t' || (c >= 0x20 && c != 0x7F);
}

static int node_token(hm_str_t s)
{
  if (s.len == 0)
    return 0;
  for (size_t i = 0; i < s.len; i++) {
    if (!node_token_char((unsigned char)s.base[i]))
      return 0;
  }
  return 1;
}

static int node_field(hm_str_t s)
{
  for (size_t i = 0; i < s.len; i++) {
    if (!node_field_char((unsigned char)s.base[i]))
      return 0;
  }
  return 1;
}

/* The first error Node's writeHead would raise, in the core's terms. */
static hm_err_t expected_error(const hm_response_t *res)
{
  if (res->status < 100 || res->status > 999)
    return HM_EINVAL_STATUS;
  if (res->reason.base != NULL && !node_field(res->reason))
    return HM_EINVAL_REASON;
  for (size_t i = 0; i < res->num_headers; i++) {
    if (!node_token(res->headers[2 * i]))
      return HM_EINVAL_NAME;
    if (!node_field(res->headers[2 * i + 1]))
      return HM_EINVAL_VALUE;
  }
  return HM_OK;
}

/* ---- collecting what llhttp sees ------------------------------------------ */

typedef struct {
  size_t off, len;
} span_t;

typedef struct {
  char *arena; /* everything llhttp reports, at most the message's size */
  size_t used, cap;
  span_t status;
  span_t names[MAX_HEADERS + 1];
  span_t values[MAX_HEADERS + 1];
  size_t num_headers; /* header lines completed so far */
  span_t body;        /* body pieces, de-chunked, appended in order */
  int in_body;
  int completed; /* on_message_complete calls */
} seen_t;

/* Appends a piece to `span`, which must be the arena's last span. llhttp may
 * deliver one field in several pieces, so pieces are concatenated. */
static void seen_append(seen_t *s, span_t *span, const char *at, size_t len)
{
  CHECK(len <= s->cap - s->used);
  if (span->len == 0)
    span->off = s->used;
  CHECK(span->off + span->len == s->used);
  memcpy(s->arena + s->used, at, len);
  s->used += len;
  span->len += len;
}

static int on_status(llhttp_t *p, const char *at, size_t len)
{
  seen_t *s = p->data;
  seen_append(s, &s->status, at, len);
  return 0;
}

static int on_header_field(llhttp_t *p, const char *at, size_t len)
{
  seen_t *s = p->data;
  CHECK(s->num_headers <= MAX_HEADERS);
  seen_append(s, &s->names[s->num_headers], at, len);
  return 0;
}

static int on_header_value(llhttp_t *p, const char *at, size_t len)
{
  seen_t *s = p->data;
  seen_append(s, &s->values[s->num_headers], at, len);
  return 0;
}

/* A header line ends here even when its value was empty and no value piece
 * was reported. */
static int on_header_value_complete(llhttp_t *p)
{
  seen_t *s = p->data;
  s->num_headers++;
  return 0;
}

static int on_body(llhttp_t *p, const char *at, size_t len)
{
  seen_t *s = p->data;
  seen_append(s, &s->body, at, len);
  return 0;
}

static int on_message_complete(llhttp_t *p)
{
  seen_t *s = p->data;
  s->completed++;
  return 0;
}

static int span_eq(const seen_t *s, span_t span, const char *want, size_t want_len)
{
  return span.len == want_len &&
         (want_len == 0 || memcmp(s->arena + span.off, want, want_len) == 0);
}

/* Optional whitespace around a field value is not part of it (RFC 9110 5.5).
 * llhttp 8 drops the leading OWS but reports trailing OWS, so both sides are
 * compared trimmed. */
static hm_str_t trim_ows(hm_str_t v)
{
  while (v.len > 0 && (v.base[0] == ' ' || v.base[0] == '\t')) {
    v.base++;
    v.len--;
  }
  while (v.len > 0 && (v.base[v.len - 1] == ' ' || v.base[v.len - 1] == '\t'))
    v.len--;
  return v;
}

static int ieq(hm_str_t s, const char *lit)
{
  const size_t n = strlen(lit);
  if (s.len != n)
    return 0;
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s.base[i];
    if (c >= 'A' && c <= 'Z')
      c = (unsigned char)(c + 32);
    if (c != (unsigned char)lit[i])
      return 0;
  }
  return 1;
}

/* Names that change how llhttp frames or routes the message. A response
 * carrying one of them, chosen by the fuzzer rather than by the harness, can
 * be a correct serialization that llhttp still rejects or reads differently
 * (two framings, a bad Content-Length, an upgrade), so such inputs skip the
 * llhttp comparison. Generated names normally get an "x-" prefix, which makes
 * a collision impossible; GEN_RAW_NAMES turns the prefix off to exercise the
 * name validation itself. */
static int semantic_name(hm_str_t name)
{
  return ieq(name, "content-length") || ieq(name, "transfer-encoding") || ieq(name, "connection") ||
         ieq(name, "proxy-connection") || ieq(name, "upgrade");
}

/* Responses that RFC 9112 6.3 says have no body: 1xx, 204 and 304. */
static int no_body_status(unsigned status)
{
  return (status >= 100 && status <= 199) || status == 204 || status == 304;
}

static void check_with_llhttp(const hm_response_t *res, const char *msg, size_t msg_len)
{
  seen_t seen;
  memset(&seen, 0, sizeof(seen));
  seen.arena = malloc(msg_len + 1);
  CHECK(seen.arena != NULL);
  seen.cap = msg_len;

  llhttp_settings_t settings;
  llhttp_settings_init(&settings);
  settings.on_status = on_status;
  settings.on_header_field = on_header_field;
  settings.on_header_value = on_header_value;
  settings.on_header_value_complete = on_header_value_complete;
  settings.on_body = on_body;
  settings.on_message_complete = on_message_complete;

  /* Strict llhttp, no leniency flags: the output must satisfy the parser as
   * shipped. */
  llhttp_t parser;
  llhttp_init(&parser, HTTP_RESPONSE, &settings);
  parser.data = &seen;
  llhttp_errno_t err = llhttp_execute(&parser, msg, msg_len);
  if (err == HPE_PAUSED_UPGRADE) {
    /* A 101 response switches protocols once its head is read; there is
     * nothing after the head (no_body_status) for it to leave unparsed. */
    CHECK(res->status == 101);
    CHECK(llhttp_get_error_pos(&parser) == msg + msg_len);
  } else {
    if (err != HPE_OK)
      fprintf(stderr, "llhttp: %s (%s)\n", llhttp_errno_name(err),
              llhttp_get_error_reason(&parser));
    CHECK(err == HPE_OK);
    /* A raw body without Content-Length runs to the end of the stream. */
    err = llhttp_finish(&parser);
    CHECK(err == HPE_OK);
  }

  CHECK(seen.completed == 1);
  CHECK(parser.status_code == res->status);
  const char *reason = res->reason.base != NULL ? res->reason.base : hm_default_reason(res->status);
  const size_t reason_len = res->reason.base != NULL ? res->reason.len : strlen(reason);
  CHECK(span_eq(&seen, seen.status, reason, reason_len));
  CHECK(seen.num_headers == res->num_headers);
  for (size_t i = 0; i < res->num_headers; i++) {
    const hm_str_t name = res->headers[2 * i];
    const hm_str_t value = trim_ows(res->headers[2 * i + 1]);
    CHECK(span_eq(&seen, seen.names[i], name.base, name.len));
    const hm_str_t got = trim_ows((hm_str_t){seen.arena + seen.values[i].off, seen.values[i].len});
    CHECK(got.len == value.len && (value.len == 0 || memcmp(got.base, value.base, value.len) == 0));
  }
  CHECK(span_eq(&seen, seen.body, res->body.base, res->body.len));
  free(seen.arena);
}

/* ---- the driver --------------------------------------------------------- */

/* Takes the next piece up to the separator, or the rest when there is none. */
static hm_str_t next_piece(const char **p, const char *end, char sep)
{
  hm_str_t s = {*p, 0};
  const char *hit = memchr(*p, sep, (size_t)(end - *p));
  const char *stop = hit != NULL ? hit : end;
  s.len = (size_t)(stop - *p);
  *p = hit != NULL ? hit + 1 : end;
  return s;
}

/* Writes `res` into an exactly-sized buffer; returns it (malloc'd) or NULL
 * when the core rejects `res`, after checking the error is Node's. */
static char *serialize(const hm_response_t *res, size_t *out_len)
{
  size_t len = 0;
  const hm_err_t err = hm_measure(res, &len);
  CHECK(err == expected_error(res));
  if (err != HM_OK) {
    char dummy[1];
    size_t w = 99;
    CHECK(hm_write(res, dummy, sizeof(dummy), &w) == err && w == 99);
    return NULL;
  }
  char *out = malloc(len > 0 ? len : 1);
  CHECK(out != NULL);
  size_t written = 0;
  CHECK(len == 0 || hm_write(res, out, len - 1, &written) == HM_E2BIG);
  CHECK(hm_write(res, out, len, &written) == HM_OK);
  CHECK(written == len);
  *out_len = len;
  return out;
}

/* For any input hm_parse_head and hm_measure accept, hm_write gives back
 * exactly that input: the parser accepts only what the writer writes. */
static void check_parse_any(const char *data, size_t size)
{
  hm_str_t fields[MAX_VIEWS];
  hm_response_t res;
  memset(&res, 0, sizeof(res));
  if (hm_parse_head(data, size, &res, fields, MAX_VIEWS) != HM_OK) {
    /* The one-pass check rejects it too, whatever line count it is given:
     * the only count that could match is the number of CRLFs less two. */
    size_t crlfs = 0;
    for (size_t i = 0; i + 1 < size; i++)
      crlfs += data[i] == '\r' && data[i + 1] == '\n';
    if (crlfs >= 2 && crlfs - 2 < MAX_VIEWS / 2)
      CHECK(hm_check_head(data, size, crlfs - 2) != HM_OK);
    return;
  }
  {
    size_t mlen;
    const int accepted = hm_measure(&res, &mlen) == HM_OK;
    CHECK((hm_check_head(data, size, res.num_headers) == HM_OK) == accepted);
    CHECK(hm_check_head(data, size, res.num_headers + 1) != HM_OK);
  }
  /* Whatever parsed has no CR or LF inside a line. */
  for (size_t i = 0; i < 2 * res.num_headers; i++) {
    CHECK(memchr(fields[i].base, '\r', fields[i].len) == NULL);
    CHECK(memchr(fields[i].base, '\n', fields[i].len) == NULL);
  }
  size_t len;
  if (hm_measure(&res, &len) != HM_OK)
    return;
  CHECK(len == size);
  char *out = malloc(len);
  CHECK(out != NULL);
  size_t written;
  CHECK(hm_write(&res, out, len, &written) == HM_OK && written == size);
  CHECK(memcmp(out, data, size) == 0);
  free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  check_parse_any((const char *)data, size);
  if (size < 5)
    return 0;

  const unsigned status = (unsigned)(data[0] << 8 | data[1]) % 1100;
  const unsigned flags = data[2];
  size_t count = data[3] % (MAX_HEADERS + 1);
  const char sep = (char)data[4];
  const char *p = (const char *)data + 5;
  const char *const end = (const char *)data + size;

  hm_response_t res;
  memset(&res, 0, sizeof(res));
  res.status = status;
  res.reason = next_piece(&p, end, sep);
  if (flags & GEN_DEFAULT_REASON)
    res.reason = (hm_str_t){NULL, 0};

  /* Names live in one buffer so each can carry the "x-" prefix. */
  hm_str_t views[MAX_VIEWS];
  char *names = malloc(2 * MAX_HEADERS + size);
  CHECK(names != NULL);
  char *n = names;
  int semantic = 0;
  for (size_t i = 0; i < count; i++) {
    const hm_str_t raw = next_piece(&p, end, sep);
    if (flags & GEN_RAW_NAMES) {
      views[2 * i] = raw;
      semantic |= semantic_name(raw);
    } else {
      memcpy(n, "x-", 2);
      memcpy(n + 2, raw.base, raw.len);
      views[2 * i] = (hm_str_t){n, raw.len + 2};
      n += raw.len + 2;
    }
    views[2 * i + 1] = next_piece(&p, end, sep);
  }
  res.body = (hm_str_t){p, (size_t)(end - p)};

  /* The harness picks the framing header llhttp needs: chunked framing
   * declares itself, raw framing may state its length or run to EOF. A
   * no-body status keeps an empty raw body and no framing header. */
  char cl[32];
  if (no_body_status(status)) {
    res.body.len = 0;
    res.framing = HM_FRAMING_RAW;
  } else if (flags & GEN_CHUNKED) {
    res.framing = HM_FRAMING_CHUNKED;
    views[2 * count] = (hm_str_t){"Transfer-Encoding", 17};
    views[2 * count + 1] = (hm_str_t){"chunked", 7};
    count++;
  } else if (flags & GEN_CONTENT_LENGTH) {
    res.framing = HM_FRAMING_RAW;
    const int w = snprintf(cl, sizeof(cl), "%zu", res.body.len);
    views[2 * count] = (hm_str_t){"Content-Length", 14};
    views[2 * count + 1] = (hm_str_t){cl, (size_t)w};
    count++;
  }
  res.headers = views;
  res.num_headers = count;

  size_t len = 0;
  char *out = serialize(&res, &len);
  if (out != NULL) {
    /* The head ends at the first CRLFCRLF, right before the framed body. */
    size_t head_len = 0;
    for (size_t i = 0; i + 4 <= len; i++) {
      if (memcmp(out + i, "\r\n\r\n", 4) == 0) {
        head_len = i + 4;
        break;
      }
    }
    CHECK(head_len > 0);
    if (res.framing == HM_FRAMING_RAW) {
      CHECK(len - head_len == res.body.len);
      CHECK(res.body.len == 0 || memcmp(out + head_len, res.body.base, res.body.len) == 0);
    }
    /* The written head parses back to the same bytes. */
    hm_str_t fields[MAX_VIEWS];
    hm_response_t back;
    memset(&back, 0, sizeof(back));
    CHECK(hm_parse_head(out, head_len, &back, fields, MAX_VIEWS) == HM_OK);
    CHECK(back.status == status && back.num_headers == count);
    back.body = res.body;
    back.framing = res.framing;
    char *again = serialize(&back, &len);
    CHECK(again != NULL && memcmp(again, out, len) == 0);
    free(again);

    if (!semantic)
      check_with_llhttp(&res, out, len);
    free(out);
  }
  free(names);
  return 0;
}
