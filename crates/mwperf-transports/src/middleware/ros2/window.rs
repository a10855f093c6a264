//! `--opt window=N`: a ros2 publisher that never has more than N messages its subscriptions have
//! not acknowledged. rmw_fastrtps_cpp gives a publisher no other back-pressure: its synchronous
//! write returns once the sample is in the writer's history, and a reliable writer blocks only
//! when that history is full — keep-last N replaces the oldest unacknowledged sample instead
//! (loss), keep-all blocks only at Fast DDS's default `max_samples` of 5000 (5000 unacknowledged
//! messages: 320 MB at 64 KiB). The window is what a ROS 2 application can do about it through
//! rcl: after N publishes, `rcl_publisher_wait_for_all_acked` before the next one.

use crate::spec::{Options, Reliability};
use crate::{Spec, TransportError};

/// Publishes since the subscriptions last acknowledged everything, against the window's size.
#[derive(Debug)]
pub struct Window {
    size: u32,
    unacked: u32,
}

impl Window {
    /// The window `--opt window` asks for (None without it); on a sub endpoint it is ignored
    /// (a graph node's endpoints share the options), on a best-effort publisher refused.
    pub fn from_opts(
        opts: &Options<'_>,
        spec: &Spec,
        publishes: bool,
    ) -> Result<Option<Window>, TransportError> {
        let Some(text) = opts.get("window") else {
            return Ok(None);
        };
        let size = parse(text)?;
        if !publishes {
            return Ok(None);
        }
        if spec.qos.reliability != Reliability::Reliable {
            return Err(unsupported(format!(
                "--opt window={text} with --reliability best-effort (a best-effort subscription acknowledges nothing: use --reliability reliable)"
            )));
        }
        Ok(Some(Window { size, unacked: 0 }))
    }

    /// True when the next publish must first wait for the acknowledgements.
    pub fn full(&self) -> bool {
        self.unacked >= self.size
    }

    /// Every matched subscription acknowledged everything published.
    pub fn acked(&mut self) {
        self.unacked = 0;
    }

    /// One more message published.
    pub fn published(&mut self) {
        self.unacked = self.unacked.saturating_add(1);
    }

    pub fn size(&self) -> u32 {
        self.size
    }
}

/// `N`: a whole number of messages, at least 1.
pub fn parse(text: &str) -> Result<u32, TransportError> {
    match text.parse::<u32>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(unsupported(format!(
            "--opt window={text} (allowed: a whole number of messages >= 1, e.g. window=64)"
        ))),
    }
}

fn unsupported(what: String) -> TransportError {
    TransportError::Unsupported {
        transport: super::T,
        what,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_window_fills_after_n_publishes_and_empties_when_acked() {
        let mut w = Window {
            size: 3,
            unacked: 0,
        };
        for _ in 0..3 {
            assert!(!w.full());
            w.published();
        }
        assert!(w.full());
        w.acked();
        assert!(!w.full());
    }

    #[test]
    fn only_whole_numbers_from_one_are_windows() {
        assert_eq!(parse("64").unwrap(), 64);
        for bad in ["0", "-1", "1.5", "many", ""] {
            let e = parse(bad).unwrap_err().to_string();
            assert!(
                e.contains(&format!("--opt window={bad} (allowed: a whole number")),
                "{e}"
            );
        }
    }
}
