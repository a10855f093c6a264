//! The contract every transport implements, checked for every transport by
//! `tests/transports/conformance.rs`.
//!
//! - An endpoint moves whole messages: what one `send` was given, one `recv` returns, byte for
//!   byte, or not at all (loss is allowed only where the transport itself may lose).
//! - `recv_view` is `recv` lending the message: where the middleware has loans, no copy.
//! - `recv(buf, wait_ns)` waits at most `wait_ns` (0 = do not block, for busy polling) and returns
//!   `Ok(None)` when nothing arrived; it may return early (also `Ok(None)`), e.g. when a signal
//!   arrives, so callers can check their stop flag. It never panics on foreign or malformed
//!   input: bytes that cannot be framed are returned as one message for the caller to classify
//!   with `mwperf_core::wire::Header::decode` (stream transports then drop that connection).
//! - Sides: a `Ping` sends on `<base>/ping` and receives `<base>/pong`; a `Pong` the reverse; a
//!   `Pub` only sends on `<base>/ping`, a `Sub` only receives it. Socket transports map Ping/Pub to
//!   connecting and Pong/Sub to listening; a listener answers the peer it last heard from.
//! - `wait_matched` returns once the peer's endpoints are known to the middleware (discovery), or
//!   fails with `NotMatched` after its timeout. Socket transports return at once.
//! - `send` never blocks forever: stream transports queue what the socket cannot take yet and
//!   flush it during later `send`/`recv` calls, so two peers writing at once cannot deadlock;
//!   reliable middleware bounds its blocking (then reports an error for that message).
//! - Dropping an endpoint releases everything it created (sockets, files, shared memory).

use crate::TransportError;

