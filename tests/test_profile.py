"""--profile's pieces without perf: folding perf script output per process, the top functions,
the flame graph's SVG, and the one-line reason when perf is missing."""
import xml.etree.ElementTree as ET

import pytest

from mwperf.profiling import flamegraph, record
from mwperf.profiling.stacks import fold, folded_text

SCRIPT = """mwperf-agent 10/10    2002002 
\tffffffff81000130 entry_SYSCALL_64_after_hwframe
\t          6a4514 <mwperf_transports::udp::UdpEndpoint as Endpoint>::recv
\t          4a0f15 mwperf_agent::roles::ping::Ping::receive
\t          49cd75 mwperf_agent::main

mwperf-agent 10/10    1001001 
\t          6a4514 <mwperf_transports::udp::UdpEndpoint as Endpoint>::recv
\t          4a0f15 mwperf_agent::roles::ping::Ping::receive
\t          49cd75 mwperf_agent::main

mosquitto 20/20    1001001 
\t          1234 [unknown]

"""


def test_fold_splits_processes_and_orders_root_first() -> None:
    profiles = fold(SCRIPT)
    assert sorted(profiles) == [10, 20]
    ping = profiles[10]
    assert ping.samples == 2 and ping.comm == "mwperf-agent"
    assert ping.cpu_ns == 1001001 + 2002002  # each sample's own period
    assert profiles[20].cpu_ns == 1001001
    assert folded_text(ping).splitlines()[0].startswith("mwperf_agent::main;")
    top = ping.top()
    assert {"function": "<mwperf_transports::udp::UdpEndpoint as Endpoint>::recv",
            "self_pct": 50.0, "total_pct": 100.0} in top
    assert {"function": "entry_SYSCALL_64_after_hwframe", "self_pct": 50.0,
            "total_pct": 50.0} in top
    assert len(top) == 2  # only leaves have samples of their own


def test_flame_graph_is_valid_svg_with_a_box_per_frame() -> None:
    svg = flamegraph.render(fold(SCRIPT)[10].stacks, "ping <pid 10>")
    root = ET.fromstring(svg)
    titles = [t.text for t in root.iter("{http://www.w3.org/2000/svg}title")]
    assert titles[0] == "all (2 samples, 100.00 %)"
    assert any(t.startswith("mwperf_agent::roles::ping::Ping::receive (2 samples") for t in titles)
    assert "ping &lt;pid 10&gt;" in svg  # the title is escaped


def test_without_perf_the_reason_names_the_package(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(record.shutil, "which", lambda _: None)
    assert "apt-get install linux-perf" in record.unavailable()
