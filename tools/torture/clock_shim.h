/* The shared page through which deadbolt-torture steers a clock (the lock server's wall
 * clock, or a worker's lease clock): steered = anchor_wall + (real - anchor_real) * rate. A seqlock
 * guards it (seq is odd while the writer is mid-update). C, because the reader is an LD_PRELOAD
 * library. */
#ifndef DEADBOLT_TORTURE_CLOCK_SHIM_H
#define DEADBOLT_TORTURE_CLOCK_SHIM_H

#include <stdint.h>

struct deadbolt_shim_clock {
    uint64_t seq;
    int64_t anchor_real_ns; /* CLOCK_REALTIME, as the kernel reports it */
    int64_t anchor_wall_ns; /* what the server sees at anchor_real_ns */
    double rate;
};

#define DEADBOLT_CLOCK_FILE_ENV "DEADBOLT_CLOCK_FILE"

/* The steered time for a reading `real` of the underlying clock. */
static inline int64_t deadbolt_steer(const struct deadbolt_shim_clock* c, int64_t real) {
    for (;;) {
        uint64_t s1 = __atomic_load_n(&c->seq, __ATOMIC_ACQUIRE);
        if (s1 & 1) continue;
        int64_t ar = __atomic_load_n(&c->anchor_real_ns, __ATOMIC_RELAXED);
        int64_t aw = __atomic_load_n(&c->anchor_wall_ns, __ATOMIC_RELAXED);
        double rate;
        __atomic_load(&c->rate, &rate, __ATOMIC_RELAXED);
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        if (__atomic_load_n(&c->seq, __ATOMIC_RELAXED) == s1)
            return aw + (int64_t)((double)(real - ar) * rate);
    }
}

/* The steered clock's current rate (steered seconds per real second). */
static inline double deadbolt_steer_rate(const struct deadbolt_shim_clock* c) {
    double rate;
    __atomic_load(&c->rate, &rate, __ATOMIC_RELAXED);
    return rate;
}

#endif
