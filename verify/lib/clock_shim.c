/* A wall-clock shim for redis-server (LD_PRELOAD), for the clock-jump nemesis (server_nemesis.py).
 *
 * clock_gettime(CLOCK_REALTIME*), gettimeofday() and time() return the real wall clock plus an offset
 * in milliseconds read, at every call, from the file named by VERIFY_CLOCK_OFFSET_FILE (the nemesis
 * replaces the file atomically). Every other clock passes through. Debian's libfaketime hangs
 * redis-server at start (jemalloc calls clock_gettime while libfaketime initialises, which calls
 * back into the allocator); this shim allocates nothing and calls the kernel directly. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static long long offset_ms(void) {
  const char *path = getenv("VERIFY_CLOCK_OFFSET_FILE");
  if (!path) return 0;
  int fd = (int)syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  char buf[32];
  long n = syscall(SYS_read, fd, buf, sizeof buf - 1);
  syscall(SYS_close, fd);
  if (n <= 0) return 0;
  buf[n] = 0;
  long long value = 0, sign = 1;
  const char *p = buf;
  if (*p == '-') { sign = -1; ++p; }
  for (; *p >= '0' && *p <= '9'; ++p) value = value * 10 + (*p - '0');
  return sign * value;
}

static void shift(struct timespec *ts, long long ms) {
  long long ns = (long long)ts->tv_nsec + (ms % 1000) * 1000000LL;
  ts->tv_sec += ms / 1000 + ns / 1000000000LL;
  ns %= 1000000000LL;
  if (ns < 0) { ns += 1000000000LL; ts->tv_sec -= 1; }
  ts->tv_nsec = ns;
}

int clock_gettime(clockid_t clock, struct timespec *ts) {
  int rc = (int)syscall(SYS_clock_gettime, clock, ts);
  if (rc == 0 && (clock == CLOCK_REALTIME || clock == CLOCK_REALTIME_COARSE)) shift(ts, offset_ms());
  return rc;
}

int gettimeofday(struct timeval *tv, void *tz) {
  (void)tz;
  struct timespec ts;
  if (clock_gettime(CLOCK_REALTIME, &ts) != 0) return -1;
  struct timeval *out = tv; /* may be null (declared nonnull by glibc) */
  __asm__("" : "+r"(out));
  if (out) { out->tv_sec = ts.tv_sec; out->tv_usec = ts.tv_nsec / 1000; }
  return 0;
}

time_t time(time_t *out) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  if (out) *out = ts.tv_sec;
  return ts.tv_sec;
}
