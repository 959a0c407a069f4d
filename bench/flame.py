"""CPU flame graphs and hot-function tables for a bench contender, from `perf record` data.

Workflow (standard library only):

    perf record -e cpu-clock --call-graph dwarf,16384 -g -o /tmp/x.data -- <contender ...>
    python3 bench/flame.py fold /tmp/x.data > /tmp/x.folded
    python3 bench/flame.py svg /tmp/x.folded --title "async, 64 clients" > /tmp/x.svg
    python3 bench/flame.py top /tmp/x.folded [--by self|total] [-n 30]

`fold` runs `perf script` and turns every sample into one line of "folded stacks"
(`root;...;leaf count`, one line per distinct stack) with readable frame names:
offsets, template arguments and argument lists removed, kernel frames prefixed `[k] `,
frames of the C/C++ runtime libraries suffixed with the library (`malloc [libc]`).
`perf script` runs twice side by side: with inlined frames for the call chains, and with
--no-inline to learn which object file each inlined frame belongs to (perf prints only
`(inlined)`); `fold -` reads `perf script` text from stdin instead, without that second pass.
`svg` draws a static flame graph of a folded file; `top` prints the hottest functions
and how the samples split between kernel, allocation, locking and the rest.
"""
import argparse
import colorsys
import os
import re
import subprocess
import sys
import zlib
from collections import Counter
from itertools import zip_longest
from typing import NamedTuple
from xml.sax.saxutils import escape

PERF = "/usr/bin/perf"

KERNEL_PREFIX = "[k] "
KERNEL_START = 0xFFFF800000000000
RUNTIME_LIBS = {"libc", "libstdc++", "libm", "libgcc_s", "libpthread", "libdl", "librt"}
RUNTIME_TAG = re.compile(r"\[(?:unknown )?(?P<lib>%s|ld-linux[\w-]*)(?:\.so[\w.]*)?\]$"
                         % "|".join(map(re.escape, sorted(RUNTIME_LIBS))))
TAG = re.compile(r" \[[^\[\]]+\]$")

MALLOC = re.compile(r"malloc|calloc|realloc|free|operator new|operator delete")
LOCKS = re.compile(r"pthread_mutex|pthread_cond|pthread_rwlock|futex|condition_variable|std::mutex"
                   r"|lll_(?:mutex_)?(?:un)?lock")
SYSCALL_ENTRY = re.compile(r"entry_SYSCALL|do_syscall_|syscall_exit|syscall_enter|syscall_return")

OPERATOR = re.compile(r"operator\s*(?:<=>|<<=|>>=|->\*|<<|>>|<=|>=|->|<|>|\(\)|\[\])")
QUALIFIERS = re.compile(r"(?:\s*(?:const\b|volatile\b|noexcept\b|&&|&))*")
OFFSET = re.compile(r"\+0x[0-9a-fA-F]+$")
SYMBOL_VERSION = re.compile(r"@@?[A-Z][A-Z0-9_]*_[0-9.]+$")
SAMPLE_HEADER = re.compile(r"^(?P<comm>.+?)\s+(?P<pid>\d+)(?:/\d+)?\s+(?:\[\d+\]\s+)?\d+\.\d+:")
FRAME_START = re.compile(r"^\s+(?P<addr>[0-9a-fA-F]+)\s+(?P<rest>.*?)\s*$")


# ---------------------------------------------------------------- symbol names

def _operator_at(text, i):
    """The operator token (`operator<<`, `operator()` ...) starting at text[i], or None."""
    if not text.startswith("operator", i):
        return None
    if i > 0 and (text[i - 1].isalnum() or text[i - 1] == "_"):
        return None
    m = OPERATOR.match(text, i)
    return m.group() if m else None


def _closing_index(text, start):
    """Index of the bracket closing text[start] ('<' or '('); len(text) if it never closes.

    Angle brackets inside parentheses are ignored, so `foo<(a > b)>` and
    `f<void (int)>` close where they should; operator tokens and `->` are skipped."""
    stack = []
    i = start
    while i < len(text):
        op = _operator_at(text, i)
        if op:
            i += len(op)
            continue
        if text.startswith("->", i):
            i += 2
            continue
        c = text[i]
        if c == "(":
            stack.append(c)
        elif c == "<" and (not stack or stack[-1] == "<"):
            stack.append(c)
        elif c == ")":
            while stack and stack.pop() != "(":
                pass
        elif c == ">" and stack and stack[-1] == "<":
            stack.pop()
        if not stack:
            return i
        i += 1
    return len(text)


