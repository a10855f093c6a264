//! Throughput accounting (`pub`/`sub --throughput`, docs/throughput.md): the steady state's CPU
//! of each side and, for the pub, how its send calls went — the time inside them, the part the
//! middleware held them back (flow control), the sends it refused after its own bound, and the
//! messages it accepted in each second.
//!
//! CPU is the process's (every thread: the middleware's own threads do much of the work) from
//! getrusage, read once when the steady state starts and once when it ends: two system calls
//! per run, nothing per message.

use mwperf_core::result::{Sending, ThroughputSide, HOLD_NS};
use mwperf_core::stats::LatencyRecorder;

/// CPU seconds (user + system, all threads) this process has used so far.
pub fn process_cpu_s() -> f64 {
    // SAFETY: zeroed rusage is a valid out-parameter.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

/// The steady window of one side: from the first measured message to the end.
#[derive(Default)]
pub struct SteadyCpu {
    start: Option<(u64, f64)>,
    messages: u64,
}

impl SteadyCpu {
    /// A measured message at `now_ns` (the first one opens the window).
    #[inline]
    pub fn message(&mut self, now_ns: u64) {
        if self.start.is_none() {
            self.start = Some((now_ns, process_cpu_s()));
        }
        self.messages += 1;
    }

    /// Close the window at `end_ns`; None when no measured message came.
    pub fn finish(&self, end_ns: u64) -> Option<ThroughputSide> {
        let (t0, cpu0) = self.start?;
        Some(ThroughputSide {
            messages: self.messages,
            steady_wall_s: end_ns.saturating_sub(t0) as f64 / 1e9,
            steady_cpu_s: (process_cpu_s() - cpu0).max(0.0),
            checked_every: None,
            sending: None,
        })
    }
}

/// A throughput pub's send calls.
pub struct SendMeter {
    calls: LatencyRecorder,
    in_send_ns: u64,
    refused: u64,
    series: Vec<u64>,
    origin_ns: Option<u64>,
    /// the end of the last call the middleware took a message in
    last_taken_end_ns: Option<u64>,
    holds: u64,
    longest_hold_ns: Option<u64>,
    pub steady: SteadyCpu,
}

impl Default for SendMeter {
    fn default() -> Self {
        SendMeter {
            calls: LatencyRecorder::with_precision(2),
            in_send_ns: 0,
            refused: 0,
            series: Vec::with_capacity(128),
            origin_ns: None,
            last_taken_end_ns: None,
            holds: 0,
            longest_hold_ns: None,
            steady: SteadyCpu::default(),
        }
    }
}

impl SendMeter {
    /// One measured send call from `start_ns` to `end_ns`; `accepted` = the middleware took it.
    #[inline]
    pub fn call(&mut self, start_ns: u64, end_ns: u64, accepted: bool) {
        let d = end_ns.saturating_sub(start_ns);
        self.in_send_ns += d;
        if !accepted {
            self.refused += 1;
            return;
        }
        self.calls.record(d);
        if let Some(last) = self.last_taken_end_ns {
            let wait = end_ns.saturating_sub(last);
            if wait >= HOLD_NS {
                self.holds += 1;
            }
            self.longest_hold_ns = Some(self.longest_hold_ns.map_or(wait, |m| m.max(wait)));
        }
        self.last_taken_end_ns = Some(end_ns);
        self.steady.message(start_ns);
        let origin = *self.origin_ns.get_or_insert(start_ns);
        let sec = ((start_ns.saturating_sub(origin)) / 1_000_000_000) as usize;
        if self.series.len() <= sec {
            self.series.resize(sec + 1, 0);
        }
        self.series[sec] += 1;
    }

    /// The pub's side at `end_ns` (after its last send).
    pub fn finish(&self, end_ns: u64) -> Option<ThroughputSide> {
        let mut side = self.steady.finish(end_ns)?;
        let p10 = self.calls.quantile(0.10);
        // what flow control held back: each accepted call beyond an unblocked one (its p10),
        // plus every refused call whole
        let unblocked = p10.unwrap_or(0).saturating_mul(self.calls.count());
        side.sending = Some(Sending {
            in_send_s: self.in_send_ns as f64 / 1e9,
            blocked_s: self.in_send_ns.saturating_sub(unblocked) as f64 / 1e9,
            refused: self.refused,
            send_p10_ns: p10,
            send_p50_ns: self.calls.quantile(0.5),
            send_p99_ns: self.calls.quantile(0.99),
            send_max_ns: self.calls.max(),
            series: self.series.clone(),
            holds: self.holds,
            longest_hold_ns: self.longest_hold_ns,
        });
        Some(side)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocked_time_is_what_calls_took_beyond_an_unblocked_one() {
        let mut m = SendMeter::default();
        for i in 0..100u64 {
            // 90 calls of 1 us, 10 of 1 ms (held back); one refused call of 5 ms
            let d = if i % 10 == 9 { 1_000_000 } else { 1_000 };
            m.call(i * 2_000_000, i * 2_000_000 + d, true);
        }
        m.call(300_000_000, 305_000_000, false);
        let side = m.finish(400_000_000).unwrap();
        let s = side.sending.unwrap();
        assert_eq!(side.messages, 100);
        assert_eq!(s.refused, 1);
        let in_send = 90.0 * 1e-6 + 10.0 * 1e-3 + 5e-3;
        assert!((s.in_send_s - in_send).abs() < 1e-9, "{}", s.in_send_s);
        // p10 ~ 1 us (2 significant digits: up to 1.03 us): blocked = in_send - 100 x ~1 us
        assert!(
            (s.blocked_s - (in_send - 100e-6)).abs() < 5e-6,
            "{}",
            s.blocked_s
        );
        assert_eq!(s.series, vec![100]);
        assert!((side.steady_wall_s - 0.4).abs() < 1e-9);
    }

    #[test]
    fn the_series_counts_accepted_sends_per_second_from_the_first() {
        let mut m = SendMeter::default();
        for t in [
            5u64,
            900_000_000,
            1_000_000_010,
            2_500_000_000,
            2_600_000_000,
        ] {
            m.call(t, t + 1, true);
        }
        let s = m.finish(3_000_000_000).unwrap().sending.unwrap();
        assert_eq!(s.series, vec![2, 1, 2]);
    }

    #[test]
    fn a_wait_of_100_ms_or_more_between_taken_messages_is_a_hold() {
        let mut m = SendMeter::default();
        m.call(0, 1_000, true);
        m.call(1_000, 2_000, true); // 1 µs after the last: no hold
        m.call(2_000, 50_000_000, false); // refused: not taken, no end of a take
        m.call(50_000_000, 150_002_000, true); // 150 ms after the last take
        m.call(150_002_000, 150_003_000, true);
        let s = m
            .finish(200_000_000)
            .and_then(|s| s.sending)
            .expect("a side");
        assert_eq!(s.holds, 1);
        assert_eq!(s.longest_hold_ns, Some(150_000_000));
        assert_eq!(s.refused, 1);
    }

    #[test]
    fn no_measured_message_no_side() {
        assert!(SendMeter::default().finish(1).is_none());
        assert!(SteadyCpu::default().finish(1).is_none());
    }
}
