//! Warnings that make a result less trustworthy, each with a hint that fits what the user did.

use serde::Serialize;

use crate::result::{Measurement, Schedule, Stats};
use crate::units::format_ns;
use crate::warning_codes::{self as codes, Code};

/// A duration in a message: as people read it everywhere else (18.7 ms, not 18743295 ns).
fn dur(ns: u64) -> String {
    format_ns(ns as f64)
}

#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct Warning {
    pub code: &'static str,
    pub message: String,
    pub hint: Option<String>,
}

impl Warning {
    /// A warning of a registered `code` (crate::warning_codes): the message with its figures,
    /// the hint fitting what the user did.
    pub fn new(code: Code, message: impl Into<String>, hint: Option<&str>) -> Self {
        Warning {
            code: code.code,
            message: message.into(),
            hint: hint.map(str::to_string),
        }
    }
}

/// What the checks need to know about how the measurement was taken.
pub struct Context<'a> {
    pub cpuidle_driver: &'a str,
    /// The sender's warm-up (None for roles that do not send: the pub's report carries it).
    pub warmup_ns: Option<u64>,
    pub governor: &'a str,
    pub prevent_cpu_idle: &'a str,
    pub busy_poll: bool,
    pub clock_read_overhead_ns: f64,
}

/// Percentiles shown in results and the sample count each needs to rest on ≥ 10 samples beyond it.
const PERCENTILES: &[(&str, u64)] = &[("p99", 1_000), ("p99.9", 10_000), ("p99.99", 100_000)];

/// `too-few-samples`: only when the p99 is weak (fewer than 1000 samples), the tail every
/// summary ranks by; the message names every weak percentile. A p99.9 or p99.99 that alone
/// rests on too few is no warning: the tables mark those cells (`*` and a footnote) instead.
fn sample_size(stats: &Stats) -> Option<Warning> {
    let weak: Vec<&str> = PERCENTILES
        .iter()
        .filter(|(_, need)| stats.count < *need)
        .map(|(p, _)| *p)
        .collect();
    if stats.count == 0 || stats.count >= PERCENTILES[0].1 {
        return None;
    }
    Some(Warning::new(
        codes::TOO_FEW_SAMPLES,
        format!(
            "only {} sample{}: {} rest on fewer than 10 samples beyond them",
            stats.count,
            if stats.count == 1 { "" } else { "s" },
            weak.join(", ")
        ),
        Some("measure more messages (--min-samples 1000, --duration or --count) before trusting the tail"),
    ))
}

/// Checks on how the agent ran (any role).
pub fn check_conditions(cx: &Context) -> Vec<Warning> {
    let mut w = Vec::new();
    if cx.warmup_ns == Some(0) {
        w.push(Warning::new(
            codes::NO_WARMUP,
            "warm-up not excluded: the first messages include connection setup, page faults and cold caches",
            Some("add --warmup 1s"),
        ));
    }
    if cx.governor != "unavailable" && cx.governor != "performance" {
        w.push(Warning::new(
            codes::CPU_GOVERNOR,
            format!("CPU frequency governor is '{}', not 'performance': clock changes add latency variance", cx.governor),
            Some("cpupower frequency-set -g performance"),
        ));
    }
    if cx.prevent_cpu_idle == "unavailable" {
        w.push(Warning::new(
            codes::CPU_IDLE_NOT_PREVENTED,
            "--prevent-cpu-idle was asked for but /dev/cpu_dma_latency could not be opened: idle-state wake-ups are in the numbers",
            Some("run as root, or use --busy-poll"),
        ));
    }
    if cx.prevent_cpu_idle == "on" && cx.cpuidle_driver == "none" {
        w.push(Warning::new(
            codes::CPU_IDLE_NOT_CONTROLLABLE,
            "--prevent-cpu-idle has no effect here: the kernel has no cpuidle driver (idle CPUs halt and the hypervisor decides how fast they wake)",
            Some("use --keep-awake (a SCHED_IDLE spinner on each CPU) or --busy-poll to keep the CPUs awake"),
        ));
    }
    if cx.clock_read_overhead_ns > 1_000.0 {
        w.push(Warning::new(
            codes::SLOW_CLOCK,
            format!(
                "reading the clock costs {}: timestamps are coarse",
                format_ns(cx.clock_read_overhead_ns)
            ),
            Some("check the clocksource (tsc is best)"),
        ));
    }
    w
}

/// Checks on a sender's schedule: did it keep its deadlines?
pub fn check_schedule(s: &Schedule, sent: u64, busy_poll: bool) -> Option<Warning> {
    let p99 = s.lateness.p99_ns.unwrap_or(0);
    if s.behind_count * 1000 <= sent.max(1) && p99 <= s.period_ns / 2 {
        return None;
    }
    let hint = if busy_poll {
        "lower --rate or free a CPU core"
    } else {
        "the sender sleeps between sends and woke late: spin instead (--spin-margin equal to the period, or --busy-poll), or lower --rate"
    };
    Some(Warning::new(
        codes::SENDER_BEHIND,
        format!(
            "the sender fell behind its schedule: {} of {} sends were more than one period late, p99 lateness {} (period {})",
            s.behind_count, sent, dur(p99), dur(s.period_ns)
        ),
        Some(hint),
    ))
}

