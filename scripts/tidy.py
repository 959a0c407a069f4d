#!/usr/bin/env python3
"""clang-tidy over every source file of the repository, reading the build's own compile database.

    scripts/tidy.py [BUILD_DIR] [--deep] [--only=REGEX]

The build compiles in unity batches (DEADBOLT_UNITY), so its compile database names batches, not
files. Each batch is checked once: it parses the shared headers (Asio, gRPC, gtest) once instead
of once per file, and the files it includes are checked through the header filter. The batches
of the library and the CLI run the static analyzer too, told to analyse the functions of the
files a batch includes (-analyzer-opt-analyze-headers; by default it looks only at the main
file's, which a batch has none of); the tests' batches do not. A library or CLI file outside any
batch is analysed on its own. The analyzer runs in its shallow mode (fewer inlined calls, a
smaller budget per function), a sixth of the default's cost; --deep runs the default mode.
(Before, the analyzer parsed each file of the library and the CLI again on its own: a full run
took a fifth more CPU.)
--only=REGEX checks only the batches and files whose paths match (a quick look at a change).
Exits 1 when anything is reported (warnings are errors), naming the file.
"""
import json
import os
import re
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# Checked through a batch: everything of ours (the tests' headers too).
HEADER_FILTER = r"/(include/deadbolt|src|cli|tests|tools|bench)/"


def ours():
    """The repository's sources, as git knows them (generated code is not ours to tidy)."""
    out = subprocess.run(["git", "ls-files", "*.cpp"], cwd=ROOT, capture_output=True, text=True,
                         check=True).stdout
    return {str(ROOT / line) for line in out.split()}


def test_checks():
    """The Checks of tests/.clang-tidy, which clang-tidy would not find for a batch: its main
    file is under the build directory."""
    lines = (ROOT / "tests" / ".clang-tidy").read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("Checks:")) + 1
    block = []
    for line in lines[start:]:
        if not line.startswith(" "):
            break
        block.append(line.strip())
    return "".join(block).rstrip(",")


def members(unity_file):
    text = Path(unity_file).read_text()
    return re.findall(r'#include "([^"]+)"', text)


def run(args):
    start = time.monotonic()
    done = subprocess.run(args, capture_output=True, text=True, check=False)
    took = time.monotonic() - start
    said = "\n".join(line for line in (done.stdout + done.stderr).splitlines()
                     if "warnings generated" not in line and "Suppressed" not in line
                     and "Use -header-filter" not in line)
    return done.returncode, said, took


def main():
    argv = [a for a in sys.argv[1:] if not a.startswith("--")]
    deep = "--deep" in sys.argv
    only = next((a.split("=", 1)[1] for a in sys.argv[1:] if a.startswith("--only=")), None)
    build = Path(argv[0] if argv else ROOT / "build").resolve()
    entries = json.loads((build / "compile_commands.json").read_text())
    repo = ours()
    by_file = {}  # each file of ours -> the command that compiles it (its batch's, or its own)
    batches = []
    for e in entries:
        if "/Unity/unity_" in e["file"]:
            inside = [m for m in members(e["file"]) if m in repo]
            if inside:
                batches.append((e["file"], inside))
            for m in inside:
                by_file[m] = e
        elif e["file"] in repo:
            batches.append((e["file"], [e["file"]]))
            by_file[e["file"]] = e
    missing = sorted(f for f in repo if f not in by_file and "/tests/consumer/" not in f)
    if missing:
        print("tidy: not in the build, so not checked:", *missing, sep="\n  ", file=sys.stderr)

    analysed = sorted(f for f in by_file if re.search(r"/(src|cli)/", f))
    mode = [] if deep else ["--extra-arg=-Xclang", "--extra-arg=-analyzer-config",
                            "--extra-arg=-Xclang", "--extra-arg=mode=shallow"]
    whole = ["--extra-arg=-Xclang", "--extra-arg=-analyzer-opt-analyze-headers"]
    jobs = []
    tests = test_checks()
    alone = set(analysed)  # analysed files no batch of the analyzer's takes
    for main_file, inside in batches:
        # A batch includes its files: that is how unity builds work, not a suspicious include.
        checks = "-bugprone-suspicious-include"
        extra = []
        under = build if main_file.startswith(str(build) + "/") else ROOT
        if os.path.relpath(main_file, under).startswith("tests/"):
            checks += ",-clang-analyzer-*," + tests
        elif "/Unity/unity_" in main_file and all(m in alone for m in inside):
            extra = mode + whole
            alone -= set(inside)
        else:
            checks += ",-clang-analyzer-*"
        jobs.append((", ".join(os.path.relpath(m, ROOT) for m in inside) +
                     (" (+analyzer)" if extra else ""),
                     ["clang-tidy", "-p", str(build), "--quiet", "--warnings-as-errors=*",
                      f"--checks={checks}", f"--header-filter={HEADER_FILTER}", *extra,
                      main_file]))
    # A database of one entry per file, for the files the analyzer takes alone (clang-tidy
    # looks files up by name).
    per_file = build / "tidy"
    per_file.mkdir(exist_ok=True)
    (per_file / "compile_commands.json").write_text(json.dumps(
        [dict(by_file[f], file=f) for f in sorted(alone)], indent=0))
    for f in sorted(alone):
        jobs.append((os.path.relpath(f, ROOT) + " (analyzer)",
                     ["clang-tidy", "-p", str(per_file), "--quiet", "--warnings-as-errors=*",
                      "--checks=-*,clang-analyzer-*", *mode, f]))
    if only:
        jobs = [j for j in jobs if re.search(only, j[0])]
    # The longest first (a batch with the analyzer takes up to a minute, one without it up to
    # 22 s, a file alone a few), so none of them is left running alone at the end.
    jobs.sort(key=lambda j: (not j[0].endswith("(+analyzer)"), j[0].endswith("(analyzer)")))
    print(f"tidy: {len(batches)} batches ({len(analysed) - len(alone)} files of them analysed "
          f"too), {len(alone)} files analysed alone ({'deep' if deep else 'shallow'})",
          file=sys.stderr)
    failed = 0
    took = []
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        for (what, _), (rc, said, secs) in zip(jobs, pool.map(lambda j: run(j[1]), jobs)):
            took.append((secs, what))
            if rc != 0 or said.strip():
                failed += 1
                print(f"tidy: {what}:\n{said}", file=sys.stderr)
    analyzer = sum(t for t, w in took if w.endswith("analyzer)"))
    took.sort(reverse=True)
    print(f"tidy: {sum(t for t, _ in took):.0f} s of CPU ({analyzer:.0f} s in jobs with the "
          "analyzer); "
          "the slowest:",
          *(f"{t:5.1f} s  {w[:100]}" for t, w in took[:5]), sep="\n  ", file=sys.stderr)
    print(f"tidy: {'clean' if not failed else f'{failed} jobs reported problems'}",
          file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
