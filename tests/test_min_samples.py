"""--min-samples / ``min_samples`` (issue 22): every point measures at least N messages, so its
p99 can be trusted — at a rate the point runs max(duration, N / rate), in a closed loop until N
messages or the duration, whichever is later; the default suite asks for 1000, its quick
variant for none; a p99.9 that rests on fewer than 10 samples beyond it is marked in the tables
and the report instead of warned about."""

import json
import re
from html import escape
from pathlib import Path
from typing import Any

import pytest
from conftest import read_printed, run_mwperf
from report_support import add_point, latencies

from mwperf.config import PointConfig, build_point
from mwperf.errors import UsageError
from mwperf.report import build
from mwperf.commandline import sender_args, sender_timeout_s
from mwperf.scenario.catalog import load_scenario
from mwperf.scenario.expand import expand
from mwperf.scenario.parse import parse_scenario
from mwperf.scenario.progress import Progress, length_note, planned_s
from mwperf.show.table import THIN_NOTE


class Catalogue:
    def transports(self) -> list[str]:
        return ["udp", "tcp"]

    def payloads(self) -> dict[str, int]:
        return {"Array1k": 1024}


def point(**options: Any) -> PointConfig:
    return build_point({"transport": "udp", "payload": "Array1k", **options}, Catalogue)


def test_at_a_rate_the_duration_is_stretched_to_n_periods_and_never_shortened() -> None:
    slow = point(rate="100", duration="1s", min_samples="1000")
    assert (slow.duration_ns, slow.min_samples, slow.measure_ns) == (10**9, 1000, 10 * 10**9)
    assert length_note(slow) == "10.0 s for 1000 samples at 100 Hz"
    assert planned_s(point(rate="100", duration="1s", min_samples="1000", warmup="300ms")) == 10.3
    fast = point(rate="1000", duration="2s", min_samples="1000")
    assert fast.measure_ns == 2 * 10**9 and length_note(fast) is None  # 2000 already
    loop = point(rate="0", duration="1s", min_samples="1000")
    assert loop.measure_ns == 10**9  # a lower bound: the agent goes on until 1000
    assert length_note(loop) == "at least 1000 samples and 1.00 s"
    plain = point(rate="100", duration="1s")
    assert plain.min_samples is None and plain.measure_ns == 10**9 and length_note(plain) is None


def test_the_result_config_records_it_only_when_given() -> None:
    assert point(rate="100", min_samples="1000").to_dict()["min_samples"] == 1000
    assert "min_samples" not in point(rate="100").to_dict()


def test_the_sender_gets_min_count_and_time_for_it() -> None:
    slow = point(rate="100", duration="1s", min_samples="1000", warmup="0s")
    args = sender_args(slow)
    assert args[args.index("--duration") + 1] == "1000000000ns"
    assert args[args.index("--min-count") + 1] == "1000"
    assert "--min-count" not in sender_args(point(rate="100", duration="1s"))
    plain = point(rate="100", duration="1s", warmup="0s")
    assert sender_timeout_s(slow) == pytest.approx(sender_timeout_s(plain) + 9)
    loop = point(rate="0", duration="1s", min_samples="1000", warmup="0s")
    # closed loop: the duration plus what --count 1000 would be given
    assert sender_timeout_s(loop) == pytest.approx(
        sender_timeout_s(point(rate="0", duration="1s", warmup="0s"))
        + sender_timeout_s(point(rate="0", count="1000", warmup="0s"))
        - sender_timeout_s(point(rate="0", duration="1ns", warmup="0s")), abs=1e-6)


@pytest.mark.parametrize(("options", "message"), [
    ({"min_samples": "0"}, "--min-samples: must be >= 1, got 0"),
    ({"min_samples": "-3"}, "--min-samples: must be >= 1, got -3"),
    ({"min_samples": "many"}, "--min-samples: cannot parse 'many'; use a whole number"),
    ({"min_samples": "1.5"}, "--min-samples: cannot parse '1.5'"),
    ({"min_samples": "10", "count": "5"}, "--min-samples: not with --count"),
])
def test_bad_values_name_the_flag(options: dict[str, str], message: str) -> None:
    with pytest.raises(UsageError) as error:
        point(**options)
    assert str(error.value).startswith(message) and error.value.exit_code == 2


