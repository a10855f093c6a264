"""docs/cli.md, generated from the click command tree: every command, argument and flag with
its help, metavar and default, so the page cannot drift from the options the CLI accepts.

``python3 scripts/cli_docs.py`` rewrites docs/cli.md; tests/test_cli_docs.py fails when the
file differs from :func:`render`. Hidden options (test-only) are left out.
"""

import inspect

import click

HEADER = """\
# Command line

Every `mwperf` command and flag. **Generated** from the option definitions in
`python/mwperf/cli.py` by `python3 scripts/cli_docs.py` (tests/test_cli_docs.py fails when this
file is stale): edit the help there, not here. Durations take `ns`, `us`, `ms`, `s`, `m`
(`10s`, `500ms`); sizes, below; a scenario's YAML fields are named like the flags
(docs/scenarios.md). The defaults and limits shown as the agent's are read from it
(`mwperf-agent options --json`).
"""


FIRST = ("run",)


SIZES = """\
## Sizes

`--payload`, `--reply-payload` and a graph file's sizes take a catalogue name in any case
(`mwperf payloads`) or a size: a whole number of bytes with an optional binary unit, in any case —
`B`; `K` or `KiB` (1024); `M` or `MiB` (1024²); `G` or `GiB` (1024³): `100`, `64KiB`, `64k`,
`4MiB`. `KB`, `MB` and `GB` are refused: they leave the reader guessing which kilo was meant.
The agent owns this grammar (crates/mwperf-core/src/units.rs) and the control plane accepts
exactly the same texts (tests/vectors/sizes.json holds the cases both run).

Every size is checked against the transport's limit before any daemon or agent starts (a usage
error, exit 2, naming the flag, the transport and the limit): the largest payload one message
carries after mwperf's {header}-byte header, as the agent lists it (`mwperf-agent transports
--json`, `max_payload`; never above the agent's own limit of {most} bytes):

| transport | largest payload (bytes) |
|---|---|
"""


def sizes() -> str:
    """The Sizes section: the grammar and each transport's limit, from the agent's listing."""
    from .agent import find_agent
    from .transports import profiles
    limits = find_agent().limits()
    rows = [f"| {p.name} | {p.max_payload} |" for p in profiles().values()]
    return SIZES.format(header=limits["header_bytes"], most=limits["payload_bytes"]) + \
        "\n".join(rows) + "\n"


def render(root: click.Group) -> str:
    """The Markdown page of ``root`` and all its subcommands, in the order ``--help`` lists."""
    blocks = [HEADER, sizes()]
    for path, command in _walk(root, "mwperf"):
        blocks.append(_command(path, command))
    return "\n".join(blocks)


def _walk(group: click.Group, path: str) -> list[tuple[str, click.Command]]:
    found: list[tuple[str, click.Command]] = []
    context = click.Context(group, info_name=path)
    names = group.list_commands(context)
    for name in sorted(names, key=lambda n: n not in FIRST):  # the main command first
        command = group.get_command(context, name)
        if command is None or command.hidden:
            continue
        if isinstance(command, click.Group):
            found.append((f"{path} {name}", command))
            found += _walk(command, f"{path} {name}")
        else:
            found.append((f"{path} {name}", command))
    return found


def _command(path: str, command: click.Command) -> str:
    context = click.Context(command, info_name=path)
    usage = " ".join(command.collect_usage_pieces(context))
    lines = [f"## `{path}`", "", "```", f"{path} {usage}".rstrip(), "```", ""]
    text = (command.help or "").replace("\b\n", "")
    lines += [_unindent(text), ""]
    arguments = [p for p in command.params if isinstance(p, click.Argument)]
    options = [p for p in command.params if isinstance(p, click.Option) and not p.hidden]
    if arguments:
        lines += ["Arguments: " + ", ".join(_argument(a) for a in arguments), ""]
    if options:
        lines += ["| flag | meaning |", "|---|---|"]
        lines += [_option_row(context, o) for o in options]
        lines.append("")
    return "\n".join(lines)


def _unindent(text: str) -> str:
    """The docstring as Markdown: its 'Examples:' lines as a code block."""
    out: list[str] = []
    block = False
    for raw in inspect.cleandoc(text).splitlines():
        line = raw.strip()
        if block and not line:
            out.append("```")
            block = False
        if line.lower() in ("example:", "examples:"):
            out += [line, "```"]
            block = True
            continue
        out.append(line)
    if block:
        out.append("```")
    return "\n".join(out).strip()


def _argument(argument: click.Argument) -> str:
    name = (argument.name or "").upper()
    if argument.nargs == -1:
        name += " ..."
    return f"`{name}`" + ("" if argument.required else " (optional)")


def _option_row(context: click.Context, option: click.Option) -> str:
    names = ", ".join(f"`{n}`" for n in option.opts + option.secondary_opts)
    if not option.is_flag:
        metavar = option.metavar or (option.make_metavar(context) if _takes_context()
                                     else option.make_metavar())
        names += f" `{metavar}`"
    help_text = " ".join((option.help or "").split())
    default = option.default
    if option.show_default and default not in (None, False, ()) and "[default:" not in help_text:
        help_text += f" [default: {default}]"
    if option.multiple:
        help_text += " (repeatable)"
    return f"| {_cell(names)} | {_cell(help_text)} |"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _takes_context() -> bool:
    """click 8.2 passes the context to make_metavar; 8.1 does not."""
    return "ctx" in inspect.signature(click.Option.make_metavar).parameters