/// Checks on what a measuring role (ping, sub) saw.
pub fn check_measurement(m: &Measurement) -> Vec<Warning> {
    let mut w = Vec::new();
    if m.response.count == 0 {
        w.push(Warning::new(
            codes::NO_SAMPLES,
            "no measured message arrived: there is no latency to report",
            Some("check that the peer is running and reachable"),
        ));
    }
    w.extend(sample_size(&m.response));
    if let Some(s) = &m.schedule {
        w.extend(check_schedule(s, m.accounting.sent, false));
    }
    if let Some(cs) = &m.clock_sync {
        w.extend(check_clock_sync(cs, m.service.p50_ns));
    }
    if m.accounting.foreign > 0 {
        w.push(Warning::new(
            codes::FOREIGN_TRAFFIC,
            format!(
                "{} packets that were not from this run arrived",
                m.accounting.foreign
            ),
            Some("another program or an earlier run is sending to this port; use a free port"),
        ));
    }
    w
}

/// One way across two clocks: the correction's error bound against the median it qualifies
/// (> 10 % is a warning), a sync that never got a fit, and samples the correction left negative.
pub fn check_clock_sync(cs: &crate::result::ClockSync, p50_ns: Option<u64>) -> Vec<Warning> {
    let mut w = Vec::new();
    match (cs.error_bound_ns, p50_ns) {
        (None, _) => w.push(Warning::new(
            codes::CLOCK_SYNC_FAILED,
            format!("clock sync with {} gave no fit ({}; {} of {} probes answered): one-way latencies are NOT corrected and mix two clocks", cs.peer, cs.status, cs.probes_answered, cs.probes_sent),
            Some("check that the pub serves probes (--clock-serve) on that address and that UDP reaches it"),
        )),
        (Some(bound), Some(p50)) if bound as f64 > 0.1 * p50 as f64 => w.push(Warning::new(
            codes::CLOCK_SYNC_BOUND,
            format!("the clock offset is known to ±{} (the farthest used probe's distance from the fit + half its round trip; the least round trip {}), more than 10 % of the one-way p50 {}", dur(bound), dur(cs.min_rtt_ns.unwrap_or(0)), dur(p50)),
            Some("one-way figures across hosts are only as good as this bound; a shorter, more symmetric path for the probes narrows it"),
        )),
        _ => {}
    }
    if cs.negative_after_correction > 0 {
        w.push(Warning::new(
            codes::CLOCK_SYNC_NEGATIVE,
            format!("{} one-way samples were still negative after the clock correction and were recorded as 0", cs.negative_after_correction),
            Some("the clock offset moved more than the fit follows; see measurement.clock_sync"),
        ));
    }
    if cs.corrected_running_fit > 0 {
        w.push(Warning::new(
            codes::CLOCK_SYNC_RUNNING_FIT,
            format!("{} samples overflowed the {}-sample buffer and were corrected with the fit as it stood then, not the final one", cs.corrected_running_fit, cs.buffer_capacity),
            None,
        ));
    }
    w
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counted(count: u64) -> Stats {
        Stats {
            count,
            ..Stats::EMPTY
        }
    }

    #[test]
    fn too_few_samples_only_when_the_p99_is_weak_and_naming_every_weak_percentile() {
        let w = sample_size(&counted(100)).expect("a warning at 100 samples");
        assert_eq!(w.code, "too-few-samples");
        assert_eq!(
            w.message,
            "only 100 samples: p99, p99.9, p99.99 rest on fewer than 10 samples beyond them"
        );
        assert!(w.hint.unwrap().contains("--min-samples"));
        let w = sample_size(&counted(999)).expect("a warning at 999 samples");
        assert!(w
            .message
            .starts_with("only 999 samples: p99, p99.9, p99.99 rest"));
        assert_eq!(
            sample_size(&counted(1)).unwrap().message.split(':').next(),
            Some("only 1 sample")
        );
    }

    #[test]
    fn a_weak_p99_9_alone_is_no_warning() {
        for count in [0, 1_000, 9_999, 10_000, 99_999, 100_000, 1_000_000] {
            assert_eq!(sample_size(&counted(count)), None, "{count} samples");
        }
    }

    #[test]
    fn a_late_sender_is_told_in_readable_durations() {
        let s = Schedule {
            period_ns: 10_000_000,
            lateness: Stats {
                p99_ns: Some(18_743_295),
                ..counted(100)
            },
            behind_count: 7,
        };
        let w = check_schedule(&s, 100, false).expect("a warning");
        assert_eq!(w.code, "sender-behind");
        assert!(
            w.message
                .ends_with("7 of 100 sends were more than one period late, p99 lateness 18.7 ms (period 10.0 ms)"),
            "{}",
            w.message
        );
    }
}
