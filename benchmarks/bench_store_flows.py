"""What cataloguing a stream point's flows costs (issue 38 step 5, store/flows.py): N points of
the fake agent ingested into two catalogues, one with the flows' rows and one without
(store_flows replaced by a no-op); the mean ingest time per point and each catalogue's size.

    python3 benchmarks/bench_store_flows.py N
"""

import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "python")]
os.environ["MWPERF_AGENT"] = str(ROOT / "tests" / "fakes" / "fake_agent.py")
os.environ["PYTHONPATH"] = str(ROOT / "python")

import mwperf.store.ingest as ingest  # noqa: E402
from mwperf.store import ingest_point  # noqa: E402
from test_store_support import measure_point  # noqa: E402


def main(count: int) -> None:
    base = Path(tempfile.mkdtemp())
    try:
        points = [measure_point(base / "src") for _ in range(count)]
        for label, flows in (("without flows", False), ("with flows", True)):
            root = base / label.replace(" ", "-")
            saved = ingest.store_flows
            if not flows:
                ingest.store_flows = lambda *args, **kwargs: None
            took = 0.0
            try:
                for point in points:
                    dest = root / point.name
                    shutil.copytree(point, dest)
                    start = time.perf_counter()
                    ingest_point(dest)
                    took += time.perf_counter() - start
            finally:
                ingest.store_flows = saved
            size = (root / "catalogue.duckdb").stat().st_size // 1024
            print(f"{label}: {1000 * took / count:.1f} ms per point, catalogue {size} KiB")
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 24)
