//! Pooling finished per-topic results into one aggregate (an agent serving several topics reports
//! each topic and, as its top-level measurement, all topics together).
//!
//! Method: percentiles come from the summed histogram buckets (the same 3-significant-digit
//! buckets one recorder fed with every value would hold), clamped to the exact pooled min/max;
//! mean and standard deviation are combined exactly (Chan et al.'s parallel Welford update);
//! counts add up. Per-second series add their counts and pool min/max/mean exactly; their
//! percentiles are not recoverable from per-topic summaries and are left null (each topic's own
//! series keeps them). Jitter is the count-weighted mean of the topics' RFC 3550 jitter.

use std::collections::BTreeMap;

use crate::result::{Accounting, Late, Measurement, Schedule, SeriesPoint, Stats, Throughput};

/// One distribution from several (empty parts are ignored).
pub fn pool_stats(parts: &[&Stats]) -> Stats {
    let parts: Vec<&Stats> = parts.iter().copied().filter(|s| s.count > 0).collect();
    let count: u64 = parts.iter().map(|s| s.count).sum();
    if count == 0 {
        return Stats::EMPTY;
    }
    let mut buckets: BTreeMap<u64, u64> = BTreeMap::new();
    for s in &parts {
        for [v, n] in &s.histogram {
            *buckets.entry(*v).or_default() += n;
        }
    }
    let min = parts.iter().filter_map(|s| s.min_ns).min();
    let max = parts.iter().filter_map(|s| s.max_ns).max();
    let (mut n, mut mean, mut m2) = (0f64, 0f64, 0f64);
    for s in &parts {
        let (nb, mb) = (s.count as f64, s.mean_ns.unwrap_or(0.0));
        let m2b = s.stddev_ns.unwrap_or(0.0).powi(2) * nb;
        let d = mb - mean;
        let total = n + nb;
        mean += d * nb / total;
        m2 += m2b + d * d * n * nb / total;
        n = total;
    }
    let histogram: Vec<[u64; 2]> = buckets.into_iter().map(|(v, c)| [v, c]).collect();
    let q = |q: f64| quantile(&histogram, q).map(|v| v.clamp(min.unwrap_or(v), max.unwrap_or(v)));
    Stats {
        count,
        min_ns: min,
        mean_ns: Some(mean),
        p50_ns: q(0.50),
        p90_ns: q(0.90),
        p99_ns: q(0.99),
        p999_ns: q(0.999),
        p9999_ns: q(0.9999),
        max_ns: max,
        stddev_ns: Some((m2 / n).sqrt()),
        range_ns: min.zip(max).map(|(a, b)| b - a),
        histogram,
    }
}

/// The value at quantile `q` of sorted `[value, count]` buckets, as hdrhistogram computes it
/// (the first bucket whose cumulative count reaches ceil(q × total), at least 1).
fn quantile(buckets: &[[u64; 2]], q: f64) -> Option<u64> {
    let total: u64 = buckets.iter().map(|b| b[1]).sum();
    let wanted = ((q * total as f64).ceil() as u64).clamp(1, total.max(1));
    let mut seen = 0;
    buckets
        .iter()
        .find(|[_, n]| {
            seen += n;
            seen >= wanted
        })
        .map(|b| b[0])
}

/// Accounting of independent streams: every counter adds up.
pub fn sum_accounting(parts: &[&Accounting]) -> Accounting {
    parts.iter().fold(Accounting::default(), |a, b| Accounting {
        sent: a.sent + b.sent,
        received: a.received + b.received,
        lost: a.lost + b.lost,
        duplicated: a.duplicated + b.duplicated,
        reordered: a.reordered + b.reordered,
        corrupted: a.corrupted + b.corrupted,
        foreign: a.foreign + b.foreign,
        malformed: a.malformed + b.malformed,
        warmup_sent: a.warmup_sent + b.warmup_sent,
        warmup_received: a.warmup_received + b.warmup_received,
        undelivered: a.undelivered + b.undelivered,
    })
}

/// Send-schedule accuracy over all topics (None when no part has one).
pub fn pool_schedules(parts: &[&Schedule]) -> Option<Schedule> {
    let first = parts.first()?;
    Some(Schedule {
        period_ns: first.period_ns,
        lateness: pool_stats(&parts.iter().map(|s| &s.lateness).collect::<Vec<_>>()),
        behind_count: parts.iter().map(|s| s.behind_count).sum(),
    })
}

