"""The summary's analysis on synthetic points with known answers: saturation knee (and its two
edge cases), comparisons across a two-valued axis, multi-topic ranking."""

import pytest

from mwperf.scenario.compare import comparisons
from mwperf.scenario.expand import PlannedPoint
from mwperf.scenario.knee import ALWAYS, KNEE, NEVER, RateSample, find_knee, knees
from mwperf.scenario.model import Analysis
from mwperf.scenario.observe import Observation
from mwperf.scenario.topics import rank_topics
from mwperf.show.table import Row

MS = 1_000_000


def obs(rate: float, p99_ns: float | None, loss: float | None = 0.0, transport: str = "udp",
        rep: int = 1, p50_ns: float | None = None, status: str = "complete",
        per_topic: list[dict] | None = None, **axes: str) -> Observation:
    all_axes = (("transport", transport), ("rate", f"{rate:g}"), *axes.items())
    point = PlannedPoint(0, {"transport": transport, "rate": str(rate)}, all_axes, {}, rep, 3)
    row = Row(transport, "roundtrip", rate, "Array1k", 1024, p50_ns=p50_ns or p99_ns,
              p99_ns=p99_ns, loss_pct=loss, status=status)
    return Observation(point, status, None, row, per_topic or [])


def test_knee_is_the_last_sustainable_rate_before_the_first_that_is_not() -> None:
    # period: 200 Hz 5 ms, 1 kHz 1 ms, 2 kHz 0.5 ms, 4 kHz 0.25 ms
    samples = [RateSample(4000, 0.1 * MS, 0.0), RateSample(200, 1 * MS, 0.0),
               RateSample(1000, 0.5 * MS, 0.5), RateSample(2000, 0.6 * MS, 0.0)]
    knee = find_knee("udp", samples, Analysis())
    assert (knee.verdict, knee.rate) == (KNEE, 1000)
    assert (knee.below.rate, knee.above.rate) == (1000, 2000)  # the evidence
    # 4 kHz happens to pass again: above the first failure it does not count
    assert knee.again == (4000,)
    assert knee.text(Analysis()) == (
        "udp: knee at 1000 Hz — 1000 Hz: p99 500 µs < 1.00 ms, loss 0.50% < 1%; "
        "2000 Hz: p99 600 µs >= 500 µs, loss 0.00% < 1% (sustainable again at 4000 Hz, above "
        "the first failure)")


def test_loss_threshold_and_factor_are_configurable() -> None:
    samples = [RateSample(100, 1 * MS, 0.0), RateSample(200, 1 * MS, 2.0),
               RateSample(400, 3 * MS, 0.0)]
    assert find_knee("g", samples, Analysis()).rate == 100  # loss 2 % >= 1 %
    assert find_knee("g", samples, Analysis(knee_loss_pct=5)).rate == 200  # 3 ms >= 2.5 ms
    loose = find_knee("g", samples, Analysis(knee_factor=2, knee_loss_pct=5))
    assert (loose.verdict, loose.rate) == (ALWAYS, 400)  # 3 ms < 2 x 2.5 ms


def test_never_sustainable_and_sustainable_everywhere() -> None:
    never = find_knee("g", [RateSample(10, 200 * MS, 0.0), RateSample(20, 1 * MS, 0.0)],
                      Analysis())
    assert (never.verdict, never.rate, never.below, never.above.rate) == (NEVER, None, None, 10)
    assert never.text(Analysis()).startswith("g: never sustainable — already at the lowest "
                                             "rate, 10 Hz: p99 200 ms >= 100 ms")
    always = find_knee("g", [RateSample(10, 1 * MS, 0.0), RateSample(20, 1 * MS, 0.0),
                             RateSample(0, 1 * MS, 0.0)], Analysis())  # rate 0 takes no part
    assert (always.verdict, always.rate, always.above) == (ALWAYS, 20, None)
    unmeasured = find_knee("g", [RateSample(10, None, None)], Analysis())
    assert unmeasured.verdict == NEVER
    with pytest.raises(ValueError):
        find_knee("g", [RateSample(0, 1.0, 0.0)], Analysis())


def test_knees_per_group_with_repetitions_combined_by_median() -> None:
    observed = [
        # udp: 100 Hz fine; 1 kHz: reps 0.2 / 0.4 / 5 ms -> median 0.4 ms < 1 ms; 2 kHz fails
        obs(100, 1 * MS), obs(1000, 0.2 * MS, rep=1), obs(1000, 0.4 * MS, rep=2),
        obs(1000, 5 * MS, rep=3), obs(2000, 0.6 * MS),
        # tcp: fails already at 100 Hz; a failed point counts as not sustainable
        obs(100, None, None, transport="tcp", status="failed"), obs(1000, 0.1 * MS,
                                                                     transport="tcp"),
        obs(0, 0.1 * MS, transport="tcp"),
    ]
    found = {k.group: (k.verdict, k.rate) for k in knees(observed, Analysis())}
    assert found == {"udp": (KNEE, 1000), "tcp": (NEVER, None)}


