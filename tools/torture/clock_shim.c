/* An LD_PRELOAD clock for the lock server, steered by the torture nemesis through the page
 * in clock_shim.h. libfaketime would be the usual tool, but it deadlocks against the jemalloc
 * built into Debian's redis-server (libfaketime issue #130): both call each other while
 * initialising. So this reads the kernel clock with a raw syscall and never allocates.
 * Only wall time (CLOCK_REALTIME, gettimeofday, time) is steered: Redis expires keys and
 * answers TIME by it; its monotonic timers stay true, as a real clock step would leave them. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stddef.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "clock_shim.h"

static struct deadbolt_shim_clock* page(void) {
    static struct deadbolt_shim_clock* mapped; /* racing first callers may each map it: harmless */
    static int tried;
    struct deadbolt_shim_clock* p = __atomic_load_n(&mapped, __ATOMIC_ACQUIRE);
    if (p || __atomic_load_n(&tried, __ATOMIC_ACQUIRE)) return p;
    const char* path = getenv(DEADBOLT_CLOCK_FILE_ENV);
    int fd = path ? open(path, O_RDONLY | O_CLOEXEC) : -1;
    if (fd >= 0) {
        void* m = mmap(NULL, sizeof *p, PROT_READ, MAP_SHARED, fd, 0);
        close(fd);
        if (m != MAP_FAILED) p = m;
    }
    __atomic_store_n(&mapped, p, __ATOMIC_RELEASE);
    __atomic_store_n(&tried, 1, __ATOMIC_RELEASE);
    return p;
}

static int64_t steered_ns(int64_t real) {
    const struct deadbolt_shim_clock* c = page();
    return c ? deadbolt_steer(c, real) : real;
}

int clock_gettime(clockid_t id, struct timespec* ts) {
    int rc = (int)syscall(SYS_clock_gettime, id, ts);
    if (rc == 0 && (id == CLOCK_REALTIME || id == CLOCK_REALTIME_COARSE)) {
        int64_t ns = steered_ns((int64_t)ts->tv_sec * 1000000000 + ts->tv_nsec);
        ts->tv_sec = ns / 1000000000;
        ts->tv_nsec = ns % 1000000000;
    }
    return rc;
}

int gettimeofday(struct timeval* tv, void* tz) {
    (void)tz;
    struct timespec ts;
    if (clock_gettime(CLOCK_REALTIME, &ts) != 0) return -1;
    tv->tv_sec = ts.tv_sec;
    tv->tv_usec = ts.tv_nsec / 1000;
    return 0;
}

time_t time(time_t* out) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    if (out) *out = ts.tv_sec;
    return ts.tv_sec;
}
