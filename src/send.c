/* See send.h. */
#if !defined(_WIN32)
#define _DEFAULT_SOURCE
#endif

#include "send.h"

#if defined(_WIN32)

int hm_send_available(void)
{
  return 0;
}

long hm_send(int fd, const hm_str_t *parts, size_t count, int check, char *scratch, int *err)
{
  (void)fd;
  (void)parts;
  (void)count;
  (void)check;
  (void)scratch;
  *err = 0;
  return HM_SEND_NOT_READY;
}

#else

#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>

#ifndef MSG_NOSIGNAL
/* macOS has no MSG_NOSIGNAL; Node ignores SIGPIPE process-wide anyway. */
#define MSG_NOSIGNAL 0
#endif

int hm_send_available(void)
{
  return 1;
}

/* A pending error or hang-up keeps the write back (see send.h). */
static int pending_error(int fd)
{
  struct pollfd pfd = {.fd = fd, .events = POLLOUT, .revents = 0};
  int ready;
  do {
    ready = poll(&pfd, 1, 0);
  } while (ready < 0 && errno == EINTR);
  /* POLLOUT alone is not asked for: it waits for a third of the send
   * buffer to be free, while the kernel may well take the whole message
   * now (EAGAIN says when not). */
  return ready < 0 || (pfd.revents & (POLLERR | POLLHUP | POLLNVAL)) != 0;
}

long hm_send(int fd, const hm_str_t *parts, size_t count, int check, char *scratch, int *err)
{
  *err = 0;
  if (fd < 0 || parts == NULL || scratch == NULL || count > HM_SEND_MAX_PARTS)
    return HM_SEND_NOT_READY;

  struct iovec iov[HM_SEND_MAX_PARTS];
  size_t n = 0;
  size_t total = 0;
  for (size_t i = 0; i < count; i++) {
    if (parts[i].len == 0)
      continue;
    if (parts[i].len > (size_t)HM_SEND_MAX_TOTAL - total)
      return HM_SEND_NOT_READY;
    total += parts[i].len;
    iov[n].iov_base = (void *)parts[i].base;
    iov[n].iov_len = parts[i].len;
    n++;
  }
  if (n == 0)
    return 0;
  if (check && pending_error(fd))
    return HM_SEND_NOT_READY;

  ssize_t r;
  if (total <= HM_SEND_COPY_MAX) {
    size_t off = 0;
    for (size_t i = 0; i < n; i++) {
      memcpy(scratch + off, iov[i].iov_base, iov[i].iov_len);
      off += iov[i].iov_len;
    }
    do {
      r = send(fd, scratch, total, MSG_DONTWAIT | MSG_NOSIGNAL);
    } while (r < 0 && errno == EINTR);
  } else {
    struct msghdr msg = {0};
    msg.msg_iov = iov;
    msg.msg_iovlen = n;
    do {
      r = sendmsg(fd, &msg, MSG_DONTWAIT | MSG_NOSIGNAL);
    } while (r < 0 && errno == EINTR);
  }
  if (r < 0) {
    if (errno == EAGAIN || errno == EWOULDBLOCK)
      return HM_SEND_NOT_READY;
    *err = errno;
    return HM_SEND_FAILED;
  }
  return (long)r;
}

#endif
