"""The two JSON options every command with a machine-readable result shares, with one meaning
everywhere: ``--json`` prints the JSON on standard output instead of the text, ``--json-out
FILE`` also writes it to FILE (the text still prints). Both may be given.
"""

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from .errors import UsageError
from .results import write_json

F = TypeVar("F", bound=Callable[..., Any])


def json_options(what: str) -> Callable[[F], F]:
    """Add ``--json`` (parameter ``as_json``) and ``--json-out FILE`` (``json_out``); ``what``
    names the document in their help, e.g. 'the summary'."""
    def decorate(command: F) -> F:
        command = click.option("--json-out", "json_out", metavar="FILE", callback=_json_out,
                               help=f"Also write {what} as JSON to FILE (the text still "
                               f"prints).")(command)
        return click.option("--json", "as_json", is_flag=True,
                            help=f"Print {what} as JSON instead of the text.")(command)
    return decorate


def dumps(document: Any) -> str:
    """``document`` as ``--json`` prints it and ``--json-out`` writes it (one trailing newline)."""
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def _json_out(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """Refuse ``--json-out -`` before any work: printing is ``--json``'s job."""
    if value is not None and value.strip() in ("", "-"):
        raise UsageError(f"--json-out: expected a file name, got {value!r}; to print the JSON "
                         f"on standard output use --json")
    return value


def emit_json(document: Any, as_json: bool, json_out: str | None) -> bool:
    """Write ``document`` to ``json_out`` (when given) and print it with ``as_json``; True when
    printed, i.e. when the caller must not print its text."""
    if as_json:  # first: a file that cannot be written must not cost the printed result
        click.echo(dumps(document), nl=False)
    if json_out:
        write_json(Path(json_out), document)
    return as_json