fn pool_series(parts: &[&[SeriesPoint]]) -> Vec<SeriesPoint> {
    let mut rows: BTreeMap<u64, (SeriesPoint, f64)> = BTreeMap::new();
    for p in parts.iter().flat_map(|s| s.iter()) {
        let (row, sum) = rows.entry(p.t_s).or_insert_with(|| {
            (
                SeriesPoint {
                    t_s: p.t_s,
                    sent: 0,
                    received: 0,
                    min_ns: None,
                    p50_ns: None,
                    p90_ns: None,
                    p99_ns: None,
                    max_ns: None,
                    mean_ns: None,
                },
                0.0,
            )
        });
        row.sent += p.sent;
        row.received += p.received;
        row.min_ns = row.min_ns.into_iter().chain(p.min_ns).min();
        row.max_ns = row.max_ns.into_iter().chain(p.max_ns).max();
        *sum += p.mean_ns.unwrap_or(0.0) * p.received as f64;
    }
    rows.into_values()
        .map(|(mut row, sum)| {
            row.mean_ns = (row.received > 0).then(|| sum / row.received as f64);
            row
        })
        .collect()
}

/// All topics' measurements as one (`parts` must not be empty; mode and sizes from the first).
pub fn pool_measurements(parts: &[&Measurement]) -> Measurement {
    let first = parts[0];
    let accounting = sum_accounting(&parts.iter().map(|m| &m.accounting).collect::<Vec<_>>());
    let response = pool_stats(&parts.iter().map(|m| &m.response).collect::<Vec<_>>());
    let jitter_weight: f64 = parts
        .iter()
        .filter(|m| m.jitter_rfc3550_ns.is_some())
        .map(|m| m.service.count as f64)
        .sum();
    let jitter = (jitter_weight > 0.0).then(|| {
        parts
            .iter()
            .filter_map(|m| m.jitter_rfc3550_ns.map(|j| j * m.service.count as f64))
            .sum::<f64>()
            / jitter_weight
    });
    let late = parts.iter().find_map(|m| m.late.as_ref()).map(|l| {
        let count: u64 = parts
            .iter()
            .filter_map(|m| m.late.as_ref())
            .map(|l| l.count)
            .sum();
        Late {
            threshold_ns: l.threshold_ns,
            count,
            fraction: if accounting.received > 0 {
                count as f64 / accounting.received as f64
            } else {
                0.0
            },
        }
    });
    let sum = |f: fn(&Throughput) -> f64| parts.iter().map(|m| f(&m.throughput)).sum::<f64>();
    Measurement {
        mode: first.mode.clone(),
        latency_kind: first.latency_kind.clone(),
        clock: first.clock.clone(),
        payload_bytes: first.payload_bytes,
        message_bytes: first.message_bytes,
        response,
        service: pool_stats(&parts.iter().map(|m| &m.service).collect::<Vec<_>>()),
        jitter_rfc3550_ns: jitter,
        late,
        accounting,
        throughput: Throughput {
            duration_s: parts
                .iter()
                .map(|m| m.throughput.duration_s)
                .fold(0.0, f64::max),
            msgs_per_s: sum(|t| t.msgs_per_s),
            payload_bytes_per_s: sum(|t| t.payload_bytes_per_s),
            message_bytes_per_s: sum(|t| t.message_bytes_per_s),
        },
        schedule: pool_schedules(
            &parts
                .iter()
                .filter_map(|m| m.schedule.as_ref())
                .collect::<Vec<_>>(),
        ),
        series: pool_series(
            &parts
                .iter()
                .map(|m| m.series.as_slice())
                .collect::<Vec<_>>(),
        ),
        samples_file: None,
        clock_sync: None,
        calls: pool_calls(
            &parts
                .iter()
                .filter_map(|m| m.calls.as_ref())
                .collect::<Vec<_>>(),
        ),
    }
}

