// A failing disk for rChat's tests: an LD_PRELOAD library that makes write, pwrite,
// fsync, fdatasync, ftruncate, rename and open fail with ENOSPC or EIO, at points chosen
// deterministically from a seed, for files under one directory only (sockets, pipes, the
// terminal and every other file work as usual). The tests build it with `cc -shared`
// (Tests/RChatCLITests/FailingDisk.swift) and set, in the environment of the process:
//
//   RCHAT_FAULT_UNDER   the directory whose files fail (required; unset: nothing fails)
//   RCHAT_FAULT_SWITCH  a path: faults only while a file exists there (the test removes it
//                       to give the disk back without restarting the process)
//   RCHAT_FAULT_SEED    the seed of the decisions (default 1)
//   RCHAT_FAULT_PER_MILLE  how many eligible calls in 1,000 fail (default 1000: all)
//   RCHAT_FAULT_AFTER   the first N eligible calls succeed (default 0)
//   RCHAT_FAULT_ERRNO   ENOSPC, EIO, or MIX (each failure picks one from the seed)
//   RCHAT_FAULT_CALLS   which calls fail: a comma list of write,fsync,rename,open,truncate
//                       (default all; fsync covers fdatasync, write covers pwrite and writev)
//   RCHAT_FAULT_LOG     a file each injected failure appends one line to ("write EIO path"),
//                       and a process that exits normally a last "calls N" (the eligible
//                       calls it made: for choosing RCHAT_FAULT_AFTER)
//
// The decision for the n-th eligible call is a hash of (seed, n): the same seed fails the
// same calls of the same sequence. The real functions come from dlsym(RTLD_NEXT).
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

enum call_kind { KIND_WRITE = 1, KIND_FSYNC = 2, KIND_RENAME = 4, KIND_OPEN = 8, KIND_TRUNCATE = 16 };

static const char *under, *switch_path, *log_path;
static size_t under_length;
static uint64_t seed = 1;
static unsigned per_mille = 1000, calls = 31;
static unsigned long after;
static int fixed_errno;  // 0: MIX
static atomic_ulong eligible_calls;
static atomic_int configured;

static void configure(void) {
    if (atomic_load(&configured)) return;
    under = getenv("RCHAT_FAULT_UNDER");
    under_length = under ? strlen(under) : 0;
    switch_path = getenv("RCHAT_FAULT_SWITCH");
    log_path = getenv("RCHAT_FAULT_LOG");
    const char *value;
    if ((value = getenv("RCHAT_FAULT_SEED"))) seed = strtoull(value, NULL, 10);
    if ((value = getenv("RCHAT_FAULT_PER_MILLE"))) per_mille = (unsigned)strtoul(value, NULL, 10);
    if ((value = getenv("RCHAT_FAULT_AFTER"))) after = strtoul(value, NULL, 10);
    fixed_errno = ENOSPC;
    if ((value = getenv("RCHAT_FAULT_ERRNO"))) {
        if (strcmp(value, "EIO") == 0) fixed_errno = EIO;
        else if (strcmp(value, "MIX") == 0) fixed_errno = 0;
    }
    if ((value = getenv("RCHAT_FAULT_CALLS"))) {
        calls = 0;
        if (strstr(value, "write")) calls |= KIND_WRITE;
        if (strstr(value, "fsync")) calls |= KIND_FSYNC;
        if (strstr(value, "rename")) calls |= KIND_RENAME;
        if (strstr(value, "open")) calls |= KIND_OPEN;
        if (strstr(value, "truncate")) calls |= KIND_TRUNCATE;
    }
    atomic_store(&configured, 1);
}

static uint64_t mix64(uint64_t x) {  // splitmix64's finalizer
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

static int is_under(const char *path) {
    return path && under_length > 0 && strncmp(path, under, under_length) == 0 &&
           (path[under_length] == '/' || path[under_length] == '\0');
}

static int fd_is_under(int fd) {
    char link[64], target[PATH_MAX];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, target, sizeof target - 1);
    if (n <= 0) return 0;
    target[n] = '\0';
    return is_under(target);
}

/// A path as the kernel resolves it: relative ones against the directory fd (or the cwd).
static const char *full_path(int dir, const char *path, char *buffer) {
    if (!path || path[0] == '/') return path;
    char base[PATH_MAX];
    if (dir == AT_FDCWD) {
        if (!getcwd(base, sizeof base)) return path;
    } else {
        char link[64];
        snprintf(link, sizeof link, "/proc/self/fd/%d", dir);
        ssize_t n = readlink(link, base, sizeof base - 1);
        if (n <= 0) return path;
        base[n] = '\0';
    }
    snprintf(buffer, PATH_MAX, "%s/%s", base, path);
    return buffer;
}

static ssize_t (*real_write)(int, const void *, size_t);

