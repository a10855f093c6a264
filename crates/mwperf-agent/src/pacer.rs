//! Which message to send next and when: warm-up then measured phase, by count or duration, on
//! absolute deadlines (rate > 0) or back to back (rate 0). Shared by ping, pub and the graph
//! node's publishers (node/publisher.rs).

use mwperf_core::schedule::Schedule;

use crate::cli::SenderArgs;
use crate::replay::Trace;

/// The next message to send.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slot {
    /// Intended send time (= now for rate 0).
    pub intended_ns: u64,
    pub warmup: bool,
    /// Sequence number within its phase (measured messages count from 0).
    pub seq: u64,
    /// Position in the whole schedule (warm-up included): the tick, shared by all topics.
    pub index: u64,
}

pub struct Pacer {
    pub schedule: Schedule,
    start_ns: u64,
    warmup_ns: u64,
    /// rate > 0: number of warm-up messages.
    warmup_n: u64,
    /// Measured messages wanted (count, or duration / period for rate > 0).
    measure_n: Option<u64>,
    duration_ns: u64,
    /// `--min-count`: at rate 0 the measured phase ends only once this many were sent too.
    min_count: u64,
    pub warmup_sent: u64,
    pub measured_sent: u64,
    measure_start_ns: Option<u64>,
    /// `--replay-trace`: the recorded messages' times and bytes instead of a rate.
    trace: Option<Trace>,
    /// The trace could not be read to its end (what went wrong).
    pub replay_error: Option<String>,
    /// `--replay-loop`: no message at an offset of --duration or later.
    replay_end_ns: Option<u64>,
}

impl Pacer {
    pub fn new(args: &SenderArgs, start_ns: u64) -> Self {
        let period = mwperf_core::schedule::period_ns(args.rate);
        let min_count = args.min_count.unwrap_or(0);
        let (warmup_n, measure_n) = if period > 0 {
            (
                args.warmup.div_ceil(period),
                Some(
                    args.count
                        .unwrap_or(args.duration.div_ceil(period).max(1).max(min_count)),
                ),
            )
        } else {
            (0, args.count)
        };
        Pacer {
            schedule: Schedule::new(start_ns, period),
            start_ns,
            warmup_ns: args.warmup,
            warmup_n,
            measure_n,
            duration_ns: args.duration,
            min_count,
            warmup_sent: 0,
            measured_sent: 0,
            measure_start_ns: None,
            trace: None,
            replay_error: None,
            replay_end_ns: None,
        }
    }

    /// A graph node's publisher (node/publisher.rs): messages due on `schedule` (a rate's or a
    /// looped recording's); those due before `warmup_end_ns` are the warm-up, those due before
    /// `end_ns` after it measured. Period 0 (`rate: max`): back to back from the schedule's
    /// start, the warm-up until `warmup_end_ns`, measured for `end_ns - warmup_end_ns` after the
    /// first measured message (as `--rate 0 --duration` does).
    pub fn between(schedule: Schedule, start_ns: u64, warmup_end_ns: u64, end_ns: u64) -> Self {
        let warmup_n = schedule.count_before(warmup_end_ns).unwrap_or(0);
        let measure_n = schedule
            .count_before(end_ns)
            .map(|n| n.saturating_sub(warmup_n));
        Pacer {
            schedule,
            start_ns,
            warmup_ns: warmup_end_ns.saturating_sub(start_ns),
            warmup_n,
            measure_n,
            duration_ns: end_ns.saturating_sub(warmup_end_ns),
            min_count: 0,
            warmup_sent: 0,
            measured_sent: 0,
            measure_start_ns: None,
            trace: None,
            replay_error: None,
            replay_end_ns: None,
        }
    }

