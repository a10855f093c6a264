"""The hooks' contract: what the control plane does for a transport, one module per transport
(``<name>.py`` beside this file, each ending with ``HOOKS = Hooks(...)``). What a transport *is*
(address form, discovery, fan-out, local-only, ...) is not here: that is its profile, from the
agent (profiles.py).

When each hook runs, for one point:
1. ``check_link`` while the point is validated, when it runs across emulated hosts (``--link``
   or a scenario's ``hosts:``); ``check_subscribers`` when it has ``--subscribers`` > 1.
2. ``prepare`` before any agent starts: start the daemons the transport needs (into the
   point's DaemonSet, which stops them) and say where the listening agent listens.
3. ``link_opts`` then ``agent_env`` when each agent starts on emulated or real hosts (a place
   other than this machine's loopback: place.py): the ``--opt`` settings and the environment
   that agent needs to meet its peer there.
4. ``subscriber_listen`` for subscriber 1, 2, ... of a transport without native fan-out.
``doctor`` runs on ``mwperf doctor`` for a transport built into the agent.
"""

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from ..errors import RunError

if TYPE_CHECKING:
    from ..agent import Agent
    from ..daemons import DaemonSet
    from ..doctor.finding import Finding
    from ..emulation.topology import Topology
    from ..place import Place
    from ..point import Point


@dataclass(frozen=True)
class Plan:
    """Where the listening agent listens, or (foreign pong) where the sender connects directly."""

    listen: str | None
    """the pong/sub ``--listen`` address; None when no pong agent runs (relay)"""
    connect: str | None = None
    """the ping's ``--connect`` address when there is no pong agent to print it"""


@dataclass(frozen=True)
class Setup:
    """What ``prepare`` gets: the point, its scratch folder, the agent, the daemons, and where
    things are placed (``where(name)``: the address and namespace of the host the role or
    daemon ``name`` is on; loopback and None without emulated hosts)."""

    cfg: "Point"
    workdir: Path
    agent: "Agent"
    daemons: "DaemonSet"
    where: Callable[[str], tuple[str, Path | None]]
    server: str
    """the address of the listening agent's host"""


class DoctorChecks:
    """What a ``doctor`` hook may probe (doctor/programs.py implements it)."""

    def built_in(self, name: str, what: str) -> "Finding": ...
    def program(self, name: str, program: str, package: str, role: str,
                needed: bool) -> "Finding": ...
    def library(self, name: str, library: str, package: str) -> "Finding": ...
    def python_package(self, name: str, package: str, role: str) -> "Finding": ...


def _no_link_opts(place: "Place", role: str) -> tuple[str, ...]:
    return ()


def _no_link_check(option: Callable[[str], str | None], topology: "Topology | None",
                   roles: tuple[str, str]) -> None:
    return None


def _no_subscriber_check(point: Any, flag: str) -> None:
    return None


def _same_address(planned: str, index: int) -> str:
    return planned


def _no_env(address: str) -> dict[str, str] | None:
    return None


@dataclass(frozen=True)
class Hooks:
    """One transport's hooks (see the module doc for when each runs)."""

    prepare: Callable[[Setup], Plan]
    doctor: Callable[[DoctorChecks], list["Finding"]]
    link_opts: Callable[["Place", str], tuple[str, ...]] = _no_link_opts
    """``--opt`` settings the agent of a role needs at a place (emulated or real hosts)"""
    check_link: Callable[..., None] = _no_link_check
    """refuse (UsageError) what cannot run across emulated links: (option, topology, roles)"""
    check_subscribers: Callable[[Any, str], None] = _no_subscriber_check
    """refuse what several subscribers cannot do: (point, '--subscribers N')"""
    subscriber_listen: Callable[[str, int], str] = _same_address
    """where subscriber ``index`` > 0 listens (no native fan-out) given the planned address"""
    agent_env: Callable[[str], dict[str, str] | None] = _no_env
    """the environment of an agent on an emulated host with ``address``"""
    relay: str | None = None
    """the foreign echo ``--pong relay`` starts instead of a pong agent, if the transport has one"""
    relay_executors: tuple[str, ...] = ()
    """the executors the foreign echo offers (--executor); any: it also takes --topics and
    --busy-loop, and runs them as mwperf's pong would"""
    pong_command: str | None = None
    """what a user's program of ``--pong-cmd`` runs as (pong_command.py), if the transport can
    start one as its echo"""


def hook(name: str) -> Hooks:
    """The hooks of transport ``name`` (its module's ``HOOKS``)."""
    module = _module(name)
    hooks = getattr(module, "HOOKS", None)
    if not isinstance(hooks, Hooks):
        raise RunError(f"python/mwperf/transports/{name}.py has no HOOKS = Hooks(...)")
    return hooks


def _module(name: str) -> ModuleType:
    if not name.isidentifier() or name in ("hooks", "profiles"):
        raise RunError(f"--transport {name}: mwperf has no hooks for it")
    try:
        return importlib.import_module(f"{__package__}.{name}")
    except ModuleNotFoundError as exc:
        if exc.name != f"{__package__}.{name}":
            raise
        raise RunError(f"--transport {name}: mwperf has no hooks for it (no "
                       f"python/mwperf/transports/{name}.py)") from None
