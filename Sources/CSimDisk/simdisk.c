// The simulated disk (simdisk.h). One mutex guards the disks, their files and their locks;
// a file's bytes and shared memory are used by the one thread that drives its simulation.
#include "simdisk.h"
#include <sqlite3.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SECTOR 512

typedef struct simhandle simhandle;

typedef struct simshm {
    int refs;
    int nregion;
    int szRegion;
    char **regions;
    simhandle *handles;
} simshm;

typedef struct simfile {
    char *name;
    rchat_simdisk *disk;       // NULL once dead (after a power cut, or the disk destroyed)
    int refs;                  // open handles
    int linked;                // in its disk's list of files
    int deleteOnClose;
    unsigned char *cur;        // what reads see
    int64_t curSize, curCap;
    unsigned char *dur;        // what was synced (zeros beyond durSize)
    int64_t durSize, durCap;
    unsigned char *dirtyMap;   // sectors written (or zeroed) since the last sync
    int64_t dirtyMapLen;
    int64_t *dirty;
    int64_t ndirty, dirtyCap;
    // The shortest size a truncate gave it since the last sync, -1 for none: a truncate is
    // the file system's record of the file's length, not a write of its sectors, so a power
    // cut keeps it whole or not at all (the bytes it cut off are old ones, never torn).
    int64_t truncatedTo;
    int shared;
    simhandle *reserved, *pending, *exclusive;
    simshm *shm;
    // The real file at its name (the empty file `Database` creates before SQLite opens it),
    // kept empty exactly while this one is, as a real disk's would be: `lstat` then tells
    // an empty database from one with pages without opening it. Its bytes stay unwritten.
    int placeholder;
    int64_t placeholderSize;
    struct simfile *next;
} simfile;

struct rchat_simdisk {
    char *prefix;
    size_t prefixLen;
    simfile *files;
    int64_t writes, syncs;
    rchat_simdisk *next;
};

struct simhandle {
    sqlite3_file base;
    simfile *file;
    int lock;
    simshm *shm;
    unsigned shmShared, shmExclusive;
    simhandle *shmNext;
};

static pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
static rchat_simdisk *disks;
static sqlite3_vfs *system_vfs;

// What a new file whose name ends with `suffix` starts with (rchat_simdisk_set_template).
typedef struct simtemplate {
    char *suffix;
    unsigned char *bytes;
    int64_t size;
    struct simtemplate *next;
} simtemplate;
static simtemplate *templates;

// MARK: files

static int grow(unsigned char **buffer, int64_t *cap, int64_t size) {
    if (size <= *cap) return 1;
    int64_t next = *cap ? *cap : 4096;
    while (next < size) next *= 2;
    unsigned char *p = realloc(*buffer, (size_t)next);
    if (!p) return 0;
    memset(p + *cap, 0, (size_t)(next - *cap));
    *buffer = p;
    *cap = next;
    return 1;
}

static int markDirty(simfile *f, int64_t from, int64_t to) {
    for (int64_t s = from / SECTOR; s * SECTOR < to; s++) {
        if (s >= f->dirtyMapLen) {
            int64_t len = f->dirtyMapLen ? f->dirtyMapLen : 64;
            while (len <= s) len *= 2;
            unsigned char *m = realloc(f->dirtyMap, (size_t)len);
            if (!m) return 0;
            memset(m + f->dirtyMapLen, 0, (size_t)(len - f->dirtyMapLen));
            f->dirtyMap = m;
            f->dirtyMapLen = len;
        }
        if (f->dirtyMap[s]) continue;
        if (f->ndirty == f->dirtyCap) {
            int64_t cap = f->dirtyCap ? f->dirtyCap * 2 : 64;
            int64_t *d = realloc(f->dirty, (size_t)cap * sizeof *d);
            if (!d) return 0;
            f->dirty = d;
            f->dirtyCap = cap;
        }
        f->dirtyMap[s] = 1;
        f->dirty[f->ndirty++] = s;
    }
    return 1;
}

