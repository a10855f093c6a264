"""The stamp of a managed ROS 2 environment (wheels.STAMP, written last by install.py): what was
installed into it. An environment is installed when its stamp names the current requirements.
Standard library only."""

import json
from pathlib import Path

from . import wheels


def wanted_stamp(distro: str) -> dict[str, object]:
    """What the stamp of ``distro``'s environment says once it is installed."""
    return {"distro": distro, "requirements": list(wheels.PACKAGES[distro]),
            "python": ".".join(map(str, wheels.PYTHON))}


def is_installed(distro: str, venv: Path | None = None) -> bool:
    """Does ``distro``'s environment carry the stamp of the current requirements?"""
    stamp = (venv or wheels.venv_dir(distro)) / wheels.STAMP
    try:
        return bool(json.loads(stamp.read_text()) == wanted_stamp(distro))
    except (OSError, ValueError):
        return False
