"""--samples on a graph: every edge's raw samples, one CSV per edge beside the result, checked
against the edge's own figures (its count, its exact minimum and maximum, its p50 bucket) and the
publisher's own sent count."""

import csv
import json
from pathlib import Path

import pytest
from conftest import run_mwperf

from mwperf.config import build_point
from mwperf.errors import UsageError

pytestmark = pytest.mark.agent


def test_every_edge_of_a_graph_has_its_raw_samples(real_env: dict[str, str],
                                                   tmp_path: Path) -> None:
    done = run_mwperf("run", "--graph", "sierra_nevada", "--transport", "udp", "--duration",
                      "1s", "--warmup", "200ms", "--samples", "--results", str(tmp_path / "r"),
                      env=real_env, timeout=180)
    assert done.returncode == 0, done.stderr + done.stdout
    [folder] = [p for p in (tmp_path / "r").iterdir() if p.is_dir()]
    result = json.loads((folder / "result.json").read_text())
    files = set()
    for edge in result["edges"]:
        name = edge["samples_file"]
        assert name.startswith("samples/") and name not in files, name
        files.add(name)
        with (folder / name).open() as f:
            rows = list(csv.DictReader(f))
        where = (edge["topic"], edge["from"], edge["to"])
        assert len(rows) == edge["received"] > 0, where
        assert len({int(r["seq"]) for r in rows}) + edge["lost"] == edge["sent"], where
        latencies = sorted(int(r["service_ns"]) for r in rows)
        stats = edge["latency"]
        assert (latencies[0], latencies[-1]) == (stats["min_ns"], stats["max_ns"]), where
        median = latencies[(len(latencies) + 1) // 2 - 1]  # nearest rank, as the histogram
        # the histogram's p50 is the highest value of the median's bucket (< 1 % wide)
        assert median <= stats["p50_ns"] <= median * 1.01, where
    assert {p.name for p in (folder / "samples").iterdir()} == {Path(n).name for n in files}


class Catalogue:
    def transports(self) -> list[str]:
        return ["udp"]

    def payloads(self) -> dict[str, int]:
        return {"Array1k": 1024}


def test_samples_on_real_hosts_are_refused_for_a_graph() -> None:
    with pytest.raises(UsageError, match="--samples: not yet for a graph on real hosts"):
        build_point({"graph": "sierra_nevada", "transport": "udp", "samples": True,
                     "host": "b=ssh://root@10.0.0.1"}, Catalogue)
