"""The built-in scenario ``soak`` (issue 29) expanded, not run: every transport at 1 kHz Array1k,
udp and iceoryx2 also at 10 kHz, 1 min per point quick and 10 min full, with its gates on every
point; ``gates:`` in a scenario file and ``--gate`` on the command line together."""

import pytest

from mwperf.errors import UsageError
from mwperf.config import TRANSPORTS
from mwperf.scenario import load_scenario
from mwperf.scenario.check import check_points
from mwperf.scenario.expand import expand
from scenario_support import SourceCatalogue, validate

S = 1_000_000_000


def expanded(quick, conditions=None):
    scenario = load_scenario("soak", quick)
    points = expand(scenario, None, conditions)
    return points, check_points(scenario, points, SourceCatalogue)


@pytest.mark.parametrize("quick,minutes,samples", [(True, 1, 50_000), (False, 10, 500_000)])
def test_soak_expands_to_every_transport_at_1khz_and_udp_iceoryx2_at_10khz(quick, minutes,
                                                                           samples):
    points, configs = expanded(quick)
    shown = [(c.transport, c.rate) for c in configs.values()]
    assert shown == [(t, 1000.0) for t in TRANSPORTS] + [("udp", 10000.0), ("iceoryx2", 10000.0)]
    for cfg in configs.values():
        assert cfg.mode == "roundtrip" and cfg.payload == "Array1k" and cfg.count_allocs
        assert cfg.duration_ns == minutes * 60 * S
        assert "rss-growth<=1MiB" in cfg.gates and "live-allocs-growth<=64KiB" in cfg.gates
        assert f"min-samples={samples}" in cfg.gates and "matched-within=10s" in cfg.gates
        assert cfg.to_dict()["gates"] == list(cfg.gates)


def test_command_line_gates_add_to_the_scenarios():
    points, configs = expanded(True, {"gates": ("p99<=5ms",)})
    for cfg in configs.values():
        assert cfg.gates[-1] == "p99<=5ms" and "rss-growth<=1MiB" in cfg.gates


def test_gates_in_a_scenario_file(tmp_path):
    _, _, configs = validate(tmp_path / "s.yaml", "transport: [udp, tcp]\nduration: 1s\n"
                             "gates: p99<=2ms\n")
    assert [c.gates for c in configs.values()] == [("p99<=2ms",), ("p99<=2ms",)]
    _, points, configs = validate(tmp_path / "s.yaml", "transport: udp\nduration: 1s\n"
                                  "gates: [p99<=2ms, lost<=0]\n")
    assert len(points) == 1 and configs[1].gates == ("p99<=2ms", "lost<=0")  # a list, no axis


@pytest.mark.parametrize("text,message", [
    ("gates: [p99=2ms]", "field 'gates': 'p99=2ms' is not a gate; allowed: rss-growth<=SIZE"),
    ("gates: [1]", "field 'gates': must be a list of texts"),
    ("gates: [live-allocs-growth<=0]", "field 'gates': live-allocs-growth needs --count-allocs"),
])
def test_bad_gates_in_a_scenario_file(tmp_path, text, message):
    with pytest.raises(UsageError) as caught:
        validate(tmp_path / "s.yaml", f"transport: udp\nduration: 1s\n{text}\n")
    assert message in str(caught.value) and "s.yaml:3" in str(caught.value)
