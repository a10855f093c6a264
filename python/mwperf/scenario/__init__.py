"""Scenarios and sweeps: a YAML file (or a built-in one) of fixed fields and axes becomes a
list of points, validated before anything runs, measured one after the other into one sweep
folder (resumable), and summarised with saturation knees, axis comparisons and topic rankings.

Modules: source (YAML with lines), parse (fields -> Scenario), model, expand (axes ->
points), check (every point through config.build_point), catalog (files and built-ins),
manifest (sweep.json), deadline (per-point timeout), progress, sweep (the run), launch (new or
resumed, from the command line), observe / knee / compare / topics / summary (the analysis).
"""

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .catalog import describe_built_ins, load_scenario
    from .launch import Request, dry_run, launch, resolve
    from .sweep import plan_sweep

_WHERE = {"describe_built_ins": "catalog", "load_scenario": "catalog", "Request": "launch",
          "dry_run": "launch", "launch": "launch", "resolve": "launch", "plan_sweep": "sweep"}
"""name -> the module that defines it: imported when first asked for, so that importing one of
the package's modules (progress, knee, ...) does not load the sweep machinery too"""


def __getattr__(name: str) -> Any:
    """A name of _WHERE, its module imported; every name that module defines for the package is
    bound here then: the module ``launch`` (which importing it binds on the package) gives way
    to the function ``launch``, as the eager imports did."""
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module = importlib.import_module(f".{_WHERE[name]}", __name__)
    for known, where in _WHERE.items():
        if where == _WHERE[name]:
            globals()[known] = getattr(module, known)
    return globals()[name]


__all__ = ["Request", "describe_built_ins", "dry_run", "launch", "load_scenario", "plan_sweep",
           "resolve"]
