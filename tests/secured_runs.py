"""What every secured-run test checks of a saved result (tests/test_secure_e2e.py: DDS-Security;
tests/test_secure_tls_e2e.py: TLS): the mode it ran under, and every message the sender counted
sending received, none corrupted or foreign; one way, the sub's own count of the pub's; a round
trip, the pong echoing all it got."""

from typing import Any


def every_message_delivered(result: dict[str, Any], secure: str, mode: str
                            ) -> dict[str, dict[str, Any]]:
    """Assert it of ``result`` (read_saved); the agents' reports by role."""
    assert result["config"]["secure"] == secure
    agents = {a["role"]: a for a in result["agents"]}
    sender, receiver = (agents["ping"], agents["pong"]) if mode == "roundtrip" else (
        agents["pub"], agents["sub"])
    accounting = result["measurement"]["accounting"]
    assert accounting["received"] == accounting["sent"] == sender["sent"] > 100, accounting
    assert accounting["corrupted"] == 0 and accounting["foreign"] == 0
    if mode == "oneway":  # the sub's own count of the pub's measured messages
        assert receiver["measurement"]["accounting"]["received"] == sender["sent"]
    else:  # the pong echoed all it got, warm-up included
        assert receiver["counters"]["echoed"] == receiver["counters"]["received"] >= sender["sent"]
    return agents
