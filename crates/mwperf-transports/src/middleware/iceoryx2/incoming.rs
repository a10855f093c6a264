//! The receiving half of an endpoint: one subscriber on the data service, and a listener on the
//! event service created only when a receive first has to block. A busy-polling endpoint
//! (`recv(_, 0)` only) never creates one, so its peer's sends find no listener and make no
//! wake-up syscall: that is what keeps the busy-poll round trip at shared-memory speed.
//!
//! The subscriber is shared with this endpoint's publisher ([`Drain`]): while a reliable send
//! waits for the peer's full queue, it moves our own incoming samples into a local backlog, so
//! that a peer blocked sending to us can go on. Without that, two peers that both fell behind
//! (a ping catching up a burst, a pong echoing it) block each other until the send timeout.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use iceoryx2::port::listener::Listener;
use iceoryx2::port::subscriber::Subscriber;
use iceoryx2::prelude::FileDescriptorBased;
use iceoryx2::sample::Sample;

use super::services::{Events, PubSub};
use super::{middleware, Svc};
use crate::{poll, TransportError};
use mwperf_core::clock::now_ns;

/// Longest single wait, so that a caller sees its stop flag soon after a signal (iceoryx2's
/// waits do not return on EINTR the way socket calls do).
const MAX_WAIT_NS: u64 = 50_000_000;

/// Most messages a blocked send moves into the backlog; beyond it the peer waits for us.
const MAX_BACKLOG: usize = 4096;

/// The subscriber and what was taken from it ahead of time.
pub struct Drain {
    subscriber: Subscriber<Svc, [u8], ()>,
    backlog: VecDeque<Vec<u8>>,
}

impl Drain {
    /// Move waiting samples into the backlog (called while our own send is blocked).
    pub fn drain(&mut self) {
        while self.backlog.len() < MAX_BACKLOG {
            match self.subscriber.receive() {
                Ok(Some(sample)) => self.backlog.push_back(sample.payload().to_vec()),
                _ => break,
            }
        }
    }
}

/// Where [`Incoming::wait_take`] put what it took.
enum Got {
    /// copied into the caller's buffer: this many bytes
    Copied(usize),
    /// held in `Incoming::lent`
    Lent,
}

pub struct Incoming {
    listener: Option<Listener<Svc>>,
    /// The sample the last `recv_view` lent, released at the next receive (`--opt loans=on`).
    lent: Option<Sample<Svc, [u8], ()>>,
    loans: bool,
    shared: Arc<Mutex<Drain>>,
    pub(super) events: Events,
    pub(super) service: PubSub,
    name: String,
}

impl Incoming {
    pub fn new(
        service: PubSub,
        events: Events,
        depth: usize,
        loans: bool,
        name: String,
    ) -> Result<Incoming, TransportError> {
        let subscriber = service
            .subscriber_builder()
            .buffer_size(depth)
            .create()
            .map_err(|e| middleware(format!("cannot subscribe to {name}: {e:?}")))?;
        let shared = Arc::new(Mutex::new(Drain {
            subscriber,
            backlog: VecDeque::new(),
        }));
        Ok(Incoming {
            listener: None,
            lent: None,
            loans,
            shared,
            events,
            service,
            name,
        })
    }

    /// The handle a publisher of the same endpoint drains through while it waits.
    pub fn drain_handle(&self) -> Arc<Mutex<Drain>> {
        self.shared.clone()
    }

    /// Take the next message (if any): the backlog's first, else the subscriber's next
    /// sample, copied into `buf` and released at once, or (`lend`) kept in `self.lent`.
    fn take(&mut self, buf: &mut Vec<u8>, lend: bool) -> Result<Option<Got>, TransportError> {
        let mut d = self.shared.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(m) = d.backlog.pop_front() {
            *buf = m;
            return Ok(Some(Got::Copied(buf.len())));
        }
        match d.subscriber.receive() {
            Ok(Some(sample)) if lend => {
                self.lent = Some(sample);
                Ok(Some(Got::Lent))
            }
            Ok(Some(sample)) => {
                let payload = sample.payload();
                buf.clear();
                buf.extend_from_slice(payload);
                Ok(Some(Got::Copied(payload.len())))
            }
            Ok(None) => Ok(None),
            Err(e) => Err(middleware(format!(
                "receive on {} failed: {e:?}",
                self.name
            ))),
        }
    }

