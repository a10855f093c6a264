//! Filtering probes and fitting offset(t) = offset0 + drift·(t − t0).
//!
//! Queueing only ever adds delay, and asymmetric queueing is what biases a probe's offset, so
//! the lowest-delay probes are the trustworthy ones: [`MinRttBins`] keeps, per time bin, the
//! probe with the smallest round trip (memory bounded by the run's length / bin width), and the
//! fit uses the bins' minima whose round trip is close to the overall minimum. The line is an
//! ordinary least-squares fit (offset against the client's time), its residual the largest
//! distance of a used probe from the line. The error bound holds at every used probe: a probe's
//! true offset is within half its own round trip of its measured one (the most any one-way
//! asymmetry can shift it), and the line within its distance from that probe; the bound is the
//! largest of those sums. (Half the *least* round trip + the residual, the bound before, was
//! short by up to half the spread of the used probes' round trips: 23.4 us off against a claimed
//! 19.6 us under load.)

use std::collections::BTreeMap;

use super::Probe;

/// Width of the time bins, ns: at 20 Hz interleaved probes, 5 probes per bin.
pub const BIN_NS: u64 = 250_000_000;

/// Bins' minima are used when their round trip is at most the overall minimum + 2 % + 100 µs
/// (a probe's offset error is at most half its round trip's excess over the true path delay).
fn usable(delay: i128, min_delay: i128) -> bool {
    delay <= min_delay + min_delay / 50 + 100_000
}

/// Per time bin (on the client's clock), the probe with the smallest round trip.
#[derive(Debug, Default, Clone)]
pub struct MinRttBins {
    bins: BTreeMap<u64, Probe>,
    pub answered: u64,
    pub implausible: u64,
}

impl MinRttBins {
    /// Add one answered probe (implausible ones are counted and dropped).
    pub fn add(&mut self, p: Probe) {
        if !p.plausible() {
            self.implausible += 1;
            return;
        }
        self.answered += 1;
        let bin = p.mid_ns() / BIN_NS;
        let keep = self
            .bins
            .get(&bin)
            .is_none_or(|q| p.delay_ns() < q.delay_ns());
        if keep {
            self.bins.insert(bin, p);
        }
    }

    /// The probes the fit uses: each bin's minimum, if close to the overall minimum round trip.
    pub fn used(&self) -> Vec<Probe> {
        let Some(min) = self.bins.values().map(Probe::delay_ns).min() else {
            return Vec::new();
        };
        self.bins
            .values()
            .filter(|p| usable(p.delay_ns(), min))
            .copied()
            .collect()
    }

    /// The fit over the used probes, with the offset reported at `t0_ns` (client clock): least
    /// squares, then once more without the probes farther from the line than 3 × the median
    /// distance (at least 2 µs), when that keeps at least half of them.
    pub fn fit(&self, t0_ns: u64) -> Option<Fit> {
        let used = self.used();
        let first = Fit::least_squares(&used, t0_ns)?;
        let dist = |p: &Probe| (p.offset_ns() as f64 - first.offset_at(p.mid_ns())).abs();
        let mut d: Vec<f64> = used.iter().map(dist).collect();
        d.sort_by(f64::total_cmp);
        let limit = (3.0 * d[d.len() / 2]).max(2_000.0);
        let kept: Vec<Probe> = used.iter().filter(|p| dist(p) <= limit).copied().collect();
        if kept.len() == used.len() || kept.len() * 2 < used.len() {
            return Some(first);
        }
        Fit::least_squares(&kept, t0_ns)
    }
}

/// offset(t) = offset0_ns + drift·(t − t0_ns), t on the client's clock; offset = server − client.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Fit {
    pub t0_ns: u64,
    /// Offset at t0 (server − client), ns.
    pub offset0_ns: f64,
    /// d(offset)/dt, dimensionless (× 1e6 = ppm).
    pub drift: f64,
    /// Probes the fit used.
    pub used: u64,
    /// Smallest round trip among the used probes, ns.
    pub min_rtt_ns: u64,
    /// Largest |probe offset − line| over the used probes, ns.
    pub residual_max_ns: f64,
    /// Time from the first to the last used probe, ns (a drift over a short span is weak).
    pub span_ns: u64,
    /// Largest |probe offset − line| + half that probe's round trip over the used probes, ns:
    /// how far the line can be from the true offset at any of them.
    pub bound_ns: f64,
}

