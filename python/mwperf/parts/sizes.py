"""The sizes part: before anything starts (no daemon, no agent), every sized option of the
point checked against the transport's limit, its descriptor's ``max_payload`` (the agent's
listing: the largest message less the header, never above the agent's payload limit). A usage
error then naming the flag, the transport and the limit: ``mwperf run`` exits 2, and a sweep
over every transport records the point "not supported" and goes on."""

from typing import TYPE_CHECKING

from ..transports import profile
from .base import Part

if TYPE_CHECKING:
    from ..agent import Agent
    from ..point import Point


class Sizes(Part):
    name = "sizes"

    def wanted(self, cfg: "Point") -> bool:
        return True

    def check(self, cfg: "Point", agent: "Agent") -> None:
        known = profile(cfg.transport, agent)
        known.check_fits("--payload", cfg.payload_bytes)
        if cfg.service is not None:
            known.check_fits("--reply-payload", cfg.service.reply_payload_bytes)