// Sectors written since the last sync that a truncate to `size` cut off entirely: whatever
// a power cut keeps of the file, those writes are not in it.
static void dropDirtyFrom(simfile *f, int64_t size) {
    int64_t kept = 0;
    for (int64_t i = 0; i < f->ndirty; i++) {
        if (f->dirty[i] * SECTOR < size) f->dirty[kept++] = f->dirty[i];
        else f->dirtyMap[f->dirty[i]] = 0;
    }
    f->ndirty = kept;
}

static void clearDirty(simfile *f) {
    for (int64_t i = 0; i < f->ndirty; i++) f->dirtyMap[f->dirty[i]] = 0;
    f->ndirty = 0;
}

static int syncFile(simfile *f) {
    if (f->truncatedTo >= 0 && f->truncatedTo < f->durSize) {
        memset(f->dur + f->truncatedTo, 0, (size_t)(f->durSize - f->truncatedTo));
        f->durSize = f->truncatedTo;
    }
    f->truncatedTo = -1;
    if (!grow(&f->dur, &f->durCap, f->curSize)) return 0;
    int64_t common = f->durSize < f->curSize ? f->durSize : f->curSize;
    if (f->curSize > f->durSize) memcpy(f->dur + f->durSize, f->cur + f->durSize, (size_t)(f->curSize - f->durSize));
    else memset(f->dur + f->curSize, 0, (size_t)(f->durSize - f->curSize));
    for (int64_t i = 0; i < f->ndirty; i++) {
        int64_t start = f->dirty[i] * SECTOR, end = start + SECTOR;
        if (end > common) end = common;
        if (start < end) memcpy(f->dur + start, f->cur + start, (size_t)(end - start));
    }
    f->durSize = f->curSize;
    clearDirty(f);
    if (f->disk) f->disk->syncs++;
    return 1;
}

static void mirrorEmptiness(simfile *f) {
    if (!f->placeholder || !f->disk || (f->curSize == 0) == (f->placeholderSize == 0)) return;
    if (truncate(f->name, (off_t)f->curSize) == 0) f->placeholderSize = f->curSize;
}

static simfile *newFile(rchat_simdisk *disk, const char *name) {
    simfile *f = calloc(1, sizeof *f);
    if (!f) return NULL;
    f->name = strdup(name);
    if (!f->name) { free(f); return NULL; }
    f->disk = disk;
    f->linked = 1;
    f->truncatedTo = -1;
    f->next = disk->files;
    disk->files = f;
    return f;
}

static void freeShm(simshm *shm) {
    for (int i = 0; i < shm->nregion; i++) free(shm->regions[i]);
    free(shm->regions);
    free(shm);
}

static void freeFile(simfile *f) {
    free(f->name);
    free(f->cur);
    free(f->dur);
    free(f->dirtyMap);
    free(f->dirty);
    if (f->shm) freeShm(f->shm);
    free(f);
}

static void unlinkFile(simfile *f) {
    if (!f->linked || !f->disk) return;
    for (simfile **p = &f->disk->files; *p; p = &(*p)->next) {
        if (*p == f) { *p = f->next; break; }
    }
    f->linked = 0;
    f->next = NULL;
}

// Unlinked and dead: freed now if no handle has it open, else at its last close.
static void retire(simfile *f) {
    unlinkFile(f);
    f->disk = NULL;
    if (f->refs == 0) freeFile(f);
}

static rchat_simdisk *diskFor(const char *path) {
    if (!path) return NULL;
    for (rchat_simdisk *d = disks; d; d = d->next) {
        if (strncmp(path, d->prefix, d->prefixLen) == 0) return d;
    }
    return NULL;
}

static simfile *findFile(rchat_simdisk *disk, const char *name) {
    for (simfile *f = disk->files; f; f = f->next) {
        if (strcmp(f->name, name) == 0) return f;
    }
    return NULL;
}

// MARK: the file's methods

#define HANDLE(file) simhandle *h = (simhandle *)(file)
#define DEAD(h) ((h)->file->disk == NULL)

