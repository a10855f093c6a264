//! One direction's impairments, parsed from the canonical form mwperf passes on the command line.
//!
//! The user-facing grammar (`delay=10ms,loss=1%`, presets, `up:`/`down:`) lives in Python
//! (python/mwperf/emulation/links.py), which normalizes it to plain numbers in base units:
//! `delay_ns=10000000,loss=0.01,...`. Keeping this side unit-free means one parser with the
//! friendly errors, and this one only has to be strict.

/// How jitter is drawn around the constant delay.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Jitter {
    /// uniform in [-jitter, +jitter]
    Uniform,
    /// normal with standard deviation = jitter
    Normal,
    /// heavy-tailed and non-negative: Pareto(alpha 3) minus its minimum, mean = jitter
    Pareto,
}

/// Gilbert-Elliott loss: a two-state Markov chain, one step per packet.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GilbertElliott {
    /// P(good -> bad) per packet
    pub p: f64,
    /// P(bad -> good) per packet (mean burst length in the bad state = 1/r)
    pub r: f64,
    /// P(delivered | bad) (classic notation; 0 = every packet in the bad state is lost)
    pub h: f64,
    /// P(delivered | good) (1 = no loss in the good state)
    pub k: f64,
}

/// Everything applied to the packets of one direction.
#[derive(Clone, Debug, PartialEq)]
pub struct Impairments {
    pub delay_ns: u64,
    pub jitter_ns: u64,
    pub jitter_dist: Jitter,
    /// Bernoulli loss probability (applied after Gilbert-Elliott, when both are given)
    pub loss: f64,
    pub ge: Option<GilbertElliott>,
    /// probability that a packet gets one bit flipped
    pub corrupt: f64,
    /// probability that a packet is sent twice
    pub dup: f64,
    /// probability that a packet skips the delay (and so overtakes the packets queued before it)
    pub reorder: f64,
    /// bits per second on the wire; 0 = no rate limit
    pub rate_bps: f64,
    /// bits on the wire per payload byte (8; serial 8N1 = 10)
    pub bits_per_byte: f64,
    /// the rate limiter's FIFO holds at most this many bytes not yet sent (the packet being
    /// serialized included)
    pub queue_bytes: u64,
    /// packets longer than this are dropped; 0 = no limit
    pub mtu: u64,
    /// the link is down from `outage_at_ns` after start for `outage_ns` (0 = no outage)
    pub outage_at_ns: u64,
    pub outage_ns: u64,
    /// the outage repeats every `outage_every_ns` (from one start to the next; 0 = once)
    pub outage_every_ns: u64,
    /// link-layer frames: a packet is sent as ceil(len / (frame - overhead)) frames (0 = off)
    pub frame_bytes: u64,
    pub frame_overhead_bytes: u64,
    /// CSMA: a random extra wait, uniform in [0, backoff_ns], before every frame
    pub backoff_ns: u64,
}

impl Default for Impairments {
    fn default() -> Self {
        Impairments {
            delay_ns: 0,
            jitter_ns: 0,
            jitter_dist: Jitter::Uniform,
            loss: 0.0,
            ge: None,
            corrupt: 0.0,
            dup: 0.0,
            reorder: 0.0,
            rate_bps: 0.0,
            bits_per_byte: 8.0,
            queue_bytes: 64 * 1024,
            mtu: 0,
            outage_at_ns: 0,
            outage_ns: 0,
            outage_every_ns: 0,
            frame_bytes: 0,
            frame_overhead_bytes: 0,
            backoff_ns: 0,
        }
    }
}

impl Impairments {
    /// Whether the link is down (a scheduled outage, or one of its repeats) at `now_ns` after
    /// the link came up.
    pub fn in_outage(&self, now_ns: u64) -> bool {
        if self.outage_ns == 0 || now_ns < self.outage_at_ns {
            return false;
        }
        let since = now_ns - self.outage_at_ns;
        let into = match self.outage_every_ns {
            0 => since,
            every => since % every,
        };
        into < self.outage_ns
    }

