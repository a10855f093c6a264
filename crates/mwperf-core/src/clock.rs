//! Clocks. Every timestamp in a message is CLOCK_MONOTONIC in nanoseconds: one clock shared by all
//! processes of a host, so one-way latency between two local processes needs no offset estimate.

/// Name recorded in results for timestamps taken with [`now_ns`].
pub const CLOCK_NAME: &str = "CLOCK_MONOTONIC (one host)";

use std::sync::atomic::{AtomicI64, Ordering};

/// Name recorded in one-way results whose receive times were moved onto the sender's clock
/// with a measured offset and drift (clocksync).
pub const CLOCK_SYNCED_NAME: &str =
    "CLOCK_MONOTONIC of each host, corrected by measured offset and drift (clock_sync)";

/// TEST ONLY (`--test-clock-drift-ppm`): drift added to every timestamp, in parts per billion;
/// 0 = the real clock. Anchored at CLOCK_MONOTONIC 0: the agent's clock reads t·(1 + drift).
static TEST_DRIFT_PPB: AtomicI64 = AtomicI64::new(0);

/// TEST ONLY: make [`now_ns`] and [`sleep_until_ns`] run `ppm` parts per million fast (negative:
/// slow), as a host whose oscillator is off would. Ground truth for the clock-sync tests.
pub fn set_test_drift_ppm(ppm: f64) {
    TEST_DRIFT_PPB.store((ppm * 1000.0).round() as i64, Ordering::Relaxed);
}

/// The injected test drift in ppm (0 when unused).
pub fn test_drift_ppm() -> f64 {
    TEST_DRIFT_PPB.load(Ordering::Relaxed) as f64 / 1000.0
}

fn raw_now_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: valid pointer to a timespec; CLOCK_MONOTONIC is always available on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// raw → drifted: t + t·ppb/1e9.
#[cold]
fn drifted(t: u64, ppb: i64) -> u64 {
    (t as i128 + t as i128 * ppb as i128 / 1_000_000_000) as u64
}

/// drifted → raw (the inverse of [`drifted`], for sleeping until a drifted deadline).
#[cold]
fn undrifted(t: u64, ppb: i64) -> u64 {
    (t as i128 * 1_000_000_000 / (1_000_000_000 + ppb as i128)) as u64
}

/// CLOCK_MONOTONIC now, in nanoseconds (vDSO, no system call). With a test drift set, the
/// drifted clock (one predictable branch when unused).
#[inline]
pub fn now_ns() -> u64 {
    from_raw_ns(raw_now_ns())
}

/// A raw CLOCK_MONOTONIC reading taken elsewhere in this process (libmwperf_layers.so stamps
/// system calls with the raw clock) on the agent's clock: the test drift applied as
/// [`now_ns`] applies it, so both kinds of stamps compare.
#[inline]
pub fn from_raw_ns(raw: u64) -> u64 {
    let ppb = TEST_DRIFT_PPB.load(Ordering::Relaxed);
    if ppb == 0 {
        raw
    } else {
        drifted(raw, ppb)
    }
}

/// Sleep until the absolute CLOCK_MONOTONIC time `deadline_ns` (returns early on a signal).
pub fn sleep_until_ns(deadline_ns: u64) {
    let ppb = TEST_DRIFT_PPB.load(Ordering::Relaxed);
    let deadline_ns = if ppb == 0 {
        deadline_ns
    } else {
        undrifted(deadline_ns, ppb)
    };
    let ts = libc::timespec {
        tv_sec: (deadline_ns / 1_000_000_000) as libc::time_t,
        tv_nsec: (deadline_ns % 1_000_000_000) as libc::c_long,
    };
    // SAFETY: plain syscall with a valid timespec; EINTR simply returns early.
    unsafe {
        libc::clock_nanosleep(
            libc::CLOCK_MONOTONIC,
            libc::TIMER_ABSTIME,
            &ts,
            std::ptr::null_mut(),
        )
    };
}

/// Ask the kernel for 1 ns timer slack (the default 50 µs would blur every sleep deadline).
pub fn tighten_timer_slack() {
    // SAFETY: prctl with an integer argument.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0) };
}

/// Median cost of one [`now_ns`] call, measured over `n` back-to-back reads.
pub fn read_overhead_ns(n: usize) -> f64 {
    let mut d: Vec<u64> = (0..n.max(3))
        .map(|_| {
            let a = now_ns();
            let b = now_ns();
            b - a
        })
        .collect();
    d.sort_unstable();
    d[d.len() / 2] as f64
}

/// Wall-clock time (CLOCK_REALTIME, vDSO) in unix nanoseconds: for comparing with other
/// programs' stamps (a ROS 2 header's), never for latency between mwperf's own stamps.
pub fn unix_now_ns() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

/// Wall-clock time as RFC 3339 UTC with milliseconds (for result metadata only, never for latency).
pub fn rfc3339_now() -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let secs = now.as_secs() as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        now.subsec_millis()
    )
}

/// Days since 1970-01-01 → (year, month, day), Howard Hinnant's civil-from-days algorithm.
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn monotonic_and_sleep_reaches_deadline() {
        let a = now_ns();
        sleep_until_ns(a + 2_000_000);
        assert!(now_ns() >= a + 2_000_000);
    }

    #[test]
    fn test_drift_round_trips() {
        let t = 1_234_567_890_123_456u64;
        assert_eq!(drifted(t, 50_000), t + t / 20_000); // 50 ppm
        for ppb in [50_000, -50_000, 1_000] {
            assert!(undrifted(drifted(t, ppb), ppb).abs_diff(t) <= 1);
        }
    }

    #[test]
    fn raw_stamps_take_the_test_drift_like_now() {
        let raw = raw_now_ns();
        assert_eq!(from_raw_ns(raw), raw);
        assert_eq!(drifted(raw, 50_000), raw + raw / 20_000);
        assert!(now_ns() >= from_raw_ns(raw));
    }

    #[test]
    fn civil_dates() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(20_413), (2025, 11, 21));
        assert_eq!(civil_from_days(11_016), (2000, 2, 29));
    }
}
