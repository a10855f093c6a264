"""The graph summary's outage lines (show/graph.py outage_lines): each window's loss and
recovery per edge that crossed the link, or why a window has no figures."""

from mwperf.show.graph import outage_lines


def test_each_window_of_an_edge_is_said_with_its_loss_and_recovery() -> None:
    edges = [{"topic": "/state", "from": "robot", "to": "base", "outages": {"items": [
                {"lost": 50, "sent_in_gap": 51, "recovery_ns": 3_210_000, "note": None},
                {"lost": None, "sent_in_gap": None, "recovery_ns": None,
                 "note": "the sender stopped before the link came back"},
                {"lost": 7, "sent_in_gap": 7, "recovery_ns": None, "note": None}]}},
             {"topic": "/state", "from": "robot", "to": "local"}]
    assert outage_lines(edges) == [
        "outage /state robot -> base: lost 50 of 51 sent in the gap, recovered 3.21 ms after; "
        "the sender stopped before the link came back; lost 7 of 7 sent in the gap, never "
        "recovered"]