/// One message-oriented endpoint (see the module docs for the contract).
pub trait Endpoint: Send {
    /// Send one whole message.
    fn send(&mut self, msg: &[u8]) -> Result<(), TransportError>;
    /// Receive one whole message into `buf` (resized to its length); `Ok(None)` = nothing yet.
    fn recv(&mut self, buf: &mut Vec<u8>, wait_ns: u64) -> Result<Option<usize>, TransportError>;
    /// [`Endpoint::recv`], the message lent rather than copied where the middleware lends its
    /// own buffers (iceoryx2: the sample in the publisher's shared memory, held until the next
    /// call on this endpoint, `--opt loans=`): a receiver reads it where it arrived (issue 41:
    /// the copy out was half of a 64 KiB stream's receive). Elsewhere it is received into `buf`
    /// and that is lent. Same waiting, errors and early returns as `recv`.
    fn recv_view<'a>(
        &'a mut self,
        buf: &'a mut Vec<u8>,
        wait_ns: u64,
    ) -> Result<Option<&'a [u8]>, TransportError> {
        let got = self.recv(buf, wait_ns)?;
        let buf: &'a Vec<u8> = buf;
        Ok(got.map(|n| &buf[..n]))
    }
    /// The address a peer passes to reach this endpoint (`host:port`, a socket path, a topic base).
    fn local_addr(&self) -> String;
    /// Capability query: connections accepted so far, where the transport has connections to
    /// count (stream listeners, ROS 1 subscriber links); None where it has none.
    fn connection_count(&self) -> Option<u64> {
        None
    }
    /// The report's `connections` counter: [`Endpoint::connection_count`], 0 where there is none.
    fn connections(&self) -> u64 {
        self.connection_count().unwrap_or(0)
    }
    /// Wait until discovery has matched the peer (both directions for a Ping), at most `timeout_ns`.
    fn wait_matched(&mut self, _timeout_ns: u64) -> Result<(), TransportError> {
        Ok(())
    }
    /// Capability query: how many subscribers discovery has matched to this endpoint's
    /// publishing side so far (a pub waiting for `--subscribers N`); None where the middleware
    /// cannot tell. A transport whose descriptor says `Fanout::Counted` answers Some.
    fn matched_subscribers(&mut self) -> Option<u64> {
        None
    }
    /// Capability query: how many publishers discovery has matched to this endpoint's
    /// subscribing side so far; None where the middleware cannot tell.
    fn matched_publishers(&mut self) -> Option<u64> {
        None
    }
    /// Capability query: the publishers and subscriptions of `topic` (the middleware's name)
    /// that this endpoint's participant sees in the whole graph so far, its own and other
    /// programs' alike (ROS 2: rcl_count_publishers / rcl_count_subscribers); None where the
    /// middleware cannot tell. A graph node waits on it for programs of the user's whose
    /// endpoints no matched count of its own shows (node/await_graph.rs).
    fn graph_counts(&mut self, _topic: &str) -> Option<(u64, u64)> {
        None
    }
    /// How long this endpoint's middleware may, by its own design, take no message at all
    /// before it takes one again, with its reader still reading: a reliable Fast DDS writer
    /// whose history is full of samples lost on the way (its shared-memory port full) waits
    /// for its next heartbeat's acknowledgement (3 s by default, as ROS 2 runs it). A
    /// throughput publisher waits this beyond `--peer-timeout` before it calls its subscriber
    /// gone, and reports the holds (issue 41: the reference keeps offering too). 0: none.
    fn paced_ns(&self) -> u64 {
        0
    }
    /// Push out what an earlier `send` queued (a byte stream's backlog: a large message the
    /// socket did not take at once), waiting at most `limit_ns` for the peer to read; nothing to
    /// do for message transports. A sender that does not receive calls it after sending, or its
    /// message's tail would wait for its next send.
    fn drain(&mut self, _limit_ns: u64) {}
    /// The sender is done: deliver what is still in flight within `limit_ns` — [`Endpoint::drain`],
    /// and a reliable writer waits for its readers' acknowledgements where the middleware drops
    /// the unacknowledged rest with the writer (Fast DDS). Called once, at a sender's end.
    /// False when `limit_ns` passed with messages known to be unacknowledged (what the writer
    /// still held is then dropped with it); true otherwise.
    fn finish(&mut self, limit_ns: u64) -> bool {
        self.drain(limit_ns);
        true
    }
    /// A transport's own timer paces the sender instead of mwperf's (`--opt timer=` where a
    /// transport has one: ros2's rcl timer). Called while the slot due at `due_ns` (a schedule
    /// of `period_ns`) is not yet due: `Some(Ok(true))` = the timer ticked, send it now;
    /// `Some(Ok(false))` = not yet (ask again: the caller checks its stop flag between; an
    /// endpoint that also receives, a ping, may have a message to take: `recv` it without
    /// waiting); None = no timer of the transport's, mwperf's pacer waits.
    fn wait_tick(&mut self, _due_ns: u64, _period_ns: u64) -> Option<Result<bool, TransportError>> {
        None
    }
    /// True when a timer of the transport's paces this endpoint's sends ([`Endpoint::wait_tick`]
    /// answers): a graph node then waits for each publisher's tick on its own (node/mod.rs).
    fn own_timer(&self) -> bool {
        false
    }
}

/// Which end of a measurement an endpoint is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    Ping,
    Pong,
    Pub,
    Sub,
}

impl Side {
    /// Pong and Sub are opened first and wait for their peer (socket transports listen).
    pub fn is_listener(self) -> bool {
        matches!(self, Side::Pong | Side::Sub)
    }
    /// The topic suffix this side publishes on, if it publishes.
    pub fn out_topic(self) -> Option<&'static str> {
        match self {
            Side::Ping | Side::Pub => Some("ping"),
            Side::Pong => Some("pong"),
            Side::Sub => None,
        }
    }
    /// The topic suffix this side subscribes to, if it subscribes.
    pub fn in_topic(self) -> Option<&'static str> {
        match self {
            Side::Ping => Some("pong"),
            Side::Pong | Side::Sub => Some("ping"),
            Side::Pub => None,
        }
    }
}