static int simClose(sqlite3_file *file);

static int simRead(sqlite3_file *file, void *out, int amount, sqlite3_int64 offset) {
    HANDLE(file);
    pthread_mutex_lock(&mutex);
    int rc = SQLITE_OK;
    simfile *f = h->file;
    if (DEAD(h)) {
        rc = SQLITE_IOERR_READ;
    } else if (offset + amount <= f->curSize) {
        memcpy(out, f->cur + offset, (size_t)amount);
    } else {
        int64_t have = f->curSize > offset ? f->curSize - offset : 0;
        if (have > 0) memcpy(out, f->cur + offset, (size_t)have);
        memset((char *)out + have, 0, (size_t)(amount - have));
        rc = SQLITE_IOERR_SHORT_READ;
    }
    pthread_mutex_unlock(&mutex);
    return rc;
}

static int simWrite(sqlite3_file *file, const void *data, int amount, sqlite3_int64 offset) {
    HANDLE(file);
    pthread_mutex_lock(&mutex);
    int rc = SQLITE_OK;
    simfile *f = h->file;
    int64_t end = offset + amount;
    if (DEAD(h)) {
        rc = SQLITE_IOERR_WRITE;
    } else if (!grow(&f->cur, &f->curCap, end) || !markDirty(f, offset < f->curSize ? offset : f->curSize, end)) {
        rc = SQLITE_IOERR_NOMEM;
    } else {
        memcpy(f->cur + offset, data, (size_t)amount);
        if (end > f->curSize) f->curSize = end;
        f->disk->writes++;
        mirrorEmptiness(f);
    }
    pthread_mutex_unlock(&mutex);
    return rc;
}

static int simTruncate(sqlite3_file *file, sqlite3_int64 size) {
    HANDLE(file);
    pthread_mutex_lock(&mutex);
    int rc = SQLITE_OK;
    simfile *f = h->file;
    if (DEAD(h)) {
        rc = SQLITE_IOERR_TRUNCATE;
    } else if (size < f->curSize) {
        // The length changes (`truncatedTo`); only a sector it cuts in two is written.
        dropDirtyFrom(f, size);
        if (!markDirty(f, size, size)) rc = SQLITE_IOERR_NOMEM;
        else {
            memset(f->cur + size, 0, (size_t)(f->curSize - size));
            f->curSize = size;
            if (f->truncatedTo < 0 || size < f->truncatedTo) f->truncatedTo = size;
        }
    } else if (size > f->curSize) {
        if (!grow(&f->cur, &f->curCap, size) || !markDirty(f, f->curSize, size)) rc = SQLITE_IOERR_NOMEM;
        else f->curSize = size;
    }
    if (rc == SQLITE_OK && !DEAD(h)) mirrorEmptiness(f);
    pthread_mutex_unlock(&mutex);
    return rc;
}

static int simSync(sqlite3_file *file, int flags) {
    (void)flags;
    HANDLE(file);
    pthread_mutex_lock(&mutex);
    int rc = DEAD(h) ? SQLITE_IOERR_FSYNC : syncFile(h->file) ? SQLITE_OK : SQLITE_IOERR_NOMEM;
    pthread_mutex_unlock(&mutex);
    return rc;
}

static int simFileSize(sqlite3_file *file, sqlite3_int64 *size) {
    HANDLE(file);
    pthread_mutex_lock(&mutex);
    int rc = DEAD(h) ? SQLITE_IOERR_FSTAT : SQLITE_OK;
    *size = DEAD(h) ? 0 : h->file->curSize;
    pthread_mutex_unlock(&mutex);
    return rc;
}

