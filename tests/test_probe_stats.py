"""The probe's statistics on hand-made arrivals: bursts, rate per second, no age without header."""

from mwperf.probe.stats import summarise_topic


def test_stats_bursts_and_rate_per_second() -> None:
    ms = 1_000_000
    arrivals = [k * 10 * ms for k in range(300)]  # 100 Hz for 3 s
    arrivals[150:153] = [1500 * ms, 1501 * ms, 1502 * ms]  # bunched after a stall
    topic = summarise_topic("/t", "x/Y", arrivals, [8] * 300, [-1] * 300, 0, 3000 * ms, 3.0)
    assert topic.bursts == 2 and topic.age_p50_ns is None
    assert topic.rate_per_second_min == 100 and topic.rate_per_second_max == 100
    assert topic.rate_cv == 0
