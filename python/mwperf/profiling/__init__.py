"""``--profile``: where the agents and daemons spend their CPU during a point, sampled by Linux
``perf`` (record.py), folded into stacks per process (stacks.py) and drawn as flame graphs
(flamegraph.py); report.py writes the files and the run-result's ``profile`` section."""

from .record import PROFILE_DIR, Recorder, unavailable
from .report import write_profiles

__all__ = ["PROFILE_DIR", "Recorder", "unavailable", "write_profiles"]