/// Several clients' calls as one: counts summed, limits the largest, the server's side kept
/// (every client called the same server); None when no part made calls.
pub fn pool_calls(parts: &[&crate::result::Calls]) -> Option<crate::result::Calls> {
    let first = parts.first()?;
    let sum = |f: fn(&crate::result::Calls) -> u64| parts.iter().map(|c| f(c)).sum::<u64>();
    let connections = parts
        .iter()
        .filter_map(|c| c.connections)
        .reduce(|a, b| a + b);
    Some(crate::result::Calls {
        clients: sum(|c| c.clients),
        in_flight: parts.iter().map(|c| c.in_flight).max().unwrap_or(0),
        max_outstanding: parts.iter().map(|c| c.max_outstanding).max().unwrap_or(0),
        call_timeout_ns: first.call_timeout_ns,
        answered: sum(|c| c.answered),
        timeouts: sum(|c| c.timeouts),
        errors: sum(|c| c.errors),
        send_errors: sum(|c| c.send_errors),
        unmatched: sum(|c| c.unmatched),
        others_replies: sum(|c| c.others_replies),
        unchecked: sum(|c| c.unchecked),
        connections,
        server: first.server.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::LatencyRecorder;

    fn recorded(values: impl Iterator<Item = u64>) -> LatencyRecorder {
        let mut r = LatencyRecorder::default();
        values.for_each(|v| r.record(v));
        r
    }

    #[test]
    fn pooled_equals_one_recorder_fed_everything() {
        let a: Vec<u64> = (0..1000).map(|i| 10_000 + i * 37).collect();
        let b: Vec<u64> = (0..300).map(|i| 2_000_000 + i * 1_001).collect();
        let all = recorded(a.iter().chain(&b).copied()).summary();
        let pooled = pool_stats(&[
            &recorded(a.into_iter()).summary(),
            &recorded(b.into_iter()).summary(),
        ]);
        assert_eq!(
            (pooled.count, pooled.min_ns, pooled.max_ns),
            (all.count, all.min_ns, all.max_ns)
        );
        assert_eq!(
            (pooled.p50_ns, pooled.p90_ns, pooled.p99_ns, pooled.p999_ns),
            (all.p50_ns, all.p90_ns, all.p99_ns, all.p999_ns)
        );
        assert_eq!(pooled.histogram, all.histogram);
        assert!(
            (pooled.mean_ns.unwrap() - all.mean_ns.unwrap()).abs() < 1e-6 * all.mean_ns.unwrap()
        );
        assert!(
            (pooled.stddev_ns.unwrap() - all.stddev_ns.unwrap()).abs()
                < 1e-6 * all.stddev_ns.unwrap()
        );
    }

    #[test]
    fn empty_parts_are_ignored() {
        let one = recorded([5_000u64, 7_000].into_iter()).summary();
        let pooled = pool_stats(&[&LatencyRecorder::default().summary(), &one]);
        assert_eq!(pooled, one);
        assert_eq!(pool_stats(&[]).count, 0);
    }

    fn stats_from(v: &serde_json::Value) -> Stats {
        let int = |k: &str| v[k].as_u64();
        let float = |k: &str| v[k].as_f64();
        let histogram = v["histogram"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| [b[0].as_u64().unwrap(), b[1].as_u64().unwrap()])
            .collect();
        Stats {
            count: int("count").unwrap(),
            min_ns: int("min_ns"),
            mean_ns: float("mean_ns"),
            p50_ns: int("p50_ns"),
            p90_ns: int("p90_ns"),
            p99_ns: int("p99_ns"),
            p999_ns: int("p999_ns"),
            p9999_ns: int("p9999_ns"),
            max_ns: int("max_ns"),
            stddev_ns: float("stddev_ns"),
            range_ns: int("range_ns"),
            histogram,
        }
    }

    /// The hand-computed cases shared with the Python control plane (python/mwperf/pool.py,
    /// tests/test_pool_vectors.py): both pool the same way.
    #[test]
    fn shared_pooling_vectors() {
        let text = include_str!("../../../../tests/vectors/pooling.json");
        let v: serde_json::Value = serde_json::from_str(text).unwrap();
        for case in v["cases"].as_array().unwrap() {
            let parts: Vec<Stats> = case["parts"]
                .as_array()
                .unwrap()
                .iter()
                .map(stats_from)
                .collect();
            let refs: Vec<&Stats> = parts.iter().collect();
            let (got, want) = (pool_stats(&refs), stats_from(&case["pooled"]));
            let name = case["name"].as_str().unwrap();
            let close = |a: Option<f64>, b: Option<f64>| match (a, b) {
                (Some(a), Some(b)) => (a - b).abs() <= 1e-9 * b.abs().max(1.0),
                (a, b) => a == b,
            };
            assert!(
                close(got.mean_ns, want.mean_ns) && close(got.stddev_ns, want.stddev_ns),
                "{name}: {got:?}"
            );
            let (got, want) = (
                Stats {
                    mean_ns: None,
                    stddev_ns: None,
                    ..got
                },
                Stats {
                    mean_ns: None,
                    stddev_ns: None,
                    ..want
                },
            );
            assert_eq!(got, want, "{name}");
        }
    }

    #[test]
    fn accounting_adds_up_per_counter() {
        let a = Accounting {
            sent: 10,
            received: 9,
            lost: 1,
            reordered: 2,
            undelivered: 3,
            ..Default::default()
        };
        let b = Accounting {
            sent: 5,
            received: 5,
            duplicated: 1,
            ..Default::default()
        };
        let s = sum_accounting(&[&a, &b]);
        assert_eq!(
            (
                s.sent,
                s.received,
                s.lost,
                s.duplicated,
                s.reordered,
                s.undelivered
            ),
            (15, 14, 1, 1, 2, 3)
        );
    }
}