def test_no_knee_without_a_rate_axis() -> None:
    point = PlannedPoint(0, {}, (("transport", "udp"),), {})
    row = Row("udp", "roundtrip", 100, "Array1k", 1024, p50_ns=1, p99_ns=1, loss_pct=0.0)
    assert knees([Observation(point, "complete", None, row)], Analysis()) == []


def test_comparison_pairs_points_that_differ_only_in_the_axis() -> None:
    observed = [obs(100, 2 * MS, p50_ns=1 * MS, reliability="reliable"),
                obs(100, 1 * MS, p50_ns=0.5 * MS, reliability="best-effort"),
                obs(200, 4 * MS, p50_ns=2 * MS, reliability="reliable"),
                obs(200, 4 * MS, p50_ns=3 * MS, reliability="best-effort"),
                obs(400, 4 * MS, p50_ns=2 * MS, reliability="reliable")]  # no partner
    (reliability,) = comparisons(observed)  # rate has 3 values, transport 1: not compared
    assert (reliability.axis, reliability.a, reliability.b) == ("reliability", "reliable",
                                                                "best-effort")
    assert [(p.context, p.p50_ratio, p.p99_ratio) for p in reliability.pairs] == [
        ("udp 100 Hz", 0.5, 0.5), ("udp 200 Hz", 1.5, 1.0)]
    assert reliability.median("p50") == 1.0 and reliability.median("p99") == 0.75
    assert reliability.lines()[0] == ("reliability: best-effort vs reliable over 2 matched "
                                      "pairs: p50 x1.00, p99 x0.75 (median ratio "
                                      "best-effort/reliable)")


def topic(index: int, p50: float, lost: int = 0, name: str | None = None) -> dict:
    return {"topic": index, "name": name or f"topic {index}",
            "response": {"p50_ns": p50, "p99_ns": 2 * p50},
            "accounting": {"sent": 100, "lost": lost}}


def test_topics_ranked_by_p50_over_repetitions() -> None:
    observed = [obs(100, 1 * MS, rep=1, per_topic=[topic(0, 2.2 * MS), topic(1, 4.2 * MS),
                                                   topic(2, 6.0 * MS, lost=2)]),
                obs(100, 1 * MS, rep=2, per_topic=[topic(0, 2.2 * MS), topic(1, 4.0 * MS),
                                                   topic(2, 7.0 * MS)]),
                obs(100, 1 * MS, rep=3, per_topic=[topic(0, 2.2 * MS), topic(1, 4.4 * MS),
                                                   topic(2, 6.2 * MS)]),
                obs(200, 1 * MS)]  # one topic: not ranked
    (ranking,) = rank_topics(observed)
    assert [(t.topic, t.p50_ns) for t in ranking.topics] == [(0, 2.2 * MS), (1, 4.2 * MS),
                                                             (2, 6.2 * MS)]
    assert ranking.topics[2].loss_pct == 0.0  # median of 2 %, 0 %, 0 %
    assert ranking.spread == pytest.approx(6.2 / 2.2)
    assert ranking.line().startswith("udp roundtrip 100 Hz Array1k: topic 0 p50 2.20 ms")


def test_a_topic_without_replies_is_ranked_last() -> None:
    silent = {"topic": 1, "name": "topic 1", "response": {"p50_ns": None, "p99_ns": None},
              "accounting": {"sent": 100, "lost": 100}}
    (ranking,) = rank_topics([obs(400, None, 100.0, per_topic=[topic(0, 3 * MS), silent,
                                                               topic(2, 1 * MS)])])
    assert [t.topic for t in ranking.topics] == [2, 0, 1]
    assert ranking.spread == 3.0
    assert ranking.line().endswith("topic 1 no replies loss 100.00% (slowest/fastest p50 x3.00)")


def test_a_replay_ranks_its_topics_by_their_recorded_names() -> None:
    (ranking,) = rank_topics([obs(40, 1 * MS, per_topic=[
        topic(0, 3 * MS, name="/camera/image_raw"), topic(1, 1 * MS, name="/scan")])])
    assert [t.name for t in ranking.topics] == ["/scan", "/camera/image_raw"]
    assert ranking.line().startswith("udp roundtrip 40 Hz Array1k: topic 1 /scan p50 1.00 ms")
    assert "< topic 0 /camera/image_raw p50 3.00 ms" in ranking.line()
    assert ranking.to_dict()["topics"][0]["name"] == "/scan"
