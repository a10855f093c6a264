#!/usr/bin/env -S python3 -S
"""A stand-in for mwperf-agent that honours docs/agent-contract.md without measuring anything.

Started with ``python3 -S`` (the shebang): it needs only the standard library and mwperf (from
PYTHONPATH), and site-packages' .pth hooks cost ~20 ms of CPU per start here, some 400 starts in
`make test-fast`.

It binds and connects real sockets (so addresses and READY are real), prints READY, honours
SIGINT/SIGTERM, writes schema-valid reports with invented numbers and uses the contract's exit
codes. Select it with MWPERF_AGENT=<this file>. Misbehaviour on demand, via FAKE_AGENT, a
comma-separated list of ROLE:BEHAVIOUR[=VALUE]:

  exit-before-ready  server exits 1 before READY (address in use)
  usage              exit 2 with one line on stderr, nothing written
  fail               report status 'failed', exit 1
  hang               ignore SIGINT/SIGTERM and never finish (needs SIGKILL)
  no-report          exit 0 without writing a report
  warn               add the warning 'cpu-idle'
  no-exit            sub: ignore the end-of-stream marker (wait for a signal)
  sent=N / lost=N    override accounting (pub: sent; sub: accounting.sent / lost)

'router --transport T --listen ADDR' stands in for the zenoh router (READY T-router <endpoint>).
'node --node-spec FILE --go-file PATH --json OUT' is a graph's node (fake_node.py; FAKE_AGENT
behaviours are given to node-<name>, e.g. node-montreal:fail).

FAKE_AGENT_CLOCK=virtual: a ping/pub runs on virtual time, as hyperfine's mock executor does:
it reports the planned time (duration + warm-up) as elapsed without waiting for it (the
control plane's logic is what the unit tier checks, not the wall clock; tests/conftest.py
fake_env sets it there). Otherwise (or =real) it takes the planned time on the wall clock, for
tests that signal a run while it measures.
FAKE_AGENT_TRACE=DIR: write DIR/<role>.pid and DIR/<role>.argv.json on start.
FAKE_AGENT_TRANSPORTS=a,b: also claim these transports (e.g. mqtt, to exercise the control
plane's daemons); they are served like tcp on a free loopback port, whatever --listen says.
"""

import json
import os
import signal
import sys
import time
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parent))
from reports import agent_report, measurement  # noqa: E402

# socket, select and mwperf's parsers are imported where a role needs them: every import costs
# each of the unit tier's ~450 starts its CPU (the catalogue roles and nodes need none of them)

CATALOGUE = json.loads((Path(__file__).parent / "payloads.json").read_text())
"""the real agent's 'payloads --json' (tests/test_agent_options.py keeps it current)"""
DESCRIPTORS = json.loads((Path(__file__).parent / "transports.json").read_text())
"""the real agent's 'transports --json' (tests/test_transport_registry.py keeps it current)"""
OPTIONS = (Path(__file__).parent / "options.json").read_text()
"""the real agent's 'options --json' (tests/test_agent_options.py keeps it current)"""
BUILT = ("udp", "tcp", "uds")
WARNING = {"code": "cpu-idle", "message": "CPU idle states are enabled",
           "hint": "use --prevent-cpu-idle"}
stop = False


def behaviours(role: str) -> dict[str, str]:
    found = {}
    for item in filter(None, os.environ.get("FAKE_AGENT", "").split(",")):
        who, _, what = item.partition(":")
        if who == role:
            key, _, value = what.partition("=")
            found[key] = value
    return found


def on_signal(signum: int, frame: object) -> None:
    global stop
    stop = True


MEASURING_VALUES = ("--transport", "--rate", "--payload", "--duration", "--count", "--min-count",
                    "--warmup", "--peer-timeout", "--spin-margin", "--run-id", "--json",
                    "--samples", "--reliability", "--history", "--depth", "--durability",
                    "--discovery-timeout", "--topics", "--executor", "--busy-loop")
MEASURING = (MEASURING_VALUES, ("--opt", "--topic-name"),
             ("--quiet", "--busy-poll", "--prevent-cpu-idle"))