// SQLite's five lock levels over the connections of this process, as the system's VFS keeps them.
static int simLock(sqlite3_file *file, int level) {
    HANDLE(file);
    pthread_mutex_lock(&mutex);
    int rc = SQLITE_OK;
    simfile *f = h->file;
    if (DEAD(h)) {
        rc = SQLITE_IOERR_LOCK;
    } else if (h->lock >= level) {
        // held already
    } else if (level == SQLITE_LOCK_SHARED) {
        if ((f->pending && f->pending != h) || (f->exclusive && f->exclusive != h)) rc = SQLITE_BUSY;
        else { f->shared++; h->lock = SQLITE_LOCK_SHARED; }
    } else if (level == SQLITE_LOCK_RESERVED) {
        if ((f->reserved && f->reserved != h) || (f->pending && f->pending != h)) rc = SQLITE_BUSY;
        else { f->reserved = h; h->lock = SQLITE_LOCK_RESERVED; }
    } else {
        if ((f->reserved && f->reserved != h) || (f->pending && f->pending != h)) {
            rc = SQLITE_BUSY;
        } else {
            f->pending = h;
            if (level == SQLITE_LOCK_EXCLUSIVE && f->shared <= 1) {
                f->exclusive = h;
                h->lock = SQLITE_LOCK_EXCLUSIVE;
            } else {
                h->lock = SQLITE_LOCK_PENDING;
                if (level == SQLITE_LOCK_EXCLUSIVE) rc = SQLITE_BUSY;
            }
        }
    }
    pthread_mutex_unlock(&mutex);
    return rc;
}

static void dropLocks(simhandle *h, int level) {
    simfile *f = h->file;
    if (h->lock <= level) return;
    if (f->reserved == h) f->reserved = NULL;
    if (f->pending == h) f->pending = NULL;
    if (f->exclusive == h) f->exclusive = NULL;
    if (level == SQLITE_LOCK_NONE && h->lock >= SQLITE_LOCK_SHARED) f->shared--;
    h->lock = level;
}

static int simUnlock(sqlite3_file *file, int level) {
    HANDLE(file);
    pthread_mutex_lock(&mutex);
    if (!DEAD(h)) dropLocks(h, level);
    else h->lock = level < h->lock ? level : h->lock;
    pthread_mutex_unlock(&mutex);
    return SQLITE_OK;
}

static int simCheckReservedLock(sqlite3_file *file, int *out) {
    HANDLE(file);
    pthread_mutex_lock(&mutex);
    int rc = SQLITE_OK;
    if (DEAD(h)) { rc = SQLITE_IOERR_CHECKRESERVEDLOCK; *out = 0; }
    else *out = h->file->reserved || h->file->pending || h->file->exclusive;
    pthread_mutex_unlock(&mutex);
    return rc;
}

static int simFileControl(sqlite3_file *file, int op, void *arg) {
    (void)file; (void)op; (void)arg;
    return SQLITE_NOTFOUND;
}

static int simSectorSize(sqlite3_file *file) { (void)file; return SECTOR; }

// Nothing promised: a write may tear anywhere between sectors, an append is not atomic.
static int simDeviceCharacteristics(sqlite3_file *file) { (void)file; return 0; }

// MARK: shared memory (the WAL's index), in memory, per file

static int simShmMap(sqlite3_file *file, int region, int size, int extend, void volatile **out) {
    HANDLE(file);
    pthread_mutex_lock(&mutex);
    int rc = SQLITE_OK;
    *out = NULL;
    simfile *f = h->file;
    if (DEAD(h)) { rc = SQLITE_IOERR_SHMMAP; goto done; }
    if (!h->shm) {
        if (!f->shm) {
            f->shm = calloc(1, sizeof *f->shm);
            if (!f->shm) { rc = SQLITE_IOERR_NOMEM; goto done; }
            f->shm->szRegion = size;
        }
        h->shm = f->shm;
        h->shm->refs++;
        h->shmNext = h->shm->handles;
        h->shm->handles = h;
    }
    simshm *shm = h->shm;
    if (region >= shm->nregion) {
        if (!extend) goto done;
        char **regions = realloc(shm->regions, (size_t)(region + 1) * sizeof *regions);
        if (!regions) { rc = SQLITE_IOERR_NOMEM; goto done; }
        shm->regions = regions;
        while (shm->nregion <= region) {
            char *r = calloc(1, (size_t)size);
            if (!r) { rc = SQLITE_IOERR_NOMEM; goto done; }
            shm->regions[shm->nregion++] = r;
        }
    }
    *out = shm->regions[region];
done:
    pthread_mutex_unlock(&mutex);
    return rc;
}

