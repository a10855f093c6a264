//! The impairment model of one direction: given a packet and its arrival time, when (and whether,
//! and how often, and how damaged) it leaves.
//!
//! Pure and clock-free (times are nanoseconds since the link came up, passed in), so the models
//! are unit-tested with a seeded generator and no devices. The order of the stages follows the
//! path of a packet: link down? -> too long? -> lost? -> room in the queue? -> serialized on the
//! wire (rate, framing, CSMA back-off) -> propagation delay + jitter -> reordered? duplicated?
//! corrupted?

use std::sync::Arc;

use crate::medium::Medium;
use crate::rng::Rng;
use crate::spec::{Impairments, Jitter};

/// Why a packet was not forwarded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Drop {
    /// the scheduled outage
    Outage,
    /// longer than the MTU
    Mtu,
    /// random loss (Bernoulli or Gilbert-Elliott)
    Loss,
    /// the rate limiter's FIFO was full
    Queue,
}

/// A packet that will be forwarded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Admitted {
    /// when to write it to the other side (ns since the link came up)
    pub at_ns: u64,
    /// 2 when duplicated
    pub copies: u8,
    pub reordered: bool,
    pub corrupted: bool,
}

/// One direction's state.
#[derive(Debug)]
pub struct Model {
    imp: Impairments,
    rng: Rng,
    ge_bad: bool,
    /// when the serializer finishes the last admitted packet
    free_at_ns: u64,
    /// the latest in-order delivery time (jitter never reorders unless asked)
    last_at_ns: u64,
    /// a medium shared with other directions/emulators, and this model's time 0 on
    /// CLOCK_MONOTONIC (the medium's timeline is absolute)
    medium: Option<(Arc<Medium>, u64)>,
}

impl Model {
    pub fn new(imp: Impairments, seed: u64) -> Self {
        Model {
            imp,
            rng: Rng::new(seed),
            ge_bad: false,
            free_at_ns: 0,
            last_at_ns: 0,
            medium: None,
        }
    }

    /// Serialize on `medium` instead of a wire of its own; `epoch_ns`: CLOCK_MONOTONIC at this
    /// model's time 0.
    pub fn with_medium(mut self, medium: Arc<Medium>, epoch_ns: u64) -> Self {
        self.medium = Some((medium, epoch_ns));
        self
    }

    /// Decide the fate of `packet` arriving at `now_ns`; a corrupted packet is changed in place.
    pub fn admit(&mut self, now_ns: u64, packet: &mut [u8]) -> Result<Admitted, Drop> {
        let imp = &self.imp;
        if imp.in_outage(now_ns) {
            return Err(Drop::Outage);
        }
        if imp.mtu > 0 && packet.len() as u64 > imp.mtu {
            return Err(Drop::Mtu);
        }
        if self.lost() {
            return Err(Drop::Loss);
        }
        let tx_end = self.serialize(now_ns, packet.len() as u64)?;
        let reordered = self.rng.chance(self.imp.reorder);
        let at_ns = if reordered {
            tx_end
        } else {
            let at = tx_end
                .saturating_add_signed(self.delay_ns())
                .max(tx_end)
                .max(self.last_at_ns);
            self.last_at_ns = at;
            at
        };
        let copies = if self.rng.chance(self.imp.dup) { 2 } else { 1 };
        let corrupted = self.rng.chance(self.imp.corrupt) && flip_bit(&mut self.rng, packet);
        Ok(Admitted {
            at_ns,
            copies,
            reordered,
            corrupted,
        })
    }

    /// One step of the Gilbert-Elliott chain (if any), then the Bernoulli loss.
    fn lost(&mut self) -> bool {
        if let Some(ge) = self.imp.ge {
            self.ge_bad = if self.ge_bad {
                !self.rng.chance(ge.r)
            } else {
                self.rng.chance(ge.p)
            };
            let delivered = if self.ge_bad { ge.h } else { ge.k };
            if !self.rng.chance(delivered) {
                return true;
            }
        }
        self.rng.chance(self.imp.loss)
    }

