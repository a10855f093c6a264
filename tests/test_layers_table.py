"""The run's table with --layers (issue 27): one line per layer under the point, as ``mwperf
run`` prints it and ``mwperf show`` prints it again — label, p50, p99, share; kernel_network's
parts indented; a round trip's directions; layers that cannot be seen say why; the messages not
split counted by reason; a run where nothing could be observed says what was missing."""

import json
from pathlib import Path

from conftest import run_mwperf
from layers_support import none_section, section
from report_support import latencies, result

from mwperf.durations import format_ns
from mwperf.show.layers import render_layers
from mwperf.show.details import render_details


def lines(text: str) -> dict[str, str]:
    """Each indented line by its first words (the label)."""
    return {line.strip().split("  ")[0].strip(): line for line in text.splitlines()
            if line.startswith("  ")}


def test_one_line_per_layer_in_order_with_p50_p99_and_share() -> None:
    sec = section(kind="oneway")
    text = render_layers(sec)
    assert text.startswith("layers        1,000 of 1,000 measured messages split")
    shown = lines(text)
    labels = [layer["label"] for layer in sec["layers"]]
    assert [key for key in shown if key in labels] == labels
    for layer in sec["layers"]:
        line = shown[layer["label"]]
        assert f"p50 {format_ns(layer['p50_ns']):>9}" in line
        assert f"p99 {format_ns(layer['p99_ns']):>9}" in line
        assert f"{100 * layer['share']:.1f} %" in line
    assert "100.0 %" in shown["total (measured latency)"]
    assert "forward" not in text and "not split:" not in text


def test_a_round_trip_gives_each_directions_p50() -> None:
    sec = section(kind="roundtrip")
    shown = lines(render_layers(sec))
    forward = sec["directions"]["forward"][2]["p50_ns"]
    back = sec["directions"]["return"][2]["p50_ns"]
    assert (f"(forward p50 {format_ns(forward)}, return p50 {format_ns(back)})"
            in shown["kernel and network"])
    assert "each layer both directions summed" in render_layers(sec)


def test_the_links_parts_are_indented_under_kernel_and_network() -> None:
    text = render_layers(section(link=True, kind="oneway"))
    rows = text.splitlines()
    at = next(i for i, r in enumerate(rows) if r.startswith("  kernel and network"))
    assert [r.split("  p50")[0].strip() for r in rows[at + 1:at + 4]] == [
        "sender kernel", "link (emulator)", "receiver kernel"]
    assert all(r.startswith("    ") for r in rows[at + 1:at + 4])


def test_shared_memory_says_which_layers_cannot_be_seen_and_why() -> None:
    shown = lines(render_layers(section(shm=True, kind="oneway")))
    for label in ("middleware send path", "kernel and network", "middleware receive path"):
        assert shown[label].split(label)[1].strip() == (
            "not observable: shared memory: no system call carries the message")
    assert "p50" in shown["middleware and transport, not split"]


def test_unsplit_messages_and_dropped_events_are_counted_when_not_zero() -> None:
    text = render_layers(section(unsplit={"other_pattern": 10, "events_dropped": 3}))
    assert "1,000 of 1,013 measured messages split" in text
    assert ("  not split: events dropped (a full ring) 3, seen differently from the others (a "
            "system call missing for them) 10\n" in text)
    assert "ring was full): ping 3\n" in text
    assert "not split" not in render_layers(section()).split("messages split")[1]


def test_several_topics_and_notes_get_a_line_each() -> None:
    sec = section(topics=["/imu", "/scan"])
    sec["notes"] = ["TCP split 4 messages across segments: their last bytes' receive counts"]
    text = render_layers(sec)
    assert "  topic /imu: 500 of 500 split, total p50 " in text
    assert "  topic /scan: " in text and "  note: TCP split 4 messages" in text


def test_nothing_observed_says_what_was_missing() -> None:
    assert render_layers(none_section("seccomp forbids LD_PRELOAD")) == (
        "layers        not split: seccomp forbids LD_PRELOAD\n")
    assert render_layers(None) == ""


def test_the_layers_are_under_the_point_in_run_and_show(fake_env: dict[str, str],
                                                          tmp_path: Path) -> None:
    document = result("20261126T100000Z-udp-roundtrip-0001", latencies(100))
    document["layers"] = section()
    details = render_details(document)
    assert render_layers(document["layers"]) in details
    assert details.index("accounting") < details.index("layers  ")
    # `mwperf show` reads whole results (result/load.py): a real run's, with this section
    saved = json.loads((Path(__file__).parent / "vectors" / "results" / "roundtrip.json")
                       .read_text())
    saved["layers"] = document["layers"]
    (tmp_path / "result.json").write_text(json.dumps(saved))
    done = run_mwperf("show", str(tmp_path / "result.json"), env=fake_env)
    assert done.returncode == 0, done.stderr
    assert render_layers(document["layers"]) in done.stdout
