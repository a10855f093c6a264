//! RFC 3550 §6.4.1 interarrival jitter: J(i) = J(i-1) + (|D(i-1,i)| - J(i-1)) / 16, where D is the
//! difference of consecutive transit times. Fed with latencies in arrival order (for round trips
//! the RTT plays the role of the transit time).

#[derive(Default)]
pub struct Rfc3550Jitter {
    last: Option<u64>,
    j: f64,
}

impl Rfc3550Jitter {
    #[inline]
    pub fn record(&mut self, transit_ns: u64) {
        if let Some(prev) = self.last {
            let d = (transit_ns as f64 - prev as f64).abs();
            self.j += (d - self.j) / 16.0;
        }
        self.last = Some(transit_ns);
    }

    /// None until two values were seen.
    pub fn value(&self) -> Option<f64> {
        self.last.map(|_| self.j)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constant_transit_has_no_jitter_and_alternating_converges() {
        let mut j = Rfc3550Jitter::default();
        for _ in 0..100 {
            j.record(1000);
        }
        assert_eq!(j.value(), Some(0.0));
        let mut j = Rfc3550Jitter::default();
        for i in 0..2000 {
            j.record(if i % 2 == 0 { 1000 } else { 3000 });
        }
        assert!((j.value().unwrap() - 2000.0).abs() < 1.0);
    }

    #[test]
    fn first_step_is_one_sixteenth() {
        let mut j = Rfc3550Jitter::default();
        j.record(0);
        j.record(1600);
        assert_eq!(j.value(), Some(100.0));
    }
}
