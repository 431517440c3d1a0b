/* send: one gathered write on a non-blocking stream socket's descriptor,
 * for the shim's native path. No Node header; POSIX only (send_available()
 * is 0 elsewhere, and the shim then writes through Node).
 *
 * The caller owns every buffer; nothing is kept after the call. */
#ifndef HM_SEND_H
#define HM_SEND_H

#include <stddef.h>

#include "http_message.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What hm_send() reports when it wrote nothing. */
#define HM_SEND_NOT_READY                                 \
  (-1) /* the socket has an error pending, was hung up or \
        * would block: the caller's own write path        \
        * must run and meet the same condition */
#define HM_SEND_FAILED                              \
  (-2) /* the write itself failed, with `*err` set: \
        * the caller's own write must report that   \
        * error, which the failed write consumed */
#define HM_SEND_MAX_PARTS 8
/* The largest message hm_send() writes: its count fits an int32, the
 * addon's result record (src/napi.h); Linux writes at most that much per
 * call anyway. */
#define HM_SEND_MAX_TOTAL 0x7fffffffL
/* Messages up to this many bytes are gathered into the caller's scratch
 * memory and written with one send(); larger ones with sendmsg(). */
#define HM_SEND_COPY_MAX 8192

/* Nonzero where hm_send() can write (POSIX sendmsg with MSG_NOSIGNAL). */
int hm_send_available(void);

/* Writes `parts[0..count)` in order on `fd` with MSG_DONTWAIT |
 * MSG_NOSIGNAL: gathered into `scratch` (at least HM_SEND_COPY_MAX bytes)
 * and written with one send() when the message fits it, else with one
 * sendmsg(). A single buffer costs the kernel less than an iovec per part.
 *
 * With `check` nonzero a zero-timeout poll() runs first and leaves a
 * pending socket error (or a hang-up) in place for the caller's own write
 * to report: poll reports POLLERR without clearing SO_ERROR, where a write
 * consumes it. Without it, a pending error fails the write and comes back
 * as HM_SEND_FAILED with `*err` = errno; the caller must then report that
 * error as its own write would have (lib/send.js does), since a second
 * write would meet EPIPE instead of a reset. The poll costs a system call
 * per response, so the caller asks for it only where it cannot report the
 * error itself.
 *
 * Returns the number of bytes written (possibly fewer than the total: the
 * rest is the caller's to write), HM_SEND_NOT_READY or HM_SEND_FAILED.
 * `count` is at most HM_SEND_MAX_PARTS and the parts' total at most
 * HM_SEND_MAX_TOTAL (else HM_SEND_NOT_READY); empty parts are skipped. `*err`
 * receives errno for HM_SEND_FAILED, 0 otherwise. */
long hm_send(int fd, const hm_str_t *parts, size_t count, int check, char *scratch, int *err);

#ifdef __cplusplus
}
#endif

#endif /* HM_SEND_H */
