"""mwperf run --replay with the real agent: the fixture recording (tests/fixtures/bags/small.bag:
30 images, 40 scans in 1 s) over udp one way and round trip: every recorded message of each topic
arrives on its own topic, intact, and the sender's schedule section counts all 70."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures" / "bags"


def mwperf(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mwperf", "run", "--no-save", *args],
                          capture_output=True, text=True, timeout=60)


@pytest.mark.agent
@pytest.mark.parametrize("mode", ["oneway", "roundtrip"])
def test_replay_over_udp(tmp_path: Path, mode: str) -> None:
    out = tmp_path / "result.json"
    done = mwperf("--transport", "udp", "--mode", mode, "--replay", str(FIXTURES / "small.bag"),
                  "--json", str(out))
    assert done.returncode == 0, done.stderr
    result = json.loads(out.read_text())
    assert result["config"]["replay"]["topics"] == ["/camera/image_raw", "/scan"]
    measuring = next(a for a in result["agents"] if a["role"] == ("sub" if mode == "oneway"
                                                                   else "ping"))
    per_topic = measuring["per_topic"]
    assert [t["accounting"]["received"] for t in per_topic] == [30, 40]
    if mode == "oneway":  # the sub reports the sizes that arrived (ping: the largest, as asked)
        assert [t["message_bytes"] for t in per_topic] == [4848, 4057]  # the recorded sizes
    accounting = measuring["measurement"]["accounting"]
    assert accounting["corrupted"] == 0 and accounting["lost"] == 0
    sender = next(a for a in result["agents"] if a["role"] in ("pub", "ping"))
    schedule = sender.get("schedule") or sender["measurement"]["schedule"]
    assert schedule["lateness"]["count"] == 70
