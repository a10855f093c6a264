"""Every size of a point checked against the transport's limit before anything starts: the
limit is the agent's (its listing's ``max_payload``: the largest message less the header, never
above the agent's payload limit), and a size over it is a usage error (exit 2) naming the flag,
the transport and the limit, with no daemon and no agent started. Each case records every
process the CLI starts; a fitting point beside them shows the recording sees an agent start."""

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import run_mwperf, traced_pids

from mwperf.transports import profiles

LISTINGS = ("transports", "payloads", "options", "--version")
"""what the CLI asks the agent before a point (its answers, not a run)"""


@pytest.fixture
def started(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[list[str]]]:
    """The argv of every process the CLI starts in this test (it runs in this process)."""
    seen: list[list[str]] = []
    real = subprocess.Popen

    class Recording(real):  # type: ignore[misc, valid-type]
        def __init__(self, args: list[str], *rest: object, **kw: object) -> None:
            seen.append([str(a) for a in args] if not isinstance(args, str) else [args])
            super().__init__(args, *rest, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(subprocess, "Popen", Recording)
    yield seen


def runs(seen: list[list[str]]) -> list[list[str]]:
    """The started processes that are not a query of the agent's listings."""
    return [argv for argv in seen if not (len(argv) > 1 and argv[1] in LISTINGS)]


def limit(transport: str, env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> int:
    """The transport's limit as the (fake) agent lists it: the real agent's listing."""
    monkeypatch.setenv("MWPERF_AGENT", env["MWPERF_AGENT"])
    monkeypatch.setenv("FAKE_AGENT_TRANSPORTS", env.get("FAKE_AGENT_TRANSPORTS", ""))
    return profiles()[transport].max_payload


@pytest.mark.parametrize(("transport", "args", "flag"), [
    ("udp", ("--payload", "64KiB"), "--payload"),
    ("udp", ("--payload", "pointcloud4m"), "--payload"),  # a name, in any case
    ("mqtt", ("--payload", "65MiB"), "--payload"),  # the agent's own limit; mqtt has a daemon
    ("udp", ("--mode", "service", "--reply-payload", "64k"), "--reply-payload"),
])
def test_a_too_large_payload_is_refused_before_anything_starts(
        transport: str, args: tuple[str, ...], flag: str, fake_env: dict[str, str],
        started: list[list[str]], monkeypatch: pytest.MonkeyPatch) -> None:
    env = {**fake_env, "FAKE_AGENT_TRANSPORTS": "mqtt"}
    most = limit(transport, env, monkeypatch)
    done = run_mwperf("run", "--transport", transport, "--duration", "200ms", *args, env=env)
    assert done.returncode == 2, done.stderr
    assert f"{flag}: " in done.stderr and f"does not fit one {transport} message" in done.stderr
    assert f"carries at most {most} bytes" in done.stderr
    assert ("the agent, over any transport," in done.stderr) == (transport == "mqtt")
    assert runs(started) == [] and traced_pids(Path(env["FAKE_AGENT_TRACE"])) == {}


def test_a_fitting_payload_starts_its_agents(fake_env: dict[str, str],
                                             started: list[list[str]]) -> None:
    """The recording above can fail: a point that fits starts its pong and ping."""
    done = run_mwperf("run", "--transport", "udp", "--payload", "1KiB", "--duration", "200ms",
                      "--no-save", env=fake_env)  # (saving went into the checkout's results/)
    assert done.returncode == 0, done.stderr
    assert {argv[1] for argv in runs(started)} >= {"pong", "ping"}


def test_a_too_large_graph_edge_is_refused_before_anything_starts(
        tmp_path: Path, fake_env: dict[str, str], started: list[list[str]],
        monkeypatch: pytest.MonkeyPatch) -> None:
    most = limit("udp", fake_env, monkeypatch)
    graph = tmp_path / "g.yaml"
    graph.write_text("nodes:\n"
                     f"  - {{name: p, publishers: [{{topic: /x, rate: 10, payload: {most + 1}}}]}}\n"
                     "  - {name: s, subscribers: [{topic: /x}]}\n")
    done = run_mwperf("run", "--graph", str(graph), "--transport", "udp", "--duration", "200ms",
                      env=fake_env)
    assert done.returncode == 2, done.stderr
    assert (f"node 'p' publishes '/x' with {most + 1} B payloads; --transport udp carries at "
            f"most {most} B") in done.stderr
    assert runs(started) == [] and traced_pids(Path(fake_env["FAKE_AGENT_TRACE"])) == {}
