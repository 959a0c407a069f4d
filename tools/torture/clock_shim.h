/* The shared page through which deadbolt-torture steers the lock server's wall clock:
 * wall = anchor_wall + (real - anchor_real) * rate. A seqlock guards it (seq is odd while
 * the writer is mid-update). C, because the reader is an LD_PRELOAD library. */
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

#endif
