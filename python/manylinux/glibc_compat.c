// The glibc functions newer than 2.28 that the wheel's library and CLI use -- the objects
// linked into them were compiled against Debian 12's glibc 2.36, and libstdc++.a, LLVM
// Support and absl call these -- defined in terms of what glibc 2.28 has, hidden, so that the
// link against glibc 2.28's symbols (make_glibc_stubs.py) resolves every reference without
// a version newer than GLIBC_2.28 (link.sh checks the result).
#define _GNU_SOURCE
#include <malloc.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/types.h>

#define COMPAT __attribute__((visibility("hidden")))

// stat and friends became functions in 2.33; before, they were inline wrappers of these
// (_STAT_VER 1 on x86-64).
extern int __xstat(int ver, const char* path, struct stat* buf);
extern int __lxstat(int ver, const char* path, struct stat* buf);
extern int __fxstat(int ver, int fd, struct stat* buf);
extern int __fxstatat(int ver, int dirfd, const char* path, struct stat* buf, int flags);
extern int __xstat64(int ver, const char* path, struct stat64* buf);
extern int __lxstat64(int ver, const char* path, struct stat64* buf);
extern int __fxstat64(int ver, int fd, struct stat64* buf);
extern int __fxstatat64(int ver, int dirfd, const char* path, struct stat64* buf, int flags);
enum { kStatVer = 1 };

COMPAT int stat(const char* path, struct stat* buf) { return __xstat(kStatVer, path, buf); }
COMPAT int lstat(const char* path, struct stat* buf) { return __lxstat(kStatVer, path, buf); }
COMPAT int fstat(int fd, struct stat* buf) { return __fxstat(kStatVer, fd, buf); }
COMPAT int fstatat(int dirfd, const char* path, struct stat* buf, int flags) {
  return __fxstatat(kStatVer, dirfd, path, buf, flags);
}
COMPAT int stat64(const char* path, struct stat64* buf) { return __xstat64(kStatVer, path, buf); }
COMPAT int lstat64(const char* path, struct stat64* buf) {
  return __lxstat64(kStatVer, path, buf);
}
COMPAT int fstat64(int fd, struct stat64* buf) { return __fxstat64(kStatVer, fd, buf); }
COMPAT int fstatat64(int dirfd, const char* path, struct stat64* buf, int flags) {
  return __fxstatat64(kStatVer, dirfd, path, buf, flags);
}

// 2.36 (LLVM Support's random numbers): the kernel's generator through getrandom (2.25).
COMPAT void arc4random_buf(void* out, size_t n) {
  unsigned char* p = out;
  while (n > 0) {
    const ssize_t got = getrandom(p, n, 0);
    if (got > 0) {
      p += got;
      n -= (size_t)got;
    }
  }
}
COMPAT uint32_t arc4random(void) {
  uint32_t v;
  arc4random_buf(&v, sizeof(v));
  return v;
}
COMPAT uint32_t arc4random_uniform(uint32_t bound) {
  if (bound < 2) return 0;
  const uint32_t floor = -bound % bound;  // 2^32 mod bound: reject below it, no bias
  for (;;) {
    const uint32_t v = arc4random();
    if (v >= floor) return v % bound;
  }
}

// 2.32 (libstdc++'s reference counts skip atomics in a single-threaded process): 0 is
// always correct, only slower.
COMPAT char __libc_single_threaded = 0;

// 2.33 (LLVM Support's malloc statistics): mallinfo's int fields, widened.
COMPAT struct mallinfo2 mallinfo2(void) {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  const struct mallinfo m = mallinfo();
#pragma GCC diagnostic pop
  struct mallinfo2 r;
  r.arena = (unsigned)m.arena;
  r.ordblks = (unsigned)m.ordblks;
  r.smblks = (unsigned)m.smblks;
  r.hblks = (unsigned)m.hblks;
  r.hblkhd = (unsigned)m.hblkhd;
  r.usmblks = (unsigned)m.usmblks;
  r.fsmblks = (unsigned)m.fsmblks;
  r.uordblks = (unsigned)m.uordblks;
  r.fordblks = (unsigned)m.fordblks;
  r.keepcost = (unsigned)m.keepcost;
  return r;
}

// Not glibc: LLVM Support asks terminfo whether a terminal has colours. Debian's libtinfo.a
// is -fPIE (it cannot go into a shared object) and libtinfo.so is not part of manylinux:
// answer "no terminal description", so LLVM uses no colours (the CLI prints none anyway).
struct term;
COMPAT int setupterm(const char* term, int fd, int* errret) {
  (void)term;
  (void)fd;
  if (errret != NULL) *errret = -1;
  return -1;
}
COMPAT int tigetnum(const char* name) {
  (void)name;
  return -2;
}
COMPAT struct term* set_curterm(struct term* t) {
  (void)t;
  return NULL;
}
COMPAT int del_curterm(struct term* t) {
  (void)t;
  return 0;
}
