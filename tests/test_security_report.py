"""The report's security section (report/security.py) on saved synthetic results of known
latencies, CPU and tunnels: each mode's p50 divided by the plain point's of the same stream and
round, the median over rounds with the lowest and highest; CPU per message counts a tunnel's
wireguard-go beside the agents; streams and transports are never mixed; no secured point, no
section."""

import json
from pathlib import Path
from typing import Any

from report_support import config, result, write_point

from mwperf.report import build, security
from mwperf.report.data import load_runs
from mwperf.resilience import section as resilience_section
from mwperf.store import ingest_point
from mwperf.store.catalogue import connect

SWEEP = "20261130T100000Z-security-0001"


def point(transport: str, secure: str | None, p50_us: int, payload: int = 256,
          tunnel_cpu_s: float | None = None, handshake_ms: float | None = None,
          link: str = "ethernet-1g", discovery: dict[str, Any] | None = None
          ) -> dict[str, Any]:
    cfg = config(transport=transport, rate=100.0, payload=str(payload), payload_bytes=payload,
                 link=link)
    if secure is not None:
        cfg["secure"] = secure
    return {"cfg": cfg, "values": [p50_us * 1000] * 50, "tunnel_cpu_s": tunnel_cpu_s,
            "handshake_ms": handshake_ms, "discovery": discovery}


def sweep(root: Path, rounds: list[list[dict[str, Any]]]) -> None:
    folder = root / SWEEP
    entries, index = [], 0
    root.mkdir(parents=True, exist_ok=True)
    with connect(root, views=False):
        for rep, members in enumerate(rounds, start=1):
            for member in members:
                index += 1
                point_id = f"20261130T1000{index:02d}Z-{member['cfg']['transport']}-{index:04x}"
                doc = result(point_id, member["values"], member["cfg"], cpu_s=0.5)
                if member["discovery"] is not None:
                    doc["discovery"] = member["discovery"]
                    doc["resilience"] = resilience_section(member["discovery"], None, None,
                                                           1, None)
                if member["tunnel_cpu_s"] is not None:
                    doc["link"] = {"spec": "ethernet-1g", "backend": "userspace", "up": {},
                                   "down": {}, "emulator": None, "tunnel": {
                                       "kind": "wireguard", "cpu_s": {
                                           "a": member["tunnel_cpu_s"] / 2,
                                           "b": member["tunnel_cpu_s"] / 2},
                                       "handshakes": [{"from": "a", "to": "b",
                                                       "ms": member["handshake_ms"]}]}}
                written = write_point(folder / "points" / point_id, json.loads(json.dumps(doc)))
                entries.append({"index": index, "label": point_id,
                                "result": f"points/{point_id}"})
                (folder / "sweep.json").write_text(json.dumps({"scenario": "security",
                                                               "entries": entries}))
                ingest_point(written, index=index, repetition=rep)


def found(root: Path) -> dict[tuple[str, int, str], security.Cost]:
    return {(str(c.of("transport")), int(c.of("payload_bytes")), c.secure): c
            for c in security.costs(load_runs(root, ["latest"]))}


def test_each_round_is_divided_by_its_own_plain_point(tmp_path: Path) -> None:
    root = tmp_path / "results"
    # encrypt/plain per round: 2.0, 1.5, 3.0 -> median 2.0 (the median p50s' ratio, 300/150,
    # would be wrong)
    sweep(root, [[point("cyclonedds", None, 100), point("cyclonedds", "encrypt", 200)],
                 [point("cyclonedds", None, 200), point("cyclonedds", "encrypt", 300)],
                 [point("cyclonedds", None, 150), point("cyclonedds", "encrypt", 450)]])
    costs = found(root)
    assert costs[("cyclonedds", 256, "encrypt")].ratios["p50"] == [2.0, 1.5, 3.0]
    assert costs[("cyclonedds", 256, "plain")].ratios["p50"] == [1.0, 1.0, 1.0]
    table = build(root, ["latest"], "markdown")
    assert "| cyclonedds | 256 B | 100 Hz | encrypt | 3 | 300 µs | x2.00 (1.50\u20133.00) |" \
        in table
    page = build(root, ["latest"])
    assert 'id="security"' in page
    assert "cyclonedds 256 B encrypt: p50 x2.00 of plain over 3 rounds" in page


def test_a_tunnels_cpu_counts_beside_the_agents_and_its_handshake_is_shown(
        tmp_path: Path) -> None:
    root = tmp_path / "results"
    # the same agents' CPU both points; the tunnel's 1.0 s over 50 messages adds 20 ms each
    sweep(root, [[point("udp", None, 100), point("udp", "wireguard", 400, tunnel_cpu_s=1.0,
                                                 handshake_ms=2.5)]])
    costs = found(root)
    tunnel, plain = costs[("udp", 256, "wireguard")], costs[("udp", 256, "plain")]
    assert round(tunnel.cpu_us[0] - plain.cpu_us[0], 6) == 1.0 / 50 * 1e6
    assert tunnel.ratios["cpu"] == [tunnel.cpu_us[0] / plain.cpu_us[0]] and \
        tunnel.ratios["cpu"][0] > 1
    assert tunnel.handshake_ms == [2.5] and tunnel.ratios["p50"] == [4.0]


