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
#define HM_SEND_NOT_READY (-1) /* the socket has an error pending, was hung up or
                                * would block: the caller's own write path
                                * must run and meet the same condition */
#define HM_SEND_FAILED    (-2) /* the write itself failed (a reset that arrived
                                * after the readiness check) */
#define HM_SEND_MAX_PARTS 8

/* Nonzero where hm_send() can write (POSIX sendmsg with MSG_NOSIGNAL). */
int hm_send_available(void);

/* Writes `parts[0..count)` in order with one sendmsg(MSG_DONTWAIT |
 * MSG_NOSIGNAL) on `fd`, after a zero-timeout poll() that leaves a pending
 * socket error in place for the caller's own write to report (poll reports
 * POLLERR without clearing SO_ERROR, where a write would consume it).
 * Returns the number of bytes written (possibly fewer than the total: the
 * rest is the caller's to write), HM_SEND_NOT_READY or HM_SEND_FAILED.
 * `count` is at most HM_SEND_MAX_PARTS; empty parts are skipped. `*err`
 * receives errno for HM_SEND_FAILED, 0 otherwise. */
long hm_send(int fd, const hm_str_t *parts, size_t count, int *err);

#ifdef __cplusplus
}
#endif

#endif /* HM_SEND_H */