    /// When the packet has left the (rate-limited) wire, or `Drop::Queue` when the FIFO is full.
    /// On a shared medium (`with_medium`) the wire's timeline is the medium's, shared with every
    /// other direction and emulator that uses it.
    fn serialize(&mut self, now_ns: u64, len: u64) -> Result<u64, Drop> {
        let imp = &self.imp;
        let frames = if imp.frame_bytes > 0 {
            len.div_ceil(imp.frame_bytes - imp.frame_overhead_bytes)
                .max(1)
        } else {
            1
        };
        // Times and sizes saturate: an extreme spec (a rate of a few bits per hour, a huge
        // back-off) means "never", not a wrapped-around time in the past.
        let wire_bytes = len.saturating_add(if imp.frame_bytes > 0 {
            frames.saturating_mul(imp.frame_overhead_bytes)
        } else {
            0
        });
        let ns_per_byte = if imp.rate_bps > 0.0 {
            imp.bits_per_byte * 1e9 / imp.rate_bps
        } else {
            0.0
        };
        // The longest wait before this packet's transmission that its queue can hold.
        let max_wait_ns = (ns_per_byte > 0.0)
            .then(|| ((imp.queue_bytes as f64 - wire_bytes as f64).max(0.0) * ns_per_byte) as u64);
        let mut busy_ns = (wire_bytes as f64 * ns_per_byte).round() as u64;
        if imp.backoff_ns > 0 {
            for _ in 0..frames {
                busy_ns = busy_ns.saturating_add(self.rng.below(imp.backoff_ns.saturating_add(1)));
            }
        }
        if let Some((medium, epoch_ns)) = self.medium.as_ref().filter(|_| busy_ns > 0) {
            let end = medium
                .reserve(epoch_ns.saturating_add(now_ns), busy_ns, max_wait_ns)
                .ok_or(Drop::Queue)?;
            return Ok(end.saturating_sub(*epoch_ns));
        }
        let start = now_ns.max(self.free_at_ns);
        if max_wait_ns.is_some_and(|most| start - now_ns > most) {
            return Err(Drop::Queue);
        }
        self.free_at_ns = start.saturating_add(busy_ns);
        Ok(self.free_at_ns)
    }

    /// Constant delay plus one jitter sample (may be negative; the caller clamps at 0).
    fn delay_ns(&mut self) -> i64 {
        let (delay, jitter) = (self.imp.delay_ns as f64, self.imp.jitter_ns as f64);
        let extra = if jitter == 0.0 {
            0.0
        } else {
            match self.imp.jitter_dist {
                Jitter::Uniform => (2.0 * self.rng.unit() - 1.0) * jitter,
                Jitter::Normal => self.rng.normal() * jitter,
                // Pareto with alpha 3 and minimum 2*jitter has mean 3*jitter: minus the minimum,
                // a non-negative heavy tail with mean = jitter
                Jitter::Pareto => 2.0 * jitter * ((1.0 - self.rng.unit()).powf(-1.0 / 3.0) - 1.0),
            }
        };
        (delay + extra)
            .round()
            .clamp(i64::MIN as f64, i64::MAX as f64) as i64
    }
}

