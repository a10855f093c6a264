"""A scenario's ``hosts:``, ``links:`` and ``place:``: emulated hosts, the links joining them,
and which host each role and daemon runs on (docs/scenarios.md, "Hosts and links")::

    hosts: [master, sender, echoer]
    links:
      sender<->echoer: wifi-80211n          # point-to-point: up = sender -> echoer
      master<->echoer: delay=1ms            # a spec: a preset and/or KEY=VALUE items
      # or a shared segment (a routed hub, one wire per member):
      # lan: {hosts: [master, sender, echoer], link: ethernet-1g}
      # a WiFi cell: one medium for all members (its rate is shared, not per member):
      # cell: {hosts: [robot1, robot2, base], link: wifi-80211n, medium: shared}
    place: {rosmaster: master, ping: sender, pong: echoer}

A link written without a spec (``sender<->echoer:`` or a segment without ``link``) takes the
point's ``link`` field, which may be an axis. Every error is ``FILE:LINE: field 'NAME': ...``.
"""

import re

from ..emulation.links import parse_link
from ..emulation.topology import (
    MAX_LINKS,
    MAX_SEGMENT_HOSTS,
    PLACEABLE,
    Link,
    Topology,
    complete_place,
    unreachable,
)
from ..errors import UsageError
from .source import Item

KEYS = ("hosts", "links", "place")
HOST_NAME = re.compile(r"[a-z][a-z0-9_]{0,31}")
PAIR = "<->"
SEGMENT_KEYS = ("hosts", "link", "medium")
MEDIA = ("switched", "shared")
"""a segment's medium: switched (each member's wire has the spec's rate, as ports of a switch;
the default) or shared (one medium for all, as a WiFi cell or a bus)"""


def parse_topology(top: dict[str, Item], document: Item, where: str,
                   link_line: int | None) -> Topology | None:
    """The topology the scenario declares, or None when it has none of ``hosts``, ``links``,
    ``place``. ``link_line``: where the scenario sets the field ``link`` (the spec of links
    written without one), None if it does not."""
    given = {key: top[key] for key in KEYS if key in top}
    if not given:
        return None
    for key in KEYS:
        if key not in given:
            other = next(iter(given))
            raise _error(where, document.key_line(other), other,
                         f"'{key}' is missing: a scenario with hosts declares hosts, links and "
                         f"place together (see docs/scenarios.md)")
    hosts = _hosts(given["hosts"], where)
    links = _links(given["links"], hosts, where, link_line is not None)
    if link_line is not None and all(link.spec is not None for link in links):
        raise _error(where, link_line, "link", "no link in 'links' takes it (each has a spec of "
                     "its own); drop it, or leave a link's spec empty to use it")
    for host in hosts:
        if not any(host in link.hosts for link in links):
            raise _error(where, given["hosts"].line, "hosts", f"host '{host}' is on no link; "
                         f"every host needs one (add it to 'links')")
    apart = unreachable(hosts, links)
    if apart:
        raise _error(where, given["links"].line, "links", f"host(s) {', '.join(apart)} cannot "
                     f"reach {hosts[0]}: the links must connect every host")
    return Topology(hosts, links, _place(given["place"], hosts, where))


def _hosts(item: Item, where: str) -> tuple[str, ...]:
    if not isinstance(item.value, list) or len(item.value) < 2:
        raise _error(where, item.line, "hosts", "must be a list of two or more host names, "
                     "e.g. [master, sender, echoer]")
    names: dict[str, int] = {}
    for child in item.value:
        name = child.value
        if not isinstance(name, str) or not HOST_NAME.fullmatch(name):
            raise _error(where, child.line, "hosts", f"'{child.plain()}' is not a host name "
                         f"(a lower-case letter, then letters, digits or '_', at most 32)")
        if name in names:
            raise _error(where, child.line, "hosts", f"host '{name}' is listed twice (first "
                         f"on line {names[name]})")
        names[name] = child.line
    return tuple(names)


def _links(item: Item, hosts: tuple[str, ...], where: str, point_link: bool
           ) -> tuple[Link, ...]:
    if not isinstance(item.value, dict) or not item.value:
        raise _error(where, item.line, "links", "must map links to specs, e.g. "
                     "'sender<->echoer: wifi-80211n' or 'lan: {hosts: [a, b, c], link: "
                     "ethernet-1g}'")
    if len(item.value) > MAX_LINKS:
        raise _error(where, item.line, "links", f"{len(item.value)} links; at most {MAX_LINKS}")
    links: list[Link] = []
    pairs: dict[frozenset[str], tuple[str, int]] = {}
    for name, value in item.value.items():
        line = item.key_line(name)
        link = (_pair(name, value, line, hosts, where) if PAIR in name
                else _segment(name, value, line, hosts, where))
        if link.spec is None and not point_link:
            raise _error(where, line, "links", f"'{name}' has no spec: give one, or set the "
                         f"field 'link' (it applies to every link without one)")
        for i, one in enumerate(link.hosts):
            for other in link.hosts[i + 1:]:
                pair = frozenset((one, other))
                if pair in pairs:
                    first, first_line = pairs[pair]
                    raise _error(where, line, "links", f"'{name}' joins {one} and {other} again "
                                 f"('{first}', line {first_line}); give one link per pair")
                pairs[pair] = (name, line)
        links.append(link)
    return tuple(links)