impl Fit {
    /// Least squares over `probes` (offset against mid time). One probe, or probes all at one
    /// instant: drift 0. None without probes.
    pub fn least_squares(probes: &[Probe], t0_ns: u64) -> Option<Fit> {
        if probes.is_empty() {
            return None;
        }
        let n = probes.len() as f64;
        let y_ref = probes[0].offset_ns();
        // centred in i128 first, so a large offset (namespaces: thousands of seconds) keeps f64 precision
        let xs: Vec<f64> = probes
            .iter()
            .map(|p| (p.mid_ns() as i128 - t0_ns as i128) as f64)
            .collect();
        let ys: Vec<f64> = probes
            .iter()
            .map(|p| (p.offset_ns() - y_ref) as f64)
            .collect();
        let (mx, my) = (xs.iter().sum::<f64>() / n, ys.iter().sum::<f64>() / n);
        let sxx: f64 = xs.iter().map(|x| (x - mx) * (x - mx)).sum();
        let sxy: f64 = xs.iter().zip(&ys).map(|(x, y)| (x - mx) * (y - my)).sum();
        let drift = if sxx > 0.0 { sxy / sxx } else { 0.0 };
        let intercept = my - drift * mx; // at x = 0, i.e. t0, relative to y_ref
        let residual_max_ns = xs
            .iter()
            .zip(&ys)
            .map(|(x, y)| (y - (intercept + drift * x)).abs())
            .fold(0.0, f64::max);
        let bound_ns = xs
            .iter()
            .zip(&ys)
            .zip(probes)
            .map(|((x, y), p)| {
                (y - (intercept + drift * x)).abs() + p.delay_ns().max(0) as f64 / 2.0
            })
            .fold(0.0, f64::max);
        let min_rtt_ns = probes
            .iter()
            .map(|p| p.delay_ns())
            .min()
            .unwrap_or(0)
            .max(0) as u64;
        let first = probes.iter().map(Probe::mid_ns).min().unwrap_or(0);
        let last = probes.iter().map(Probe::mid_ns).max().unwrap_or(0);
        Some(Fit {
            t0_ns,
            offset0_ns: y_ref as f64 + intercept,
            drift,
            used: probes.len() as u64,
            min_rtt_ns,
            residual_max_ns,
            span_ns: last - first,
            bound_ns,
        })
    }

    /// Offset (server − client) at client time `t_ns`, ns.
    pub fn offset_at(&self, t_ns: u64) -> f64 {
        self.offset0_ns + self.drift * (t_ns as i128 - self.t0_ns as i128) as f64
    }

    /// A client timestamp moved onto the server's clock (rounded to the nanosecond).
    pub fn to_server(&self, t_ns: u64) -> i128 {
        t_ns as i128 + self.offset_at(t_ns).round() as i128
    }

    /// How far the line can be from the true offset at the probes it used, ns (`bound_ns`).
    pub fn error_bound_ns(&self) -> u64 {
        self.bound_ns.ceil() as u64
    }

