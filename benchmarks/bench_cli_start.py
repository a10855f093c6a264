"""What starting `mwperf` costs: the CPU time (user + system, the kernel's rusage of the process
and the children it waited for) of a few commands, this checkout's control plane against
another checkout's (a git worktree of the reference commit), in the same run, interleaved.
Every end-to-end test, every point of a sweep and every `mwperf show` pays it once per start.

    git worktree add /tmp/mwperf-ref <commit>
    python3 benchmarks/bench_cli_start.py --reference /tmp/mwperf-ref --reps 6 [--write]

Both trees' Python runs with this checkout's agent (MWPERF_AGENT), so only the control plane
differs. Medians of interleaved repetitions with their spread (min-max); ratio = this / the
reference (< 1: cheaper). Checked against: the reference tree in the same run, and the kernel's
own accounting of each process (wait4's rusage), not a timer in the program."""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

from benchlib import ROOT, med, revision, stamp, write_section

sys.path.insert(0, str(ROOT / "python"))
from mwperf.agent import built_agent  # noqa: E402

COMMANDS = {
    "mwperf --help": ["--help"],
    "mwperf transports": ["transports"],
    "mwperf run (udp, 1 s at 100 Hz, agents included)": [
        "run", "--transport", "udp", "--rate", "100", "--duration", "1s", "--warmup", "200ms",
        "--no-save"],
}


def cpu_s(tree: Path, args: list[str], agent: Path) -> float:
    """The CPU seconds of ``python -m mwperf.cli ARGS`` with ``tree``'s control plane."""
    env = {**os.environ, "PYTHONPATH": str(tree / "python"), "MWPERF_AGENT": str(agent)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    with tempfile.TemporaryDirectory() as empty:
        done = subprocess.run([sys.executable, "-m", "mwperf.cli", *args], cwd=empty, env=env,
                              capture_output=True, text=True, timeout=120, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        sys.exit(f"bench_cli_start: {tree}: mwperf {' '.join(args)}: exit {done.returncode}: "
                 f"{done.stderr.strip()[-300:]}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reference", required=True, type=Path,
                        help="a checkout (worktree) of the reference commit")
    parser.add_argument("--reps", type=int, default=6)
    parser.add_argument("--write", action="store_true", help="write BENCHMARKS.md's section")
    args = parser.parse_args()
    if not (args.reference / "python" / "mwperf" / "cli.py").is_file():
        sys.exit(f"bench_cli_start: --reference {args.reference}: no mwperf checkout there")
    agent = built_agent()
    ref_rev = subprocess.run(["git", "-C", str(args.reference), "rev-parse", "--short", "HEAD"],
                             capture_output=True, text=True, check=False).stdout.strip()
    trees = [("this", ROOT), ("reference", args.reference)]
    for _, tree in trees:  # compiled once before measuring (both trees' .pyc files)
        cpu_s(tree, ["--help"], agent)
    figures: dict[tuple[str, str], list[float]] = {}
    for rep in range(args.reps):
        for who, tree in trees if rep % 2 == 0 else trees[::-1]:
            for label, command in COMMANDS.items():
                figures.setdefault((who, label), []).append(cpu_s(tree, command, agent))
        print(f"rep {rep + 1}/{args.reps} done", file=sys.stderr)
    lines = [f"Measured {stamp()} at {revision()} against {ref_rev or args.reference} "
             f"(`python3 benchmarks/bench_cli_start.py --reference <worktree> --reps "
             f"{args.reps}`), CPU seconds, medians of {args.reps} interleaved repetitions "
             "(min-max):", "",
             "| command | this | reference | ratio |", "|---|---|---|---|"]
    for label in COMMANDS:
        this, ref = figures[("this", label)], figures[("reference", label)]
        lines.append(f"| {label} | {med(this):.3f} ({min(this):.3f}-{max(this):.3f}) | "
                     f"{med(ref):.3f} ({min(ref):.3f}-{max(ref):.3f}) | "
                     f"{med(this) / med(ref):.2f} |")
    text = "\n".join(lines)
    print(text)
    if args.write:
        write_section("cli-start", text)


if __name__ == "__main__":
    main()
