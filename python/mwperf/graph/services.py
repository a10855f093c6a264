"""Services in a graph: a node's ``servers:`` and ``clients:`` as a graph file gives them, and
what makes them impossible to run (a usage error naming the file, node and field).

```yaml
  - name: map_server
    servers:
      - {service: /get_map, reply_size: 4KiB, work: 200us}   # reply_size: default the request's
  - name: planner
    clients:
      - {service: /get_map, rate: 10, size: 64, in_flight: 1, timeout: 1s}  # or period: 100ms
```
"""

from ..agent import option_default, option_limit
from ..durations import parse_duration
from ..errors import UsageError
from ..scenario.source import Item
from .model import Client, Graph, Server
from .reader import Reader, period

SERVER_KEYS = ("service", "reply_size", "work")
CLIENT_KEYS = ("service", "rate", "period", "size", "in_flight", "timeout")


def server(read: Reader, node: str, item: Item) -> Server:
    fields = read.mapping(item, f"{node}: server", SERVER_KEYS)
    service = read.text(fields.get("service"), f"{node}: server: service")
    assert service is not None
    what = f"{node}, server of '{service}'"
    work = read.duration(fields["work"], f"{what}: work") if "work" in fields else 0
    if work < 0:
        raise read.fail(fields["work"], f"{what}: work must be 0 or more")
    return Server(service,
                  read.size(fields["reply_size"], f"{what}: reply_size")
                  if "reply_size" in fields else None, work)


def client(read: Reader, node: str, item: Item) -> Client:
    fields = read.mapping(item, f"{node}: client", CLIENT_KEYS)
    service = read.text(fields.get("service"), f"{node}: client: service")
    assert service is not None
    what = f"{node}, client of '{service}'"
    period_ns = period(read, item, fields, what)
    if "size" not in fields:
        raise read.fail(item, f"{what}: size missing (the request's bytes after mwperf's "
                        "header, e.g. 64 or 1KiB)")
    in_flight = 1
    if "in_flight" in fields:
        in_flight = int(read.number(fields["in_flight"], f"{what}: in_flight", 1,
                                     option_limit("in_flight")))
        if in_flight != fields["in_flight"].value:
            raise read.fail(fields["in_flight"], f"{what}: in_flight must be a whole number")
    timeout = parse_duration(option_default("call_timeout"))  # the agent's, as --call-timeout's
    if "timeout" in fields:
        timeout = read.duration(fields["timeout"], f"{what}: timeout")
        if timeout <= 0:
            raise read.fail(fields["timeout"], f"{what}: timeout must be more than 0")
    return Client(service, period_ns, read.size(fields["size"], f"{what}: size"), in_flight,
                  timeout)


def check_services(graph: Graph) -> None:
    """The graph's services on their own: one server per service, every called service served,
    one client per service and node, no node calling a service it serves."""
    where = f"graph '{graph.name}'" + (f" ({graph.source})" if graph.source else "")
    servers: dict[str, str] = {}
    for node in graph.nodes:
        for s in node.servers:
            if s.service in servers:
                raise UsageError(f"{where}: service '{s.service}' is served by nodes "
                                 f"'{servers[s.service]}' and '{node.name}'; one server per "
                                 "service (with copies, give the server node copies: 1)")
            servers[s.service] = node.name
    for node in graph.nodes:
        called = [c.service for c in node.clients]
        twice = next((s for s in called if called.count(s) > 1), None)
        if twice is not None:
            raise UsageError(f"{where}: node '{node.name}' calls '{twice}' twice; one client per "
                             "service and node (give it in_flight: N)")
        for c in node.clients:
            if c.service not in servers:
                served = ", ".join(sorted(servers)) or "none"
                raise UsageError(f"{where}: node '{node.name}' calls service '{c.service}', "
                                 f"which no node serves (servers: {served})")
            if servers[c.service] == node.name:
                raise UsageError(f"{where}: node '{node.name}' calls service '{c.service}', "
                                 "which it serves itself; a client calls another node")


def check_transport(graph: Graph, transport: str, services: dict[str, object],
                    with_services: list[str], max_bytes: int | None) -> None:
    """The run's transport has services (its profile's ``services``), and every request and
    reply fits its largest message (``max_bytes`` after the header)."""
    calls = [(n, c) for n in graph.nodes for c in n.clients]
    if not calls and not any(n.servers for n in graph.nodes):
        return
    if not services.get("supported"):
        node = next(n.name for n in graph.nodes if n.servers or n.clients)
        raise UsageError(f"--graph {graph.name} --transport {transport}: node '{node}' has "
                         f"services, and {transport} has none ({services.get('how')}); "
                         f"transports with services: {', '.join(with_services)}")
    if max_bytes is None:
        return
    for node, c in calls:
        reply = reply_bytes(graph, c)
        for what, size in (("request size", c.request_bytes), ("reply_size", reply)):
            if size > max_bytes:
                raise UsageError(f"--graph {graph.name}: node '{node.name}' calls "
                                 f"'{c.service}' with a {what} of {size} B; --transport "
                                 f"{transport} carries at most {max_bytes} B")


def check_run(graph: Graph, transport: str, max_bytes: int | None) -> None:
    """:func:`check_transport` with the agent's transport profiles (a transport this agent does
    not describe is left to the run, as for sizes)."""
    from ..errors import RunError
    from ..transports import profile, profiles
    if not any(n.servers or n.clients for n in graph.nodes):
        return
    try:
        services = profile(transport).services
        having = [p.name for p in profiles().values() if p.services["supported"]]
    except (RunError, UsageError, KeyError):
        return
    check_transport(graph, transport, services, having, max_bytes)


def reply_bytes(graph: Graph, c: Client) -> int:
    """The payload bytes of ``c``'s replies: its server's ``reply_size``, else its request's."""
    for n in graph.nodes:
        for s in n.servers:
            if s.service == c.service and s.reply_bytes is not None:
                return s.reply_bytes
    return c.request_bytes
