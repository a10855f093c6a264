//! What happened to the messages around one known outage window (resilience metrics).
//!
//! The control plane learns the window from the link emulator before the agents start (its
//! epoch on CLOCK_MONOTONIC, the clock every timestamp here uses) and passes it in; the agent
//! then keeps five numbers, not samples, so memory stays constant however long the run:
//! messages sent inside the window, how many of those were delivered anyway (retransmitted,
//! or queued in a sender), the last delivery before the window, and the first delivery at or
//! after its end of a message sent at or after its start (a message that was already past the
//! link before the outage and arrives late is no evidence that the session recovered).
//! Lost, recovery time and "session dead" are derived from these by the control plane.

use crate::result::OutageCounts;

/// Counts for the window `[start_ns, end_ns)` on CLOCK_MONOTONIC.
#[derive(Debug, Clone)]
pub struct OutageWatch {
    start_ns: u64,
    end_ns: u64,
    sent: u64,
    delivered: u64,
    last_before_ns: Option<u64>,
    first_after_ns: Option<u64>,
}

impl OutageWatch {
    pub fn new(start_ns: u64, end_ns: u64) -> Self {
        OutageWatch {
            start_ns,
            end_ns,
            sent: 0,
            delivered: 0,
            last_before_ns: None,
            first_after_ns: None,
        }
    }

    fn inside(&self, t_ns: u64) -> bool {
        (self.start_ns..self.end_ns).contains(&t_ns)
    }

    /// A measured message left the sender at `sent_ns`.
    #[inline]
    pub fn sent(&mut self, sent_ns: u64) {
        self.sent += u64::from(self.inside(sent_ns));
    }

    /// The first intact arrival of a measured message sent at `sent_ns`, received at `recv_ns`.
    #[inline]
    pub fn delivered(&mut self, sent_ns: u64, recv_ns: u64) {
        self.delivered += u64::from(self.inside(sent_ns));
        if recv_ns < self.start_ns {
            self.last_before_ns = Some(self.last_before_ns.map_or(recv_ns, |t| t.max(recv_ns)));
        } else if recv_ns >= self.end_ns && sent_ns >= self.start_ns {
            self.first_after_ns = Some(self.first_after_ns.map_or(recv_ns, |t| t.min(recv_ns)));
        }
    }

    /// The report section; `sender`/`receiver` = which halves this agent observed.
    pub fn counts(&self, sender: bool, receiver: bool) -> OutageCounts {
        OutageCounts {
            start_ns: self.start_ns,
            end_ns: self.end_ns,
            sent: sender.then_some(self.sent),
            delivered: receiver.then_some(self.delivered),
            last_before_ns: if receiver { self.last_before_ns } else { None },
            first_after_ns: if receiver { self.first_after_ns } else { None },
            series_origin_ns: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_sends_and_deliveries_around_the_window() {
        let mut w = OutageWatch::new(1_000, 2_000);
        for t in (0..3_000).step_by(100) {
            w.sent(t);
        }
        w.delivered(800, 900); // before
        w.delivered(900, 1_100); // sent before, arrives inside: not in the window's count
        w.delivered(1_500, 2_300); // sent inside, retransmitted: delivered, and the recovery
        w.delivered(950, 2_100); // in flight before the outage, arrives after: no recovery evidence
        w.delivered(2_100, 2_200);
        let c = w.counts(true, true);
        assert_eq!((c.sent, c.delivered), (Some(10), Some(1)));
        assert_eq!(
            (c.last_before_ns, c.first_after_ns),
            (Some(900), Some(2_200))
        );
        let pub_side = w.counts(true, false);
        assert_eq!(
            (pub_side.sent, pub_side.delivered, pub_side.first_after_ns),
            (Some(10), None, None)
        );
    }

    #[test]
    fn nothing_after_the_window_means_no_recovery() {
        let mut w = OutageWatch::new(1_000, 2_000);
        w.delivered(500, 600);
        let c = w.counts(false, true);
        assert_eq!(
            (c.sent, c.delivered, c.first_after_ns),
            (None, Some(0), None)
        );
    }
}
