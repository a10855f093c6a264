"""--layers end to end with the real agents and the real interposer: every message's layers
add up to its measured latency exactly, and injected truths land in their layer (a busy
callback, an emulated link's delay, a slow application before the write); shared memory and an
agent the interposer cannot see are said, never split by guess."""

import csv
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from conftest import REAL_AGENT, read_saved, run_mwperf

from mwperf.layers import oneway_chain, round_trip, segments
from mwperf.layers_rows import read_rows
from mwperf.parts.layers import build

pytestmark = pytest.mark.agent

LIBRARY = REAL_AGENT.resolve().parent / "libmwperf_layers.so"
MS = 1_000_000


def run(env: dict[str, str], tmp_path: Path, *args: str) -> tuple[dict[str, Any], Path, str]:
    out = tmp_path / "result.json"
    done = run_mwperf("run", "--layers", *args, "--json-out", str(out), "--results",
                      str(tmp_path / "r"), env=env, timeout=180)
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == 0, done.stderr + done.stdout
    saved = next(p for p in (tmp_path / "r").iterdir() if p.is_dir())
    return read_saved(out), saved, done.stdout


def layer(section: dict[str, Any], name: str, direction: str | None = None) -> dict[str, Any]:
    layers = section["layers"] if direction is None else section["directions"][direction]
    return next(item for item in layers if item["name"] == name)


def test_every_message_s_layers_add_up_to_its_measured_latency_exactly(
        real_env: dict[str, str], tmp_path: Path) -> None:
    result, saved, shown = run(real_env, tmp_path, "--transport", "udp", "--rate", "500",
                               "--duration", "1s", "--samples")
    section = result["layers"]
    assert section["method"] == "ld_preload"
    assert section["split"] == section["messages"] == result["measurement"]["accounting"]["received"]
    ping = read_rows(saved / "layers" / "ping.csv")
    pong = read_rows(saved / "layers" / "pong.csv")
    with (saved / "samples.csv").open() as f:  # the ping's own per-message latency
        samples = {int(r["seq"]): int(r["response_ns"]) for r in csv.DictReader(f)}
    checked = 0
    for key, mine in ping.items():
        if key not in pong or mine.take is None:
            continue
        split = segments(round_trip(mine, pong[key], {}))
        assert split is not None
        assert sum(ns for _, _, ns in split[1]) == samples[key[1]]  # exactly, per message
        checked += 1
    assert checked == section["messages"] > 400
    assert "kernel and network" in shown and "total (measured latency)" in shown
    for name in ("app_send", "middleware_send", "kernel_network", "middleware_receive",
                 "executor_callback"):
        assert layer(section, name)["observable"]


def test_a_busy_callback_lands_in_executor_and_callback(real_env: dict[str, str],
                                                         tmp_path: Path) -> None:
    """The pong spins 2 ms in every callback. Checked per message on the fastest tenth: a
    spin put in the wrong layer would be in every message's, while another process on a loaded
    machine delays only some messages (the pong's spin paid back in CPU: stress run 2026-11-29,
    a p50 of 1.9 ms in a layer beside the callback while its fastest messages had none)."""
    result, saved, _ = run(real_env, tmp_path, "--transport", "udp", "--rate", "100",
                           "--duration", "1s", "--busy-loop", "2ms")
    assert layer(result["layers"], "executor_callback", "forward")["p50_ns"] >= 2 * MS
    ping = read_rows(saved / "layers" / "ping.csv")
    pong = read_rows(saved / "layers" / "pong.csv")
    by_layer: dict[str, list[int]] = {}
    for key, mine in ping.items():
        split = segments(round_trip(mine, pong[key], {})) if key in pong else None
        for direction, name, ns in split[1] if split is not None else ():
            by_layer.setdefault(name if name != "executor_callback" else
                                f"{name} {direction}", []).append(ns)
    callback = sorted(by_layer["executor_callback forward"])
    assert len(callback) > 50
    assert callback[0] >= 2 * MS  # every message's callback holds the whole spin
    assert fastest_tenth(callback) <= 2.1 * MS  # and, unhindered, the spin alone (5 %)
    for other in ("middleware_send", "kernel_network", "middleware_receive"):
        assert fastest_tenth(by_layer[other]) < 0.5 * MS, other  # nothing of it elsewhere


