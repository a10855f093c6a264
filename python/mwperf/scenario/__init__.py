"""Scenarios and sweeps: a YAML file (or a built-in one) of fixed fields and axes becomes a
list of points, validated before anything runs, measured one after the other into one sweep
folder (resumable), and summarised with saturation knees, axis comparisons and topic rankings.

Modules: source (YAML with lines), parse (fields -> Scenario), model, expand (axes ->
points), check (every point through config.build_point), catalog (files and built-ins),
manifest (sweep.json), deadline (per-point timeout), progress, sweep (the run), launch (new or
resumed, from the command line), observe / knee / compare / topics / summary (the analysis).
"""

from .catalog import describe_built_ins, load_scenario
from .launch import Request, dry_run, launch, resolve
from .sweep import plan_sweep

__all__ = ["Request", "describe_built_ins", "dry_run", "launch", "load_scenario", "plan_sweep",
           "resolve"]
