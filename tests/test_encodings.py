"""mwperf encodings: sizes from the real serializers, exact where the format fixes them (CDR,
ROS 1), and rosbridge's JSON against the bridge latency comparison's published sizes."""
import json

import pytest
from conftest import run_mwperf

from mwperf.encodings import PAPER_BYTES, measure


@pytest.fixture(scope="module")
def rows() -> dict[tuple[str, str], int]:
    return {(r.payload, r.encoding): r.bytes for r in measure(budget_s=0.01)}


def test_cdr_and_ros1_sizes_are_exact(rows: dict[tuple[str, str], int]) -> None:
    # CDR: 4-byte encapsulation, then the 1024 bytes, the int64 and uint64 (already aligned)
    assert rows[("Array1k", "cdr")] == 4 + 1024 + 8 + 8
    assert rows[("Array1k", "ros1")] == 1024 + 8 + 8  # fixed arrays carry no length in ROS 1
    assert rows[("Struct256", "cdr")] == 4 + 256 + 16
    # PointCloud2: header (stamp 8 + frame_id "lidar": 4 + 6 + pad) ... the data's length prefix
    assert 524288 < rows[("PointCloud512k", "cdr")] < 524288 + 100


def test_rosbridge_json_reproduces_the_papers_sizes(rows: dict[tuple[str, str], int]) -> None:
    for payload in ("Array1k", "PointCloud512k"):
        paper = PAPER_BYTES[payload]["rosbridge-json"]
        assert abs(rows[(payload, "rosbridge-json")] / paper - 1) < 0.02, payload
    # a uint8[] goes out as one base64 string: 4/3 of the bytes
    assert rows[("PointCloud512k", "rosbridge-json")] > 524288 * 4 / 3
    assert rows[("Array1k", "cbor")] < 1100  # one CBOR byte string


def test_the_command_prints_json_and_refuses_unknown_payloads() -> None:
    done = run_mwperf("encodings", "--payload", "Array1k", "--json")
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert {r["encoding"] for r in found} == {"cdr", "ros1", "rosbridge-json", "cbor"}
    bad = run_mwperf("encodings", "--payload", "Array2k")
    assert bad.returncode == 2 and "--payload: 'Array2k' is not one of" in bad.stderr