def fastest_tenth(values: list[int]) -> int:
    """The slowest of the fastest tenth of ``values`` (tests/latency_quantiles.py's reading)."""
    ordered = sorted(values)
    return ordered[max(0, len(ordered) // 10 - 1)]


def test_a_link_delay_lands_in_kernel_and_network_on_the_link(real_env: dict[str, str],
                                                               tmp_path: Path) -> None:
    result, _, shown = run(real_env, tmp_path, "--transport", "udp", "--rate", "50", "--duration",
                           "1s", "--link", "delay=5ms")
    section = result["layers"]
    # the injected 5 ms is in kernel and network, on the link, once: at least the delay, less
    # than twice it (the emulator releases a packet when it next runs after its due time: 5.28
    # ms at the median once in CI, where 5 % over was the bound)
    for direction in ("forward", "return"):
        kn = layer(section, "kernel_network", direction)
        assert 5 * MS <= kn["p50_ns"] < 10 * MS, (direction, kn["p50_ns"])
        parts = {p["name"]: p["p50_ns"] for p in kn["parts"]}
        assert 5 * MS <= parts["link"] < 10 * MS, (direction, parts)
        assert parts["sender_kernel"] < 0.25 * MS and parts["receiver_kernel"] < 0.25 * MS
    assert layer(section, "middleware_receive")["p50_ns"] < 0.25 * MS
    assert "link (emulator)" in shown


def agent(env: dict[str, str], *args: str, preload: bool = True) -> subprocess.Popen[str]:
    env = {**env, **({"LD_PRELOAD": str(LIBRARY)} if preload else {})}
    return subprocess.Popen([str(REAL_AGENT), *args], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def one_way(tmp_path: Path, *pub_args: str, preload_sub: bool = True
            ) -> tuple[dict[str, Any], list[Any], dict[str, Any]]:
    """A pub and a sub over UDP started by hand (agent flags the control plane does not
    offer), joined by parts.layers.build."""
    folder = tmp_path / "layers"
    folder.mkdir()
    env = dict(os.environ)
    sub = agent(env, "sub", "--transport", "udp", "--listen", "127.0.0.1:0", "--run-id", "77",
                "--json", str(tmp_path / "sub.json"), "--quiet", "--layers-out",
                str(folder / "sub.csv"), preload=preload_sub)
    assert sub.stdout is not None
    ready = sub.stdout.readline().split()
    address = ready[-1]
    pub = agent(env, "pub", "--transport", "udp", "--connect", address, "--run-id", "77",
                "--rate", "200", "--duration", "1s", "--json", str(tmp_path / "pub.json"),
                "--quiet", "--layers-out", str(folder / "pub.csv"), *pub_args)
    assert pub.wait(30) == 0, pub.stderr.read() if pub.stderr else ""
    assert sub.wait(30) == 0
    reports = [(n, json.loads((tmp_path / f"{n}.json").read_text())) for n in ("pub", "sub")]
    result: dict[str, Any] = {"agents": [r for _, r in reports], "per_topic": None}
    section, warnings = build("oneway", folder, reports, result, None, {})  # type: ignore[arg-type]
    return section, warnings, dict(reports)


def test_a_slow_application_before_the_write_lands_in_app_send(tmp_path: Path) -> None:
    section, warnings, reports = one_way(tmp_path, "--test-send-delay", "1ms")
    assert not warnings and section["split"] == section["messages"] > 150
    app = layer(section, "app_send")
    # the injected spin before every write: no message left sooner (a busy machine preempts
    # the spin, so how much later is what the pub's own schedule says, not a guess)
    assert app["q_ns"][0] >= 1 * MS
    # app_send is each message's write less its intended time, which is the pub's own send
    # lateness: the same messages, the rows split in Python against the agent's histogram
    lateness = reports["pub"]["schedule"]["lateness"]
    assert lateness["count"] == section["messages"] and lateness["min_ns"] >= 1 * MS
    assert app["mean_ns"] == pytest.approx(lateness["mean_ns"], abs=1)
    assert app["p50_ns"] == pytest.approx(lateness["p50_ns"], rel=1e-3)  # HDR's 3 digits
    # and the rest of the path is the sub's own one-way latency from that write (means add)
    service = reports["sub"]["measurement"]["service"]
    assert section["total"]["mean_ns"] - app["mean_ns"] == pytest.approx(service["mean_ns"],
                                                                         abs=1)
    for name in ("pub", "sub"):
        assert reports[name]["layers"]["interposer"] is True


def test_an_agent_the_interposer_cannot_see_is_said_and_its_layers_merged(tmp_path: Path) -> None:
    section, warnings, reports = one_way(tmp_path, preload_sub=False)
    assert reports["sub"]["layers"]["interposer"] is False
    assert "not loaded" in reports["sub"]["layers"]["why"]
    assert [w["code"] for w in warnings] == ["layers-unavailable"]
    assert "sub:" in warnings[0]["message"]
    names = [item["name"] for item in section["layers"] if item["observable"]]
    assert names == ["app_send", "middleware_send", "kernel_network+middleware_receive",
                     "executor_callback"]
    assert section["split"] == section["messages"]


def test_shared_memory_has_no_system_call_and_is_not_split(real_env: dict[str, str],
                                                            tmp_path: Path) -> None:
    result, _, shown = run(real_env, tmp_path, "--transport", "iceoryx2", "--rate", "200",
                           "--duration", "1s")
    section = result["layers"]
    assert section["split"] == section["messages"] > 150
    assert layer(section, "middleware_transport")["observable"]
    for hidden in ("middleware_send", "kernel_network", "middleware_receive"):
        item = layer(section, hidden)
        assert not item["observable"] and item["share"] is None
        assert "shared memory" in item["note"]
    assert "not observable" in shown


def test_a_one_way_point_is_split_on_one_clock(real_env: dict[str, str], tmp_path: Path) -> None:
    result, saved, _ = run(real_env, tmp_path, "--transport", "cyclonedds", "--mode", "oneway",
                           "--rate", "200", "--duration", "1s")
    section = result["layers"]
    assert section["kind"] == "oneway" and section["directions"] is None
    assert section["split"] == section["messages"] > 150
    pub, sub = (read_rows(saved / "layers" / f"{n}.csv") for n in ("pub", "sub"))
    key = next(iter(sub))
    split = segments(oneway_chain(pub[key], sub[key], {}))
    assert split is not None and all(ns >= 0 for _, _, ns in split[1])


def test_a_full_ring_drops_observations_counts_them_and_blocks_nothing(
        real_env: dict[str, str], tmp_path: Path) -> None:
    # TEST ONLY: each agent's ring holds 50 events; the run sends 200 messages each way
    env = {**real_env, "MWPERF_LAYERS_CAPACITY": "50"}
    result, _, shown = run(env, tmp_path, "--transport", "udp", "--rate", "200", "--duration",
                           "1s")
    assert result["status"] == "complete"
    assert result["measurement"]["accounting"]["received"] == 200  # nothing held up
    section = result["layers"]
    assert sum(a["dropped"] for a in section["agents"]) > 0
    # a message whose system calls went unseen because its agent's ring was full is counted,
    # not taken for one that no system call carries
    assert section["unsplit"]["events_dropped"] > 100
    assert section["split"] + section["unsplit"]["events_dropped"] <= section["messages"] == 200
    assert all(item["name"] != "middleware_transport" for item in section["layers"])
    codes = [w["code"] for w in result["warnings"]]
    assert "layers-incomplete" in codes
    assert "events dropped" in shown
