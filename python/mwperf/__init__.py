"""mwperf: measure how well robot middleware communicates (latency, loss, jitter, CPU).

This package is the control plane; the measuring itself is done by the Rust data plane,
``mwperf-agent``, driven through the command line described in docs/agent-contract.md.
"""

from pathlib import Path

__version__ = "0.1.0"

#: The repository root when the package is used from a checkout (``pip install -e .``).
REPO_ROOT = Path(__file__).resolve().parents[2]
#: Where an installed wheel keeps the Rust binaries (mwperf-agent, mwperf-linkem,
#: libmwperf_alloc.so); absent in a checkout, which uses its own build (setup.py).
BUNDLED_BIN = Path(__file__).resolve().parent / "bin"
#: Where an installed wheel keeps the result schema (a checkout: schema/ at its root).
BUNDLED_DATA = Path(__file__).resolve().parent / "data"