ROLES: dict[str, tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]] = {
    "ping": ((*MEASURING[0], "--connect"), *MEASURING[1:]),
    "pub": ((*MEASURING[0], "--connect"), *MEASURING[1:]),
    "pong": ((*MEASURING[0], "--listen"), *MEASURING[1:]),
    "sub": ((*MEASURING[0], "--listen"), *MEASURING[1:]),
    "node": (("--transport", "--go-file", "--run-id", "--json", "--spin-margin", "--reliability",
              "--history", "--depth", "--durability", "--discovery-timeout", "--clock-serve",
              "--clock-ref", "--layers-out"), ("--opt", "--node-spec", "--node-json"),
             ("--quiet", "--busy-poll", "--count-allocs")),
    "payloads": ((), (), ("--json",)), "transports": ((), (), ("--json",)),
    "options": ((), (), ("--json",)), "pool": ((), (), ()),
    "router": (("--transport", "--listen"), (), ()),
}
"""each role's flags, as the real agent's command line (cli.rs) takes them: (taking a value,
repeatable, switches); the fake refuses any other flag (exit 2) as the real agent does, so the
unit tier catches a control plane passing a flag a role does not take"""
REQUIRED = {"ping": ("--transport", "--connect"), "pub": ("--transport", "--connect"),
            "pong": ("--transport", "--listen"), "sub": ("--transport", "--listen"),
            "router": ("--transport", "--listen")}


def usage(message: str) -> None:
    sys.stderr.write(f"mwperf-agent (fake): error: {message}\n")
    sys.exit(2)


def dest(flag: str) -> str:
    return "address" if flag in ("--connect", "--listen") else flag[2:].replace("-", "_")


def parse(argv: list[str]) -> SimpleNamespace:
    """The command line as the real agent reads it (not argparse: its import and parser cost
    ~40 ms of CPU per start, some 450 starts in the unit tier)."""
    if argv == ["--version"]:
        return SimpleNamespace(version=True, role=None)
    if not argv or argv[0] not in ROLES:
        usage(f"a role first, one of {', '.join(ROLES)} (got {' '.join(argv[:1]) or 'none'})")
    role, rest = argv[0], argv[1:]
    values, appends, switches = ROLES[role]
    found: dict[str, object] = {dest(f): None for f in values}
    found.update({dest(f): [] if f == "--topic-name" else None for f in appends})
    found.update({dest(f): False for f in switches})
    given = set()
    i = 0
    while i < len(rest):
        flag, has_value, value = rest[i].partition("=")
        if flag in switches and not has_value:
            found[dest(flag)] = True
        elif flag in values or flag in appends:
            if not has_value:
                if i + 1 >= len(rest) or rest[i + 1].startswith("--"):
                    usage(f"{flag} expects a value")
                i += 1
                value = rest[i]
            if flag in appends:
                found[dest(flag)] = [*(found[dest(flag)] or []), value]  # type: ignore[misc]
            else:
                found[dest(flag)] = value
        else:
            usage(f"{role}: unrecognized argument {rest[i]}")
        given.add(flag)
        i += 1
    missing = [f for f in REQUIRED.get(role, ()) if f not in given]
    if missing:
        usage(f"{role}: the following arguments are required: {', '.join(missing)}")
    return SimpleNamespace(version=False, role=role, **found)


def route(args: SimpleNamespace) -> int:
    """router: listen on a free port, print READY <transport>-router <endpoint>, wait for a signal."""
    import socket
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen()
    print(f"READY {args.transport}-router tcp/127.0.0.1:{sock.getsockname()[1]}", flush=True)
    while not stop:
        time.sleep(0.02)
    return 0


def transports() -> list[dict]:
    """The real descriptors; built in: udp, tcp, uds and those named in FAKE_AGENT_TRANSPORTS."""
    extra = [n for n in os.environ.get("FAKE_AGENT_TRANSPORTS", "").split(",") if n]
    return [{**d, "built": d["name"] in BUILT or d["name"] in extra} for d in DESCRIPTORS]


def endpoint(transport: str, address: str) -> tuple[int, int, object]:
    import socket
    if transport == "uds":
        return socket.AF_UNIX, socket.SOCK_STREAM, address
    host, _, port = address.rpartition(":")
    kind = socket.SOCK_DGRAM if transport == "udp" else socket.SOCK_STREAM
    return socket.AF_INET, kind, (host, int(port))


