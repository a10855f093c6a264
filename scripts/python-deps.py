#!/usr/bin/env python3
"""Are mwperf's Python dependencies installed, with the given extras, for this checkout?

    python3 scripts/python-deps.py [EXTRA ...]     # exit 0: yes; exit 1: says what is missing

The Makefile runs it before every target and installs `-e .[EXTRAS]` when it says no, so each of
the README's commands installs what it needs itself (`make run`: the bridges its suite uses;
`make test`: those and the test tools), and nothing is installed twice. mwperf itself must come
from this checkout: an editable install of another clone would test that clone's code.
Standard library only (it runs before anything is installed).
"""

import importlib.metadata as md
import importlib.util
import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def wanted(extras: list[str]) -> list[str]:
    """The distributions pyproject.toml names for the base install plus `extras`."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    groups = project.get("optional-dependencies", {})
    unknown = [e for e in extras if e not in groups]
    if unknown:
        print(f"python-deps: no extra {', '.join(unknown)} in pyproject.toml "
              f"(known: {', '.join(groups)})", file=sys.stderr)
        sys.exit(2)
    requirements = list(project["dependencies"])
    for extra in extras:
        requirements += groups[extra]
    return [re.split(r"[<>=!~;\[ ]", r, maxsplit=1)[0] for r in requirements]


def missing(extras: list[str]) -> list[str]:
    gone = []
    spec = importlib.util.find_spec("mwperf")
    here = (ROOT / "python" / "mwperf").resolve()
    if spec is None or spec.origin is None:
        gone.append("mwperf (not installed)")
    elif Path(spec.origin).resolve().parent != here:
        gone.append(f"mwperf from this checkout (found {Path(spec.origin).parent})")
    for name in wanted(extras):
        try:
            md.distribution(name)
        except md.PackageNotFoundError:
            gone.append(name)
    return gone


def main() -> int:
    extras = [e for arg in sys.argv[1:] for e in arg.split(",") if e]
    gone = missing(extras)
    if gone:
        print(f"mwperf: Python packages to install: {', '.join(gone)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