/// Flip one random bit after the IPv4/IPv6 header (so the packet still reaches the transport
/// layer, whose checksum then rejects it), or anywhere in a packet too short for that. False for
/// an empty packet.
fn flip_bit(rng: &mut Rng, packet: &mut [u8]) -> bool {
    if packet.is_empty() {
        return false;
    }
    let header = match packet[0] >> 4 {
        4 => usize::from(packet[0] & 0x0F) * 4,
        6 => 40,
        _ => 0,
    };
    let from = if header < packet.len() { header } else { 0 };
    let bit = rng.below(((packet.len() - from) * 8) as u64) as usize;
    packet[from + bit / 8] ^= 1 << (bit % 8);
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::GilbertElliott;

    fn model(text: &str) -> Model {
        Model::new(Impairments::parse(text).unwrap(), 42)
    }

    fn ipv4(len: usize) -> Vec<u8> {
        let mut p = vec![0u8; len];
        p[0] = 0x45;
        p
    }

    /// Found by fuzzing (fuzz/targets/linkem.rs): a rate so low that the wire's busy time
    /// passes u64 nanoseconds overflowed its clock (a panic in a checked build; otherwise a
    /// later packet left the wire before an earlier one). Times saturate: due "never".
    #[test]
    fn extreme_rates_and_backoffs_saturate_instead_of_wrapping() {
        for spec in [
            // 100 bytes take ~1.1e19 ns: the second packet's end passed 2^64
            "rate_bps=115200,bits_per_byte=12700000000000,reorder=1",
            "rate_bps=115200,bits_per_byte=11111111111111111111111111111111111111,reorder=1",
            "rate_bps=1,backoff_ns=18446744073709551615,frame_bytes=2,frame_overhead_bytes=1,reorder=1",
        ] {
            let mut m = model(spec);
            let mut last = 0;
            for now in [0, 1_000, 64_000_000] {
                if let Ok(a) = m.admit(now, &mut ipv4(100)) {
                    assert!(a.at_ns >= now.max(last), "{spec}: due at {} before {last}", a.at_ns);
                    last = a.at_ns;
                }
            }
        }
    }

    #[test]
    fn no_impairment_forwards_at_once() {
        let mut m = model("");
        for t in [0, 5, 5, 1000] {
            assert_eq!(
                m.admit(t, &mut ipv4(100)),
                Ok(Admitted {
                    at_ns: t,
                    copies: 1,
                    reordered: false,
                    corrupted: false
                })
            );
        }
    }

    #[test]
    fn bernoulli_loss_rate_within_binomial_bounds() {
        for p in [0.01, 0.1, 0.6] {
            let mut m = model(&format!("loss={p}"));
            let n = 100_000;
            let lost = (0..n)
                .filter(|&i| m.admit(i, &mut ipv4(64)) == Err(Drop::Loss))
                .count() as f64;
            let sigma = (n as f64 * p * (1.0 - p)).sqrt();
            assert!(
                (lost - n as f64 * p).abs() < 4.0 * sigma,
                "p={p}: lost {lost}"
            );
        }
    }

    #[test]
    fn gilbert_elliott_rate_and_burst_length() {
        let (p, r) = (0.05, 0.25);
        let mut m = Model::new(
            Impairments {
                ge: Some(GilbertElliott {
                    p,
                    r,
                    h: 0.0,
                    k: 1.0,
                }),
                ..Default::default()
            },
            9,
        );
        let n = 200_000;
        let (mut lost, mut bursts, mut in_burst) = (0u64, 0u64, false);
        for i in 0..n {
            let l = m.admit(i, &mut ipv4(64)) == Err(Drop::Loss);
            lost += l as u64;
            bursts += (l && !in_burst) as u64;
            in_burst = l;
        }
        let rate = lost as f64 / n as f64;
        let mean_burst = lost as f64 / bursts as f64;
        assert!((rate - p / (p + r)).abs() < 0.01, "loss rate {rate}");
        assert!(
            (mean_burst - 1.0 / r).abs() < 0.15,
            "mean burst {mean_burst}"
        );
    }

    #[test]
    fn gilbert_elliott_partial_loss_in_each_state() {
        // h = 0.5: half of the bad state's packets get through; k = 0.9: 10 % lost when good
        let (p, r, h, k) = (0.1, 0.1, 0.5, 0.9);
        let mut m = Model::new(
            Impairments {
                ge: Some(GilbertElliott { p, r, h, k }),
                ..Default::default()
            },
            5,
        );
        let n = 200_000;
        let lost = (0..n)
            .filter(|&i| m.admit(i, &mut ipv4(64)) == Err(Drop::Loss))
            .count() as f64;
        let expected = 0.5 * (1.0 - h) + 0.5 * (1.0 - k);
        assert!(
            (lost / n as f64 - expected).abs() < 0.01,
            "{}",
            lost / n as f64
        );
    }

    #[test]
    fn rate_limit_serializes_with_8n1_framing() {
        // 115200 bit/s at 10 bits per byte = 11520 bytes/s: a 100-byte packet takes 86.806 ms
        let mut m = model("rate_bps=115200,bits_per_byte=10,queue_bytes=100000");
        let per = 100.0 * 10.0 * 1e9 / 115200.0;
        for i in 1..=20u64 {
            let a = m.admit(0, &mut ipv4(100)).unwrap();
            assert!(
                (a.at_ns as f64 - i as f64 * per).abs() <= 1.0 * i as f64,
                "{i}: {}",
                a.at_ns
            );
        }
        // an idle link starts at once
        let later = 10_000_000_000;
        assert_eq!(
            m.admit(later, &mut ipv4(100)).unwrap().at_ns,
            later + per.round() as u64
        );
    }

    #[test]
    fn models_on_one_medium_share_its_rate() {
        let path = std::env::temp_dir().join(format!("mwperf-model-medium-{}", std::process::id()));
        let _ = std::fs::remove_file(&path);
        let medium = Arc::new(Medium::open(path.to_str().unwrap()).unwrap());
        let spec = "rate_bps=8000000,queue_bytes=250"; // 1 µs per byte: 100 µs per packet
                                                       // two emulators whose time 0 differ by 1 µs, and one that has a wire of its own
        let mut a = model(spec).with_medium(medium.clone(), 1_000);
        let mut b = model(spec).with_medium(medium.clone(), 2_000);
        let mut own = model(spec);
        assert_eq!(a.admit(0, &mut ipv4(100)).unwrap().at_ns, 100_000);
        assert_eq!(b.admit(0, &mut ipv4(100)).unwrap().at_ns, 199_000); // after a's, on b's clock
        assert_eq!(own.admit(0, &mut ipv4(100)).unwrap().at_ns, 100_000); // not on the medium
                                                                          // the queue counts the medium's backlog: 200 µs ahead + 100 bytes > 250 bytes
        assert_eq!(a.admit(0, &mut ipv4(100)), Err(Drop::Queue));
        // a direction without a rate never waits for the medium
        let mut clean = model("").with_medium(medium, 1_000);
        assert_eq!(clean.admit(0, &mut ipv4(100)).unwrap().at_ns, 0);
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn rate_limit_fifo_drops_beyond_its_byte_limit() {
        let mut m = model("rate_bps=8000,queue_bytes=1000"); // 1 ms per byte
        let fates: Vec<bool> = (0..20)
            .map(|_| m.admit(0, &mut ipv4(100)).is_ok())
            .collect();
        // the queue counts every byte not yet sent, the packet on the wire included: 10 fit
        assert_eq!(fates, [vec![true; 10], vec![false; 10]].concat());
        assert_eq!(m.admit(0, &mut ipv4(100)), Err(Drop::Queue));
        // once the wire drained, packets are accepted again
        assert!(m.admit(2_000_000_000, &mut ipv4(100)).is_ok());
    }

    #[test]
    fn frames_add_overhead_and_backoff() {
        // 200 bytes in 127-byte frames with 25 bytes of overhead: 2 frames, 250 wire bytes
        let mut m =
            model("rate_bps=250000,frame_bytes=127,frame_overhead_bytes=25,queue_bytes=100000");
        assert_eq!(m.admit(0, &mut ipv4(200)).unwrap().at_ns, 8_000_000);
        let mut m =
            model("rate_bps=250000,frame_bytes=127,frame_overhead_bytes=25,backoff_ns=1000000");
        let mut extra = 0;
        for i in 0..1000u64 {
            let t = i * 1_000_000_000;
            extra += m.admit(t, &mut ipv4(200)).unwrap().at_ns - t - 8_000_000;
        }
        let mean = extra as f64 / 1000.0; // two frames, each uniform in [0, 1 ms]: mean 1 ms
        assert!((mean - 1_000_000.0).abs() < 60_000.0, "{mean}");
    }

    #[test]
    fn delay_and_jitter_without_reordering() {
        let mut m = model("delay_ns=10000000");
        assert_eq!(m.admit(7, &mut ipv4(60)).unwrap().at_ns, 10_000_007);
        for dist in ["uniform", "normal", "pareto"] {
            let mut m = model(&format!(
                "delay_ns=10000000,jitter_ns=1000000,jitter_dist={dist}"
            ));
            let mut last = 0;
            let mut sum = 0.0;
            let n = 20_000u64;
            for i in 0..n {
                let t = i * 100_000_000; // far apart: the in-order clamp never applies
                let at = m.admit(t, &mut ipv4(60)).unwrap().at_ns;
                assert!(at >= last);
                last = at;
                let d = (at - t) as f64;
                if dist == "uniform" {
                    assert!((9_000_000.0..=11_000_000.0).contains(&d));
                }
                if dist == "pareto" {
                    assert!(d >= 10_000_000.0);
                }
                sum += d;
            }
            let mean = sum / n as f64;
            let expected = if dist == "pareto" {
                11_000_000.0
            } else {
                10_000_000.0
            };
            assert!((mean - expected).abs() < 60_000.0, "{dist}: {mean}");
        }
        // packets close together keep their order even with jitter
        let mut m = model("delay_ns=10000000,jitter_ns=5000000");
        let ats: Vec<u64> = (0..1000)
            .map(|i| m.admit(i * 1000, &mut ipv4(60)).unwrap().at_ns)
            .collect();
        assert!(ats.windows(2).all(|w| w[0] <= w[1]));
    }

    #[test]
    fn reordered_packets_overtake() {
        let mut m = model("delay_ns=10000000,reorder=0.2");
        let admitted: Vec<Admitted> = (0..10_000)
            .map(|i| m.admit(i * 1000, &mut ipv4(60)).unwrap())
            .collect();
        let reordered = admitted.iter().filter(|a| a.reordered).count();
        assert!((1800..2200).contains(&reordered), "{reordered}");
        for (i, a) in admitted.iter().enumerate() {
            let arrival = i as u64 * 1000;
            assert!(if a.reordered {
                a.at_ns == arrival
            } else {
                a.at_ns >= arrival + 10_000_000
            });
        }
        assert!(admitted.windows(2).any(|w| w[1].at_ns < w[0].at_ns));
    }

    #[test]
    fn duplication_outage_and_mtu() {
        let mut m = model("dup=0.5");
        let dups = (0..10_000)
            .filter(|&i| m.admit(i, &mut ipv4(60)).unwrap().copies == 2)
            .count();
        assert!((4800..5200).contains(&dups), "{dups}");
        let mut m = model("outage_at_ns=1000,outage_ns=500");
        assert!(m.admit(999, &mut ipv4(60)).is_ok());
        assert_eq!(m.admit(1000, &mut ipv4(60)), Err(Drop::Outage));
        assert_eq!(m.admit(1499, &mut ipv4(60)), Err(Drop::Outage));
        assert!(m.admit(1500, &mut ipv4(60)).is_ok());
        let mut m = model("mtu=1500");
        assert!(m.admit(0, &mut ipv4(1500)).is_ok());
        assert_eq!(m.admit(0, &mut ipv4(1501)), Err(Drop::Mtu));
    }

    #[test]
    fn corruption_flips_one_bit_after_the_ip_header() {
        let mut m = model("corrupt=1");
        for _ in 0..1000 {
            let original = ipv4(64);
            let mut p = original.clone();
            assert!(m.admit(0, &mut p).unwrap().corrupted);
            let flipped: u32 = p
                .iter()
                .zip(&original)
                .map(|(a, b)| (a ^ b).count_ones())
                .sum();
            assert_eq!(flipped, 1);
            assert_eq!(p[..20], original[..20]);
        }
    }

    #[test]
    fn malformed_packets_never_panic() {
        let mut m = model(
            "corrupt=1,dup=0.5,mtu=1500,frame_bytes=127,frame_overhead_bytes=25,rate_bps=1000",
        );
        for p in [
            vec![],
            vec![0x45],
            vec![0x4F; 3],
            vec![0x60; 10],
            vec![0xFF; 2],
        ] {
            let mut p = p;
            let _ = m.admit(0, &mut p);
        }
    }
}
