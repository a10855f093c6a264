"""The two user-facing error types; the CLI turns either into one line and an exit code.

Messages name the flag or field, what was given and what is allowed, e.g.
``--rate: must be >= 0 (0 = as fast as possible), got -5``.
"""


class MwperfError(Exception):
    """Base of every error meant for a person rather than a traceback."""

    exit_code = 1


class UsageError(MwperfError):
    """The user asked for something invalid (a flag, a value, a combination): exit 2."""

    exit_code = 2


class RunError(MwperfError):
    """The request was valid but could not be carried out (agent missing, crashed, ...): exit 1."""

    exit_code = 1