def test_not_with_replay(tmp_path: Path) -> None:
    from mwperf.bags.trace import parse_spec
    bag = tmp_path / "x.mcap"
    bag.write_bytes(b"\x89MCAP0\r\n")
    with pytest.raises(UsageError, match=r"^--min-samples: not with --replay"):
        parse_spec({"replay": str(bag), "min_samples": "1000"})


@pytest.mark.parametrize(("value", "message"), [
    ("0", "--min-samples: must be >= 1, got 0"),
    ("ten", "--min-samples: cannot parse 'ten'"),
])
def test_the_command_line_refuses_with_exit_2(fake_env: dict[str, str], value: str,
                                              message: str) -> None:
    done = run_mwperf("run", "--transport", "udp", "--min-samples", value, env=fake_env)
    assert done.returncode == 2 and done.stderr.startswith(f"mwperf: error: {message}")
    assert done.stderr.count("\n") == 1


def test_the_default_suite_asks_for_1000_and_its_quick_variant_for_none() -> None:
    full = expand(load_scenario("default"), None)
    assert {p.options["min_samples"] for p in full} == {"1000"}
    quick = expand(load_scenario("default", True), None)
    assert all("min_samples" not in p.options for p in quick) and len(quick) == len(full)


def test_a_quick_variant_drops_a_field_given_as_null(tmp_path: Path) -> None:
    text = "rate: 100\nmin_samples: 500\nduration: 1s\nquick:\n  min_samples: null\n"
    full = parse_scenario(text, "t.yaml", "t")
    assert full.get("min_samples") is not None
    quick = parse_scenario(text, "t.yaml", "t", quick=True)
    assert quick.get("min_samples") is None and quick.get("duration") is not None
    with pytest.raises(UsageError, match=r"^t.yaml:2: field 'min_samples': must be a single "):
        parse_scenario("rate: 100\nmin_samples: null\n", "t.yaml", "t")


def test_a_bad_value_in_a_scenario_is_located(fake_env: dict[str, str], tmp_path: Path) -> None:
    (tmp_path / "s.yaml").write_text("rate: 100\nmin_samples: 0\n")
    done = run_mwperf("run", str(tmp_path / "s.yaml"), "--dry-run", env=fake_env)
    assert done.returncode == 2
    assert done.stderr.strip().endswith("s.yaml:2: field 'min_samples': must be >= 1, got 0")


def test_the_progress_line_says_how_long_and_why(fake_env: dict[str, str],
                                                 tmp_path: Path) -> None:
    """A sweep with min_samples: the line says the point is stretched, the sender is asked for
    --min-count, the result records it; with the scenario's own key, --min-samples is refused,
    and a command-line --min-samples applies to every point of a scenario without one."""
    (tmp_path / "s.yaml").write_text("transport: udp\npayload: Array64\nrate: [100, 0]\n"
                                     "duration: 10ms\nwarmup: 0s\nmin_samples: 5\n")
    done = run_mwperf("run", str(tmp_path / "s.yaml"), "--results", str(tmp_path / "r"),
                      env=fake_env)
    assert done.returncode == 0, done.stderr
    assert "[1/2] udp roundtrip 100 Hz Array64 (50.0 ms for 5 samples at 100 Hz) ...\n" in (
        done.stderr)
    assert "[2/2] udp roundtrip max Array64 (at least 5 samples and 10.0 ms) ...\n" in done.stderr
    argv = json.loads((Path(fake_env["FAKE_AGENT_TRACE"]) / "ping.argv.json").read_text())
    assert argv[argv.index("--min-count") + 1] == "5"
    results = sorted((tmp_path / "r").glob("*/points/*/result.json"))
    assert [json.loads(r.read_text())["config"]["min_samples"] for r in results] == [5, 5]
    refused = run_mwperf("run", str(tmp_path / "s.yaml"), "--min-samples", "9", "--dry-run",
                         env=fake_env)
    assert refused.returncode == 2 and "--min-samples: scenario" in refused.stderr
    (tmp_path / "t.yaml").write_text("transport: udp\npayload: Array64\nrate: 100\n"
                                     "duration: 10ms\nwarmup: 0s\n")
    given = run_mwperf("run", str(tmp_path / "t.yaml"), "--min-samples", "4", "--no-save",
                       env=fake_env)
    assert given.returncode == 0, given.stderr
    assert "(40.0 ms for 4 samples at 100 Hz)" in given.stderr


