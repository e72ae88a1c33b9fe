#ifndef RCHAT_SIMDISK_H
#define RCHAT_SIMDISK_H
#include <stdint.h>

// A simulated disk under SQLite, for the deterministic simulation (docs/ARCHITECTURE.md,
// "Deterministic simulation"). `rchat_simdisk_install` registers a VFS as SQLite's default
// that hands every file to the system's VFS, except the files whose path begins with the
// prefix of a disk made by `rchat_simdisk_create`: those live in memory. Each such file keeps
// what was synced apart from what was written since; a power cut drops, or tears by sector,
// what was not synced, and makes every file handle opened before it dead (each of its calls
// fails), as the processes that held them are gone.

typedef struct rchat_simdisk rchat_simdisk;

// Registers the VFS once (later calls do nothing). SQLITE_OK or SQLite's error code.
int rchat_simdisk_install(void);

// A disk holding every file whose path begins with `prefix` (no other disk may own a prefix
// of it). Empty at first.
rchat_simdisk *rchat_simdisk_create(const char *prefix);

// Forgets every file of the disk. No connection may have one of its files open.
void rchat_simdisk_destroy(rchat_simdisk *disk);

// The power goes: every file keeps what was synced and, of what was written after, a part
// chosen from `seed` (nothing, all, the sectors first written up to a point, or any of its
// 512-byte sectors; a file whose length
// changed ends at its old or its new length). Every handle open until now is dead.
// Returns the number of sectors that were not synced.
int64_t rchat_simdisk_power_cut(rchat_simdisk *disk, uint64_t seed);

// Makes what was written to the file at `path` durable (as fdatasync). 0, or -1 if the disk
// has no such file.
int rchat_simdisk_sync(rchat_simdisk *disk, const char *path);

// From now on, a main database file made on any disk whose name ends with `suffix` starts
// with these `size` bytes (copied), as synced, instead of empty: a store made once, for the
// many made alike. 0, 1 when `suffix` already has one (kept), -1 out of memory.
int rchat_simdisk_set_template(const char *suffix, const unsigned char *bytes, int64_t size);

// A copy (malloc'd, the caller frees it) of what reads of the file at `path` see; its size,
// or -1 when the disk has no such file.
int64_t rchat_simdisk_copy(rchat_simdisk *disk, const char *path, unsigned char **out);

// Writes done and syncs done on the disk's files so far (for tests and the run's figures).
int64_t rchat_simdisk_writes(rchat_simdisk *disk);
int64_t rchat_simdisk_syncs(rchat_simdisk *disk);

#endif
