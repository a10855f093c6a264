//! Absolute-deadline sending: message k is due at start + k·period, never "sleep(period) after the
//! last one", so delays do not accumulate and a stall shows up as lateness of every message that
//! was due during it (coordinated-omission correct).

use crate::stats::LatencyRecorder;

pub struct Schedule {
    start_ns: u64,
    period_ns: u64,
    /// a recording's due times after the start, looped every last offset + the period (empty:
    /// every period)
    offsets: Vec<u64>,
    next: u64,
    lateness: LatencyRecorder,
    behind: u64,
}

impl Schedule {
    /// `period_ns` = 0 means no schedule (as fast as possible): every message is due now.
    pub fn new(start_ns: u64, period_ns: u64) -> Self {
        Schedule {
            start_ns,
            period_ns,
            offsets: Vec::new(),
            next: 0,
            lateness: LatencyRecorder::default(),
            behind: 0,
        }
    }

    /// Message k due at start + `offsets[k mod n]` + (k div n) x (last offset + period): a
    /// recording's times looped (a graph file's `replay:`). `offsets` start at 0 and never
    /// decrease; the period is > 0 (the node spec's check).
    pub fn looped(start_ns: u64, period_ns: u64, offsets: Vec<u64>) -> Self {
        Schedule {
            offsets,
            ..Schedule::new(start_ns, period_ns)
        }
    }

    pub fn period_ns(&self) -> u64 {
        self.period_ns
    }

    /// Intended send time of message `k` (None without a schedule).
    pub fn due_at(&self, k: u64) -> Option<u64> {
        if self.period_ns == 0 {
            return None;
        }
        Some(match self.offsets.last() {
            Some(&last) => {
                let n = self.offsets.len() as u64;
                self.start_ns + (k / n) * (last + self.period_ns) + self.offsets[(k % n) as usize]
            }
            None => self.start_ns + k * self.period_ns,
        })
    }

    /// How many messages are due before `t_ns` (None without a schedule).
    pub fn count_before(&self, t_ns: u64) -> Option<u64> {
        if self.period_ns == 0 {
            return None;
        }
        let since = t_ns.saturating_sub(self.start_ns);
        Some(match self.offsets.last() {
            Some(&last) => {
                let lap = last + self.period_ns;
                let n = self.offsets.len() as u64;
                let within = since % lap;
                (since / lap) * n + self.offsets.iter().filter(|&&o| o < within).count() as u64
            }
            None => since.div_ceil(self.period_ns), // 0 at or before the start
        })
    }

    /// Intended send time of the next message (None without a schedule).
    pub fn next_due(&self) -> Option<u64> {
        self.due_at(self.next)
    }

    /// Index of the next message.
    pub fn next_index(&self) -> u64 {
        self.next
    }

    /// A restarted sender joins its schedule at `t_ns`: the messages due before then are
    /// skipped (never claimed), how many is returned; nothing changes without a schedule or
    /// when the next message is due at or after `t_ns`.
    pub fn skip_to(&mut self, t_ns: u64) -> u64 {
        let Some(due) = self.count_before(t_ns) else {
            return 0;
        };
        let skipped = due.saturating_sub(self.next);
        self.next += skipped;
        skipped
    }

    /// Claim the next message: returns its intended send time (`now_ns` without a schedule).
    pub fn take(&mut self, now_ns: u64) -> u64 {
        let intended = self.next_due().unwrap_or(now_ns);
        self.next += 1;
        intended
    }

    /// Record when the message claimed with intended time `intended_ns` actually left.
    pub fn sent(&mut self, intended_ns: u64, actual_ns: u64, measured: bool) {
        if self.period_ns == 0 || !measured {
            return;
        }
        let late = actual_ns.saturating_sub(intended_ns);
        self.lateness.record(late);
        if late > self.period_ns {
            self.behind += 1;
        }
    }

    /// The result section (None without a schedule).
    pub fn summary(&self) -> Option<crate::result::Schedule> {
        (self.period_ns > 0).then(|| crate::result::Schedule {
            period_ns: self.period_ns,
            lateness: self.lateness.summary(),
            behind_count: self.behind,
        })
    }
}

/// Period in ns for a rate in Hz (0 → 0 = unscheduled).
pub fn period_ns(rate_hz: f64) -> u64 {
    if rate_hz <= 0.0 {
        0
    } else {
        (1e9 / rate_hz).round().max(1.0) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn skip_to_claims_nothing_due_before_and_keeps_the_index() {
        let mut s = Schedule::new(1_000, 100);
        assert_eq!(s.take(1_000), 1_000);
        assert_eq!(s.skip_to(1_450), 4); // 1100..1400 skipped; 1500 is next
        assert_eq!(s.next_index(), 5);
        assert_eq!(s.next_due(), Some(1_500));
        assert_eq!(s.skip_to(1_200), 0); // never back
        assert_eq!(Schedule::new(0, 0).skip_to(5), 0);
    }

    #[test]
    fn deadlines_are_absolute() {
        let mut s = Schedule::new(1_000, 100);
        assert_eq!(s.take(5_000), 1_000);
        assert_eq!(s.take(5_000), 1_100); // falling behind does not shift later deadlines
        assert_eq!(s.next_due(), Some(1_200));
        s.sent(1_000, 1_250, true);
        s.sent(1_100, 1_105, true);
        let sum = s.summary().unwrap();
        assert_eq!(sum.behind_count, 1);
        assert_eq!(sum.lateness.max_ns, Some(250));
    }

    #[test]
    fn a_looped_recording_keeps_its_times_and_counts_them() {
        // 0, 0.5, 2 ms, then again from 3 ms (2 ms + one 1 ms period)
        let s = Schedule::looped(1_000, 1_000_000, vec![0, 500_000, 2_000_000]);
        let dues: Vec<_> = (0..6).map(|k| s.due_at(k).unwrap() - 1_000).collect();
        assert_eq!(
            dues,
            [0, 500_000, 2_000_000, 3_000_000, 3_500_000, 5_000_000]
        );
        // count_before agrees with the due times, at and between them
        for t in (0..7_000_000).step_by(250_000) {
            let due_before = (0..100)
                .filter(|&k| s.due_at(k).unwrap() < 1_000 + t)
                .count();
            assert_eq!(s.count_before(1_000 + t), Some(due_before as u64), "t={t}");
        }
        let plain = Schedule::new(10, 100);
        assert_eq!(
            [0, 10, 11, 110, 111].map(|t| plain.count_before(t).unwrap()),
            [0, 0, 1, 1, 2]
        );
        assert_eq!(Schedule::new(0, 0).count_before(5), None);
    }

    #[test]
    fn unscheduled_is_due_now() {
        let mut s = Schedule::new(0, period_ns(0.0));
        assert_eq!(s.next_due(), None);
        assert_eq!(s.take(77), 77);
        assert!(s.summary().is_none());
        assert_eq!(period_ns(1000.0), 1_000_000);
        assert_eq!(period_ns(3.0), 333_333_333);
    }
}
