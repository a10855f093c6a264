"""The results store: a DuckDB catalogue (``<results>/catalogue.duckdb``) over the point folders,
with each point's raw samples and per-second series as Parquet files inside its folder.

Contract: the point folders (result.json, agents/, samples.csv) stay the source of truth; the
catalogue and the Parquet files are derived from them and can always be recreated with
:func:`rebuild`. Every path the store keeps is relative to the results folder, so the folder can
be moved. A point is ingested in one transaction right after it is saved; its Parquet files are
renamed into place before that transaction commits, so a killed mwperf leaves at most a Parquet
file without a row, never a row without its folder or half a point.
"""

from .catalogue import CATALOGUE_NAME, CatalogueUnreadable, catalogue_path
from .ingest import ingest_point
from ..formats import QUERY_FORMATS as FORMATS
from .query import list_runs, run_query
from .rebuild import rebuild

__all__ = ["CATALOGUE_NAME", "CatalogueUnreadable", "FORMATS", "catalogue_path", "ingest_point",
           "list_runs", "rebuild", "run_query"]
