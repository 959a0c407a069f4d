"""The report of bench/run.py: one table row per scenario metric, one column per contender,
ratio columns deadbolt/limit and deadbolt/best peer; charts of scenarios 2, 3 and 4."""
import os

import stats

# Not peers: the engine's own limits, and raw hiredis waiting as deadbolt does (scenario 1).
LIMITS = ["raw hiredis", "redis-benchmark", "raw, deadbolt's waits"]
OURS = "deadbolt"


def fmt(x):
    if x is None:
        return "–"
    if isinstance(x, float) and x >= 100 or isinstance(x, int):
        return f"{x:,.0f}"
    return f"{x:.3g}"


def cell(values):
    s = stats.spread([v for v in values if v is not None])
    if not s:
        return "–", None
    if s["min"] == s["max"]:
        return fmt(s["median"]), s["median"]
    return f"{fmt(s['median'])} [{fmt(s['min'])}..{fmt(s['max'])}]", s["median"]


def rows(results):
    """(scenario, metric, better, {contender: [values per rep]})"""
    sc = results["scenarios"]
    out = []
    s1 = sc["1_latency"]
    for cpu in ("0", "1"):
        for q in ("p50_us", "p99_us"):
            out.append(("1 uncontended latency", f"cycle {q[:3]} µs, client on CPU {cpu}", "lower",
                        {c: [r[q] for r in v[cpu]] for c, v in s1.items()}))
    for t in sc["2_throughput"]["deadbolt"]:
        out.append(("2 uncontended throughput", f"cycles/s, {t} threads", "higher",
                    {c: [r["cycles_per_s"] for r in v[t]] for c, v in sc["2_throughput"].items()}))
    s3 = sc["3_contended"]
    for label, get, better in (
            ("acquisitions/s", lambda r: r.get("acquisitions_per_s"), "higher"),
            ("handoffs/s", lambda r: r.get("handoffs_per_s"), "higher"),
            ("wait p50 ms", lambda r: r.get("wait_ms", {}).get("p50"), "lower"),
            ("wait p99 ms", lambda r: r.get("wait_ms", {}).get("p99"), "lower"),
            ("wait p999 ms", lambda r: r.get("wait_ms", {}).get("p999"), "lower"),
            ("wait max ms", lambda r: r.get("wait_ms", {}).get("max"), "lower"),
            ("Jain fairness", lambda r: r.get("jain"), "higher"),
            ("mean run", lambda r: r.get("mean_run"), "lower"),
            ("max run", lambda r: r.get("max_run"), "lower"),
            ("lost updates", lambda r: r.get("lost_updates"), "lower"),
            ("acquire failures", lambda r: r.get("failures"), "lower")):
        out.append(("3 contended, 8 processes", label, better, {c: [get(r) for r in v] for c, v in s3.items()}))
    for label, q in (("handoff p50 ms", "p50"), ("handoff p99 ms", "p99")):
        out.append(("6 handoff latency", label, "lower",
                    {c: [r.get("handoff_ms", {}).get(q) for r in v] for c, v in s3.items()}))
    s4 = sc["4_waiting"]
    for n in s4["deadbolt"]:
        out.append(("4 waiting cost", f"server commands, {n} waiting", "lower",
                    {c: [r["server_commands"] for r in v[n]] for c, v in s4.items()}))
        out.append(("4 waiting cost", f"client CPU s, {n} waiting", "lower",
                    {c: [r["cpu_s"] for r in v[n]] for c, v in s4.items()}))
    for n, v in sc["5_renewal"].items():
        for label, q in (("server commands/s", "server_commands_per_s"), ("server reads/s", "server_reads_per_s"),
                         ("client CPU %", "client_cpu_pct")):
            out.append(("5 renewal cost", f"{label}, {n}", "lower", {OURS: [r[q] for r in v]}))
    return out