static void note(const char *call, int error, const char *path) {
    if (!log_path) return;
    if (!real_write) real_write = dlsym(RTLD_NEXT, "write");
    int fd = open(log_path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);  // not under: never fails
    if (fd < 0) return;
    char line[PATH_MAX + 64];
    int n = error ? snprintf(line, sizeof line, "%s %s %s\n", call, error == EIO ? "EIO" : "ENOSPC", path ? path : "?")
                  : snprintf(line, sizeof line, "%s %s\n", call, path);
    if (n > 0) real_write(fd, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
    close(fd);
}

/// 0: let the call through; otherwise the errno it fails with.
static int decide(enum call_kind kind, const char *path, int fd, const char *call) {
    configure();
    if (!under_length || !(calls & kind)) return 0;
    if (path ? !is_under(path) : !fd_is_under(fd)) return 0;
    if (switch_path && access(switch_path, F_OK) != 0) return 0;
    unsigned long n = atomic_fetch_add(&eligible_calls, 1);
    if (n < after) return 0;
    uint64_t h = mix64(seed * 0x100000001b3ULL ^ mix64(n));
    if (h % 1000 >= per_mille) return 0;
    int error = fixed_errno ? fixed_errno : ((h >> 32) & 1 ? EIO : ENOSPC);
    char target[PATH_MAX] = "?";
    if (!path) {
        char link[64];
        snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
        ssize_t m = readlink(link, target, sizeof target - 1);
        target[m > 0 ? m : 1] = '\0';
    }
    note(call, error, path ? path : target);
    return error;
}

__attribute__((destructor)) static void count_calls(void) {
    if (!log_path || !under_length || atomic_load(&eligible_calls) == 0) return;
    char line[64];
    snprintf(line, sizeof line, "%lu", atomic_load(&eligible_calls));
    note("calls", 0, line);
}

#define REAL(name) static __typeof__(&name) real_##name; if (!real_##name) real_##name = (__typeof__(&name))dlsym(RTLD_NEXT, #name)
#define FAIL_WITH(error, value) do { errno = (error); return (value); } while (0)

ssize_t write(int fd, const void *buffer, size_t count) {
    if (!real_write) real_write = dlsym(RTLD_NEXT, "write");
    int error = fd > 2 ? decide(KIND_WRITE, NULL, fd, "write") : 0;
    if (error) FAIL_WITH(error, -1);
    return real_write(fd, buffer, count);
}

ssize_t writev(int fd, const struct iovec *vector, int count) {
    REAL(writev);
    int error = fd > 2 ? decide(KIND_WRITE, NULL, fd, "writev") : 0;
    if (error) FAIL_WITH(error, -1);
    return real_writev(fd, vector, count);
}

ssize_t pwrite(int fd, const void *buffer, size_t count, off_t offset) {
    REAL(pwrite);
    int error = decide(KIND_WRITE, NULL, fd, "pwrite");
    if (error) FAIL_WITH(error, -1);
    return real_pwrite(fd, buffer, count, offset);
}

ssize_t pwrite64(int fd, const void *buffer, size_t count, off_t offset) {
    REAL(pwrite64);
    int error = decide(KIND_WRITE, NULL, fd, "pwrite64");
    if (error) FAIL_WITH(error, -1);
    return real_pwrite64(fd, buffer, count, offset);
}

int fsync(int fd) {
    REAL(fsync);
    int error = decide(KIND_FSYNC, NULL, fd, "fsync");
    if (error) FAIL_WITH(error, -1);
    return real_fsync(fd);
}

int fdatasync(int fd) {
    REAL(fdatasync);
    int error = decide(KIND_FSYNC, NULL, fd, "fdatasync");
    if (error) FAIL_WITH(error, -1);
    return real_fdatasync(fd);
}

int ftruncate(int fd, off_t length) {
    REAL(ftruncate);
    int error = decide(KIND_TRUNCATE, NULL, fd, "ftruncate");
    if (error) FAIL_WITH(error, -1);
    return real_ftruncate(fd, length);
}

int ftruncate64(int fd, off_t length) {
    REAL(ftruncate64);
    int error = decide(KIND_TRUNCATE, NULL, fd, "ftruncate64");
    if (error) FAIL_WITH(error, -1);
    return real_ftruncate64(fd, length);
}

int rename(const char *from, const char *to) {
    REAL(rename);
    char buffer[PATH_MAX];
    int error = decide(KIND_RENAME, full_path(AT_FDCWD, to, buffer), -1, "rename");
    if (error) FAIL_WITH(error, -1);
    return real_rename(from, to);
}

int renameat(int from_dir, const char *from, int to_dir, const char *to) {
    REAL(renameat);
    char buffer[PATH_MAX];
    int error = decide(KIND_RENAME, full_path(to_dir, to, buffer), -1, "renameat");
    if (error) FAIL_WITH(error, -1);
    return real_renameat(from_dir, from, to_dir, to);
}

int renameat2(int from_dir, const char *from, int to_dir, const char *to, unsigned flags) {
    REAL(renameat2);
    char buffer[PATH_MAX];
    int error = decide(KIND_RENAME, full_path(to_dir, to, buffer), -1, "renameat2");
    if (error) FAIL_WITH(error, -1);
    return real_renameat2(from_dir, from, to_dir, to, flags);
}

/// Opens that could write: only those fail (a read-only open meets no full disk).
static int open_fails(const char *path, int flags, const char *call) {
    if (!(flags & (O_WRONLY | O_RDWR | O_CREAT | O_TRUNC))) return 0;
    return decide(KIND_OPEN, path, -1, call);
}

#define OPEN_MODE() mode_t mode = 0; \
    if (flags & (O_CREAT | __O_TMPFILE)) { va_list arguments; va_start(arguments, flags); mode = va_arg(arguments, mode_t); va_end(arguments); }

/// Every open goes to the real openat (open(path) is openat(AT_FDCWD, path)).
static int opened(int dir, const char *path, int flags, mode_t mode, const char *call) {
    REAL(openat);
    char buffer[PATH_MAX];
    int error = open_fails(full_path(dir, path, buffer), flags, call);
    if (error) FAIL_WITH(error, -1);
    return real_openat(dir, path, flags, mode);
}

int open(const char *path, int flags, ...) { OPEN_MODE(); return opened(AT_FDCWD, path, flags, mode, "open"); }
int open64(const char *path, int flags, ...) { OPEN_MODE(); return opened(AT_FDCWD, path, flags, mode, "open64"); }
int openat(int dir, const char *path, int flags, ...) { OPEN_MODE(); return opened(dir, path, flags, mode, "openat"); }
int openat64(int dir, const char *path, int flags, ...) { OPEN_MODE(); return opened(dir, path, flags, mode, "openat64"); }
