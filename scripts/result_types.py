#!/usr/bin/env python3
"""Regenerate python/mwperf/result_types.py from schema/result.v2.json."""

from pathlib import Path

from mwperf.result_typegen import render

ROOT = Path(__file__).resolve().parent.parent
TARGET = ROOT / "python" / "mwperf" / "result_types.py"

if __name__ == "__main__":
    TARGET.write_text(render(ROOT / "schema" / "result.v2.json"), encoding="utf-8")
    print(f"wrote {TARGET}")
