"""mwperf probe --zenoh against a real zenoh system started here: the agent's own zenoh router
and two publishers in client mode at known rates (mwperf-agent pub: 200 Hz, and 50 Hz twice with
a 600 ms pause between): each rate within +-1 %, the pause one gap of ~600 ms or more; a bad
endpoint exit 2, nobody at the endpoint exit 1 — and the probe publishes nothing."""

import json
import subprocess
import sys
import threading
import time

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
        done = subprocess.run([sys.executable, "-m", "mwperf", "probe", "--zenoh", endpoint,
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
    done = subprocess.run([sys.executable, "-m", "mwperf", "probe", "--zenoh", endpoint,
                           "--duration", "1s"], capture_output=True, text=True, timeout=60)
    assert done.returncode == code, done.stderr
    assert words in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