    pub fn recv(
        &mut self,
        buf: &mut Vec<u8>,
        wait_ns: u64,
    ) -> Result<Option<usize>, TransportError> {
        self.lent = None;
        Ok(match self.wait_take(buf, wait_ns, false)? {
            Some(Got::Copied(n)) => Some(n),
            Some(Got::Lent) | None => None,
        })
    }

    /// `recv`, the sample lent (with `--opt loans=on`) until the next receive.
    pub fn recv_view<'a>(
        &'a mut self,
        buf: &'a mut Vec<u8>,
        wait_ns: u64,
    ) -> Result<Option<&'a [u8]>, TransportError> {
        self.lent = None; // the previous message's sample goes back to its publisher
        let got = self.wait_take(buf, wait_ns, self.loans)?;
        let buf: &'a Vec<u8> = buf;
        Ok(match got {
            Some(Got::Copied(n)) => Some(&buf[..n]),
            Some(Got::Lent) => self.lent.as_ref().map(|s| s.payload()),
            None => None,
        })
    }

    /// Take a message, waiting at most `wait_ns` for one.
    fn wait_take(
        &mut self,
        buf: &mut Vec<u8>,
        wait_ns: u64,
        lend: bool,
    ) -> Result<Option<Got>, TransportError> {
        if let Some(n) = self.take(buf, lend)? {
            return Ok(Some(n));
        }
        if wait_ns == 0 {
            return Ok(None);
        }
        let end = now_ns() + wait_ns.min(MAX_WAIT_NS);
        if self.listener.is_none() {
            let l = self.events.listener_builder().create().map_err(|e| {
                middleware(format!(
                    "cannot create a listener on {}.ev: {e:?}",
                    self.name
                ))
            })?;
            self.listener = Some(l);
            // What was sent before the listener existed woke nobody.
            if let Some(n) = self.take(buf, lend)? {
                return Ok(Some(n));
            }
        }
        let fd = {
            let listener = self.listener.as_ref().expect("created above");
            // SAFETY: the descriptor lives as long as the listener, which outlives this call.
            unsafe { listener.file_descriptor().native_handle() }
        };
        loop {
            let now = now_ns();
            if now >= end {
                return Ok(None);
            }
            // Not the listener's own `timed_wait`: in iceoryx2 0.10 it bounds the wait with a socket
            // receive timeout (SO_RCVTIMEO), which the kernel counts in scheduler ticks (4 ms at
            // HZ=250): a 12 µs wait slept 4–8 ms, and a wait under 1 µs became a zero timeout,
            // i.e. "block forever" (the stalled pings). ppoll takes a nanosecond deadline.
            match poll::wait(fd, libc::POLLIN, end - now) {
                // Timed out, or a signal (e.g. the agent's SIGTERM) ended the wait early: the
                // contract's "returns Ok(None) early" so the caller can check its stop flag.
                Ok(false) => return self.take(buf, lend),
                Ok(true) => {}
                Err(e) => {
                    return Err(middleware(format!(
                        "waiting on {}.ev failed: {e}",
                        self.name
                    )))
                }
            }
            // Consume the wake-ups; they may be stale (their sample was taken without waiting).
            let listener = self.listener.as_ref().expect("created above");
            if let Err(e) = listener.try_wait(|_| {}) {
                return Err(middleware(format!(
                    "reading the wake-ups of {}.ev failed: {e:?}",
                    self.name
                )));
            }
            if let Some(n) = self.take(buf, lend)? {
                return Ok(Some(n));
            }
        }
    }
}