static int simShmLock(sqlite3_file *file, int offset, int n, int flags) {
    HANDLE(file);
    pthread_mutex_lock(&mutex);
    int rc = SQLITE_OK;
    unsigned mask = ((1u << n) - 1) << offset;
    if (flags & SQLITE_SHM_UNLOCK) {
        h->shmShared &= ~mask;
        h->shmExclusive &= ~mask;
    } else if (DEAD(h) || !h->shm) {
        rc = SQLITE_IOERR_SHMLOCK;
    } else {
        for (simhandle *o = h->shm->handles; o; o = o->shmNext) {
            if (o == h) continue;
            unsigned held = (flags & SQLITE_SHM_EXCLUSIVE) ? (o->shmShared | o->shmExclusive) : o->shmExclusive;
            if (held & mask) { rc = SQLITE_BUSY; break; }
        }
        if (rc == SQLITE_OK) {
            if (flags & SQLITE_SHM_EXCLUSIVE) h->shmExclusive |= mask;
            else h->shmShared |= mask;
        }
    }
    pthread_mutex_unlock(&mutex);
    return rc;
}

static void simShmBarrier(sqlite3_file *file) {
    (void)file;
    __sync_synchronize();
}

static void unmap(simhandle *h) {
    simshm *shm = h->shm;
    if (!shm) return;
    for (simhandle **p = &shm->handles; *p; p = &(*p)->shmNext) {
        if (*p == h) { *p = h->shmNext; break; }
    }
    h->shm = NULL;
    h->shmShared = h->shmExclusive = 0;
    if (--shm->refs == 0) {
        if (h->file->shm == shm) h->file->shm = NULL;
        freeShm(shm);
    }
}

static int simShmUnmap(sqlite3_file *file, int deleteFlag) {
    (void)deleteFlag;
    HANDLE(file);
    pthread_mutex_lock(&mutex);
    unmap(h);
    pthread_mutex_unlock(&mutex);
    return SQLITE_OK;
}

static const sqlite3_io_methods sim_io = {
    2, simClose, simRead, simWrite, simTruncate, simSync, simFileSize, simLock, simUnlock,
    simCheckReservedLock, simFileControl, simSectorSize, simDeviceCharacteristics,
    simShmMap, simShmLock, simShmBarrier, simShmUnmap, NULL, NULL,
};

static int simClose(sqlite3_file *file) {
    HANDLE(file);
    pthread_mutex_lock(&mutex);
    simfile *f = h->file;
    unmap(h);
    if (!DEAD(h)) dropLocks(h, SQLITE_LOCK_NONE);
    f->refs--;
    if (f->deleteOnClose && f->refs == 0 && f->disk) retire(f);
    else if (!f->disk && f->refs == 0) freeFile(f);
    h->file = NULL;
    pthread_mutex_unlock(&mutex);
    return SQLITE_OK;
}

// MARK: the VFS

// A new main database file with a template for its name starts as that template, durable
// (as the file a finished creation synced). Its placeholder grows with it.
static int startFromTemplate(simfile *f) {
    size_t len = strlen(f->name);
    for (simtemplate *t = templates; t; t = t->next) {
        size_t n = strlen(t->suffix);
        if (n > len || strcmp(f->name + len - n, t->suffix) != 0) continue;
        if (!grow(&f->cur, &f->curCap, t->size) || !grow(&f->dur, &f->durCap, t->size)) return -1;
        memcpy(f->cur, t->bytes, (size_t)t->size);
        memcpy(f->dur, t->bytes, (size_t)t->size);
        f->curSize = f->durSize = t->size;
        mirrorEmptiness(f);
        return 0;
    }
    return 0;
}