    /// The pacer of sender topic `topic`: on the rate's schedule, or with `--replay-trace` on
    /// the recorded offsets (message k due at start + offset_k, warm-up = offsets before
    /// `--warmup`), each message's bytes from the trace.
    pub fn for_sender(args: &SenderArgs, start_ns: u64, topic: u16) -> Result<Self, String> {
        let mut pacer = Pacer::new(args, start_ns);
        if let Some(dir) = &args.replay_trace {
            let mut trace = Trace::open(dir, topic)?;
            if let Some(span) = args.replay_loop {
                trace = trace.looping(span);
                pacer.replay_end_ns = Some(args.warmup + args.duration);
            }
            pacer.schedule = Schedule::new(start_ns, trace.period_ns.max(1));
            pacer.measure_n = None;
            pacer.trace = Some(trace);
        }
        Ok(pacer)
    }

    /// With `--replay-trace`: the bytes of the message claimed last.
    pub fn replay_bytes(&self) -> Option<&[u8]> {
        self.trace.as_ref().map(Trace::current)
    }

    pub fn period_ns(&self) -> u64 {
        self.schedule.period_ns()
    }

    /// End of the measured window as planned: the intended time of the last measured message
    /// plus one period (None without a schedule).
    pub fn planned_end_ns(&self) -> Option<u64> {
        self.measure_n
            .and_then(|n| self.schedule.due_at(self.warmup_n + n))
    }

    /// When the next message is due (None = now, rate 0), or Err(()) when all are sent.
    pub fn next_due(&self, now_ns: u64) -> Result<Option<u64>, ()> {
        if let Some(trace) = &self.trace {
            return trace
                .next_offset()
                .filter(|o| self.replay_end_ns.is_none_or(|end| *o < end))
                .map(|o| Some(self.start_ns + o))
                .ok_or(());
        }
        if self.done(now_ns) {
            return Err(());
        }
        Ok(self.schedule.next_due())
    }

    fn done(&self, now_ns: u64) -> bool {
        match (self.measure_n, self.measure_start_ns) {
            // on a schedule by position (a restarted sender skipped some: [`Pacer::skip_to`])
            (Some(n), _) if self.period_ns() > 0 && self.trace.is_none() => {
                self.schedule.next_index() >= self.warmup_n + n
            }
            (Some(n), _) => self.measured_sent >= n,
            (None, Some(t0)) => {
                now_ns >= t0 + self.duration_ns && self.measured_sent >= self.min_count
            }
            (None, None) => false,
        }
    }

    /// Claim the next message at time `now_ns` (call only when it is due).
    pub fn take(&mut self, now_ns: u64) -> Slot {
        if let Some(trace) = &mut self.trace {
            let offset = match trace.advance() {
                Ok(o) => o,
                Err(e) => {
                    self.replay_error.get_or_insert(e);
                    self.trace = None; // no more messages: the role ends at the next next_due
                    self.measure_n = Some(self.measured_sent);
                    0
                }
            };
            let index = self.warmup_sent + self.measured_sent;
            let intended_ns = self.start_ns + offset;
            return if offset < self.warmup_ns {
                self.warmup_sent += 1;
                Slot {
                    intended_ns,
                    warmup: true,
                    seq: self.warmup_sent - 1,
                    index,
                }
            } else {
                self.measure_start_ns.get_or_insert(intended_ns);
                self.measured_sent += 1;
                Slot {
                    intended_ns,
                    warmup: false,
                    seq: self.measured_sent - 1,
                    index,
                }
            };
        }
        let k = self.schedule.next_index();
        let intended_ns = self.schedule.take(now_ns);
        let warmup = if self.period_ns() > 0 {
            k < self.warmup_n
        } else {
            now_ns < self.start_ns + self.warmup_ns
        };
        // on a schedule a message's number is its position in its phase, so a restarted
        // sender that skipped what was due while it was down goes on with the numbers of the
        // schedule (equal to the count sent when nothing was skipped)
        let scheduled = self.period_ns() > 0;
        if warmup {
            self.warmup_sent += 1;
            Slot {
                intended_ns,
                warmup,
                seq: if scheduled { k } else { self.warmup_sent - 1 },
                index: k,
            }
        } else {
            self.measure_start_ns.get_or_insert(intended_ns);
            self.measured_sent += 1;
            Slot {
                intended_ns,
                warmup,
                seq: if scheduled {
                    k - self.warmup_n
                } else {
                    self.measured_sent - 1
                },
                index: k,
            }
        }
    }

