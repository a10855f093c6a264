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


class NotSaved(RunError):
    """A measurement could not be written to its results folder (a full or read-only file
    system, a Ctrl-C while saving): the message names the folder and what failed, ``outcome``
    holds what was measured, for the caller to report before it exits (1, or 130 when
    interrupted); ``saved`` is the point's folder when only its catalogue entry is missing."""

    def __init__(self, message: str, outcome: object = None, exit_code: int = 1,
                 saved: object = None) -> None:
        super().__init__(message)
        self.outcome = outcome
        self.exit_code = exit_code
        self.saved = saved