    /// The same line, reported at another client time.
    pub fn at(&self, t0_ns: u64) -> Fit {
        Fit {
            t0_ns,
            offset0_ns: self.offset_at(t0_ns),
            ..*self
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A probe at client time `t1` against a server clock = client·(1 + drift) + offset, with
    /// one-way delays `up` (client → server) and `down`, and `turn` ns at the server.
    fn probe(t1: u64, offset: i64, drift: f64, up: u64, down: u64, turn: u64) -> Probe {
        let server = |c: u64| (c as f64 + c as f64 * drift).round() as i64 + offset;
        let t2 = server(t1 + up) as u64;
        let t3 = t2 + turn;
        // the client sees the answer `down` after the server sent it, on its own clock
        let sent_client = t1 + up + (turn as f64 / (1.0 + drift)).round() as u64;
        Probe {
            t1,
            t2,
            t3,
            t4: sent_client + down,
        }
    }

    #[test]
    fn offset_and_delay_of_one_probe() {
        let p = Probe {
            t1: 100,
            t2: 1_150,
            t3: 1_160,
            t4: 220,
        };
        assert_eq!(p.delay_ns(), 110);
        assert_eq!(p.offset_ns(), 995);
        assert!(p.plausible());
        assert!(!Probe {
            t1: 100,
            t2: 0,
            t3: 500,
            t4: 120
        }
        .plausible()); // turnaround longer than the round trip
    }

    #[test]
    fn exact_offset_without_drift() {
        let probes: Vec<Probe> = (0..10)
            .map(|i| {
                probe(
                    1_000_000_000 + i * 100_000_000,
                    7_000_000_000,
                    0.0,
                    50_000,
                    50_000,
                    3_000,
                )
            })
            .collect();
        let f = Fit::least_squares(&probes, 1_000_000_000).unwrap();
        assert!((f.offset0_ns - 7e9).abs() < 1.0, "{f:?}");
        assert!(f.drift.abs() < 1e-12);
        assert_eq!(f.min_rtt_ns, 100_000);
        assert!(f.residual_max_ns < 1.0);
        assert_eq!(f.error_bound_ns(), 50_000); // residual exactly 0
    }

    #[test]
    fn exact_offset_and_drift() {
        let drift = 40e-6;
        let t0 = 5_000_000_000u64;
        let probes: Vec<Probe> = (0..50)
            .map(|i| {
                probe(
                    t0 + i * 200_000_000,
                    3_000_000_000_000,
                    drift,
                    20_000,
                    20_000,
                    0,
                )
            })
            .collect();
        let f = Fit::least_squares(&probes, t0).unwrap();
        let truth = t0 as f64 * drift + 3e12; // server − client at t0
        assert!(
            (f.offset0_ns - truth).abs() < 2.0,
            "{} vs {truth}",
            f.offset0_ns
        );
        assert!((f.drift - drift).abs() < 1e-9, "{}", f.drift);
        assert!(f.residual_max_ns < 2.0);
        // moved to another reference time, the same line
        let g = f.at(t0 + 1_000_000_000);
        assert!((g.offset0_ns - (truth + 1e9 * drift)).abs() < 2.0);
    }

    #[test]
    fn asymmetric_link_is_inside_the_bound() {
        // 1 ms up, 9 ms down: every probe is 4 ms off, and the bound (5 ms) covers it
        let probes: Vec<Probe> = (0..20)
            .map(|i| {
                probe(
                    1_000_000_000 + i * 100_000_000,
                    123_456,
                    0.0,
                    1_000_000,
                    9_000_000,
                    1_000,
                )
            })
            .collect();
        let f = Fit::least_squares(&probes, 1_000_000_000).unwrap();
        assert!((f.offset0_ns - (123_456.0 - 4_000_000.0)).abs() < 1.0);
        assert!((f.offset0_ns - 123_456.0).abs() <= f.error_bound_ns() as f64);
    }

    #[test]
    fn the_bound_holds_at_a_used_probe_with_a_longer_round_trip() {
        // one clock (offset 0); the first probe 20 us each way, then a growing one-way queue
        // (its extra delay all on the way up, up to 100 us: every probe within 2 % + 100 us of
        // the least round trip, so the fit uses them all). The line follows the queue: at the
        // last probe it is ~50 us off, more than half the least round trip (20 us) + the
        // residual; the farthest probe's distance + half its own round trip (70 us) holds.
        let last = 1_000_000_000 + 19 * 100_000_000;
        let probes: Vec<Probe> = (0..20u64)
            .map(|i| {
                let queued = 100_000 * i / 19;
                probe(
                    1_000_000_000 + i * 100_000_000,
                    0,
                    0.0,
                    20_000 + queued,
                    20_000,
                    1_000,
                )
            })
            .collect();
        let f = Fit::least_squares(&probes, last).unwrap();
        let off = f.offset0_ns.abs(); // the truth is 0
        let before = f.min_rtt_ns as f64 / 2.0 + f.residual_max_ns;
        assert!(off > before, "the old bound held: {off} <= {before}");
        assert!(
            off <= f.error_bound_ns() as f64,
            "{off} > {}",
            f.error_bound_ns()
        );
    }

    #[test]
    fn bins_keep_the_lowest_delay_and_drop_queued_probes() {
        let mut bins = MinRttBins::default();
        let t0 = 10_000_000_000u64;
        for i in 0..40u64 {
            // every bin has one clean probe; the others queued 2 ms on the way up (biased by +1 ms)
            let queued = i % 5 != 0;
            let up = if queued { 2_050_000 } else { 50_000 };
            bins.add(probe(t0 + i * 50_000_000, 1_000_000, 0.0, up, 50_000, 0));
        }
        bins.add(Probe {
            t1: 5,
            t2: 1,
            t3: 0,
            t4: 6,
        }); // implausible
        assert_eq!((bins.answered, bins.implausible), (40, 1));
        let used = bins.used();
        assert_eq!(used.len(), 8); // 40 probes × 50 ms over 250 ms bins
        let f = bins.fit(t0).unwrap();
        assert!((f.offset0_ns - 1e6).abs() < 1.0, "{f:?}");
        assert_eq!(f.min_rtt_ns, 100_000);
    }

    #[test]
    fn an_outlier_bin_is_left_out_of_the_refit() {
        let mut bins = MinRttBins::default();
        for i in 0..20u64 {
            // one bin's best probe still queued 60 µs up (30 µs off): within the delay filter
            let up = if i == 7 { 110_000 } else { 50_000 };
            bins.add(probe(
                1_000_000_000 + i * 250_000_000,
                500_000,
                0.0,
                up,
                50_000,
                0,
            ));
        }
        let f = bins.fit(1_000_000_000).unwrap();
        assert_eq!(f.used, 19);
        assert!(
            (f.offset0_ns - 500_000.0).abs() < 1.0 && f.drift.abs() < 1e-12,
            "{f:?}"
        );
    }

    #[test]
    fn a_bin_far_above_the_minimum_is_not_used() {
        let mut bins = MinRttBins::default();
        bins.add(probe(1_000_000_000, 0, 0.0, 50_000, 50_000, 0));
        bins.add(probe(2_000_000_000, 0, 0.0, 5_000_000, 50_000, 0)); // only a queued probe in this bin
        assert_eq!(bins.used().len(), 1);
        assert!(MinRttBins::default().fit(0).is_none());
    }
}
