"""Finding a scenario: a YAML file, or a built-in one by name (``mwperf/scenarios/*.yaml``,
shipped as package data), and listing the built-ins with their one-line descriptions.
"""

from importlib import resources
from pathlib import Path

from ..errors import UsageError
from .model import Scenario
from .parse import parse_scenario

SUFFIXES = (".yaml", ".yml")
ALIASES = {"bridge-payloads": "bridges"}
"""old built-in names -> the scenario that replaced them (they keep working)"""


def built_in_names() -> list[str]:
    """The built-in scenarios (and their aliases), sorted."""
    folder = resources.files("mwperf") / "scenarios"
    return sorted([entry.name.rsplit(".", 1)[0] for entry in folder.iterdir()
                   if entry.name.endswith(".yaml")] + list(ALIASES))


def built_in_text(name: str) -> str:
    """The YAML of built-in scenario ``name`` (an alias: of the scenario it names)."""
    name = ALIASES.get(name, name)
    return (resources.files("mwperf") / "scenarios" / f"{name}.yaml").read_text("utf-8")


def load_scenario(spec: str, quick: bool = False) -> Scenario:
    """``spec`` is a path to a YAML file or a built-in name; raise UsageError otherwise."""
    path = Path(spec)
    if spec.endswith(SUFFIXES) or path.is_file():
        try:
            text = path.read_text("utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise UsageError(f"SCENARIO: cannot read {spec}: "
                             f"{getattr(exc, 'strerror', None) or exc}") from None
        return parse_scenario(text, spec, _name_of(path), quick)
    names = built_in_names()
    if spec not in names:
        raise UsageError(f"SCENARIO: unknown scenario '{spec}'; allowed: a YAML file or a "
                         f"built-in name ({', '.join(names)}; see 'mwperf scenarios')")
    return parse_scenario(built_in_text(spec), spec, spec, quick)


def describe_built_ins() -> list[tuple[str, str]]:
    """(name, description) of every built-in scenario."""
    return [(name, f"alias of '{ALIASES[name]}'" if name in ALIASES else
             parse_scenario(built_in_text(name), name, name).description)
            for name in built_in_names()]


def _name_of(path: Path) -> str:
    """A folder-safe scenario name from a file name."""
    stem = "".join(c if c.isalnum() or c in "-_." else "-" for c in path.stem)
    return stem.strip("-.") or "scenario"
