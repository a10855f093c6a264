"""``--pong-cmd CMD``: a program of the user's as the echo of a round trip (a ROS 2 node under
test, a launch of several, any executable), started and stopped by mwperf like a daemon (its own
process group, recorded in the run's lease, its CPU and peak RSS measured, its output saved).

mwperf replaces ``{in}`` in CMD with the topic its ping publishes on (the program's input),
``{out}`` with the topic the ping listens on (its output) and ``{type}`` with the message type
(``pkg/msg/Type``); a ROS 2 node is pointed at them by remapping, e.g.
``python3 my_node.py --ros-args -r input:={in} -r output:={out}``. The program must carry each
message's data through unchanged (an echo, a relay, a node that copies its input's data field):
the ping matches each reply to its request by mwperf's stamp inside the data, so a reply whose
data changed is counted corrupted and one never sent back lost. CMD is split as a POSIX shell
would split words (no pipes, no variables): start a script for more.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
from collections.abc import Mapping

from .errors import UsageError

FLAG = "--pong-cmd"
FIELDS = ("in", "out", "type")
_FIELD = re.compile(r"\{([^{}]*)\}")


def parse(text: str, flag: str = FLAG) -> tuple[str, ...]:
    """CMD as its words; a UsageError naming ``flag`` (--pong-cmd, or a graph node's
    ``command``) for an empty command, unbalanced quotes or a ``{field}`` other than {in},
    {out} and {type}."""
    try:
        words = tuple(shlex.split(str(text)))
    except ValueError as exc:
        raise UsageError(f"{flag}: cannot split '{text}' into words: {exc}") from None
    if not words:
        raise UsageError(f"{flag}: an empty command; give the program to run, e.g. "
                         "'python3 node.py --ros-args -r in:={in} -r out:={out}'")
    for word in words:
        for name in _FIELD.findall(word):
            if name not in FIELDS:
                raise UsageError(f"{flag}: '{{{name}}}' is not replaced; mwperf replaces "
                                 f"{', '.join('{' + f + '}' for f in FIELDS)}")
    return words


def argv(words: tuple[str, ...], topic_in: str, topic_out: str, message_type: str) -> list[str]:
    """The command line with its fields replaced."""
    values = {"in": topic_in, "out": topic_out, "type": message_type}
    return [_FIELD.sub(lambda m: values[m.group(1)], word) for word in words]


def fields(words: tuple[str, ...]) -> set[str]:
    """The ``{field}`` names CMD uses."""
    return {name for word in words for name in _FIELD.findall(word)}


def program(words: tuple[str, ...], env: Mapping[str, str] | None = None,
            flag: str = FLAG) -> str:
    """The program CMD starts, as found on PATH (``env``'s); a UsageError naming ``flag``
    when it is not there or not executable."""
    name = words[0]
    path = (env or os.environ).get("PATH", os.defpath)
    found = shutil.which(name, path=path)
    if found is None:
        where = "" if "/" in name else f" on PATH ({path})"
        raise UsageError(f"{flag}: '{name}' is not an executable program{where}")
    return found
