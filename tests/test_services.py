"""--mode service: the point's options checked against the transport (the real agent's
descriptors), the agents' command lines, and the server's side merged into the calls."""

from typing import Any

import pytest
from fakes.reports import agent_report, measurement

from mwperf.commandline import role_argv
from mwperf.config import build_point
from mwperf.errors import UsageError
from mwperf.merge import AgentRun, merge

pytestmark = pytest.mark.agent


class Catalogue:
    def transports(self) -> list[str]:
        return ["udp", "tcp", "uds", "iceoryx2", "cyclonedds", "fastdds", "rustdds", "zenoh",
                "mqtt", "foxglove", "ros1"]

    def payloads(self) -> dict[str, int]:
        return {"Array64": 64, "Array1k": 1024, "Array64k": 65536}


def point(real_env: dict[str, str], **options: Any) -> Any:
    return build_point({"mode": "service", "transport": "udp", **options}, Catalogue)


def test_a_service_point_takes_the_calls_options(real_env: dict[str, str]) -> None:
    cfg = point(real_env, payload="Array64", reply_payload="Array1k", server_work="200us",
                in_flight="4", clients="3", call_timeout="500ms")
    s = cfg.service
    assert (s.reply_payload_bytes, s.server_work_ns, s.in_flight, s.clients,
            s.call_timeout_ns) == (1024, 200_000, 4, 3, 500_000_000)
    assert cfg.to_dict()["service"]["clients"] == 3
    defaults = point(real_env, payload="100").service
    assert (defaults.reply_payload, defaults.reply_payload_bytes, defaults.in_flight,
            defaults.clients, defaults.call_timeout_ns) == (None, 100, 1, 1, 10**9)


@pytest.mark.parametrize(("options", "flag"), [
    ({"in_flight": "0"}, "--in-flight"), ({"in_flight": "2000"}, "--in-flight"),
    ({"clients": "17"}, "--clients"), ({"clients": "two"}, "--clients"),
    ({"call_timeout": "0s"}, "--call-timeout"), ({"server_work": "soon"}, "--server-work"),
    ({"subscribers": "2"}, "--subscribers"), ({"topics": "2"}, "--topics"),
    ({"busy_loop": "1ms"}, "--busy-loop"), ({"pong": "relay"}, "--pong"),
])
def test_bad_calls_options_are_usage_errors_naming_the_flag(real_env: dict[str, str],
                                                           options: dict[str, Any],
                                                           flag: str) -> None:
    with pytest.raises(UsageError) as err:
        point(real_env, **options)
    assert str(err.value).startswith(flag), err.value


def test_calls_options_need_the_service_mode(real_env: dict[str, str]) -> None:
    with pytest.raises(UsageError, match="^--in-flight: only with --mode service"):
        build_point({"mode": "roundtrip", "in_flight": "2"}, Catalogue)


def checked(cfg: Any) -> None:
    """The calls and sizes parts' checks before the point runs (parts/calls.py, sizes.py)."""
    from mwperf.agent import find_agent
    from mwperf.parts.calls import CallsPart
    from mwperf.parts.sizes import Sizes
    for part in (CallsPart(), Sizes()):
        assert part.wanted(cfg)
        part.check(cfg, find_agent())


@pytest.mark.parametrize(("options", "flag"), [
    ({"reply_payload": "70000"}, "--reply-payload"), ({"payload": "70000"}, "--payload")])
def test_what_the_transport_cannot_carry_is_refused_before_the_point_runs(
        real_env: dict[str, str], options: dict[str, Any], flag: str) -> None:
    cfg = point(real_env, **options)  # the values themselves are fine ...
    with pytest.raises(UsageError) as err:  # ... but not over UDP
        checked(cfg)
    assert str(err.value).startswith(flag) and "udp" in str(err.value), err.value
    checked(point(real_env, transport="tcp", **options))  # a stream carries them


def test_a_transport_without_services_is_refused_naming_why_and_the_others(
        real_env: dict[str, str]) -> None:
    from mwperf.transports import profiles
    without = [p for p in profiles().values() if not p.services["supported"] and p.built]
    if not without:
        pytest.skip("every transport of this build has services")
    cfg = point(real_env, transport=without[0].name)
    with pytest.raises(UsageError) as err:
        checked(cfg)
    assert str(err.value).startswith("--mode service: --transport")
    assert without[0].services["how"] in str(err.value) and "udp" in str(err.value)
    checked(point(real_env))  # udp has services


def test_client_and_server_get_their_calls_flags(real_env: dict[str, str], tmp_path: Any) -> None:
    from mwperf.agent import find_agent
    cfg = point(real_env, payload="64", reply_payload="1000", server_work="1ms", in_flight="2",
                clients="2")
    client = role_argv(find_agent(), "client", cfg, tmp_path, 7, "127.0.0.1:9")
    server = role_argv(find_agent(), "server", cfg, tmp_path, 7, "127.0.0.1:0")
    assert client[1] == "client" and "--connect" in client
    for flag, value in (("--in-flight", "2"), ("--clients", "2"), ("--reply-payload", "1000")):
        assert client[client.index(flag) + 1] == value
    assert server[1] == "server" and "--listen" in server
    assert server[server.index("--server-work") + 1] == "1000000ns"
    assert "--rate" not in server and "--in-flight" not in server


def test_the_servers_side_joins_the_clients_calls() -> None:
    client = agent_report("client", measured=measurement("service", sent=10, lost=0))
    client["measurement"]["calls"] = {
        "clients": 1, "in_flight": 1, "max_outstanding": 1, "call_timeout_ns": 10**9,
        "answered": 10, "timeouts": 0, "errors": 0, "send_errors": 0, "unmatched": 0,
        "others_replies": 0, "unchecked": 0, "connections": None}
    server = agent_report("server")
    stats = client["measurement"]["service"]
    server["serving"] = {"requests": 12, "answered": 12, "foreign": 0, "reply_errors": 0,
                         "work_ns": 0, "server_time": stats, "connections": None}
    config = {"transport": "udp", "mode": "service", "payload_bytes": 1024}
    result = merge(run_id="r", mode="service", config=config,
                   runs=[AgentRun("server", 0, server, ""), AgentRun("client", 0, client, "")],
                   started_at="t", finished_at="t")
    assert result["measurement"]["calls"]["server"]["requests"] == 12
    assert result["status"] == "complete"


def test_a_version_7_catalogue_gains_the_service_columns(tmp_path: Any) -> None:
    import duckdb

    from mwperf.store import schema
    from mwperf.store.catalogue import connect
    with connect(tmp_path, views=False):
        pass  # a new catalogue, then made a version 7 one: no service or client/server columns
    added = [name for name, _ in schema.SERVICE_COLUMNS] + [
        name for name, _ in schema.PROCESS_COLUMNS + schema.COST_COLUMNS
        if name.startswith(("client_", "server_"))]
    with duckdb.connect(str(tmp_path / "catalogue.duckdb")) as con:
        for column in added:
            con.execute(f"ALTER TABLE points DROP COLUMN {column}")
        con.execute("UPDATE schema_version SET version = 7")
    with connect(tmp_path, views=False) as con:
        assert schema.version_of(con) == schema.SCHEMA_VERSION >= 8
        columns = {row[0] for row in con.execute(
            "SELECT column_name FROM duckdb_columns() WHERE table_name = 'points'").fetchall()}
    assert set(added) <= columns
