"""The RMW implementations a ROS 2 installation has (``librmw_<name>.so`` in its library
folders) and the version of the middleware library under each (from the file name of its
shared library, e.g. ``libfastdds.so.3.2.2``: Fast DDS 3.2.2). ``RMW_IMPLEMENTATION`` picks one,
as in ROS 2; unset, rmw_fastrtps_cpp (ROS 2's default)."""

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

RMW_ENV = "RMW_IMPLEMENTATION"
DEFAULT_RMW = "rmw_fastrtps_cpp"

_HELPERS = {"rmw_implementation", "rmw_dds_common", "rmw_security_common",
            "rmw_fastrtps_shared_cpp"}
"""librmw_*.so that are no RMW implementation (the loader, shared code)"""

MIDDLEWARE: dict[str, tuple[str, tuple[str, ...]]] = {
    "rmw_fastrtps_cpp": ("Fast DDS", ("fastdds", "fastrtps")),
    "rmw_fastrtps_dynamic_cpp": ("Fast DDS", ("fastdds", "fastrtps")),
    "rmw_cyclonedds_cpp": ("Cyclone DDS", ("ddsc",)),
    "rmw_connextdds": ("RTI Connext DDS", ("nddscore",)),
    "rmw_gurumdds_cpp": ("GurumDDS", ("gurumdds",)),
    "rmw_zenoh_cpp": ("zenoh", ("zenohc",)),
}
"""each known RMW: its middleware and the base names of that middleware's library (the
first one found gives the version: Fast DDS 3 is libfastdds, 2.x libfastrtps)"""


@dataclass(frozen=True)
class Rmw:
    """One RMW implementation of an installation."""

    name: str
    """e.g. rmw_fastrtps_cpp"""
    middleware: str
    """e.g. Fast DDS ('unknown' for an RMW mwperf does not know)"""
    version: str | None
    """the middleware library's version from its file name, None when it has none"""

    def describe(self) -> str:
        """``rmw_fastrtps_cpp (Fast DDS 3.2.2)``."""
        version = f" {self.version}" if self.version else ""
        return f"{self.name} ({self.middleware}{version})"


def lib_files(lib_dirs: Iterable[Path]) -> list[str]:
    """The file names in ``lib_dirs`` (missing folders are empty)."""
    names = []
    for folder in lib_dirs:
        try:
            names += [p.name for p in folder.iterdir()]
        except OSError:
            continue
    return names


def find_rmws(files: Iterable[str]) -> tuple[Rmw, ...]:
    """The RMW implementations among the library file names ``files``, sorted by name."""
    files = list(files)
    names = sorted({m.group(1) for f in files if (m := re.fullmatch(r"lib(rmw_\w+)\.so", f))
                    and "__" not in m.group(1)} - _HELPERS)  # not a message package's library
    return tuple(Rmw(n, MIDDLEWARE.get(n, ("unknown", ()))[0], _version(n, files))
                 for n in names)


def _version(rmw: str, files: list[str]) -> str | None:
    for base in MIDDLEWARE.get(rmw, ("", ()))[1]:
        versions = [m.group(1) for f in files
                    if (m := re.fullmatch(rf"lib{base}\.so\.(\d+(?:\.\d+)*)", f))]
        if versions:
            return max(versions, key=lambda v: (v.count("."), [int(x) for x in v.split(".")]))
    return None


def message_packages(files: Iterable[str]) -> tuple[str, ...]:
    """The message packages among the library file names (``lib<pkg>__rosidl_typesupport_c.so``)."""
    return tuple(sorted({m.group(1) for f in files
                         if (m := re.fullmatch(r"lib(\w+?)__rosidl_typesupport_c\.so", f))}))