    /// Parse `key=value,key=value` (an empty string = no impairment).
    pub fn parse(text: &str) -> Result<Self, String> {
        let mut imp = Impairments::default();
        for item in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let (key, value) = item
                .split_once('=')
                .ok_or_else(|| format!("'{item}' is not key=value"))?;
            let int = || {
                value
                    .parse::<u64>()
                    .map_err(|_| format!("{key}: '{value}' is not a whole number"))
            };
            let prob = || {
                let p: f64 = value
                    .parse()
                    .map_err(|_| format!("{key}: '{value}' is not a number"))?;
                if (0.0..=1.0).contains(&p) {
                    Ok(p)
                } else {
                    Err(format!("{key}: {p} is not in [0, 1]"))
                }
            };
            match key {
                "delay_ns" => imp.delay_ns = int()?,
                "jitter_ns" => imp.jitter_ns = int()?,
                "jitter_dist" => {
                    imp.jitter_dist = match value {
                        "uniform" => Jitter::Uniform,
                        "normal" => Jitter::Normal,
                        "pareto" => Jitter::Pareto,
                        _ => {
                            return Err(format!(
                                "jitter_dist: '{value}' (allowed: uniform, normal, pareto)"
                            ))
                        }
                    }
                }
                "loss" => imp.loss = prob()?,
                "ge" => {
                    let parts: Vec<f64> = value
                        .split(':')
                        .map(|p| p.parse::<f64>().ok().filter(|x| (0.0..=1.0).contains(x)))
                        .collect::<Option<_>>()
                        .ok_or_else(|| {
                            format!("ge: '{value}' is not p:r:h:k with each in [0, 1]")
                        })?;
                    if parts.len() != 4 {
                        return Err(format!("ge: '{value}' is not p:r:h:k"));
                    }
                    imp.ge = Some(GilbertElliott {
                        p: parts[0],
                        r: parts[1],
                        h: parts[2],
                        k: parts[3],
                    });
                }
                "corrupt" => imp.corrupt = prob()?,
                "dup" => imp.dup = prob()?,
                "reorder" => imp.reorder = prob()?,
                "rate_bps" => {
                    imp.rate_bps = value
                        .parse::<f64>()
                        .ok()
                        .filter(|r| r.is_finite() && *r >= 0.0)
                        .ok_or_else(|| format!("rate_bps: '{value}' is not a number >= 0"))?
                }
                "bits_per_byte" => {
                    imp.bits_per_byte = value
                        .parse::<f64>()
                        .ok()
                        .filter(|r| r.is_finite() && *r >= 1.0)
                        .ok_or_else(|| format!("bits_per_byte: '{value}' is not a number >= 1"))?
                }
                "queue_bytes" => imp.queue_bytes = int()?,
                "mtu" => imp.mtu = int()?,
                "outage_at_ns" => imp.outage_at_ns = int()?,
                "outage_ns" => imp.outage_ns = int()?,
                "outage_every_ns" => imp.outage_every_ns = int()?,
                "frame_bytes" => imp.frame_bytes = int()?,
                "frame_overhead_bytes" => imp.frame_overhead_bytes = int()?,
                "backoff_ns" => imp.backoff_ns = int()?,
                _ => return Err(format!("unknown key '{key}'")),
            }
        }
        if imp.outage_every_ns != 0 && imp.outage_every_ns <= imp.outage_ns {
            return Err(
                "outage_every_ns must be longer than outage_ns (the link must come back \
                        between two outages)"
                    .into(),
            );
        }
        if imp.frame_bytes != 0 && imp.frame_overhead_bytes >= imp.frame_bytes {
            return Err("frame_overhead_bytes must be smaller than frame_bytes".into());
        }
        Ok(imp)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeated_outages_follow_their_schedule() {
        // outage=5s+2s,every=10s: down [5, 7), [15, 17), [25, 27) ... (here in ns)
        let imp = Impairments::parse("outage_at_ns=5,outage_ns=2,outage_every_ns=10").unwrap();
        let down: Vec<u64> = (0..40).filter(|&t| imp.in_outage(t)).collect();
        assert_eq!(down, [5, 6, 15, 16, 25, 26, 35, 36]);
        let once = Impairments::parse("outage_at_ns=5,outage_ns=2").unwrap();
        let down: Vec<u64> = (0..40).filter(|&t| once.in_outage(t)).collect();
        assert_eq!(down, [5, 6]);
        assert!(!Impairments::default().in_outage(0));
        let err = Impairments::parse("outage_at_ns=5,outage_ns=2,outage_every_ns=2").unwrap_err();
        assert!(err.contains("outage_every_ns"), "{err}");
    }

    #[test]
    fn parses_every_key() {
        let imp = Impairments::parse(
            "delay_ns=10,jitter_ns=2,jitter_dist=normal,loss=0.1,ge=0.01:0.3:0:1,corrupt=0.001,\
             dup=0.02,reorder=0.05,rate_bps=115200,bits_per_byte=10,queue_bytes=4096,mtu=1500,\
             outage_at_ns=5,outage_ns=2,frame_bytes=127,frame_overhead_bytes=25,backoff_ns=3",
        )
        .unwrap();
        assert_eq!(imp.delay_ns, 10);
        assert_eq!(imp.jitter_dist, Jitter::Normal);
        assert_eq!(
            imp.ge,
            Some(GilbertElliott {
                p: 0.01,
                r: 0.3,
                h: 0.0,
                k: 1.0
            })
        );
        assert_eq!(
            (imp.rate_bps, imp.bits_per_byte, imp.queue_bytes),
            (115200.0, 10.0, 4096)
        );
        assert_eq!(
            (imp.frame_bytes, imp.frame_overhead_bytes, imp.backoff_ns),
            (127, 25, 3)
        );
        assert_eq!(Impairments::parse("").unwrap(), Impairments::default());
    }

    #[test]
    fn rejects_bad_input_naming_the_key() {
        for (text, needle) in [
            ("loss=2", "loss"),
            ("delay_ns=-1", "delay_ns"),
            ("nope=1", "nope"),
            ("delay_ns", "key=value"),
            ("ge=0.1:0.2", "ge"),
            ("jitter_dist=cauchy", "jitter_dist"),
            ("bits_per_byte=0", "bits_per_byte"),
            (
                "frame_bytes=10,frame_overhead_bytes=10",
                "frame_overhead_bytes",
            ),
        ] {
            let err = Impairments::parse(text).unwrap_err();
            assert!(err.contains(needle), "{text}: {err}");
        }
    }
}