def test_the_bar_names_the_stretch() -> None:
    import io
    out = io.StringIO()
    progress = Progress(1, out, tty=False)
    progress.start(1, "udp roundtrip 100 Hz Array1k", 10.0, "10.0 s for 1000 samples at 100 Hz")
    assert out.getvalue() == "[1/1] udp roundtrip 100 Hz Array1k (10.0 s for 1000 samples at " \
                             "100 Hz) ...\n"


def test_the_real_agent_measures_at_least_n(real_env: dict[str, str]) -> None:
    """The agent's --min-count: 200 Hz for 50 ms would be 10 messages, 60 are measured (0.3 s);
    a closed loop of 1 ms goes on to 400 round trips."""
    for rate, duration, wanted in (("200", "50ms", 60), ("0", "1ms", 400)):
        done = run_mwperf("run", "--transport", "udp", "--rate", rate, "--duration", duration,
                          "--warmup", "0s", "--min-samples", str(wanted), "--no-save", "--json",
                          env=real_env)
        assert done.returncode == 0, done.stderr
        result = read_printed(done.stdout)
        assert result["config"]["min_samples"] == wanted
        assert result["measurement"]["accounting"]["sent"] == wanted
        ping = next(a for a in result["agents"] if a["role"] == "ping")
        assert ping["config"]["min_count"] == wanted


def test_the_report_marks_a_thin_p99_9_and_says_why_once(tmp_path: Path) -> None:
    root = tmp_path / "results"
    runs = ["20261122T100000Z-udp-roundtrip-0001", "20261122T100100Z-udp-roundtrip-0002"]
    add_point(root, runs[0], latencies(1000, seed=1))
    add_point(root, runs[1], latencies(10_000, seed=2))
    html = build(root, runs)
    table = html[html.index('id="summary-table"'):]
    table = table[:table.index("</table>")]
    rows = re.findall(r"<tr>(.*?)</tr>", table)[1:]
    marked = [re.findall(r'<td class="num">([^<]*\*)</td>', row) for row in rows]
    assert sorted(len(m) for m in marked) == [0, 1]  # one cell: the 1000-sample p99.9
    assert html.count(escape(THIN_NOTE)) == 1 and 'id="thin-tail"' in html
    markdown = build(root, runs, "markdown")
    assert markdown.count("\\" + THIN_NOTE) == 1 and markdown.count("* |") == 1
    csv = build(root, runs, "csv")
    assert "*" not in csv  # raw values stay numbers
    wide = tmp_path / "wide"
    add_point(wide, "20261122T100000Z-udp-roundtrip-0003", latencies(10_000, seed=3))
    assert escape(THIN_NOTE) not in build(wide, []) and "*" not in build(wide, [], "markdown")


def test_the_sweep_summary_keeps_the_footnote_beside_extra_axis_columns(
        fake_env: dict[str, str], tmp_path: Path) -> None:
    import io

    from mwperf.agent import find_agent
    from mwperf.scenario import Request, launch
    (tmp_path / "s.yaml").write_text("transport: udp\npayload: Array64\nrate: 100\n"
                                     "duration: 50ms\nwarmup: 0s\n"
                                     "reliability: [reliable, best-effort]\n")
    summary = launch(Request(str(tmp_path / "s.yaml"), False, tmp_path / "r", None, {}),
                     find_agent(), io.StringIO())
    lines = summary.text().splitlines()
    assert lines[0].startswith("reliability  transport") and lines[3] == THIN_NOTE
    assert lines[1].startswith("reliable     udp") and lines[1].count("*") == 1
    markdown = summary.text(markdown=True).splitlines()
    assert markdown[0].startswith("| reliability | transport")
    assert markdown[4:6] == ["", "\\" + THIN_NOTE]
