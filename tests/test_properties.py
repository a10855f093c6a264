"""Property tests (hypothesis) of the control plane's parsers of outside input: scenario and graph
files, durations, --opt, recordings (truncated and corrupted) and the catalogue (a damaged DuckDB
file). Whatever the input, the answer is a value or a UsageError/RunError with a message that
names the file, never another exception (a traceback). The Rust side's parsers are fuzzed with
AFL++ (fuzz/, docs/fuzzing.md); these run in `make test`.
"""

import functools
import re
import string
from pathlib import Path

import duckdb
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from conftest import FAKE_AGENT
from mwperf import config
from mwperf.durations import MAX_NS, NS_PER_UNIT, format_duration_arg, parse_duration
from mwperf.errors import MwperfError, UsageError

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = sorted((ROOT / "python/mwperf/scenarios").glob("*.yaml"))
GRAPHS = sorted((ROOT / "python/mwperf/graphs").glob("*.yaml"))
BAGS = ROOT / "tests/fixtures/bags"

# few examples each: `make test` runs them every time (a fuzz campaign is `make fuzz`)
SETTINGS = settings(max_examples=150, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

YAML_BITS = ["\n", ": ", "- ", "[", "]", "{", "}", "'", '"', "#", "&a", "*a", "!!str ", "!!int ",
             "!!python/object:os.system ", "? ", "|", ">", "---", "...", "%YAML 1.1\n", "\t",
             "2020-13-45", "0x", "1e999", ".nan", "~", "null", "<<: *a", "\x00", "\ufeff", "é"]


@st.composite
def garbled(draw, texts: list[str]) -> str:
    """One of ``texts`` with a few edits: characters deleted, YAML syntax inserted, lines swapped
    or the text cut short."""
    text = draw(st.sampled_from(texts))
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, len(text)))
        edit = draw(st.sampled_from(["delete", "insert", "cut", "dup-line"]))
        if edit == "delete":
            text = text[:at] + text[at + draw(st.integers(1, 8)):]
        elif edit == "insert":
            text = text[:at] + draw(st.sampled_from(YAML_BITS) | st.text(max_size=4)) + text[at:]
        elif edit == "cut":
            text = text[:at]
        else:
            lines = text.splitlines(keepends=True) or [""]
            i = draw(st.integers(0, len(lines) - 1))
            text = "".join(lines[:i + 1] + lines[i:])
    return text


def _texts(paths: list[Path]) -> list[str]:
    return [p.read_text() for p in paths]


# -- durations ----------------------------------------------------------------------------------

@SETTINGS
@given(st.integers(0, 10**6), st.sampled_from(sorted(NS_PER_UNIT)))
def test_durations_scale_whole_numbers(n, unit):
    assert parse_duration(f"{n}{unit}") == n * NS_PER_UNIT[unit]
    assert parse_duration(f" {n}{unit}\t") == n * NS_PER_UNIT[unit]


@SETTINGS
@given(st.integers(0, MAX_NS))
def test_durations_round_trip_through_the_agent_form(ns):
    assert parse_duration(format_duration_arg(ns)) == ns


@SETTINGS
@given(st.text(alphabet=string.digits + ".smhun µ\u0663\uff11-+e", max_size=12) | st.text(max_size=8))
@example("\u0663s")  # an Arabic-Indic digit: Python's \d takes it, the agent does not
@example("00")
def test_any_text_is_a_duration_or_a_value_error(text):
    try:
        ns = parse_duration(text)
    except ValueError as exc:
        assert repr(text) in str(exc)
        return
    assert 0 <= ns <= MAX_NS
    # what is accepted is ASCII digits and a unit, as the agent's grammar (crates/mwperf-core
    # units.rs; shared vectors: tests/vectors/durations.json)
    assert re.fullmatch(r"\s*(0|[0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))\s*", text, re.ASCII)


# -- --opt -------------------------------------------------------------------------------------

OPT_TEXT = st.text(alphabet=string.ascii_lowercase + "_=- .\n", max_size=14)