def test_the_opening_a_tls_handshake_is_in_is_shown_and_counted_to_the_first_echo(
        tmp_path: Path) -> None:
    root = tmp_path / "results"
    plain = {"open_ns": 400_000, "matched_ns": 1_000_000, "first_reply_ns": 300_000,
             "probes": 1}
    tls = {**plain, "open_ns": 9_000_000}
    sweep(root, [[point("mqtt", None, 100, discovery=plain),
                  point("mqtt", "tls", 120, discovery=tls)]])
    costs = found(root)
    assert costs[("mqtt", 256, "tls")].open_ns == [9_000_000]
    assert costs[("mqtt", 256, "tls")].first_ns == [10_300_000]  # open + matched + echo
    assert costs[("mqtt", 256, "plain")].first_ns == [1_700_000]
    assert "| 9.00 ms | 10.3 ms |" in build(root, ["latest"], "markdown")


def test_transports_and_payloads_are_never_mixed(tmp_path: Path) -> None:
    root = tmp_path / "results"
    sweep(root, [[point("udp", None, 100), point("udp", "wireguard", 300),
                  point("ros1", None, 200), point("ros1", "wireguard", 500),
                  point("ros1", None, 1000, payload=1024),
                  point("ros1", "wireguard", 1500, payload=1024)]])
    costs = found(root)
    assert costs[("udp", 256, "wireguard")].ratios["p50"] == [3.0]
    assert costs[("ros1", 256, "wireguard")].ratios["p50"] == [2.5]
    assert costs[("ros1", 1024, "wireguard")].ratios["p50"] == [1.5]


def test_links_are_never_mixed(tmp_path: Path) -> None:
    """The link is no catalogue column: it comes from each point's result."""
    root = tmp_path / "results"
    sweep(root, [[point("udp", None, 100), point("udp", "wireguard", 300),
                  point("udp", None, 1000, link="wifi-80211n"),
                  point("udp", "wireguard", 1200, link="wifi-80211n")]])
    costs = {(c.of("link"), c.secure): c.ratios["p50"]
             for c in security.costs(load_runs(root, ["latest"]))}
    assert costs[("ethernet-1g", "wireguard")] == [3.0]
    assert costs[("wifi-80211n", "wireguard")] == [1.2]


def test_compare_and_labels_tell_plain_from_secured() -> None:
    from mwperf.report.labels import SETTINGS, setting_text
    assert "secure" in SETTINGS  # the configuration key compare matches points by
    assert (setting_text("secure", None), setting_text("secure", "wireguard")) == (
        "plain", "secure wireguard")


def test_no_plain_point_in_the_round_no_ratio_and_a_note(tmp_path: Path) -> None:
    root = tmp_path / "results"
    sweep(root, [[point("fastdds", "auth", 100)]])
    (cost,) = security.costs(load_runs(root, ["latest"]))
    assert cost.secure == "auth" and "p50" not in cost.ratios
    assert "no plain point of the same stream and round" in build(root, ["latest"])


def test_no_secured_point_no_section(tmp_path: Path) -> None:
    root = tmp_path / "results"
    sweep(root, [[point("udp", None, 100), point("tcp", None, 120)]])
    assert security.markdown(load_runs(root, ["latest"])) == ""
    assert 'id="security"' not in build(root, ["latest"])


def test_the_catalogue_has_the_mode_and_migrates_older_catalogues(tmp_path: Path) -> None:
    import duckdb
    from report_support import latencies
    from test_store_support import catalogue_rows

    from mwperf.store import schema

    root = tmp_path / "r"
    secured = result("20261130T100000Z-udp-roundtrip-0001", latencies(100))
    secured["config"]["secure"] = "wireguard"
    secured["discovery"] = {"open_ns": 7, "matched_ns": 5, "first_reply_ns": 3, "probes": 1}
    plain = result("20261130T100100Z-udp-roundtrip-0002", latencies(100))
    for document in (secured, plain):
        ingest_point(write_point(root / document["run_id"], document))
    query = "SELECT secure, discovery_open_ns FROM points ORDER BY point_id"
    assert catalogue_rows(root, query) == [("wireguard", 7), (None, None)]
    with duckdb.connect(str(root / "catalogue.duckdb")) as con:  # as version 15 had it
        con.execute("ALTER TABLE points DROP COLUMN secure")
        con.execute("ALTER TABLE points DROP COLUMN discovery_open_ns")
        con.execute("UPDATE schema_version SET version = 15")
    with connect(root, views=False) as con:
        assert schema.version_of(con) == schema.SCHEMA_VERSION >= 17
    assert catalogue_rows(root, query) == [("wireguard", 7), (None, None)]
