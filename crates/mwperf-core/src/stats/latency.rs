//! Latency distribution: an HDR histogram for percentiles plus exact min, max, mean and
//! standard deviation.
//!
//! Method: percentiles from `hdrhistogram` with 3 significant digits over 100 ns .. 100 s
//! (values outside are clamped into that range for the histogram only; min/max stay exact).
//! Mean and population standard deviation use Welford's online algorithm in f64, which neither
//! overflows nor cancels catastrophically (performance_test's Σx² − (Σx)²/n in int64 does both).

use hdrhistogram::Histogram;

use crate::result::Stats;

pub const HIST_LOW_NS: u64 = 100;
pub const HIST_HIGH_NS: u64 = 100_000_000_000;

pub struct LatencyRecorder {
    hist: Histogram<u64>,
    count: u64,
    min: u64,
    max: u64,
    mean: f64,
    m2: f64,
}

impl Default for LatencyRecorder {
    fn default() -> Self {
        Self::with_precision(3)
    }
}

impl LatencyRecorder {
    /// A recorder with `sigfig` significant digits in its histogram (3 for results, 2 for series).
    pub fn with_precision(sigfig: u8) -> Self {
        LatencyRecorder {
            hist: Histogram::new_with_bounds(HIST_LOW_NS, HIST_HIGH_NS, sigfig)
                .expect("valid histogram bounds"),
            count: 0,
            min: u64::MAX,
            max: 0,
            mean: 0.0,
            m2: 0.0,
        }
    }

    #[inline]
    pub fn record(&mut self, ns: u64) {
        self.hist
            .saturating_record(ns.clamp(HIST_LOW_NS, HIST_HIGH_NS));
        self.count += 1;
        self.min = self.min.min(ns);
        self.max = self.max.max(ns);
        let x = ns as f64;
        let d = x - self.mean;
        self.mean += d / self.count as f64;
        self.m2 += d * (x - self.mean);
    }

    pub fn count(&self) -> u64 {
        self.count
    }

    pub fn reset(&mut self) {
        self.hist.reset();
        self.count = 0;
        self.min = u64::MAX;
        self.max = 0;
        self.mean = 0.0;
        self.m2 = 0.0;
    }

    /// Value at quantile `q` (0..=1), from the histogram; None when empty.
    pub fn quantile(&self, q: f64) -> Option<u64> {
        // Never report a percentile outside the exact extremes (histogram buckets round up).
        (self.count > 0).then(|| self.hist.value_at_quantile(q).clamp(self.min, self.max))
    }

    pub fn min(&self) -> Option<u64> {
        (self.count > 0).then_some(self.min)
    }

    pub fn max(&self) -> Option<u64> {
        (self.count > 0).then_some(self.max)
    }

    pub fn mean(&self) -> Option<f64> {
        (self.count > 0).then_some(self.mean)
    }

    pub fn stddev(&self) -> Option<f64> {
        (self.count > 0).then(|| (self.m2 / self.count as f64).sqrt())
    }

    /// Count of recorded values strictly above `threshold_ns` (exact up to histogram resolution).
    pub fn count_above(&self, threshold_ns: u64) -> u64 {
        if self.count == 0 {
            return 0;
        }
        let at_or_below = self.hist.count_between(0, threshold_ns.min(HIST_HIGH_NS));
        self.count - at_or_below.min(self.count)
    }

    /// Summary for the result document, with the non-empty histogram buckets.
    pub fn summary(&self) -> Stats {
        let histogram = if self.count > 0 {
            self.hist
                .iter_recorded()
                .map(|v| {
                    [
                        self.hist.highest_equivalent(v.value_iterated_to()),
                        v.count_at_value(),
                    ]
                })
                .collect()
        } else {
            Vec::new()
        };
        Stats {
            count: self.count,
            min_ns: self.min(),
            mean_ns: self.mean(),
            p50_ns: self.quantile(0.50),
            p90_ns: self.quantile(0.90),
            p99_ns: self.quantile(0.99),
            p999_ns: self.quantile(0.999),
            p9999_ns: self.quantile(0.9999),
            max_ns: self.max(),
            stddev_ns: self.stddev(),
            range_ns: (self.count > 0).then(|| self.max - self.min),
            histogram,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_inputs_known_percentiles() {
        let mut r = LatencyRecorder::default();
        for v in 1..=10_000u64 {
            r.record(v * 1_000); // 1 µs .. 10 ms uniformly
        }
        let s = r.summary();
        assert_eq!(s.count, 10_000);
        assert_eq!(s.min_ns, Some(1_000));
        assert_eq!(s.max_ns, Some(10_000_000));
        let within = |got: Option<u64>, want: u64| {
            let g = got.unwrap() as f64;
            (g - want as f64).abs() <= want as f64 * 1e-3
        };
        assert!(within(s.p50_ns, 5_000_000), "{:?}", s.p50_ns);
        assert!(within(s.p90_ns, 9_000_000), "{:?}", s.p90_ns);
        assert!(within(s.p99_ns, 9_900_000), "{:?}", s.p99_ns);
        assert!(within(s.p999_ns, 9_990_000), "{:?}", s.p999_ns);
        assert!((s.mean_ns.unwrap() - 5_000_500.0).abs() < 1e-3);
        // population sd of 1..n scaled: sqrt((n^2-1)/12) * 1000
        let sd = ((10_000f64.powi(2) - 1.0) / 12.0).sqrt() * 1_000.0;
        assert!((s.stddev_ns.unwrap() - sd).abs() < 1e-3 * sd);
        assert_eq!(s.range_ns, Some(9_999_000));
        assert_eq!(s.histogram.iter().map(|b| b[1]).sum::<u64>(), 10_000);
    }

    #[test]
    fn constant_input_has_zero_spread_and_exact_percentiles() {
        let mut r = LatencyRecorder::default();
        for _ in 0..1000 {
            r.record(5_700);
        }
        let s = r.summary();
        assert_eq!(
            (s.p50_ns, s.p9999_ns, s.max_ns),
            (Some(5_700), Some(5_700), Some(5_700))
        );
        assert_eq!(s.stddev_ns, Some(0.0));
    }

    #[test]
    fn huge_values_do_not_overflow_and_tiny_ones_stay_exact_at_the_ends() {
        let mut r = LatencyRecorder::default();
        r.record(3);
        r.record(500_000_000_000); // beyond the histogram's 100 s: clamped there, max exact
        let s = r.summary();
        assert_eq!(s.min_ns, Some(3));
        assert_eq!(s.max_ns, Some(500_000_000_000));
        assert!(s.stddev_ns.unwrap().is_finite());
    }

    #[test]
    fn empty_summary_is_all_null() {
        let s = LatencyRecorder::default().summary();
        assert_eq!(s.count, 0);
        assert!(s.p50_ns.is_none() && s.mean_ns.is_none() && s.histogram.is_empty());
    }

    #[test]
    fn count_above_threshold() {
        let mut r = LatencyRecorder::default();
        for v in [100_000u64, 900_000, 1_100_000, 5_000_000] {
            r.record(v);
        }
        assert_eq!(r.count_above(1_000_000), 2);
    }
}