@pytest.fixture(scope="module")
def fake_agent_profiles():
    """The transports' --opt keys as the (fake) agent describes them."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("MWPERF_AGENT", str(FAKE_AGENT))
        yield


@SETTINGS
@given(st.sampled_from(["udp", "tcp", "mqtt", "zenoh", "foxglove", "ros1"]),
       st.lists(OPT_TEXT, max_size=3))
@example("foxglove", ["quickack"])  # no '=': the agent refuses it ('not KEY=VALUE')
@example("foxglove", ["=on"])
def test_opt_items_are_accepted_only_as_known_key_value(fake_agent_profiles, transport, items):
    known = config.profiles()[transport].opts
    try:
        config._check_opts(transport, tuple(items))
    except UsageError as exc:
        assert str(exc).startswith("--opt")
        return
    for item in items:
        key, eq, _ = item.partition("=")
        assert eq and key.strip() in known, item


# -- scenario and graph files ---------------------------------------------------------------------

def _parse_scenario(text: str):
    from mwperf.scenario.parse import parse_scenario
    return parse_scenario(text, "fuzz.yaml", "fuzz")


def _parse_graph(text: str):
    from mwperf.graph.parse import parse_graph
    return parse_graph(text, "fuzz.yaml")


def _only_usage_errors(parse, text: str) -> None:
    try:
        parse(text)
    except UsageError as exc:
        message = str(exc)
        # names the file and line (syntax, fields), or the graph (its checks across nodes)
        assert message.startswith(("fuzz.yaml:", "graph '")), message
        assert "Traceback" not in message


@SETTINGS
@given(garbled(_texts(SCENARIOS)))
@example("a: 2020-13-45")  # a timestamp-looking value that is no date
@example("2020-13-45: 1")
@example("transport: !!python/object:os.system x")
@example("rate: [1, *a]")
def test_garbled_scenarios_are_usage_errors(text):
    _only_usage_errors(_parse_scenario, text)


@SETTINGS
@given(st.text(max_size=60))
def test_random_text_scenarios_are_usage_errors(text):
    _only_usage_errors(_parse_scenario, text)


@SETTINGS
@given(garbled(_texts(GRAPHS)))
@example("nodes: 2020-13-45")
@example("nodes:\n  - name: !!binary x")
def test_garbled_graphs_are_usage_errors(text):
    _only_usage_errors(_parse_graph, text)


@SETTINGS
@given(st.text(max_size=60))
def test_random_text_graphs_are_usage_errors(text):
    _only_usage_errors(_parse_graph, text)


# -- recordings ---------------------------------------------------------------------------------

def _read_all(path: Path) -> int:
    from mwperf.bags import recording
    with recording.open_reader(path) as reader:
        topics = recording.topics_of(reader)
        stamps = recording.stamp_offsets(reader)
        n = 0
        for topic, _, raw in recording.messages(path, reader, topics):
            if topic in stamps:
                recording.header_stamp(raw, stamps[topic])
            n += 1
        return n


@pytest.mark.parametrize("name", ["small.bag", "small.mcap"])
@SETTINGS
@given(data=st.data())
def test_truncated_or_corrupted_recordings_are_usage_errors(tmp_path_factory, name, data):
    original = (BAGS / name).read_bytes()
    damaged = bytearray(original)
    how = data.draw(st.sampled_from(["truncate", "flip", "zero-run"]))
    at = data.draw(st.integers(0, len(original) - 1))
    if how == "truncate":
        del damaged[at:]
    elif how == "flip":
        for _ in range(data.draw(st.integers(1, 8))):
            damaged[data.draw(st.integers(0, len(damaged) - 1))] ^= data.draw(st.integers(1, 255))
    else:
        damaged[at:at + data.draw(st.integers(1, 64))] = bytes(min(64, len(damaged) - at))
    path = tmp_path_factory.mktemp("bag") / name
    path.write_bytes(bytes(damaged))
    try:
        _read_all(path)
    except UsageError as exc:
        assert str(path) in str(exc)


# -- the catalogue ------------------------------------------------------------------------------

@functools.cache
def _catalogue_bytes() -> bytes:
    """A fresh catalogue's file (not a fixture: hypothesis would print its megabytes)."""
    import tempfile

    from mwperf.store import catalogue
    with tempfile.TemporaryDirectory() as folder:
        with catalogue.connect(Path(folder)):
            pass
        return catalogue.catalogue_path(Path(folder)).read_bytes()


def _query_catalogue(root: Path) -> None:
    from mwperf.store import catalogue
    with catalogue.connect(root, read_only=True) as con:
        for (table,) in con.execute("SELECT table_name FROM information_schema.tables "
                                    "WHERE table_schema = 'main'").fetchall():
            con.execute(f'SELECT * FROM "{table}"').fetchall()


@SETTINGS
@given(data=st.data())
def test_a_damaged_catalogue_is_an_error_naming_it_and_the_rebuild(tmp_path_factory, data):
    from mwperf.store import catalogue
    damaged = bytearray(_catalogue_bytes())
    how = data.draw(st.sampled_from(["truncate", "flip", "garbage"]))
    if how == "truncate":
        del damaged[data.draw(st.integers(0, len(damaged) - 1)):]
    elif how == "flip":
        for _ in range(data.draw(st.integers(1, 16))):
            damaged[data.draw(st.integers(0, len(damaged) - 1))] ^= data.draw(st.integers(1, 255))
    else:
        damaged = bytearray(data.draw(st.binary(max_size=4096)))
    root = tmp_path_factory.mktemp("results")
    path = catalogue.catalogue_path(root)
    path.write_bytes(bytes(damaged))
    try:
        _query_catalogue(root)
    except MwperfError as exc:
        message = str(exc)
        assert str(path) in message or str(root) in message, message
        assert "--rebuild" in message, message
    except duckdb.Error as exc:  # pragma: no cover - the failure this test is for
        pytest.fail(f"a damaged catalogue gave DuckDB's own error, not mwperf's: {exc}")