def table(results):
    contenders = [c for c in LIMITS if c in results["scenarios"]["1_latency"]] + [OURS] + [
        c for c in results["scenarios"]["1_latency"] if c not in LIMITS and c != OURS]
    head = "| scenario | metric | " + " | ".join(contenders) + " | deadbolt / limit | deadbolt / best peer |"
    lines = [head, "|" + "---|" * (len(contenders) + 4)]
    for scenario, metric, better, values in rows(results):
        cells, med = [], {}
        for c in contenders:
            text, m = cell(values.get(c, []))
            cells.append(text)
            med[c] = m
        ours = med.get(OURS)
        limit = next((med[c] for c in LIMITS if med.get(c) is not None), None)
        # deadbolt's own variants (its async API) are not peers.
        peers = [med[c] for c in contenders
                 if c not in LIMITS and not c.startswith(OURS) and med.get(c) is not None]
        best = (max if better == "higher" else min)(peers) if peers else None
        lines.append(f"| {scenario} | {metric} | " + " | ".join(cells) + f" | {ratio(ours, limit)} | {ratio(ours, best)} |")
    return "\n".join(lines) + "\n"


def side_by_side(runs, labels, ratio_labels):
    """Scenario 3's metrics for each column of runs (name -> repetitions), with each column's
    ratio to the first where the label is in ratio_labels."""
    names = list(runs)
    lines = ["| metric | " + " | ".join(names) + " |", "|" + "---|" * (len(names) + 1)]
    getters = {
        "acquisitions/s": lambda r: r.get("acquisitions_per_s"),
        "handoffs/s": lambda r: r.get("handoffs_per_s"),
        "wait p50 ms": lambda r: r.get("wait_ms", {}).get("p50"),
        "wait p99 ms": lambda r: r.get("wait_ms", {}).get("p99"),
        "wait max ms": lambda r: r.get("wait_ms", {}).get("max"),
        "Jain fairness": lambda r: r.get("jain"),
        "max run": lambda r: r.get("max_run"),
        "lost updates": lambda r: r.get("lost_updates"),
        "violations": lambda r: r.get("violations"),
        "acquire failures": lambda r: r.get("failures"),
        "client CPU s": lambda r: r.get("cpu_s"),
    }
    for label in labels:
        get = getters[label]
        cells, meds = [], {}
        for n in names:
            text, meds[n] = cell([get(r) for r in runs[n]])
            cells.append(text)
        base = meds.get(names[0])
        if label in ratio_labels and base:
            cells = [c if n == names[0] or meds[n] is None else f"{c} ({meds[n] / base:.2f}x)"
                     for n, c in zip(names, cells)]
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def primitives_table(results):
    s3p = results["scenarios"].get("3p_primitives")
    if not s3p:
        return ""
    labels = ["acquisitions/s", "handoffs/s", "wait p50 ms", "wait p99 ms", "wait max ms",
              "Jain fairness", "max run", "lost updates", "violations", "acquire failures"]
    return ("\n3p. deadbolt's primitives, 8 processes on one name, a read-modify-write inside "
            "(readers read twice; semaphore holders count occupancy); (x) = ratio to Mutex.\n\n"
            + side_by_side(s3p, labels, ("acquisitions/s", "wait p50 ms", "wait p99 ms")))


def notified_table(results):
    s3n = results["scenarios"].get("3n_notified")
    if not s3n:
        return ""
    labels = ["acquisitions/s", "handoffs/s", "wait p50 ms", "wait p99 ms", "lost updates",
              "client CPU s"]
    return ("\n3n. Scenario 3's limit for a client that waits instead of polling: raw hiredis "
            "notified (SET NX and a fence in one script; refused, it waits for the release's "
            "PUBLISH on a subscription held all run, then tries again; every waiter woken), "
            "beside raw hiredis's busy retry and deadbolt, runs interleaved; (x) = ratio to raw "
            "hiredis busy.\n\n"
            + side_by_side(s3n, labels, ("acquisitions/s", "handoffs/s")))


