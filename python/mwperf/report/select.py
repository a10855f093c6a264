"""Which runs a report (or a comparison) is about: run ids as the user typed them.

A RUN is a full run id, a prefix of exactly one run id (as git accepts abbreviated commits), or
``latest`` (the run that started last). No RUN at all means ``latest``. An unknown or ambiguous
RUN is a usage error that lists what it could have meant.
"""

import duckdb

from ..errors import UsageError

LATEST = "latest"
SHOWN_CANDIDATES = 5


def resolve_runs(con: duckdb.DuckDBPyConnection, wanted: list[str], what: str = "RUN"
                 ) -> list[str]:
    """The run ids ``wanted`` names, in the order given (each once)."""
    ids = [row[0] for row in con.execute(
        "SELECT run_id FROM runs ORDER BY started_at DESC NULLS LAST, run_id DESC").fetchall()]
    if not ids:
        raise UsageError(f"{what}: the results catalogue holds no runs yet")
    chosen: list[str] = []
    for name in wanted or [LATEST]:
        run_id = resolve_one(ids, name, what)
        if run_id not in chosen:
            chosen.append(run_id)
    return chosen


def resolve_one(ids: list[str], name: str, what: str = "RUN") -> str:
    """The one run id of ``ids`` (newest first) that ``name`` names."""
    if name == LATEST:
        return ids[0]
    if name in ids:
        return name
    matches = [run_id for run_id in ids if run_id.startswith(name)]
    if len(matches) == 1:
        return matches[0]
    if not matches:
        newest = ", ".join(ids[:SHOWN_CANDIDATES])
        raise UsageError(f"{what}: no run '{name}' in the catalogue (newest: {newest}; or "
                         f"'{LATEST}'); list them with 'mwperf results'")
    shown = ", ".join(matches[:SHOWN_CANDIDATES])
    more = f" and {len(matches) - SHOWN_CANDIDATES} more" if len(matches) > SHOWN_CANDIDATES else ""
    raise UsageError(f"{what}: '{name}' matches {len(matches)} runs ({shown}{more}); give more "
                     f"of the id")
