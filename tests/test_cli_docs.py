"""docs/cli.md is generated from the CLI's option definitions: it lists every command and
every visible flag, and this test fails when it is stale (run python3 scripts/cli_docs.py)."""

from pathlib import Path

import click

from mwperf.cli import cli
from mwperf.clidoc import render

DOC = Path(__file__).resolve().parent.parent / "docs" / "cli.md"


def test_docs_cli_md_is_up_to_date() -> None:
    assert DOC.read_text(encoding="utf-8") == render(cli), (
        "docs/cli.md is stale: run 'python3 scripts/cli_docs.py' and commit docs/cli.md")


def test_every_command_and_visible_flag_is_listed() -> None:
    text = render(cli)
    context = click.Context(cli, info_name="mwperf")
    run = cli.get_command(context, "run")
    assert run is not None and text.index("## `mwperf run`") < text.index("## `mwperf show`")
    for name in cli.list_commands(context):
        command = cli.get_command(context, name)
        assert command is not None and f"## `mwperf {name}`" in text, name
        for option in command.params:
            if isinstance(option, click.Option) and not option.hidden:
                assert f"`{option.opts[0]}`" in text, (name, option.opts[0])
    assert "--test-clock" not in text  # hidden: test-only