    /// A restarted sender joins its schedule at `t_ns` (a graph node restarted mid-run): the
    /// messages due before then are never sent; returns the number the first measured message
    /// it may still send will carry (None without a schedule: back to back or a trace's).
    pub fn skip_to(&mut self, t_ns: u64) -> Option<u64> {
        if self.period_ns() == 0 || self.trace.is_some() {
            return None;
        }
        self.schedule.skip_to(t_ns);
        Some(self.schedule.next_index().saturating_sub(self.warmup_n))
    }

    /// Record when the slot's message actually left.
    pub fn sent(&mut self, slot: &Slot, actual_ns: u64) {
        self.schedule
            .sent(slot.intended_ns, actual_ns, !slot.warmup);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    /// A ping's command line with `extra` flags, parsed.
    fn parse(extra: &[&str]) -> Result<crate::cli::Cli, clap::Error> {
        let mut v = vec![
            "mwperf-agent",
            "ping",
            "--transport",
            "udp",
            "--connect",
            "x:1",
        ];
        v.extend_from_slice(extra);
        crate::cli::Cli::try_parse_from(v)
    }

    fn args(extra: &[&str]) -> SenderArgs {
        match parse(extra).expect("a valid command line").role {
            crate::cli::Role::Ping(a) => a,
            _ => unreachable!(),
        }
    }

    #[test]
    fn scheduled_phases_by_count() {
        let mut p = Pacer::new(
            &args(&["--rate", "1000", "--warmup", "2ms", "--duration", "3ms"]),
            0,
        );
        let mut slots = Vec::new();
        while let Ok(due) = p.next_due(0) {
            slots.push(p.take(due.unwrap()));
        }
        assert_eq!(slots.iter().filter(|s| s.warmup).count(), 2);
        assert_eq!(
            slots
                .iter()
                .filter(|s| !s.warmup)
                .map(|s| s.seq)
                .collect::<Vec<_>>(),
            vec![0, 1, 2]
        );
        assert_eq!(slots[4].intended_ns, 4_000_000);
    }

    #[test]
    fn unscheduled_count_and_duration() {
        let mut p = Pacer::new(&args(&["--rate", "0", "--count", "5"]), 0);
        let mut n = 0;
        while p.next_due(10).is_ok() {
            p.take(10);
            n += 1;
        }
        assert_eq!(n, 5);
        let mut p = Pacer::new(&args(&["--rate", "0", "--duration", "1ms"]), 0);
        p.take(0);
        assert!(p.next_due(999_999).is_ok());
        assert!(p.next_due(1_000_000).is_err());
    }

    #[test]
    fn min_count_stretches_a_scheduled_duration_and_no_more() {
        let measured = |extra: &[&str]| {
            let mut p = Pacer::new(&args(extra), 0);
            let mut n = 0;
            while let Ok(due) = p.next_due(0) {
                n += u64::from(!p.take(due.unwrap()).warmup);
            }
            n
        };
        // 100 Hz for 1 s is 100 messages: --min-count 1000 makes it 10 s
        assert_eq!(
            measured(&["--rate", "100", "--duration", "1s", "--min-count", "1000"]),
            1000
        );
        // the duration already gives more: it stays
        assert_eq!(
            measured(&["--rate", "1000", "--duration", "2s", "--min-count", "1000"]),
            2000
        );
        assert_eq!(measured(&["--rate", "100", "--duration", "1s"]), 100);
    }

    #[test]
    fn min_count_in_a_closed_loop_ends_at_the_later_of_duration_and_count() {
        // fast: the duration passes after the count
        let mut p = Pacer::new(
            &args(&["--rate", "0", "--duration", "1ms", "--min-count", "3"]),
            0,
        );
        for _ in 0..3 {
            p.take(10);
        }
        assert!(p.next_due(999_999).is_ok());
        assert!(p.next_due(1_000_010).is_err());
        // slow: the duration is over but only 2 of 3 were sent
        let mut p = Pacer::new(
            &args(&["--rate", "0", "--duration", "1ms", "--min-count", "3"]),
            0,
        );
        p.take(0);
        p.take(5_000_000);
        assert!(p.next_due(9_000_000).is_ok());
        p.take(9_000_000);
        assert!(p.next_due(9_000_001).is_err());
    }

    #[test]
    fn a_node_publisher_s_phases_are_its_due_times_before_the_warm_up_end_and_the_end() {
        // every 1 ms from 0.3 ms: due 0.3, 1.3 (warm-up, before 2 ms), 2.3 .. 4.3 (before 5 ms)
        let schedule = Schedule::new(300_000, 1_000_000);
        let mut p = Pacer::between(schedule, 300_000, 2_000_000, 5_000_000);
        let mut slots = Vec::new();
        while let Ok(Some(due)) = p.next_due(0) {
            let slot = p.take(due);
            p.sent(&slot, due + 10_000 * slot.index);
            slots.push((slot.intended_ns, slot.warmup, slot.seq));
        }
        assert_eq!(
            slots,
            [
                (300_000, true, 0),
                (1_300_000, true, 1),
                (2_300_000, false, 0),
                (3_300_000, false, 1),
                (4_300_000, false, 2)
            ]
        );
        assert_eq!(p.planned_end_ns(), Some(5_300_000));
        // lateness of the measured ones only: 20, 30, 40 us
        let s = p.schedule.summary().unwrap();
        assert_eq!((s.lateness.count, s.lateness.max_ns), (3, Some(40_000)));
        // a looped recording: 0, 0.5 ms, then again at 1.5 ms (0.5 + a 1 ms period)
        let looped = Schedule::looped(0, 1_000_000, vec![0, 500_000]);
        let mut p = Pacer::between(looped, 0, 1_000_000, 3_100_000);
        let mut dues = Vec::new();
        while let Ok(Some(due)) = p.next_due(0) {
            dues.push((due, p.take(due).warmup));
        }
        assert_eq!(
            dues,
            [
                (0, true),
                (500_000, true),
                (1_500_000, false),
                (2_000_000, false),
                (3_000_000, false)
            ]
        );
    }

    #[test]
    fn a_saturating_node_publisher_measures_for_its_span_after_the_warm_up() {
        let mut p = Pacer::between(Schedule::new(0, 0), 0, 1_000, 3_000);
        assert_eq!(p.next_due(0), Ok(None)); // due now
        assert!(p.take(500).warmup);
        assert!(!p.take(1_200).warmup);
        assert!(p.next_due(3_199).is_ok());
        assert!(p.next_due(3_200).is_err()); // 2 us after the first measured one
        assert!(p.schedule.summary().is_none()); // no schedule to be late against
    }

    #[test]
    fn a_restarted_node_publisher_skips_what_was_due_and_keeps_the_numbers() {
        // 1 ms period, warm-up until 2 ms (2 messages), measured until 10 ms (8 messages)
        let mut p = Pacer::between(Schedule::new(0, 1_000_000), 0, 2_000_000, 10_000_000);
        assert_eq!(p.skip_to(5_500_000), Some(4)); // slots 0..=5 gone: measured #4 and on
        let mut taken = Vec::new();
        while let Ok(Some(due)) = p.next_due(0) {
            let slot = p.take(due);
            assert!(!slot.warmup);
            taken.push((slot.seq, slot.intended_ns));
        }
        assert_eq!(
            taken,
            vec![
                (4, 6_000_000),
                (5, 7_000_000),
                (6, 8_000_000),
                (7, 9_000_000)
            ]
        );
        assert_eq!(p.measured_sent, 4); // what it sent itself
        assert_eq!(
            Pacer::between(Schedule::new(0, 0), 0, 1, 2).skip_to(5),
            None
        );
    }

    #[test]
    fn min_count_is_refused_with_count() {
        assert!(parse(&["--count", "5", "--min-count", "9"]).is_err());
    }
}