def _pair(name: str, value: Item, line: int, hosts: tuple[str, ...], where: str) -> Link:
    ends = tuple(part.strip() for part in name.split(PAIR))
    if len(ends) != 2:
        raise _error(where, line, "links", f"'{name}' is not HOST{PAIR}HOST")
    for end in ends:
        _known(end, name, line, hosts, where)
    if ends[0] == ends[1]:
        raise _error(where, line, "links", f"'{name}' joins {ends[0]} to itself")
    spec = _spec(name, value, where, segment=False)
    return Link(f"{ends[0]}{PAIR}{ends[1]}", ends, spec)


def _segment(name: str, value: Item, line: int, hosts: tuple[str, ...], where: str) -> Link:
    if not HOST_NAME.fullmatch(name):
        raise _error(where, line, "links", f"'{name}' is neither HOST{PAIR}HOST (point-to-point) "
                     f"nor a segment name (a lower-case letter, then letters, digits or '_')")
    if not isinstance(value.value, dict) or "hosts" not in value.value:
        raise _error(where, value.line, "links", f"segment '{name}' must be a mapping with "
                     f"'hosts' (two or more) and optionally 'link', e.g. {{hosts: [a, b, c], "
                     f"link: ethernet-1g}}")
    for key in value.value:
        if key not in SEGMENT_KEYS:
            raise _error(where, value.key_line(key), "links", f"segment '{name}': unknown key "
                         f"'{key}'; allowed: {', '.join(SEGMENT_KEYS)}")
    members = value.value["hosts"]
    if (not isinstance(members.value, list) or not 2 <= len(members.value) <= MAX_SEGMENT_HOSTS):
        raise _error(where, members.line, "links", f"segment '{name}': 'hosts' must list 2 to "
                     f"{MAX_SEGMENT_HOSTS} hosts")
    names: list[str] = []
    for member in members.value:
        _known(member.value, name, member.line, hosts, where)
        if member.value in names:
            raise _error(where, member.line, "links", f"segment '{name}': host "
                         f"'{member.value}' is listed twice")
        names.append(member.value)
    spec_item = value.value.get("link")
    spec = None if spec_item is None else _spec(name, spec_item, where, segment=True)
    medium = value.value.get("medium")
    if medium is not None and medium.value not in MEDIA:
        raise _error(where, medium.line, "links", f"segment '{name}': medium "
                     f"'{medium.plain()}' is not one of {', '.join(MEDIA)}")
    return Link(name, tuple(names), spec, segment=True,
                shared=medium is not None and medium.value == "shared")


def _known(host: object, link: str, line: int, hosts: tuple[str, ...], where: str) -> None:
    if host not in hosts:
        raise _error(where, line, "links", f"'{link}': unknown host '{host}'; declared hosts: "
                     f"{', '.join(hosts)}")


def _spec(name: str, item: Item, where: str, segment: bool) -> str | None:
    """The link's spec text (checked), or None when it takes the point's ``link``."""
    if item.value is None:
        return None
    if not isinstance(item.value, str):
        raise _error(where, item.line, "links", f"'{name}': the spec must be text (a preset "
                     f"and/or KEY=VALUE items), got {item.plain()!r}")
    try:
        spec = parse_link(item.value)
    except UsageError as exc:
        raise _error(where, item.line, "links", f"'{name}': {exc}") from None
    if segment and spec.up != spec.down:
        raise _error(where, item.line, "links", f"segment '{name}': a segment has no direction; "
                     f"drop the up:/down: items (they apply to point-to-point links)")
    return item.value.strip()


def _place(item: Item, hosts: tuple[str, ...], where: str) -> tuple[tuple[str, str], ...]:
    if not isinstance(item.value, dict):
        raise _error(where, item.line, "place", f"must map roles and daemons to hosts, e.g. "
                     f"{{rosmaster: master, ping: sender, pong: echoer}}; allowed: "
                     f"{', '.join(PLACEABLE)}")
    given: dict[str, str] = {}
    for key, host in item.value.items():
        line = item.key_line(key)
        if key not in PLACEABLE:
            raise _error(where, line, "place", f"unknown role or daemon '{key}'; allowed: "
                         f"{', '.join(PLACEABLE)}")
        if host.value not in hosts:
            raise _error(where, host.line, "place", f"{key} is placed on '{host.plain()}', "
                         f"which is not a declared host; declared hosts: {', '.join(hosts)}")
        given[key] = host.value
    if not {"ping", "pub"} & set(given) or not {"pong", "sub"} & set(given):
        raise _error(where, item.line, "place", "place the sender (ping or pub) and the server "
                     "(pong or sub); daemons default to the server's host")
    return complete_place(given, hosts)


def _error(where: str, line: int, name: str, message: str) -> UsageError:
    return UsageError(f"{where}:{line}: field '{name}': {message}")
