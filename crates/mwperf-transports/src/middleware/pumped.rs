//! The receive loop of the transports that speak their protocol themselves over one connection
//! (mqtt, foxglove): each look at the connection may produce a message, something else (an
//! announcement, a control message), nothing, or news that the peer left; `recv` keeps looking
//! until a message, nothing more within the wait, or the deadline.

use std::collections::VecDeque;

use mwperf_core::clock::now_ns;

use crate::TransportError;

/// What one look at the connection produced.
pub enum Got {
    /// A message, copied into the caller's buffer (its length).
    Message(usize),
    /// Something else was handled (an announcement, a foreign topic, a control message).
    Other,
    /// The peer announced it left after matching.
    PeerLeft,
    Nothing,
}

/// `Endpoint::recv`'s loop: `look(wait)` looks once, waiting at most `wait` ns (0 = do not
/// block); messages end it, so does nothing within `wait_ns`.
pub fn recv_loop(
    wait_ns: u64,
    mut look: impl FnMut(u64) -> Result<Got, TransportError>,
) -> Result<Option<usize>, TransportError> {
    let deadline = now_ns().saturating_add(wait_ns);
    loop {
        let left = if wait_ns == 0 {
            0
        } else {
            deadline.saturating_sub(now_ns()).max(1)
        };
        match look(left)? {
            Got::Message(n) => return Ok(Some(n)),
            Got::PeerLeft => return Err(TransportError::Closed),
            Got::Nothing => return Ok(None),
            Got::Other if wait_ns == 0 || now_ns() >= deadline => return Ok(None),
            Got::Other => {}
        }
    }
}

/// A transport that reads its connection through [`Pumped::pump`] and keeps the messages that
/// came while it waited for something else (matching) in [`Pumped::early`]: its
/// `Endpoint::recv` is [`Pumped::recv_pumped`].
pub trait Pumped {
    /// Messages received before the caller asked (kept in arrival order).
    fn early(&mut self) -> &mut VecDeque<Vec<u8>>;
    /// Look at the connection once, waiting at most `wait_ns` (see [`recv_loop`]).
    fn pump(&mut self, out: Option<&mut Vec<u8>>, wait_ns: u64) -> Result<Got, TransportError>;

    /// `Endpoint::recv`: an early message first, else the connection until the wait ends.
    fn recv_pumped(
        &mut self,
        buf: &mut Vec<u8>,
        wait_ns: u64,
    ) -> Result<Option<usize>, TransportError> {
        if let Some(m) = self.early().pop_front() {
            *buf = m;
            return Ok(Some(buf.len()));
        }
        recv_loop(wait_ns, |left| self.pump(Some(&mut *buf), left))
    }
}