static int vfsOpen(sqlite3_vfs *vfs, const char *name, sqlite3_file *file, int flags, int *outFlags) {
    (void)vfs;
    pthread_mutex_lock(&mutex);
    rchat_simdisk *disk = diskFor(name);
    if (!disk) {
        pthread_mutex_unlock(&mutex);
        return system_vfs->xOpen(system_vfs, name, file, flags, outFlags);
    }
    int rc = SQLITE_OK;
    simfile *f = findFile(disk, name);
    if (f && (flags & SQLITE_OPEN_EXCLUSIVE)) rc = SQLITE_CANTOPEN;
    else if (!f && !(flags & SQLITE_OPEN_CREATE)) rc = SQLITE_CANTOPEN;
    else if (!f && (f = newFile(disk, name))) {
        struct stat st;
        if (lstat(name, &st) == 0 && S_ISREG(st.st_mode)) { f->placeholder = 1; f->placeholderSize = st.st_size; }
        if ((flags & SQLITE_OPEN_MAIN_DB) && startFromTemplate(f) != 0) rc = SQLITE_NOMEM;
    } else if (!f) rc = SQLITE_NOMEM;
    if (rc == SQLITE_OK) {
        simhandle *h = (simhandle *)file;
        memset(h, 0, sizeof *h);
        h->file = f;
        f->refs++;
        if (flags & SQLITE_OPEN_DELETEONCLOSE) f->deleteOnClose = 1;
        h->base.pMethods = &sim_io;
        if (outFlags) *outFlags = flags;
    }
    pthread_mutex_unlock(&mutex);
    return rc;
}

static int vfsDelete(sqlite3_vfs *vfs, const char *name, int syncDir) {
    (void)vfs;
    pthread_mutex_lock(&mutex);
    rchat_simdisk *disk = diskFor(name);
    if (!disk) {
        pthread_mutex_unlock(&mutex);
        return system_vfs->xDelete(system_vfs, name, syncDir);
    }
    simfile *f = findFile(disk, name);
    if (f && f->placeholder && f->placeholderSize != 0) (void)truncate(f->name, 0);
    if (f) retire(f);
    pthread_mutex_unlock(&mutex);
    return f ? SQLITE_OK : SQLITE_IOERR_DELETE_NOENT;
}

static int vfsAccess(sqlite3_vfs *vfs, const char *name, int flags, int *out) {
    (void)vfs;
    pthread_mutex_lock(&mutex);
    rchat_simdisk *disk = diskFor(name);
    if (!disk) {
        pthread_mutex_unlock(&mutex);
        return system_vfs->xAccess(system_vfs, name, flags, out);
    }
    *out = findFile(disk, name) != NULL;
    pthread_mutex_unlock(&mutex);
    return SQLITE_OK;
}

static int vfsFullPathname(sqlite3_vfs *vfs, const char *name, int size, char *out) {
    (void)vfs;
    pthread_mutex_lock(&mutex);
    int claimed = name[0] == '/' && diskFor(name) != NULL;
    pthread_mutex_unlock(&mutex);
    if (!claimed) return system_vfs->xFullPathname(system_vfs, name, size, out);
    if ((int)strlen(name) >= size) return SQLITE_CANTOPEN;
    strcpy(out, name);
    return SQLITE_OK;
}

