//! A publisher's endpoints opened again when the connection or broker behind one went away (a
//! node at the other end of a tcp or uds connection, or the broker, killed and started again by
//! `--restart`): spec `reopen`, as ping's and pong's `--reopen`. A failing send marks its
//! endpoint down; while it is down the publisher's messages go nowhere (counted sent, and lost
//! at the subscriber); before each send a down endpoint is opened again, at most every
//! [`EVERY_NS`], and `REOPENED <ns>` is printed on stdout once it is. A subscription's
//! endpoint whose receive fails so is opened again the same way ([`ReopenSub`]).

use mwperf_core::clock::now_ns;
use mwperf_transports::{open, Endpoint, Kind, Side, Spec, TransportError};

/// How often a down endpoint is tried to be opened again.
pub const EVERY_NS: u64 = 10_000_000;

pub struct Reopen {
    kind: Kind,
    side: Side,
    /// each endpoint's spec, as it was first opened
    specs: Vec<Spec>,
    down: Vec<bool>,
    last_try_ns: u64,
}

impl Reopen {
    pub fn new(kind: Kind, side: Side, specs: Vec<Spec>) -> Self {
        let down = vec![false; specs.len()];
        Reopen {
            kind,
            side,
            specs,
            down,
            last_try_ns: 0,
        }
    }

    /// Endpoint `i`'s send failed with `e`: down, unless nothing listens there (a subscriber
    /// not up yet: the next send tries again by itself); true when it went down.
    pub fn failed(&mut self, i: usize, e: &TransportError) -> bool {
        if matches!(e, TransportError::Unreachable { .. }) || i >= self.down.len() {
            return false;
        }
        self.down[i] = true;
        true
    }

    /// Whether endpoint `i` is down (its messages go nowhere until it is open again).
    pub fn is_down(&self, i: usize) -> bool {
        self.down.get(i).copied().unwrap_or(false)
    }

    /// Open the down endpoints of `eps` again (at most every [`EVERY_NS`]).
    pub fn heal(&mut self, eps: &mut [Box<dyn Endpoint>]) {
        if !self.down.contains(&true) {
            return;
        }
        let now = now_ns();
        if now < self.last_try_ns + EVERY_NS {
            return;
        }
        self.last_try_ns = now;
        for (i, ep) in eps.iter_mut().enumerate() {
            if !self.is_down(i) {
                continue;
            }
            if let Ok(fresh) = open(self.kind, self.side, &self.specs[i]) {
                *ep = fresh;
                self.down[i] = false;
                use std::io::Write;
                let mut out = std::io::stdout().lock();
                let _ = writeln!(out, "REOPENED {}", now_ns());
                let _ = out.flush();
            }
        }
    }
}

/// A subscription's endpoint opened again when receiving finds its connection or broker gone
/// (spec `reopen`): tried at most every [`EVERY_NS`], the caller waiting in between.
pub struct ReopenSub {
    kind: Kind,
    side: Side,
    spec: Spec,
    last_try_ns: u64,
}

impl ReopenSub {
    /// `side`: as the subscription was opened (an echo outlet's: Pong).
    pub fn new(kind: Kind, side: Side, spec: Spec) -> Self {
        ReopenSub {
            kind,
            side,
            spec,
            last_try_ns: 0,
        }
    }

    /// After a failed receive: the endpoint opened again (`REOPENED <ns>` printed), or None
    /// when it is not time yet or it cannot be yet (the caller then waits at most `wait_ns`
    /// and `EVERY_NS`, so a closed endpoint is not spun on).
    pub fn again(&mut self, wait_ns: u64) -> Option<Box<dyn Endpoint>> {
        let now = now_ns();
        if now >= self.last_try_ns + EVERY_NS {
            self.last_try_ns = now;
            if let Ok(fresh) = open(self.kind, self.side, &self.spec) {
                use std::io::Write;
                let mut out = std::io::stdout().lock();
                let _ = writeln!(out, "REOPENED {}", now_ns());
                let _ = out.flush();
                return Some(fresh);
            }
        }
        let pause = wait_ns.min(EVERY_NS);
        std::thread::sleep(std::time::Duration::from_nanos(pause));
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_closed_connection_is_down_until_opened_again_nothing_listening_is_not() {
        let mut r = Reopen::new(Kind::Udp, Side::Pub, vec![Spec::default()]);
        let refused = TransportError::Unreachable {
            addr: "x".into(),
            err: std::io::Error::from(std::io::ErrorKind::ConnectionRefused),
        };
        assert!(!r.failed(0, &refused));
        assert!(!r.is_down(0));
        assert!(r.failed(0, &TransportError::Closed));
        assert!(r.is_down(0));
    }
}
