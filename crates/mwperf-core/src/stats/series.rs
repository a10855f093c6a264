//! Per-second time series: one row per second of the measurement (by receive time relative to
//! the end of warm-up), percentiles at 2 significant digits so a reset costs microseconds.

use super::latency::LatencyRecorder;
use crate::result::SeriesPoint;

/// Rows reserved when a series starts (a longer measurement grows the vector, doubling).
pub const ROWS: usize = 128;

pub struct SecondSeries {
    origin_ns: u64,
    current: Option<u64>,
    rec: LatencyRecorder,
    sent: u64,
    rows: Vec<SeriesPoint>,
}

impl SecondSeries {
    pub fn new(origin_ns: u64) -> Self {
        // room for ROWS seconds up front: the steady state allocates nothing (--count-allocs)
        SecondSeries {
            origin_ns,
            current: None,
            rec: LatencyRecorder::with_precision(2),
            sent: 0,
            rows: Vec::with_capacity(ROWS),
        }
    }

    /// Room for `seconds` rows now, every page of it written (a sender that knows how long it
    /// measures): no row allocates later, and the resident set does not creep up a page at a
    /// time as rows are written (issue 29's soak runs: the live heap stepped up at 128, 256 and
    /// 512 s of a ten-minute point).
    pub fn reserve(&mut self, seconds: usize) {
        self.rows.reserve(seconds.saturating_sub(self.rows.len()));
        let per_page = (4096 / std::mem::size_of::<SeriesPoint>()).max(1);
        for row in self.rows.spare_capacity_mut().iter_mut().step_by(per_page) {
            // SAFETY: a byte of memory this vector owns and has not initialised; nothing reads it
            unsafe { std::ptr::write_volatile(row.as_mut_ptr() as *mut u8, 0) };
        }
    }

    /// Count from `origin_ns` instead, while nothing was recorded yet (a sub's first measured
    /// arrival after warm-up ones); a series with a row or a current second keeps its origin.
    pub fn restart_at(&mut self, origin_ns: u64) {
        if self.current.is_none() && self.rows.is_empty() {
            self.origin_ns = origin_ns;
        }
    }

    /// CLOCK_MONOTONIC at the start of second 0 (the end of the warm-up, or a sub's first
    /// measured arrival).
    pub fn origin_ns(&self) -> u64 {
        self.origin_ns
    }

    fn second_of(&self, t_ns: u64) -> u64 {
        t_ns.saturating_sub(self.origin_ns) / 1_000_000_000
    }

    fn roll_to(&mut self, sec: u64) {
        if let Some(cur) = self.current {
            if sec <= cur {
                return; // never roll backwards: a late sample counts in the current second
            }
            self.flush();
        }
        self.current = Some(sec);
    }

    fn flush(&mut self) {
        if let Some(cur) = self.current {
            let r = &self.rec;
            self.rows.push(SeriesPoint {
                t_s: cur,
                sent: self.sent,
                received: r.count(),
                min_ns: r.min(),
                p50_ns: r.quantile(0.5),
                p90_ns: r.quantile(0.9),
                p99_ns: r.quantile(0.99),
                max_ns: r.max(),
                mean_ns: r.mean(),
            });
            self.rec.reset();
            self.sent = 0;
        }
    }

    /// A message was sent at `t_ns` (counted in the second that is current at that time).
    #[inline]
    pub fn sent_at(&mut self, t_ns: u64) {
        let s = self.second_of(t_ns);
        self.roll_to(s);
        self.sent += 1;
    }

    /// A latency sample received at `t_ns`.
    #[inline]
    pub fn received_at(&mut self, t_ns: u64, latency_ns: u64) {
        let s = self.second_of(t_ns);
        self.roll_to(s);
        self.rec.record(latency_ns);
    }

    pub fn finish(mut self) -> Vec<SeriesPoint> {
        self.flush();
        self.rows
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_series_restarted_before_its_first_sample_counts_from_there_and_only_then() {
        let mut s = SecondSeries::new(1_000);
        s.restart_at(900_000_000); // the first measured arrival, 0.9 s after a warm-up one
        s.received_at(900_000_000, 5);
        s.received_at(1_899_999_999, 5);
        s.received_at(1_900_000_000, 5);
        s.restart_at(5_000_000_000); // too late: a second is under way
        let rows = s.finish();
        assert_eq!(
            rows.iter().map(|r| (r.t_s, r.received)).collect::<Vec<_>>(),
            vec![(0, 2), (1, 1)]
        );
    }

    #[test]
    fn buckets_by_second() {
        let mut s = SecondSeries::new(1_000);
        s.sent_at(1_000);
        s.received_at(1_000 + 500_000_000, 10_000);
        s.received_at(1_000 + 1_500_000_000, 20_000);
        s.received_at(1_000 + 1_600_000_000, 40_000);
        let rows = s.finish();
        assert_eq!(rows.len(), 2);
        assert_eq!((rows[0].t_s, rows[0].sent, rows[0].received), (0, 1, 1));
        assert_eq!(
            (rows[1].t_s, rows[1].received, rows[1].max_ns),
            (1, 2, Some(40_000))
        );
    }

    #[test]
    fn reserved_rows_never_move() {
        // a ten-minute point: 602 rows up front, none of the 600 written reallocates
        let mut s = SecondSeries::new(0);
        s.reserve(602);
        let (capacity, at) = (s.rows.capacity(), s.rows.as_ptr());
        assert!(capacity >= 602);
        for second in 0..600u64 {
            s.received_at(second * 1_000_000_000, 10_000);
        }
        s.received_at(600 * 1_000_000_000, 10_000); // flushes second 599
        assert_eq!((s.rows.capacity(), s.rows.as_ptr()), (capacity, at));
        assert_eq!(s.finish().len(), 601);
    }
}
