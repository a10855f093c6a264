"""One registry of warning codes (issue 23): every code the control plane emits is one the agent
lists (`mwperf-agent warnings --json`, crates/mwperf-core/src/warning_codes.rs), and the agent's
own codes cannot be used unregistered (they are constants there). docs/results.md shows the list."""

import json
import re
import subprocess
from pathlib import Path

import pytest
from conftest import REAL_AGENT

ROOT = Path(__file__).resolve().parent.parent
CODE = r'"([a-z][a-z0-9]*(?:-[a-z0-9]+)+)"'
# the ways the control plane writes a warning: make_warning("code", ...), a dict's "code": "x",
# and the helpers that return (code, message, hint) for make_warning(*found)
PATTERNS = [re.compile(r"make_warning\(\s*" + CODE), re.compile(r'"code":\s*' + CODE),
            re.compile(r"return\s*\(\s*" + CODE + r"\s*,")]


def python_codes() -> dict[str, str]:
    """code -> the first file using it"""
    found: dict[str, str] = {}
    for path in sorted((ROOT / "python" / "mwperf").rglob("*.py")):
        text = path.read_text()
        for pattern in PATTERNS:
            for code in pattern.findall(text):
                found.setdefault(code, str(path.relative_to(ROOT)))
    return found


def registry() -> list[dict[str, str]]:
    out = subprocess.run([str(REAL_AGENT), "warnings", "--json"], capture_output=True, text=True,
                         check=True, timeout=10).stdout
    return json.loads(out)


def test_the_scan_finds_the_control_planes_warnings():
    found = python_codes()
    for code in ("daemon-exited", "rt-priority-denied", "outage-missed", "bridge-rate-short"):
        assert code in found, code


@pytest.mark.agent
def test_every_control_plane_code_is_registered():
    known = {c["code"] for c in registry()}
    missing = {code: where for code, where in python_codes().items() if code not in known}
    assert not missing, ("warning codes not in crates/mwperf-core/src/warning_codes.rs: "
                         + ", ".join(f"{c} ({w})" for c, w in missing.items()))


@pytest.mark.agent
def test_the_docs_list_every_code():
    doc = (ROOT / "docs" / "results.md").read_text()
    missing = [c["code"] for c in registry() if f"`{c['code']}`" not in doc]
    assert not missing, f"docs/results.md does not list: {', '.join(missing)}"
