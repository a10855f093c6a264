"""Crashes of a middleware library that are known upstream and not mwperf's: recognised by what
the dying process wrote, so a point that fails on one says whose defect it is and where it is
tracked, instead of leaving a user to suspect the agent."""

from dataclasses import dataclass


@dataclass(frozen=True)
class KnownCrash:
    signature: str
    """a line the library writes on stderr just before it crashes"""
    what: str


KNOWN = (
    KnownCrash("ddsi_xt_type_init_impl with invalid type object",
               "Cyclone DDS 0.10.2's XTypes type lookup fails on a Fast DDS peer's type "
               "information and can then crash the process (ros2/rmw_cyclonedds#535; worked "
               "around upstream by eclipse-cyclonedds/cyclonedds#2333, which Debian's 0.10.2 "
               "does not have): not mwperf's; it is rare and timing-dependent, so run the "
               "point again"),
)


def named(stderr: str, signalled: bool) -> str | None:
    """What is known of a crash whose process wrote ``stderr`` (``signalled``: a signal ended
    it); None when it matches nothing known."""
    if not signalled:
        return None
    return next((c.what for c in KNOWN if c.signature in stderr), None)