def throughput_table(results):
    """Scenario 2 against its targets: deadbolt blocking (T threads) and async (T in flight
    from one thread) against the best node-redlock and the pipelined limit."""
    s2 = results["scenarios"].get("2_throughput")
    limit = results["scenarios"].get("2_pipelined_limit")
    if not s2 or not limit:
        return ""
    lim_text, lim = cell([r["cycles_per_s"] for r in limit])
    lines = ["| threads | deadbolt | deadbolt async | best node-redlock | deadbolt / node | "
             "async / node | deadbolt / limit | async / limit |", "|---" * 8 + "|"]
    for t in s2["deadbolt"]:
        ours, ours_m = cell([r["cycles_per_s"] for r in s2["deadbolt"][t]])
        asy, asy_m = cell([r["cycles_per_s"] for r in s2.get(ASYNC_NAME, {}).get(t, [])])
        nodes = [cell([r["cycles_per_s"] for r in v[t]]) for c, v in s2.items() if c.startswith("node-redlock")]
        node, node_m = max(nodes, key=lambda x: x[1] or 0) if nodes else ("–", None)
        lines.append(f"| {t} | {ours} | {asy} | {node} | {ratio(ours_m, node_m)} | {ratio(asy_m, node_m)} "
                     f"| {ratio(ours_m, lim)} | {ratio(asy_m, lim)} |")
    return (f"\n2t. Scenario 2 against its targets, cycles/s. The pipelined limit (deadbolt's "
            f"acquire and release scripts by redis-benchmark -P 16 -c 16): {lim_text}.\n\n"
            + "\n".join(lines) + "\n")


ASYNC_NAME = "deadbolt async"


def metrics_table(results):
    """Scenario 9: scenario 2's 16 threads with the metrics observer on and off, alternating in
    one run; the target is at most 3% fewer cycles/s."""
    s9 = results["scenarios"].get("9_metrics_overhead")
    if not s9:
        return ""
    lines = ["| API | without metrics | with metrics | with / without | target |", "|---" * 5 + "|"]
    for api in ("deadbolt", ASYNC_NAME):
        off, off_m = cell([r["cycles_per_s"] for r in s9.get(api, [])])
        on, on_m = cell([r["cycles_per_s"] for r in s9.get(api + " +metrics", [])])
        lines.append(f"| {api} | {off} | {on} | {ratio(on_m, off_m)} | ≥ 0.97x |")
    return ("\n9. What the metrics observer costs: scenario 2 (16 threads blocking, 16 in flight "
            "async), cycles/s with a deadbolt::metrics Registry counting every event and without, "
            "runs alternating.\n\n" + "\n".join(lines) + "\n")


# The rows of a lock+unlock cycle table: label, results key, which way is better.
CYCLE_METRICS = (("cycles/s", "cycles_per_s", "higher"), ("cycle p50 µs", "p50_us", "lower"),
                 ("cycle p99 µs", "p99_us", "lower"))


def ratio(a, b):
    return f"{a / b:.2f}x" if a is not None and b else "–"


def redlock_table(results):
    """Scenario 7: Redlock lock+unlock cycles, each deadbolt column against node-redlock on the
    same nodes."""
    s7 = results["scenarios"].get("7_redlock")
    if not s7:
        return ""
    ours = [c for c in next(iter(s7.values())) if c.startswith("deadbolt")]
    lines = ["| nodes | threads | metric | " + " | ".join(ours) + " | node-redlock | "
             + " | ".join(f"{c} / node-redlock" for c in ours) + " |",
             "|---" * (4 + 2 * len(ours)) + "|"]
    for nodes, by in s7.items():
        for t in by["deadbolt"]:
            for label, key, better in CYCLE_METRICS:
                cells = [cell([r[key] for r in by.get(c, {}).get(t, [])]) for c in ours]
                peer, peer_m = cell([r[key] for r in by["node-redlock"][t]])
                lines.append(f"| {nodes} | {t} | {label} ({better} is better) | "
                             + " | ".join(v for v, _ in cells) + f" | {peer} | "
                             + " | ".join(ratio(m, peer_m) for _, m in cells) + " |")
    return ("\n7. Redlock: lock+unlock cycles over independent redis-servers (each thread its own "
            "key; deadbolt with its fence (one round where the nodes take the fence it proposes, else two) unless fencing=0, node-redlock without fences; "
            "async = that many in flight from one thread).\n\n"
            + "\n".join(lines) + "\n")


