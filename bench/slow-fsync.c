#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
/*
 * A slower disk for the bench (docs/performance.md "The journal's commits off the loop"): preloaded
 * into a bench process, every fsync and fdatasync it makes (SQLite's commits among them) returns
 * SLOW_FSYNC_US microseconds later than the disk answered. Never part of the product.
 *
 *   gcc -shared -fPIC -O2 -o /tmp/slow-fsync.so bench/slow-fsync.c -ldl
 *   SLOW_FSYNC_US=2000 LD_PRELOAD=/tmp/slow-fsync.so npx tsx bench/perp-latency-bench.ts
 */
static void pause_us(void) {
  const char *v = getenv("SLOW_FSYNC_US");
  long us = v ? atol(v) : 0;
  if (us > 0) { struct timespec ts = { us / 1000000, (us % 1000000) * 1000 }; nanosleep(&ts, 0); }
}
int fsync(int fd) { static int (*real)(int); if (!real) real = dlsym(RTLD_NEXT, "fsync"); int r = real(fd); pause_us(); return r; }
int fdatasync(int fd) { static int (*real)(int); if (!real) real = dlsym(RTLD_NEXT, "fdatasync"); int r = real(fd); pause_us(); return r; }
