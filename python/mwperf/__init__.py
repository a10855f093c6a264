"""mwperf: measure how well robot middleware communicates (latency, loss, jitter, CPU).

This package is the control plane; the measuring itself is done by the Rust data plane,
``mwperf-agent``, driven through the command line described in docs/agent-contract.md.
"""

from pathlib import Path

__version__ = "0.1.0"

#: The repository root when the package is used from a checkout (``pip install -e .``).
REPO_ROOT = Path(__file__).resolve().parents[2]
