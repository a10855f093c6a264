//! Waiting for the next deadline while receiving: sleep in the transport's receive until
//! `deadline − spin margin`, then poll without blocking until the deadline (or always poll with
//! --busy-poll). Receiving while waiting also lets stream transports flush queued bytes.

use mwperf_core::clock::now_ns;
use mwperf_transports::{Endpoint, TransportError};

pub struct Waiter {
    pub busy_poll: bool,
    pub spin_margin_ns: u64,
}

impl Waiter {
    /// Receive at most one message, returning by `deadline_ns` at the latest.
    /// Ok(Some(recv_ns)) = `buf` holds a message received at `recv_ns`.
    pub fn recv_until(
        &self,
        ep: &mut dyn Endpoint,
        buf: &mut Vec<u8>,
        deadline_ns: u64,
    ) -> Result<Option<u64>, TransportError> {
        let now = now_ns();
        let wait = if self.busy_poll {
            0
        } else {
            deadline_ns
                .saturating_sub(self.spin_margin_ns)
                .saturating_sub(now)
        };
        let got = ep.recv(buf, wait)?;
        Ok(got.map(|_| now_ns()))
    }
}
