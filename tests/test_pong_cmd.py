"""``--pong-cmd`` (issue 40, item 2) without middleware: CMD split into words with {in}, {out}
and {type} replaced and nothing else; every malformed command, a missing program and a transport
or mode that cannot start one refused with the flag named (exit 2) before anything runs."""

from pathlib import Path

import pytest

from conftest import run_mwperf
from mwperf.errors import UsageError
from mwperf.pong_command import argv, parse, program


def test_fields_are_replaced_in_every_word():
    words = parse("python3 'my node.py' --ros-args -r in:={in} -r out:={out} --type={type}")
    assert argv(words, "/a/ping", "/a/pong", "std_msgs/msg/UInt8MultiArray") == [
        "python3", "my node.py", "--ros-args", "-r", "in:=/a/ping", "-r", "out:=/a/pong",
        "--type=std_msgs/msg/UInt8MultiArray"]


@pytest.mark.parametrize("text,says", [
    ("", "an empty command"), ("node 'unclosed", "cannot split"),
    ("node {input}", "'{input}' is not replaced; mwperf replaces {in}, {out}, {type}"),
])
def test_a_malformed_command_names_the_flag(text, says):
    with pytest.raises(UsageError, match="--pong-cmd: ") as caught:
        parse(text)
    assert says in str(caught.value)


def test_the_program_is_looked_up_on_the_given_path(tmp_path: Path):
    tool = tmp_path / "mynode"
    tool.write_text("#!/bin/sh\n")
    tool.chmod(0o755)
    assert program(("mynode",), {"PATH": str(tmp_path)}) == str(tool)
    with pytest.raises(UsageError, match=r"--pong-cmd: 'othernode' is not an executable program "
                                         r"on PATH"):
        program(("othernode",), {"PATH": str(tmp_path)})


@pytest.mark.parametrize("args,says", [
    (("--transport", "udp"), "--pong-cmd: only with --transport cyclonedds or fastdds or rustdds "
                             "or ros2 (got udp)"),
    (("--transport", "ros2", "--pong", "relay"), "--pong-cmd: not with --pong relay"),
    (("--transport", "ros2", "--mode", "oneway"), "--pong-cmd: only for --mode roundtrip"),
    (("--transport", "ros2", "--topics", "2"), "--pong-cmd: the foreign echo has no --topics"),
])
def test_what_cannot_run_a_program_as_the_echo_is_refused(fake_env, args, says):
    done = run_mwperf("run", *args, "--pong-cmd", "mynode {in} {out}", "--duration", "1s",
                      "--no-save", env={**fake_env, "FAKE_AGENT_TRANSPORTS": "udp,ros2"})
    assert done.returncode == 2 and says in done.stderr, done.stderr
    assert not list(Path(fake_env["FAKE_AGENT_TRACE"]).glob("*.pid"))
