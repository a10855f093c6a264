"""Helpers for the scenario tests: a catalogue with the real agent's payload names (read from
the Rust source, so a built-in scenario naming a payload the agent lacks fails here too) and a
validate-a-file shortcut."""

import re
from pathlib import Path

from mwperf.config import TRANSPORTS, PointConfig
from mwperf.scenario import load_scenario
from mwperf.scenario.check import check_points
from mwperf.scenario.expand import PlannedPoint, expand
from mwperf.scenario.model import Scenario

PAYLOAD_SOURCE = Path(__file__).resolve().parents[1] / "crates/mwperf-core/src/payload.rs"


class SourceCatalogue:
    """Every transport mwperf knows, the payloads of crates/mwperf-core/src/payload.rs."""

    def transports(self) -> list[str]:
        return list(TRANSPORTS)

    def payloads(self) -> dict[str, int]:
        table = PAYLOAD_SOURCE.read_text()
        return {name: 0 for name in re.findall(r'^\s*\("(\w+)", ', table, re.MULTILINE)}


def validate(path: Path, text: str, quick: bool = False
             ) -> tuple[Scenario, list[PlannedPoint], dict[int, PointConfig]]:
    """Write ``text`` to ``path``, load, expand (all known transports) and check every point."""
    path.write_text(text)
    scenario = load_scenario(str(path), quick)
    points = expand(scenario, None)
    return scenario, points, check_points(scenario, points, SourceCatalogue)