static void *vfsDlOpen(sqlite3_vfs *vfs, const char *name) { (void)vfs; return system_vfs->xDlOpen(system_vfs, name); }
static void vfsDlError(sqlite3_vfs *vfs, int n, char *out) { (void)vfs; system_vfs->xDlError(system_vfs, n, out); }
static void (*vfsDlSym(sqlite3_vfs *vfs, void *lib, const char *sym))(void) { (void)vfs; return system_vfs->xDlSym(system_vfs, lib, sym); }
static void vfsDlClose(sqlite3_vfs *vfs, void *lib) { (void)vfs; system_vfs->xDlClose(system_vfs, lib); }
static int vfsRandomness(sqlite3_vfs *vfs, int n, char *out) { (void)vfs; return system_vfs->xRandomness(system_vfs, n, out); }
static int vfsSleep(sqlite3_vfs *vfs, int micro) { (void)vfs; return system_vfs->xSleep(system_vfs, micro); }
static int vfsCurrentTime(sqlite3_vfs *vfs, double *out) { (void)vfs; return system_vfs->xCurrentTime(system_vfs, out); }
static int vfsGetLastError(sqlite3_vfs *vfs, int n, char *out) { (void)vfs; return system_vfs->xGetLastError ? system_vfs->xGetLastError(system_vfs, n, out) : 0; }
static int vfsCurrentTimeInt64(sqlite3_vfs *vfs, sqlite3_int64 *out) { (void)vfs; return system_vfs->xCurrentTimeInt64(system_vfs, out); }

static sqlite3_vfs sim_vfs = {
    2, 0, 0, NULL, "rchat-simdisk", NULL,
    vfsOpen, vfsDelete, vfsAccess, vfsFullPathname, vfsDlOpen, vfsDlError, vfsDlSym, vfsDlClose,
    vfsRandomness, vfsSleep, vfsCurrentTime, vfsGetLastError, vfsCurrentTimeInt64, NULL, NULL, NULL,
};

static int install_rc = SQLITE_OK;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void installOnce(void) {
    // Before SQLite initializes (when this runs first in the process, as in rchat-simulate):
    // no count of the memory in use, which takes a lock around every allocation SQLite
    // makes. Too late in a process that already used SQLite, which keeps its settings.
    (void)sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
    system_vfs = sqlite3_vfs_find(NULL);
    if (!system_vfs) { install_rc = SQLITE_ERROR; return; }
    sim_vfs.szOsFile = system_vfs->szOsFile > (int)sizeof(simhandle) ? system_vfs->szOsFile : (int)sizeof(simhandle);
    sim_vfs.mxPathname = system_vfs->mxPathname;
    install_rc = sqlite3_vfs_register(&sim_vfs, 1);
}

int rchat_simdisk_install(void) {
    pthread_once(&once, installOnce);
    return install_rc;
}

// MARK: disks

rchat_simdisk *rchat_simdisk_create(const char *prefix) {
    rchat_simdisk *d = calloc(1, sizeof *d);
    if (!d) return NULL;
    d->prefix = strdup(prefix);
    if (!d->prefix) { free(d); return NULL; }
    d->prefixLen = strlen(prefix);
    pthread_mutex_lock(&mutex);
    d->next = disks;
    disks = d;
    pthread_mutex_unlock(&mutex);
    return d;
}

void rchat_simdisk_destroy(rchat_simdisk *disk) {
    if (!disk) return;
    pthread_mutex_lock(&mutex);
    for (rchat_simdisk **p = &disks; *p; p = &(*p)->next) {
        if (*p == disk) { *p = disk->next; break; }
    }
    while (disk->files) retire(disk->files);
    pthread_mutex_unlock(&mutex);
    free(disk->prefix);
    free(disk);
}

