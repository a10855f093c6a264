"""Each topic's name: what a result, the table, the report and the catalogue call it.

A replay's topic i is the i-th recorded topic of ``config.replay.topics`` (``/camera/image_raw``,
``/scan``); the runner passes those names to the agents (``--topic-name``), which report them as
``per_topic[].name`` with the address beside it (``per_topic[].address``). A ``--topics N`` run's
topics are ``topic 0`` ... ``topic N-1`` (the agent's default): stable from run to run, where an
address (a port picked by the listener) is not.

With ``--samples`` and several topics, each topic's samples go to ``samples.<slug>.csv``, the slug
being the name made safe for a file name; the agent names its files the same way
(crates/mwperf-agent/src/topic_names.rs; tests/vectors/topic_files.json holds the shared cases).
"""

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .point import Point

SAMPLES_STEM = "samples"
MAX_SLUG = 100
"""longest slug: a file name stays under 255 bytes whatever the topic's name"""
SAFE = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-")


def default_name(index: int) -> str:
    """A topic's name when none was given: ``topic <index>``."""
    return f"topic {index}"


def topic_names(topics: int, replay: Mapping[str, Any] | None) -> list[str]:
    """The names of a point's topics: a replay's recorded topics, else ``topic <i>``."""
    recorded = list((replay or {}).get("topics") or [])
    if len(recorded) == topics:
        return [str(name) for name in recorded]
    return [default_name(i) for i in range(topics)]


def names_given(topics: int, replay: Mapping[str, Any] | None) -> list[str]:
    """The names the agents are told (``--topic-name``): a replay's, none otherwise (the
    agent's default is the same ``topic <i>``); none for one topic (no per_topic then)."""
    if topics < 2 or not replay:
        return []
    return topic_names(topics, replay)


def file_slugs(names: list[str]) -> list[str]:
    """One file-name-safe slug per name, distinct: every character but ASCII letters, digits,
    ``_`` and ``-`` becomes ``_``, leading and trailing ``_`` go, at most 100 characters; an
    empty slug is ``topic_<i>``, and a slug an earlier topic has gets ``-<i>`` appended (until
    it is free)."""
    slugs: list[str] = []
    for index, name in enumerate(names):
        slug = "".join(c if c in SAFE else "_" for c in name).strip("_")[:MAX_SLUG]
        slug = slug or f"topic_{index}"
        while slug in slugs:
            slug = f"{slug}-{index}"
        slugs.append(slug)
    return slugs


def samples_names(names: list[str]) -> list[str]:
    """Each topic's samples file name: ``samples.<slug>.csv``."""
    return [f"{SAMPLES_STEM}.{slug}.csv" for slug in file_slugs(names)]


def name_and_address(result: Mapping[str, Any], index: int, entry: Mapping[str, Any]
                     ) -> tuple[str, str | None]:
    """A ``per_topic`` entry's name and address. A result written before topics had names
    (no ``address`` key; not imported) has the address as ``name``: its name is then what
    it would be today (the recorded topic of a replay, else ``topic <i>``)."""
    name = entry.get("name")
    if "address" in entry or result.get("source") is not None:
        return (str(name) if name else default_name(index)), entry.get("address")
    config = result.get("config") or {}
    names = topic_names(int(config.get("topics") or 0), config.get("replay"))
    own = names[index] if 0 <= index < len(names) else default_name(index)
    return own, (str(name) if name else None)


def label(name: str | None, index: int) -> str:
    """How a line names a topic: ``topic 1 /scan``, or ``topic 1`` when that is its name."""
    return default_name(index) if not name or name == default_name(index) \
        else f"{default_name(index)} {name}"


SAMPLES_NAME = "samples.csv"


def samples_files(cfg: "Point") -> list[str]:
    """The raw samples files of a point with --samples: samples.csv, or with several topics one
    per topic, ``samples.<topic name as a file name>.csv`` (topicnames.py; the agent derives
    the same names from its --samples path)."""
    service = cfg.service
    if service is not None and service.clients > 1:  # one per client (a service point)
        return samples_names([f"client {i}" for i in range(1, service.clients + 1)])
    if cfg.topics == 1:
        return [SAMPLES_NAME]
    return samples_names(topic_names(cfg.topics, cfg.replay))
