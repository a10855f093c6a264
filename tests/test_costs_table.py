"""The sweep summary's cost table: shown only when a point measured a cost, a dash where a
figure was not measured (never a zero)."""
from types import SimpleNamespace

from mwperf.scenario.costs import cost_table
from mwperf.show.table import Row


def obs(**fields: object) -> SimpleNamespace:
    return SimpleNamespace(row=Row(transport=str(fields.pop("transport")), mode="roundtrip",
                                   rate=1000.0, payload="Array1k", payload_bytes=1024,
                                   status="complete", **fields))


def test_no_cost_measured_no_table() -> None:
    assert cost_table([obs(transport="udp", rss_kib=12000)]) == ""


def test_costs_side_by_side_with_dashes_for_what_was_not_measured() -> None:
    text = cost_table([
        obs(transport="udp", wire_up_bytes_per_msg=1108.0, wire_down_bytes_per_msg=1108.0,
            wire_overhead=1.0277, wire_setup_bytes=2216, wire_idle_bytes_per_s=0.0,
            sender_allocs_per_msg=0.0, server_allocs_per_msg=0.0, rss_kib=12288),
        obs(transport="iceoryx2", sender_allocs_per_msg=1.0, server_allocs_per_msg=1.0)])
    header, udp, iox = text.splitlines()
    assert header.split()[:3] == ["transport", "payload", "rate"]
    assert udp.split() == ["udp", "Array1k", "1000", "Hz", "1108", "1108", "\u00d71.03",
                           "2.164", "KiB", "0.0", "B/s", "0", "0", "12", "MiB"]
    assert iox.split() == ["iceoryx2", "Array1k", "1000", "Hz", *["\u2014"] * 5, "1", "1",
                           "\u2014"]
    markdown = cost_table([obs(transport="udp", sender_allocs_per_msg=2.0)], markdown=True)
    assert markdown.splitlines()[1].startswith("| --- |")
