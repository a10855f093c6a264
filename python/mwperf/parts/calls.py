"""The calls part (``--mode service``, docs/services.md): before anything starts, whether the
transport has request/response (the sizes part checks the request and the reply). A usage error then (as
when an agent refuses a point): ``mwperf run`` exits 2 naming the flag, and a sweep over every
transport records the point "not supported" and goes on."""

from typing import TYPE_CHECKING

from ..calls import check_transport
from ..transports import profile, profiles
from .base import Part

if TYPE_CHECKING:
    from ..agent import Agent
    from ..point import Point


class CallsPart(Part):
    name = "calls"

    def wanted(self, cfg: "Point") -> bool:
        return cfg.service is not None

    def check(self, cfg: "Point", agent: "Agent") -> None:
        known = profile(cfg.transport, agent)
        check_transport(cfg.transport, known.services,
                        lambda: [p.name for p in profiles(agent).values()
                                 if p.services["supported"]])
