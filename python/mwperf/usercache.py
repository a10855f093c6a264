"""mwperf's per-user cache folder: $XDG_CACHE_HOME/mwperf, else ~/.cache/mwperf (the example
bag, the managed ROS 2 environments). Standard library only: the installer runs from it."""

import os
from pathlib import Path


def cache_dir() -> Path:
    """$XDG_CACHE_HOME/mwperf, else ~/.cache/mwperf."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "mwperf"
