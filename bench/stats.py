"""Pure statistics of bench/run.py: percentiles, medians with spread, and what a contended
run's acquisition log says (runs, handoffs, fairness, wait and handoff latencies)."""
import statistics


def pct(values, p):
    """The p-th percentile (0..1) by nearest rank; 0 for no values."""
    v = sorted(values)
    return v[min(len(v) - 1, int(p * len(v)))] if v else 0


def spread(values):
    """{median, min, max} of repeated measurements."""
    return {"median": statistics.median(values), "min": min(values), "max": max(values)} if values else None


def jain(counts):
    """Jain's fairness index: 1 when every process got the same share, 1/n when one got all."""
    s, sq = sum(counts), sum(c * c for c in counts)
    return s * s / (len(counts) * sq) if sq else 0


def contended(per_process, counter, writes=None):
    """Merges the [invoked, ok, released] logs of the processes of one contended run.

    A run is a maximal sequence of consecutive acquisitions by one process; handoffs/s is
    acquisitions/s divided by the mean run (a lock that one process keeps re-taking while the
    others sleep scores many acquisitions but few handoffs). Handoff latency is the time from
    one holder's release to the next holder's acquire-ok, when the next is another process.
    writes: how many critical sections incremented the counter, when not every one did (an
    RWLock's readers, a semaphore's holders); lost updates are those missing from counter.
    """
    events = sorted((ok, inv, rel, pid) for pid, log in enumerate(per_process) for inv, ok, rel in log)
    n = len(events)
    if n == 0:
        return {"acquisitions": 0, "lost_updates": counter}
    span = (events[-1][0] - events[0][0]) / 1e9 or 1e-9
    runs, current = [], 1
    handoff_ns = []
    for prev, cur in zip(events, events[1:]):
        if cur[3] == prev[3]:
            current += 1
        else:
            runs.append(current)
            current = 1
            handoff_ns.append(cur[0] - prev[2])
    runs.append(current)
    waits_ms = [(ok - inv) / 1e6 for ok, inv, _, _ in events]
    mean_run = sum(runs) / len(runs)
    return {
        "acquisitions": n,
        "acquisitions_per_s": n / span,
        "handoffs_per_s": n / mean_run / span,
        "wait_ms": {"p50": pct(waits_ms, 0.5), "p99": pct(waits_ms, 0.99),
                    "p999": pct(waits_ms, 0.999), "max": max(waits_ms)},
        "wait_ms_sample": sorted(waits_ms)[:: max(1, n // 2000)],
        "jain": jain([len(log) for log in per_process]),
        "mean_run": mean_run,
        "max_run": max(runs),
        "handoff_ms": {"p50": pct(handoff_ns, 0.5) / 1e6, "p99": pct(handoff_ns, 0.99) / 1e6,
                       "max": max(handoff_ns, default=0) / 1e6},
        "lost_updates": (n if writes is None else writes) - counter,
    }


def median_rate(rows, field):
    """The median over rows of field per second of each row's window ("seconds")."""
    return spread([r[field] / r["seconds"] for r in rows])["median"]


def cell(rows, field):
    """A table cell: the median of rows' field and its range, "1,234 (1,100..1,300)"."""
    s = spread([r[field] for r in rows])
    return f"{s['median']:,.0f} ({s['min']:,.0f}..{s['max']:,.0f})"


def ratio(rows, base, field):
    """rows' median field over base's, "0.75x"."""
    return f"{spread([r[field] for r in rows])['median'] / spread([r[field] for r in base])['median']:.2f}x"


def cycles_table(title, by_contender, base):
    """The markdown of one cycles scenario: each contender's cycles/s, its ratio to base's,
    and latency percentiles."""
    out = [f"\n**{title}\n", "| contender | cycles/s | vs raw | p50 µs | p99 µs |", "|---|---:|---:|---:|---:|"]
    for c, rows in by_contender.items():
        out.append(f"| {c} | {cell(rows, 'cycles_per_s')} | {ratio(rows, by_contender.get(base, []), 'cycles_per_s')} | "
                   f"{cell(rows, 'p50_us')} | {cell(rows, 'p99_us')} |")
    return out


def uncontended_tables(prefix, sc, raw, own, ours, what):
    """The markdown of the two uncontended scenarios (prefix "D" or "Z": {prefix}1_latency and
    {prefix}2_throughput in sc), each with deadbolt's ratio to its own `what` sent raw (the own
    contender) where that was measured: what the library adds to its requests."""
    out = []
    for scenario, title in ((f"{prefix}1_latency", f"{prefix}1 uncontended, one thread** (lock + unlock on its own name)"),
                            (f"{prefix}2_throughput", f"{prefix}2 uncontended throughput** (threads in flight, each on "
                                                      "its own name)")):
        out += cycles_table(title, sc[scenario], raw)
        if own in sc[scenario]:
            out.append(f"\ndeadbolt against its own {what} sent raw (what the library adds): "
                       f"{ratio(sc[scenario][ours], sc[scenario][own], 'cycles_per_s')}")
    return out


def contended_table(title, by_contender):
    """The markdown of one contended scenario (rows of contended()); a contender that could
    not run says why."""
    out = [f"\n**{title}\n",
           "| contender | acquisitions/s | handoffs/s | handoff p50 ms | wait p99 ms | Jain | lost updates |",
           "|---|---:|---:|---:|---:|---:|---:|"]
    for c, rows in by_contender.items():
        if any("error" in r for r in rows):
            out.append(f"| {c} | fails: {next(r['error'] for r in rows if 'error' in r)} ||||||")
            continue
        med = lambda f: spread([r[f] for r in rows])["median"]
        out.append(f"| {c} | {cell(rows, 'acquisitions_per_s')} | {med('handoffs_per_s'):,.0f} | "
                   f"{spread([r['handoff_ms']['p50'] for r in rows])['median']:.1f} | "
                   f"{spread([r['wait_ms']['p99'] for r in rows])['median']:.0f} | "
                   f"{med('jain'):.2f} | {sum(r['lost_updates'] for r in rows)} |")
    return out
