#!/usr/bin/env python3
"""Regenerate docs/cli.md from the CLI's option definitions (python/mwperf/clidoc.py)."""

from pathlib import Path

from mwperf.cli import cli
from mwperf.clidoc import render

TARGET = Path(__file__).resolve().parent.parent / "docs" / "cli.md"

if __name__ == "__main__":
    TARGET.write_text(render(cli), encoding="utf-8")
    print(f"wrote {TARGET}")