def simplify_symbol(name):
    """`ns::f<std::vector<int> >(int) const` -> `ns::f<…>`; keeps operator names,
    `(anonymous namespace)` and labels lambdas `<lambda>`."""
    out = []
    i = 0
    while i < len(name):
        op = _operator_at(name, i)
        if op:
            out.append(op)
            i += len(op)
            continue
        c = name[i]
        if c not in "<(":
            out.append(c)
            i += 1
            continue
        end = _closing_index(name, i)
        inner = name[i + 1:end]
        if c == "<":
            out.append("<lambda>" if inner.startswith("lambda") else "<…>")
            i = end + 1
        elif inner == "anonymous namespace":
            out.append("(anonymous namespace)")
            i = end + 1
        else:
            i = QUALIFIERS.match(name, end + 1).end()
    return " ".join("".join(out).split())


def _library(dso):
    """`/usr/lib/x86_64-linux-gnu/libstdc++.so.6.0.30` -> `libstdc++`."""
    return os.path.basename(dso).split(".so")[0]


def is_runtime_dso(dso):
    lib = _library(dso)
    return lib in RUNTIME_LIBS or lib.startswith("ld-linux")


def frame_name(addr, symbol, dso):
    """Display name of one perf frame; dso is the real (non-`inlined`) object or None."""
    dso = dso or ""
    kernel = dso == "[kernel.kallsyms]" or (dso.startswith("[") and addr >= KERNEL_START)
    symbol = SYMBOL_VERSION.sub("", OFFSET.sub("", symbol.strip()))
    if symbol in ("", "[unknown]"):
        base = os.path.basename(dso.strip("[]")) if dso and not kernel else ""
        name = f"[unknown {base}]" if base and base != "unknown" else "[unknown]"
    else:
        name = simplify_symbol(symbol)
        if not kernel and is_runtime_dso(dso):
            name = f"{name} [{_library(dso)}]"
    name = name.replace(";", ":")
    return KERNEL_PREFIX + name if kernel else name


# ---------------------------------------------------------------- perf script -> folded

class Frame(NamedTuple):
    addr: int
    symbol: str
    dso: str | None


def parse_frame_line(line):
    """`\\t addr symbol+off (dso)` -> Frame; dso is None when the line has none."""
    m = FRAME_START.match(line)
    if not m:
        return None
    addr, rest = int(m.group("addr"), 16), m.group("rest")
    if rest.endswith(")"):
        depth = 0
        for i in range(len(rest) - 1, -1, -1):
            depth += {")": 1, "(": -1}.get(rest[i], 0)
            if depth == 0:
                return Frame(addr, rest[:i].rstrip(), rest[i + 1:-1])
    return Frame(addr, rest, None)


def iter_samples(lines):
    """Yields (comm, frames) per sample of `perf script` text, frames leaf first."""
    comm, frames = None, []
    for line in lines:
        line = line.rstrip("\n")
        if not line.strip():
            if comm is not None:
                yield comm, frames
            comm, frames = None, []
        elif line[0].isspace():
            frame = parse_frame_line(line)
            if frame and comm is not None:
                frames.append(frame)
        else:
            if comm is not None:
                yield comm, frames
            m = SAMPLE_HEADER.match(line)
            comm, frames = (m.group("comm").strip() if m else line.split()[0]), []
    if comm is not None:
        yield comm, frames


def address_runs(frames):
    """Leaf-first frames cut into runs of consecutive frames with the same address: one
    function with the callees inlined into it at that point (or direct recursion)."""
    runs = []
    for frame in frames:
        if runs and runs[-1][-1].addr == frame.addr:
            runs[-1].append(frame)
        else:
            runs.append([frame])
    return runs