def serve(args: SimpleNamespace, how: dict[str, str]) -> tuple[str, dict]:
    """pong/sub: bind, READY, run until a signal (pong) or the end-of-stream marker (sub)."""
    import select
    import socket
    if "exit-before-ready" in how:
        sys.stderr.write(f"error: --listen {args.address}: Address already in use (os error 98)\n")
        sys.exit(1)
    if args.transport not in ("udp", "tcp", "uds"):  # a middleware address: serve like tcp
        args.address = "127.0.0.1:0"
    family, kind, where = endpoint(args.transport, args.address)
    sock = socket.socket(family, kind)
    if family == socket.AF_UNIX and os.path.exists(where):
        os.unlink(where)
    sock.bind(where)
    if kind == socket.SOCK_STREAM:
        sock.listen()
    bound = where if family == socket.AF_UNIX else "%s:%d" % sock.getsockname()
    print(f"READY {args.transport} {bound}", flush=True)
    conns, fin = [sock], None
    while not stop and (fin is None or "no-exit" in how):
        ready, _, _ = select.select(conns, [], [], 0.05)
        for s in ready:
            if s is sock and kind == socket.SOCK_STREAM:
                conns.append(sock.accept()[0])
                continue
            data = s.recv(65536)
            if not data and s is not sock:
                conns.remove(s)
            if data.startswith(b"FIN "):
                fin = int(data.split()[1])
    if args.role == "pong":
        return "complete", None
    sent = int(how.get("sent", fin if fin is not None else 0))
    lost = int(how.get("lost", 0))
    m = measurement("oneway", sent=sent, lost=lost, payload_bytes=payload_bytes(args.payload),
                    rate=float(args.rate or 1000))
    return "complete", m


def payload_bytes(text: str | None) -> int:
    from mwperf.sizes import parse_size
    text = text or json.loads(OPTIONS)["defaults"]["payload"]
    found = [n for name, n in CATALOGUE.items() if name.lower() == text.strip().lower()]
    return found[0] if found else parse_size(text)


def send(args: SimpleNamespace, how: dict[str, str]) -> tuple[str, dict | None, int, str | None]:
    """ping/pub: connect, 'send' for the planned time, announce the end (pub)."""
    import socket

    from mwperf.durations import parse_duration
    family, kind, where = endpoint(args.transport, args.address)
    sock = socket.socket(family, kind)
    try:
        sock.connect(where)
        if kind == socket.SOCK_DGRAM:
            sock.send(b"probe")
    except OSError as exc:
        sys.stderr.write(f"error: --connect {args.address}: {exc.strerror}\n")
        return "failed", None, 0, f"cannot connect: {exc.strerror}"
    rate = float(args.rate or 1000)
    if args.count:
        planned = int(args.count) / rate if rate else int(args.count) * 1e-5
    else:
        planned = parse_duration(args.duration or "10s") / 1e9
        if args.min_count and rate:  # --min-count N at a rate: max(duration, N periods)
            planned = max(planned, int(args.min_count) / rate)
    planned += parse_duration(args.warmup or "0s") / 1e9
    if os.environ.get("FAKE_AGENT_CLOCK") != "virtual":
        start = time.monotonic()
        while not stop and time.monotonic() - start < planned:
            time.sleep(0.01)
        elapsed = min(time.monotonic() - start, planned) or 1e-3
    else:
        elapsed = planned or 1e-3
    sent = int(args.count) if args.count and not stop else int((rate or 10_000) * elapsed)
    sent = int(how.get("sent", sent))
    if args.role == "pub":
        for _ in range(3 if kind == socket.SOCK_DGRAM else 1):
            try:
                sock.send(f"FIN {sent}\n".encode())
            except ConnectionRefusedError:  # udp: the sub got an earlier FIN and is gone
                break
    status, reason = ("partial", "interrupted by signal") if stop else ("complete", None)
    m = None
    if args.role == "ping":
        m = measurement("roundtrip", sent=sent, payload_bytes=payload_bytes(args.payload),
                        rate=rate, duration_s=elapsed)
    return status, m, sent, reason


