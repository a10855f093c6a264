"""The built-in graphs (python/mwperf/graphs/) and finding a graph by name or file."""

from importlib import resources
from pathlib import Path

from ..errors import UsageError
from .irobot import parse_irobot
from .model import Graph
from .parse import parse_graph

FOLDER = "graphs"
SUFFIXES = (".yaml", ".json")


def builtin_names() -> list[str]:
    """Every built-in graph's name (its file name without the suffix)."""
    folder = resources.files("mwperf").joinpath(FOLDER)
    return sorted(entry.name.rsplit(".", 1)[0] for entry in folder.iterdir()
                  if entry.name.endswith(SUFFIXES))


def load_graph(spec: str, checked: bool = True) -> Graph:
    """``spec``: a built-in graph's name, or a graph file (YAML; a ``.json`` file is an iRobot
    ros2-performance topology); ``checked``: on its own (else one of several: combine.py)."""
    path = Path(spec)
    if path.suffix in SUFFIXES and path.is_file():
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise UsageError(f"--graph: cannot read {spec}: {exc}") from None
        return _read(text, str(path), path.stem, checked)
    folder = resources.files("mwperf").joinpath(FOLDER)
    for suffix in SUFFIXES:
        entry = folder.joinpath(spec + suffix)
        if entry.is_file():
            return _read(entry.read_text(encoding="utf-8"), f"builtin:{spec}", spec, checked)
    if path.suffix in SUFFIXES:
        raise UsageError(f"--graph: no file {spec}")
    raise UsageError(f"--graph: '{spec}' is neither a file nor a built-in graph; built-in: "
                     f"{', '.join(builtin_names())} (mwperf graphs lists them)")


def _read(text: str, where: str, name: str, checked: bool = True) -> Graph:
    if where.endswith(".json") or (where.startswith("builtin:") and text.lstrip().startswith("{")):
        return parse_irobot(text, where, name, checked)
    return parse_graph(text, where, checked)