def resolve_run(run, owners):
    """The frames of one address with the object file of the function(s) they belong to;
    each function's own (outermost) frame takes its owner's symbol-table name when the
    run splits evenly among the owners."""
    dso = next((o.dso for o in owners if o.dso != "inlined"), None)
    size, rest = divmod(len(run), len(owners))
    resolved = []
    for i, frame in enumerate(run):
        if size and not rest and (i + 1) % size == 0:
            frame = owners[i // size]
        resolved.append(frame._replace(dso=dso))
    return resolved


def resolve_inlined(frames, plain=None):
    """Gives every frame the object file of its function (perf prints `inlined` instead).

    `plain` is the same sample from `perf script --no-inline`, which names each function's
    object even when perf marks the function itself `inlined` (its debug-info name differs
    from the symbol, as with `__GI___libc_malloc` for `malloc`) and gives fuller names
    (`_M_run` -> `std::thread::_State_impl<…>::_M_run`). Returns (frames, matched)."""
    runs = address_runs(frames)
    plain_runs = address_runs(plain) if plain is not None else []
    matched = (len(plain_runs) == len(runs)
               and all(r[0].addr == p[0].addr for r, p in zip(runs, plain_runs)))
    resolved = []
    for i, run in enumerate(runs):
        resolved += resolve_run(run, plain_runs[i] if matched else run)
    return resolved, matched


def sample_stack(comm, frames, comm_root):
    """Root-first frame names of one sample."""
    names = [comm.replace(";", ":")] if comm_root else []
    names += [frame_name(*f) for f in reversed(frames)]
    if not frames:
        names.append("[no callchain]")
    return names


def perf_script(perf_data, *options):
    """Lines of `perf script -i perf_data options...`."""
    proc = subprocess.Popen([PERF, "script", *options, "-i", perf_data],
                            stdout=subprocess.PIPE, text=True, errors="replace")
    yield from proc.stdout
    if proc.wait() != 0:
        sys.exit(f"flame.py: {' '.join(proc.args)} exited with status {proc.returncode}")


def perf_samples(perf_data, inline=True):
    """(comm, frames, --no-inline twin frames or None) per sample."""
    if perf_data == "-":
        samples, twins = iter_samples(sys.stdin), ()
    elif inline:
        samples = iter_samples(perf_script(perf_data))
        twins = iter_samples(perf_script(perf_data, "--no-inline"))
    else:
        samples, twins = iter_samples(perf_script(perf_data, "--no-inline")), ()
    for sample, twin in zip_longest(samples, twins):
        if sample is None:
            break
        yield *sample, twin[1] if twin else None


def fold(samples, comm_root=True, keep=None):
    """(Counter of root-first stack tuples with a frame matching keep, number of samples
    whose --no-inline twin did not line up)."""
    stacks, unmatched = Counter(), 0
    for comm, frames, twin in samples:
        frames, matched = resolve_inlined(frames, twin)
        unmatched += twin is not None and not matched
        stack = tuple(sample_stack(comm, frames, comm_root))
        if keep is None or any(keep.search(f) for f in stack):
            stacks[stack] += 1
    return stacks, unmatched


def cmd_fold(args):
    stacks, unmatched = fold(perf_samples(args.perf_data, args.inline), args.comm_root, args.keep)
    for stack, count in sorted(stacks.items()):
        print(f"{';'.join(stack)} {count}")
    note = f"; {unmatched} samples without a --no-inline twin" if unmatched else ""
    print(f"flame.py: {sum(stacks.values())} samples in {len(stacks)} distinct stacks{note}",
          file=sys.stderr)


# ---------------------------------------------------------------- folded input

def read_folded(path):
    """[(frames tuple, count)] from a folded file (`-` for stdin)."""
    stream = sys.stdin if path == "-" else open(path, encoding="utf-8", errors="replace")
    stacks = []
    with stream:
        for line in stream:
            stack, _, count = line.rstrip("\n").rpartition(" ")
            if stack and count.isdigit() and int(count) > 0:
                stacks.append((tuple(stack.split(";")), int(count)))
    return stacks


def frame_kind(name):
    if name.startswith(KERNEL_PREFIX):
        return "kernel"
    if RUNTIME_TAG.search(name):
        return "runtime"
    return "user"


def bare_name(name):
    """The function name without the `[k] ` prefix or a ` [libc]` suffix."""
    if name.startswith(KERNEL_PREFIX):
        name = name[len(KERNEL_PREFIX):]
    return TAG.sub("", name) if RUNTIME_TAG.search(name) else name


# ---------------------------------------------------------------- svg

WIDTH = 1200
ROW = 16
PAD = 10
FONT = 11
CHAR_WIDTH = 0.6 * FONT
MIN_FRACTION = 0.001

PALETTES = {  # (hue degrees, saturation, lightness) ranges
    "user": ((0, 55), (0.75, 0.95), (0.55, 0.67)),
    "kernel": ((200, 230), (0.45, 0.65), (0.60, 0.72)),
    "runtime": ((95, 150), (0.40, 0.60), (0.50, 0.64)),
}


class Node:
    __slots__ = ("name", "count", "children")

    def __init__(self, name):
        self.name, self.count, self.children = name, 0, {}


def build_tree(stacks):
    root = Node("all")
    for frames, count in stacks:
        root.count += count
        node = root
        for name in frames:
            node = node.children.setdefault(name, Node(name))
            node.count += count
    return root


def visible_frames(root, min_count):
    """(node, depth, first sample index) for every frame at least min_count wide."""
    todo = [(root, 0, 0)]
    while todo:
        node, depth, start = todo.pop()
        yield node, depth, start
        for name in sorted(node.children):
            child = node.children[name]
            if child.count >= min_count:
                todo.append((child, depth + 1, start))
            start += child.count


def frame_color(name):
    """A color from a hash of the function name, in the palette of its kind."""
    if name == "all":
        return "rgb(200,200,200)"
    h = zlib.crc32(bare_name(name).encode("utf-8"))
    hue, sat, light = (low + ((h >> shift) & 0xFF) / 255 * (high - low)
                       for (low, high), shift in zip(PALETTES[frame_kind(name)], (0, 8, 16)))
    r, g, b = colorsys.hls_to_rgb(hue / 360, light, sat)
    return f"rgb({r * 255:.0f},{g * 255:.0f},{b * 255:.0f})"


def fit_label(name, width):
    chars = int((width - 6) / CHAR_WIDTH)
    if chars < 4:
        return ""
    return name if len(name) <= chars else name[:chars - 2] + ".."


def svg_frame(node, x, y, width, total):
    percent = 100 * node.count / total
    tip = escape(f"{node.name} ({node.count:,} samples, {percent:.2f}%)")
    label = fit_label(node.name, width)
    text = (f'<text x="{x + 3:.1f}" y="{y + 11.5:.1f}">{escape(label)}</text>' if label else "")
    return (f'<g><title>{tip}</title><rect x="{x:.1f}" y="{y:.1f}" width="{width:.1f}" '
            f'height="{ROW - 1}" rx="2" fill="{frame_color(node.name)}"/>{text}</g>')


def render_svg(stacks, title, subtitle=None):
    root = build_tree(stacks)
    total = max(root.count, 1)
    scale = (WIDTH - 2 * PAD) / total
    frames = list(visible_frames(root, MIN_FRACTION * total))
    depth = max(d for _, d, _ in frames) + 1
    header = 30 + (18 if subtitle else 0)
    height = header + depth * ROW + PAD
    out = [
        '<?xml version="1.0" encoding="UTF-8" standalone="no"?>',
        f'<svg xmlns="http://www.w3.org/2000/svg" version="1.1" width="{WIDTH}" '
        f'height="{height}" viewBox="0 0 {WIDTH} {height}">',
        f'<rect x="0" y="0" width="{WIDTH}" height="{height}" fill="rgb(248,248,242)"/>',
        f'<text x="{WIDTH / 2}" y="22" text-anchor="middle" font-family="sans-serif" '
        f'font-size="17" font-weight="bold">{escape(title)}</text>',
        f'<text x="{WIDTH - PAD}" y="22" text-anchor="end" font-family="sans-serif" '
        f'font-size="12" fill="rgb(90,90,90)">{root.count:,} samples</text>',
    ]
    if subtitle:
        out.append(f'<text x="{WIDTH / 2}" y="40" text-anchor="middle" font-family="sans-serif" '
                   f'font-size="12" fill="rgb(90,90,90)">{escape(subtitle)}</text>')
    out.append(f'<g font-family="monospace" font-size="{FONT}">')
    bottom = header + (depth - 1) * ROW
    for node, d, start in frames:
        out.append(svg_frame(node, PAD + start * scale, bottom - d * ROW, node.count * scale, total))
    out += ["</g>", "</svg>"]
    return "\n".join(out) + "\n"


def cmd_svg(args):
    stacks = read_folded(args.folded)
    if not stacks:
        sys.exit(f"flame.py: no stacks in {args.folded}")
    sys.stdout.write(render_svg(stacks, args.title, args.subtitle))


# ---------------------------------------------------------------- top

def function_counts(stacks):
    """(self, total): samples with the function as leaf / anywhere on the stack (once per stack)."""
    self_counts, total_counts = Counter(), Counter()
    for frames, count in stacks:
        self_counts[frames[-1]] += count
        for name in set(frames):
            total_counts[name] += count
    return self_counts, total_counts


def runtime_library(name):
    """`libc` for `malloc [libc]` or `[unknown libc.so.6]`; None for other frames."""
    m = RUNTIME_TAG.search(name)
    return m.group("lib") if m else None


def leaf_run(frames):
    """The leaf frame plus its callers inside the same runtime library (e.g. all of malloc)."""
    lib = runtime_library(frames[-1])
    if lib is None:
        return [frames[-1]]
    run = []
    for name in reversed(frames):
        if runtime_library(name) != lib:
            break
        run.append(name)
    return run


def self_category(frames):
    leaf = frames[-1]
    if frame_kind(leaf) == "kernel":
        return "syscall entry/exit" if SYSCALL_ENTRY.search(leaf) else "other kernel"
    names = [bare_name(f) for f in leaf_run(frames)]
    if any(MALLOC.search(n) for n in names):
        return "malloc/free"
    if any(LOCKS.search(n) for n in names):
        return "locks/futex"
    return "other user"


ON_STACK = {
    "kernel": lambda f: frame_kind(f) == "kernel",
    "syscall entry/exit": lambda f: frame_kind(f) == "kernel" and SYSCALL_ENTRY.search(f),
    "malloc/free": lambda f: frame_kind(f) != "kernel" and MALLOC.search(bare_name(f)),
    "locks/futex": lambda f: LOCKS.search(bare_name(f)),
}

SUMMARY_ROWS = [
    ("kernel", ("syscall entry/exit", "other kernel")),
    ("  syscall entry/exit", ("syscall entry/exit",)),
    ("  other kernel", ("other kernel",)),
    ("malloc/free", ("malloc/free",)),
    ("locks/futex", ("locks/futex",)),
    ("other user", ("other user",)),
]


def category_summary(stacks):
    """Lines of the category table: self share (exclusive) and on-stack share per category."""
    total = sum(c for _, c in stacks)
    self_counts, on_stack = Counter(), Counter()
    for frames, count in stacks:
        self_counts[self_category(frames)] += count
        for label, matches in ON_STACK.items():
            if any(matches(f) for f in frames):
                on_stack[label] += count
    lines = [f"{'category':<22} {'self':>8} {'self%':>7} {'on-stack%':>10}"]
    for label, parts in SUMMARY_ROWS:
        n = sum(self_counts[p] for p in parts)
        key = label.strip()
        stacked = f"{100 * on_stack[key] / total:9.1f}%" if key in ON_STACK else ""
        lines.append(f"{label:<22} {n:>8,} {100 * n / total:6.1f}% {stacked:>10}")
    return lines


def cmd_top(args):
    stacks = read_folded(args.folded)
    total = sum(c for _, c in stacks)
    if not total:
        sys.exit(f"flame.py: no stacks in {args.folded}")
    self_counts, total_counts = function_counts(stacks)
    ranking = self_counts if args.by == "self" else total_counts
    print(f"{total:,} samples, {len(stacks):,} distinct stacks; top {args.n} by {args.by}\n")
    print(f"{'self':>8} {'self%':>7} {'total':>8} {'total%':>7}  function")
    for name, _ in ranking.most_common(args.n):
        s, t = self_counts[name], total_counts[name]
        print(f"{s:>8,} {100 * s / total:6.2f}% {t:>8,} {100 * t / total:6.2f}%  {name}")
    print()
    print("\n".join(category_summary(stacks)))
    print("\nself: by the leaf frame (with its callers in the same runtime library), sums to 100%;"
          "\non-stack: samples with such a frame anywhere on the stack (time spent inside).")


# ---------------------------------------------------------------- command line

def regex(text):
    try:
        return re.compile(text)
    except re.error as e:
        raise argparse.ArgumentTypeError(f"bad regular expression {text!r}: {e}")


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)

    p = commands.add_parser("fold", help="perf.data -> folded stacks on stdout")
    p.add_argument("perf_data", help="perf.data file, or - for `perf script` text on stdin")
    p.add_argument("--comm-root", action=argparse.BooleanOptionalAction, default=True,
                   help="thread/command name as the root frame (default: on)")
    p.add_argument("--keep", metavar="REGEX", type=regex,
                   help="only stacks with a frame matching REGEX")
    p.add_argument("--inline", action=argparse.BooleanOptionalAction, default=True,
                   help="frames of inlined functions (default: on; off is much faster)")
    p.set_defaults(run=cmd_fold)

    p = commands.add_parser("svg", help="folded stacks -> SVG flame graph on stdout")
    p.add_argument("folded", help="folded file, or - for stdin")
    p.add_argument("--title", default="CPU flame graph")
    p.add_argument("--subtitle")
    p.set_defaults(run=cmd_svg)

    p = commands.add_parser("top", help="hottest functions and a category summary")
    p.add_argument("folded", help="folded file, or - for stdin")
    p.add_argument("--by", choices=("self", "total"), default="self",
                   help="rank by leaf samples or by samples anywhere on the stack")
    p.add_argument("-n", type=int, default=30, help="number of functions (default: 30)")
    p.set_defaults(run=cmd_top)
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    sys.stdout.reconfigure(encoding="utf-8")
    try:
        args.run(args)
    except BrokenPipeError:
        sys.stderr.close()


if __name__ == "__main__":
    main()