def real_agent(*argv: str) -> None:
    """Become the real agent with ``argv`` (mwperf.agent imported here: it costs a start ~20 ms
    of CPU, and only these roles need it)."""
    from mwperf.agent import built_agent
    os.execv(str(built_agent()), [str(built_agent()), *argv])


def main() -> int:
    if sys.argv[1:2] == ["supervise-cgroup"]:  # the control plane's cgroups: the real supervisor's
        real_agent(*sys.argv[1:])
    args = parse(sys.argv[1:])
    if args.version:
        print("mwperf-agent 0.1.0 (git fake)")
        return 0
    if args.role == "options":
        print(OPTIONS.strip())
        return 0
    if args.role in ("payloads", "transports"):
        print(json.dumps(CATALOGUE if args.role == "payloads" else transports()))
        return 0
    if args.role == "router":
        signal.signal(signal.SIGTERM, on_signal)
        return route(args)
    if args.role == "pool":  # arithmetic, not measurement: the real agent's one implementation
        real_agent("pool")
    who = args.role
    if args.role == "node":  # node-<name>: every node of a graph apart
        who = "node-" + json.loads(Path(args.node_spec[0]).read_text())["name"]
    how = behaviours(who)
    trace = os.environ.get("FAKE_AGENT_TRACE")
    if trace:
        tmp = Path(trace, f".{who}.pid.tmp")  # atomically: tests poll for these files
        tmp.write_text(str(os.getpid()))
        os.replace(tmp, Path(trace, f"{who}.pid"))
        Path(trace, f"{who}.argv.json").write_text(json.dumps(sys.argv))
    if "usage" in how:
        sys.stderr.write("error: --payload: 70000 B do not fit in one UDP datagram (max 65451)\n")
        return 2
    handler = signal.SIG_IGN if "hang" in how else on_signal
    signal.signal(signal.SIGINT, handler)
    signal.signal(signal.SIGTERM, handler)
    if args.role == "node" and "hang" not in how:
        import fake_node  # here: only a node needs it (each import costs every start CPU)
        if len(args.node_spec) == 1:
            return fake_node.run(args.node_spec[0], args.go_file, args.json, how, lambda: stop)
        return fake_node.run_several(args.node_spec, args.node_json, args.go_file, how,
                                     lambda: stop)
    if "hang" in how:
        if args.role in ("pong", "sub"):
            print(f"READY {args.transport} {args.address}", flush=True)
        while True:
            time.sleep(1)
    if args.role in ("pong", "sub"):
        status, m = serve(args, how)
        sent, reason = None, None
    else:
        status, m, sent, reason = send(args, how)
    if "fail" in how:
        status, reason = "failed", "peer unreachable"
    topics = int(args.topics or 1)
    per_topic = []
    if m is not None and topics > 1:  # every topic measured what the whole did (invented)
        from mwperf.topicnames import default_name
        names = args.topic_name or [default_name(i) for i in range(topics)]
        per_topic = [dict(json.loads(json.dumps(m)), topic=i, name=name,
                          address=f"{args.address}#{i}") for i, name in enumerate(names)]
    if m is not None and args.samples:
        from mwperf.topicnames import samples_names
        rows = ("seq,intended_ns,sent_ns,peer_rx_ns,recv_ns,response_ns,service_ns\n"
                "0,0,10,20,30,30,20\n")
        if per_topic:  # one file per topic, named as the real agent names them
            for topic, name in zip(per_topic, samples_names([t["name"] for t in per_topic])):
                path = Path(args.samples).with_name(name)
                path.write_text(rows + f"1,0,10,20,{40 + topic['topic']},40,30\n")
                topic["samples_file"] = str(path)
        else:
            Path(args.samples).write_text(rows)
            m["samples_file"] = args.samples
    report = agent_report(args.role, status, reason, measured=m, sent=sent,
                          warnings=[WARNING] if "warn" in how else [],
                          config={k.replace("_", "-"): v for k, v in vars(args).items()})
    if per_topic:
        report["per_topic"] = per_topic
    if args.json and "no-report" not in how:
        tmp = args.json + ".tmp"
        Path(tmp).write_text(json.dumps(report))
        os.replace(tmp, args.json)
    return {"complete": 0, "partial": 3, "failed": 1}[status]


if __name__ == "__main__":
    sys.exit(main())