def cluster_table(results):
    """Scenario 8: lock+unlock cycles on a Redis Cluster, deadbolt against redis-py."""
    s8 = results["scenarios"].get("8_cluster")
    if not s8:
        return ""
    lines = ["| threads | metric | deadbolt cluster | deadbolt one server | redis-py cluster "
             "| cluster / one server | deadbolt / redis-py |", "|---|---|---|---|---|---|---|"]
    for t in s8["deadbolt cluster"]:
        for label, key, better in CYCLE_METRICS:
            ours, ours_m = cell([r[key] for r in s8["deadbolt cluster"][t]])
            one, one_m = cell([r[key] for r in s8["deadbolt one server"][t]])
            peer, peer_m = cell([r[key] for r in s8["redis-py cluster"][t]])
            lines.append(f"| {t} | {label} ({better} is better) | {ours} | {one} | {peer} "
                         f"| {ratio(ours_m, one_m)} | {ratio(ours_m, peer_m)} |")
    return ("\n8. Redis Cluster of 3 masters (all on CPU 0): lock+unlock cycles, each thread its "
            "own key; deadbolt on one plain server for the cost of routing.\n\n"
            + "\n".join(lines) + "\n")


def charts(results, out):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return ["charts skipped: python3-matplotlib is not installed"]
    sc = results["scenarios"]

    def chart(name, series, **axes):
        """One PNG: a line per contender from series = {label: (xs, ys)}."""
        fig, ax = plt.subplots(figsize=(7, 4.5))
        for label, (xs, ys) in series.items():
            ax.plot(xs, ys, marker="o" if len(xs) < 10 else None, label=label)
        ax.set(**axes)
        ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(os.path.join(out, name), dpi=110)
        return name

    def by_count(data, metric):
        return {c: ([int(k) for k in sorted(v, key=int)],
                    [max(1, stats.spread([r[metric] for r in v[k]])["median"]) for k in sorted(v, key=int)])
                for c, v in data.items()}

    waits = {c: (sorted(v[0]["wait_ms_sample"]), [i / len(v[0]["wait_ms_sample"]) for i in range(len(v[0]["wait_ms_sample"]))])
             for c, v in sc["3_contended"].items() if v and v[0].get("wait_ms_sample")}
    made = [
        chart("throughput.png", by_count(sc["2_throughput"], "cycles_per_s"), xscale="log",
              xlabel="threads (or concurrent loops)", ylabel="acquire+release cycles/s",
              title="2. Uncontended throughput, distinct keys"),
        chart("contended_wait.png", waits, xscale="log", xlabel="wait for the lock, ms",
              ylabel="fraction of acquisitions", title="3. Contended: wait-time distribution (CDF), 8 processes"),
        chart("waiting.png", by_count(sc["4_waiting"], "server_commands"), xscale="log", yscale="log",
              xlabel="clients waiting", ylabel="server commands during the wait", title="4. Waiting cost"),
    ]
    plt.close("all")
    return made


def write(results, out):
    """Writes table.md and the charts into out; returns a short summary."""
    t = (table(results) + throughput_table(results) + metrics_table(results) + primitives_table(results) + notified_table(results)
         + redlock_table(results) + cluster_table(results))
    versions = ", ".join(f"{k} {v}" for k, v in results["versions"].items())
    made = charts(results, out)
    with open(os.path.join(out, "table.md"), "w") as f:
        reruns = "".join(f" Scenarios {', '.join(map(str, r['scenarios']))} re-run {r['started']}."
                         for r in results.get("reruns", []))
        f.write(f"Run {results['started']}, {results['reps']} repetitions, medians [min..max].{reruns} "
                f"Versions: {versions}.\n\n{t}\n" + "".join(f"![{m}]({m})\n" for m in made if m.endswith(".png")))
    return t + "\n" + "\n".join(made)