static uint64_t next(uint64_t *state) {
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

int64_t rchat_simdisk_power_cut(rchat_simdisk *disk, uint64_t seed) {
    uint64_t state = seed;
    int64_t unsynced = 0;
    pthread_mutex_lock(&mutex);
    // Oldest first, so that the same files in the same order draw the same numbers.
    int n = 0;
    for (simfile *f = disk->files; f; f = f->next) n++;
    simfile **order = malloc((size_t)(n ? n : 1) * sizeof *order);
    if (!order) abort();
    n = 0;
    for (simfile *f = disk->files; f; f = f->next) order[n++] = f;
    for (int i = n - 1; i >= 0; i--) {
        simfile *old = order[i];
        unsynced += old->ndirty;
        // 0: nothing unsynced reached the disk; 1: all of it; 2: the sectors first written up
        // to a point (a disk writing in order); 3: any of its sectors, each by a coin.
        // A truncate not synced: whole or not at all (never in mode 0, always in mode 1).
        int truncated = old->truncatedTo >= 0 && old->truncatedTo < old->durSize;
        uint64_t mode = (old->ndirty || old->curSize != old->durSize || truncated) ? next(&state) % 4 : 0;
        int64_t upTo = mode == 2 ? (int64_t)(next(&state) % (uint64_t)(old->ndirty + 1)) : old->ndirty;
        int cut = truncated && (mode == 1 || (mode >= 2 && (next(&state) & 1)));
        int64_t base = cut ? old->truncatedTo : old->durSize;
        int64_t size = mode == 0 ? base : mode == 1 ? old->curSize
                     : (next(&state) & 1) ? old->curSize : base;
        unsigned char *bytes = calloc(1, (size_t)(size ? size : 1));
        simfile *fresh = bytes ? newFile(disk, old->name) : NULL;
        if (!fresh || !grow(&fresh->dur, &fresh->durCap, size)) abort();   // out of memory in a simulation
        memcpy(bytes, old->dur, (size_t)(base < size ? base : size));
        for (int64_t k = 0; k < upTo && mode != 0; k++) {
            if (mode == 3 && (next(&state) & 1)) continue;
            int64_t start = old->dirty[k] * SECTOR, end = start + SECTOR;
            if (end > size) end = size;
            for (int64_t b = start; b < end; b++) bytes[b] = b < old->curSize ? old->cur[b] : 0;
        }
        fresh->cur = bytes;
        fresh->curSize = size;
        fresh->curCap = size ? size : 1;
        memcpy(fresh->dur, bytes, (size_t)size);
        fresh->durSize = size;
        fresh->placeholder = old->placeholder;
        fresh->placeholderSize = old->placeholderSize;
        mirrorEmptiness(fresh);
        retire(old);
    }
    free(order);
    pthread_mutex_unlock(&mutex);
    return unsynced;
}

int rchat_simdisk_set_template(const char *suffix, const unsigned char *bytes, int64_t size) {
    simtemplate *t = calloc(1, sizeof *t);
    if (!t) return -1;
    t->suffix = strdup(suffix);
    t->bytes = malloc((size_t)(size ? size : 1));
    if (!t->suffix || !t->bytes) { free(t->suffix); free(t->bytes); free(t); return -1; }
    memcpy(t->bytes, bytes, (size_t)size);
    t->size = size;
    pthread_mutex_lock(&mutex);
    for (simtemplate *old = templates; old; old = old->next) {
        if (strcmp(old->suffix, suffix) == 0) {
            pthread_mutex_unlock(&mutex);
            free(t->suffix); free(t->bytes); free(t);
            return 1;
        }
    }
    t->next = templates;
    templates = t;
    pthread_mutex_unlock(&mutex);
    return 0;
}

int64_t rchat_simdisk_copy(rchat_simdisk *disk, const char *path, unsigned char **out) {
    pthread_mutex_lock(&mutex);
    simfile *f = findFile(disk, path);
    int64_t size = f ? f->curSize : -1;
    *out = NULL;
    if (f) {
        *out = malloc((size_t)(size ? size : 1));
        if (*out) memcpy(*out, f->cur, (size_t)size); else size = -1;
    }
    pthread_mutex_unlock(&mutex);
    return size;
}

int rchat_simdisk_sync(rchat_simdisk *disk, const char *path) {
    pthread_mutex_lock(&mutex);
    simfile *f = findFile(disk, path);
    int rc = f && syncFile(f) ? 0 : -1;
    pthread_mutex_unlock(&mutex);
    return rc;
}

int64_t rchat_simdisk_writes(rchat_simdisk *disk) {
    pthread_mutex_lock(&mutex);
    int64_t n = disk->writes;
    pthread_mutex_unlock(&mutex);
    return n;
}

int64_t rchat_simdisk_syncs(rchat_simdisk *disk) {
    pthread_mutex_lock(&mutex);
    int64_t n = disk->syncs;
    pthread_mutex_unlock(&mutex);
    return n;
}
