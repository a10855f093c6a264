"""mwperf probe --zenoh against a real zenoh system started here: the agent's own zenoh router
and two publishers in client mode at known rates (mwperf-agent pub: 200 Hz, and 50 Hz twice with
a 600 ms pause between): each rate within +-1 %, the pause one gap of ~600 ms or more; a bad
endpoint exit 2, nobody at the endpoint exit 1 — and the probe publishes nothing."""

import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from mwperf.agent import find_agent


def agent_path() -> str:
    return str(find_agent().path)


def publish(endpoint: str, base: str, hz: int, seconds: float) -> None:
    subprocess.run([agent_path(), "pub", "--transport", "zenoh", "--opt", "mode=client",
                    "--connect", f"{endpoint}#{base}", "--rate", str(hz), "--duration",
                    f"{seconds}s", "--quiet"], capture_output=True, timeout=60)


@pytest.fixture(scope="module")
def probed() -> dict:
    router = subprocess.Popen([agent_path(), "router", "--transport", "zenoh", "--listen",
                               "tcp/127.0.0.1:0"], stdout=subprocess.PIPE, text=True)
    try:
        assert router.stdout is not None
        endpoint = router.stdout.readline().split()[2]

        def paused() -> None:
            publish(endpoint, "paused", 50, 1.2)
            time.sleep(0.6)
            publish(endpoint, "paused", 50, 1.2)

        publishers = [threading.Thread(target=publish, args=(endpoint, "steady", 200, 4.0)),
                      threading.Thread(target=paused)]
        for p in publishers:
            p.start()
        time.sleep(0.4)
        done = subprocess.run([sys.executable, "-m", "mwperf", "probe", "--no-save", "--zenoh", endpoint,
                               "mwperf/**", "--duration", "3s", "--json"],
                              capture_output=True, text=True, timeout=60)
        for p in publishers:
            p.join()
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)
    finally:
        router.terminate()
        router.wait(10)


@pytest.mark.agent
def test_rates_within_one_percent(probed: dict) -> None:
    topics = {t["topic"]: t for t in probed["topics"]}
    assert topics["mwperf/steady/ping"]["rate_hz"] == pytest.approx(200, rel=0.01)
    assert topics["mwperf/steady/ping"]["size_p50"] == 1080  # Array1k: 1 KiB + the 56-byte header
    assert set(topics) == {"mwperf/steady/ping", "mwperf/paused/ping"}, "the probe published"


@pytest.mark.agent
def test_the_pause_is_one_gap(probed: dict) -> None:
    paused = next(t for t in probed["topics"] if t["topic"] == "mwperf/paused/ping")
    assert paused["gaps"] == 1
    assert paused["gap_max_ns"] >= 600_000_000


@pytest.mark.agent
@pytest.mark.parametrize(("endpoint", "code", "words"), [
    ("robot:7447", 2, "--zenoh: expected an endpoint such as tcp/robot:7447"),
    ("tcp/127.0.0.1:1", 1, "--zenoh tcp/127.0.0.1:1"),
])
def test_bad_or_absent_endpoint(endpoint: str, code: int, words: str) -> None:
    done = subprocess.run([sys.executable, "-m", "mwperf", "probe", "--no-save", "--zenoh", endpoint,
                           "--duration", "1s"], capture_output=True, text=True, timeout=60)
    assert done.returncode == code, done.stderr
    assert words in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


@pytest.mark.agent
def test_a_saved_probe_is_in_the_catalogue_and_shown(tmp_path) -> None:
    """Without --no-save the probe lands in the results folder (probe.json, probe.txt), one
    catalogue row per topic, and 'mwperf show FOLDER' prints its table again."""
    router = subprocess.Popen([agent_path(), "router", "--transport", "zenoh", "--listen",
                               "tcp/127.0.0.1:0"], stdout=subprocess.PIPE, text=True)
    try:
        assert router.stdout is not None
        endpoint = router.stdout.readline().split()[2]
        pub = threading.Thread(target=publish, args=(endpoint, "saved", 100, 2.5))
        pub.start()
        time.sleep(0.4)
        done = subprocess.run([sys.executable, "-m", "mwperf", "probe", "--zenoh", endpoint,
                               "--duration", "1s", "--results", str(tmp_path)],
                              capture_output=True, text=True, timeout=60)
        pub.join()
    finally:
        router.terminate()
        router.wait(10)
    assert done.returncode == 0, done.stderr
    folder = Path(done.stdout.strip().splitlines()[-1].removeprefix("saved in "))
    assert (folder / "probe.json").is_file() and (folder / "probe.txt").is_file()
    query = subprocess.run([sys.executable, "-m", "mwperf", "query", "--results", str(tmp_path),
                            "SELECT topic, count, rate_hz FROM probes", "--format", "json"],
                           capture_output=True, text=True, timeout=60)
    assert query.returncode == 0, query.stderr
    rows = json.loads(query.stdout)
    assert [r["topic"] for r in rows] == ["mwperf/saved/ping"]
    # the catalogue holds what the probe measured and saved (how close that is to the
    # publisher's rate is test_rates_within_one_percent's, alone: beside other tests a
    # publisher held back catches up in a burst, 135 Hz over this 1 s window once)
    (saved,) = json.loads((folder / "probe.json").read_text())["topics"]
    assert (rows[0]["count"], rows[0]["rate_hz"]) == (saved["count"], saved["rate_hz"])
    assert saved["count"] > 1
    shown = subprocess.run([sys.executable, "-m", "mwperf", "show", str(folder)],
                           capture_output=True, text=True, timeout=60)
    assert shown.returncode == 0, shown.stderr
    assert "mwperf/saved/ping" in shown.stdout and f"from {folder}" in shown.stdout
