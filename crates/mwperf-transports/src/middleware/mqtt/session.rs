//! One MQTT client connection to a broker on a blocking `TcpStream` (Nagle off), no runtime and
//! no helper thread: every packet is read and written by the caller's own `send`/`recv`, so a
//! message costs one wake-up, as with the socket transports.
//!
//! - Sending never blocks indefinitely: a PUBLISH goes out with one non-blocking `sendmsg`
//!   straight from the caller's buffer; what the socket does not take is queued and flushed by
//!   later calls (two peers writing large messages at once through the broker cannot deadlock).
//! - Acknowledgements we owe (PUBACK, PUBREC, PUBCOMP) are queued and leave with the next
//!   write, so a pong's echo and the PUBACK of the message it echoes share one system call.
//! - Acknowledgements we wait for (QoS 1/2 sends) are tracked per packet id; a sender that never
//!   receives (a `pub`) reads them while sending, and stops for them when [`MAX_IN_FLIGHT`]
//!   messages are unacknowledged (the broker's back-pressure, bounded in time).
//! - A QoS 2 `publish` waits for the broker's PUBREC and sends PUBREL at once (the broker
//!   forwards the message only then), so QoS 2 costs one broker round trip per send.
//! - PUBLISH packets read while waiting in `send` are stashed and returned first by `next`.
//! - Under `--opt tls` the same session runs over TLS ([`Wire::Tls`], crate::tls_client): a
//!   message's header and payload go into rustls together (one record per 16 KiB), what the
//!   socket does not take stays queued in rustls (counted in the backlog, so the polls ask for
//!   POLLOUT), and every decrypted byte lands in the receive buffer at once.

use std::collections::VecDeque;
use std::io::{self, ErrorKind};
use std::os::fd::RawFd;

use mwperf_core::clock::now_ns;

use super::codec::{self, Ack, Malformed, Packet, QoS, Version};
use super::properties::PubProps;
use crate::poll::{self, check, coarse_timeout, RecvTimeout, LONG_WAIT_NS};
use crate::tls_client::Wire;
use crate::TransportError;

const TRANSPORT: &str = "mqtt";
/// Queued, unsent bytes beyond which `publish` waits for the broker to read.
const MAX_BACKLOG: usize = 2 * mwperf_core::payload::MAX_PAYLOAD;
/// Unacknowledged QoS 1/2 messages beyond which `publish` waits for acknowledgements.
pub const MAX_IN_FLIGHT: usize = 4096;
/// Unacknowledged messages from which `publish` reads acknowledgements (without blocking).
const READ_ACKS_FROM: usize = 64;
/// How long a blocked `publish` waits for the broker before giving up.
const SEND_STALL_NS: u64 = 10_000_000_000;
const READ_CHUNK: usize = 256 * 1024;

/// A set of 16-bit packet ids (8 KiB).
struct IdSet {
    bits: Vec<u64>,
    len: usize,
}

impl IdSet {
    fn new() -> Self {
        let mut bits = vec![0u64; 1024];
        // Write every page now: a zeroed allocation may come untouched, and its pages were
        // faulted in one by one as the packet ids advanced (the resident set crept up by 8 KiB
        // in a soak's first minute). Volatile, so the writes of a zero are not dropped.
        for word in bits.iter_mut().step_by(4096 / 8) {
            // SAFETY: a valid, aligned reference; a plain store of the value already there
            unsafe { std::ptr::write_volatile(word, 0) };
        }
        IdSet { bits, len: 0 }
    }
    fn contains(&self, id: u16) -> bool {
        self.bits[id as usize / 64] & (1 << (id % 64)) != 0
    }
    /// Returns whether it was new.
    fn insert(&mut self, id: u16) -> bool {
        let new = !self.contains(id);
        if new {
            self.bits[id as usize / 64] |= 1 << (id % 64);
            self.len += 1;
        }
        new
    }
    /// Returns whether it was there.
    fn remove(&mut self, id: u16) -> bool {
        let had = self.contains(id);
        if had {
            self.bits[id as usize / 64] &= !(1 << (id % 64));
            self.len -= 1;
        }
        had
    }
}

/// A PUBLISH handed to the caller: topic and payload (and MQTT 5's request/response
/// properties), valid until the next call.
pub struct Delivery<'a> {
    pub topic: &'a [u8],
    pub payload: &'a [u8],
    pub response_topic: Option<&'a [u8]>,
    pub correlation: Option<&'a [u8]>,
}

/// A PUBLISH read while `publish` waited, kept for `next`.
struct Stashed {
    topic: Vec<u8>,
    payload: Vec<u8>,
    response_topic: Option<Vec<u8>>,
    correlation: Option<Vec<u8>>,
}

pub struct Session {
    wire: Wire,
    version: Version,
    /// Unacknowledged QoS 1/2 messages allowed: [`MAX_IN_FLIGHT`], or less when an MQTT 5
    /// broker says so (its Receive Maximum; exceeding it is a protocol error).
    max_in_flight: usize,
    /// The broker's address, for error messages.
    broker: String,
    /// Receive buffer: bytes `rx_start..rx_end` are unparsed; only grows.
    rx: Vec<u8>,
    rx_start: usize,
    rx_end: usize,
    /// Bytes of the PUBLISH last lent out by `next`, consumed at the next call.
    lent: usize,
    stash: VecDeque<Stashed>,
    lent_stash: Option<Stashed>,
    tx: Vec<u8>,
    tx_start: usize,
    /// Scratch for PUBLISH headers.
    hdr: Vec<u8>,
    rcvtimeo: RecvTimeout,
    next_pkid: u16,
    /// Our QoS 1/2 messages the broker has not finished acknowledging.
    in_flight: IdSet,
    /// Our QoS 2 messages whose PUBREC has not come yet.
    awaiting_rec: IdSet,
    /// QoS 2 messages received (and delivered) whose PUBREL has not come yet: duplicates.
    qos2_received: IdSet,
    /// SUBACKs received: packet id and whether every subscription was granted.
    subacks: Vec<(u16, bool)>,
    /// A SUBACK arrived since `next` last returned: it returns early so callers see it.
    suback_news: bool,
    /// Set once the connection failed; every later call reports it.
    broken: Option<String>,
}

impl Session {
    /// On `wire` (connected, Nagle off), send CONNECT (of protocol `version`), wait for
    /// CONNACK (at most `timeout_ns`).
    pub fn connect(
        wire: Wire,
        broker: &str,
        connect_packet: &[u8],
        version: Version,
        timeout_ns: u64,
    ) -> Result<Session, TransportError> {
        let mut s = Session {
            wire,
            version,
            max_in_flight: MAX_IN_FLIGHT,
            broker: broker.to_string(),
            rx: crate::stream::prefaulted(READ_CHUNK),
            rx_start: 0,
            rx_end: 0,
            lent: 0,
            stash: VecDeque::new(),
            lent_stash: None,
            tx: Vec::new(),
            tx_start: 0,
            hdr: Vec::with_capacity(64),
            rcvtimeo: RecvTimeout::default(),
            next_pkid: 0,
            in_flight: IdSet::new(),
            awaiting_rec: IdSet::new(),
            qos2_received: IdSet::new(),
            subacks: Vec::new(),
            suback_news: false,
            broken: None,
        };
        s.tx.extend_from_slice(connect_packet);
        s.flush()?;
        let deadline = now_ns() + timeout_ns;
        loop {
            match codec::decode(&s.rx[s.rx_start..s.rx_end], version).map_err(|e| s.malformed(e))? {
                Some((
                    Packet::ConnAck {
                        code,
                        receive_maximum,
                        ..
                    },
                    n,
                )) => {
                    s.rx_start += n;
                    if let Some(m) = receive_maximum {
                        s.max_in_flight = (m as usize).clamp(1, MAX_IN_FLIGHT);
                    }
                    return match code {
                        0 => Ok(s),
                        _ => Err(TransportError::Middleware {
                            transport: TRANSPORT,
                            detail: format!(
                                "the broker at {broker} refused the connection: {}",
                                connack_reason(code, version)
                            ),
                        }),
                    };
                }
                Some(_) => {
                    return Err(TransportError::Middleware {
                        transport: TRANSPORT,
                        detail: format!(
                            "{broker} did not answer CONNECT with CONNACK; is it an MQTT broker?"
                        ),
                    })
                }
                None => {}
            }
            let left = deadline.saturating_sub(now_ns());
            if left == 0 {
                return Err(TransportError::Middleware {
                    transport: TRANSPORT,
                    detail: format!(
                        "no CONNACK from {broker} within {} ms; is it an MQTT broker?",
                        timeout_ns / 1_000_000
                    ),
                });
            }
            let filled = match poll::wait(s.fd(), libc::POLLIN, left)? {
                true => s.fill(libc::MSG_DONTWAIT),
                false => Ok(false),
            };
            match filled {
                // a TLS broker refusing us says so in an alert (mTLS without a certificate:
                // "received fatal alert: CertificateRequired"): that is the news, not MQTT
                Err(e) if matches!(s.wire, Wire::Tls(_)) => return Err(e),
                Err(_) => return Err(TransportError::Middleware {
                    transport: TRANSPORT,
                    detail: format!(
                        "{broker} closed the connection at CONNECT; is it an MQTT {} broker (without TLS: a TLS listener needs --opt tls)?",
                        if version == Version::V5 { "5" } else { "3.1.1" }
                    ),
                }),
                Ok(_) => {}
            }
        }
    }

    fn fd(&self) -> RawFd {
        self.wire.fd()
    }

    fn fail(&mut self, detail: String) -> TransportError {
        self.broken = Some(detail.clone());
        TransportError::Middleware {
            transport: TRANSPORT,
            detail,
        }
    }

    fn malformed(&mut self, e: Malformed) -> TransportError {
        let d = format!("{e} from the broker at {}; connection dropped", self.broker);
        self.fail(d)
    }

    fn io_failed(&mut self, e: io::Error) -> TransportError {
        let d = match e.kind() {
            ErrorKind::ConnectionReset
            | ErrorKind::BrokenPipe
            | ErrorKind::ConnectionAborted
            | ErrorKind::UnexpectedEof => {
                format!("the broker at {} closed the connection", self.broker)
            }
            // a TLS error: the broker's alert, or its certificate refused by us
            ErrorKind::InvalidData if matches!(self.wire, Wire::Tls(_)) => {
                format!("TLS with the broker at {}: {e}", self.broker)
            }
            _ => format!("connection to the broker at {}: {e}", self.broker),
        };
        self.fail(d)
    }

    fn check_broken(&self) -> Result<(), TransportError> {
        match &self.broken {
            Some(d) => Err(TransportError::Middleware {
                transport: TRANSPORT,
                detail: d.clone(),
            }),
            None => Ok(()),
        }
    }

    /// Queued bytes still to write: ours, plus 1 while TLS records wait inside rustls (so the
    /// polls ask for POLLOUT, `next` takes no blocking receive, `disconnect` waits for them).
    fn backlog(&self) -> usize {
        self.tx.len() - self.tx_start + usize::from(self.wire.tls_pending())
    }

    /// Write as much of the backlog as the socket takes now.
    fn flush(&mut self) -> Result<(), TransportError> {
        if let Wire::Tls(t) = &mut self.wire {
            match t.send(&[&self.tx[self.tx_start..]]) {
                Ok(n) => self.tx_start += n,
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::Interrupted) => {}
                Err(e) => return Err(self.io_failed(e)),
            }
        }
        while matches!(self.wire, Wire::Plain(_)) && self.tx_start < self.tx.len() {
            match write_now(self.fd(), &[&self.tx[self.tx_start..]], 0) {
                Ok(0) => break,
                Ok(n) => self.tx_start += n,
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) => return Err(self.io_failed(e)),
            }
        }
        if self.tx_start == self.tx.len() {
            self.tx.clear();
            self.tx_start = 0;
        }
        Ok(())
    }

    fn queue_ack(&mut self, kind: Ack, pkid: u16) {
        codec::ack(&mut self.tx, kind, pkid);
    }

    /// A packet id not in flight.
    fn new_pkid(&mut self) -> u16 {
        loop {
            self.next_pkid = self.next_pkid.wrapping_add(1).max(1);
            if !self.in_flight.contains(self.next_pkid) {
                return self.next_pkid;
            }
        }
    }

    /// Send SUBSCRIBE now; returns its packet id (see [`Session::suback`]).
    pub fn subscribe(&mut self, topics: &[(&str, QoS)]) -> Result<u16, TransportError> {
        self.check_broken()?;
        let pkid = self.new_pkid();
        codec::subscribe(&mut self.tx, self.version, pkid, topics);
        self.flush()?;
        Ok(pkid)
    }

    /// Whether the SUBACK for `pkid` came: Some(true) = all granted, Some(false) = refused.
    pub fn suback(&self, pkid: u16) -> Option<bool> {
        self.subacks
            .iter()
            .find(|(id, _)| *id == pkid)
            .map(|(_, ok)| *ok)
    }

    /// Messages sent at QoS 1/2 whose acknowledgement has not come yet.
    pub fn unacknowledged(&self) -> usize {
        self.in_flight.len
    }

    /// Publish `payload` on `topic`; never blocks indefinitely (see the module docs).
    pub fn publish(
        &mut self,
        topic: &str,
        qos: QoS,
        retain: bool,
        payload: &[u8],
    ) -> Result<(), TransportError> {
        self.publish_with(topic, qos, retain, PubProps::default(), payload)
    }

    /// [`Session::publish`] with MQTT 5 properties (a connection of 3.1.1 has none to send:
    /// they are refused).
    pub fn publish_with(
        &mut self,
        topic: &str,
        qos: QoS,
        retain: bool,
        props: PubProps,
        payload: &[u8],
    ) -> Result<(), TransportError> {
        self.check_broken()?;
        let props = match self.version {
            Version::V5 => Some(&props),
            Version::V311 if props == PubProps::default() => None,
            Version::V311 => {
                return Err(TransportError::Unsupported {
                    transport: TRANSPORT,
                    what: "PUBLISH properties on an MQTT 3.1.1 connection".into(),
                })
            }
        };
        let max = codec::max_payload(topic, qos, props);
        if payload.len() > max {
            return Err(TransportError::TooLarge {
                size: payload.len(),
                max,
                transport: TRANSPORT,
            });
        }
        // No flush first: queued acknowledgements leave in the same write as this message.
        let pkid = if qos == QoS::AtMostOnce {
            0
        } else {
            if self.in_flight.len >= READ_ACKS_FROM {
                self.service(0)?;
            }
            self.wait_until(
                |s| s.in_flight.len < s.max_in_flight,
                "acknowledge our messages",
            )
            .map_err(not_sent)?;
            let id = self.new_pkid();
            self.in_flight.insert(id);
            id
        };
        let mut hdr = std::mem::take(&mut self.hdr);
        hdr.clear();
        codec::publish_header(
            &mut hdr,
            topic,
            qos,
            retain,
            false,
            pkid,
            props,
            payload.len(),
        );
        let r = self.write_message(&hdr, payload);
        self.hdr = hdr;
        r?;
        if qos == QoS::ExactlyOnce {
            // A broker forwards a QoS 2 message only on our PUBREL, which answers its PUBREC:
            // wait for it here, or a sender that does not read would hold its messages back.
            self.awaiting_rec.insert(pkid);
            self.wait_until(
                |s| !s.awaiting_rec.contains(pkid),
                "answer PUBLISH (QoS 2) with PUBREC",
            )?;
            self.flush()?;
        }
        Ok(())
    }

    /// Write backlog + header + payload, queueing what the socket does not take.
    fn write_message(&mut self, hdr: &[u8], payload: &[u8]) -> Result<(), TransportError> {
        if self.backlog() + hdr.len() + payload.len() > MAX_BACKLOG {
            let need = hdr.len() + payload.len();
            self.wait_until(|s| s.backlog() + need <= MAX_BACKLOG, "read what we sent")
                .map_err(not_sent)?;
        }
        if let Wire::Tls(t) = &mut self.wire {
            // in order: straight into rustls only when nothing of ours is queued before it
            let queued = self.tx.len() - self.tx_start;
            let taken = match if queued == 0 {
                t.send(&[hdr, payload])
            } else {
                Ok(0)
            } {
                Ok(n) => n,
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::Interrupted) => 0,
                Err(e) => return Err(self.io_failed(e)),
            };
            if taken < hdr.len() {
                self.tx.extend_from_slice(&hdr[taken..]);
                self.tx.extend_from_slice(payload);
            } else {
                self.tx.extend_from_slice(&payload[taken - hdr.len()..]);
            }
            return if queued > 0 { self.flush() } else { Ok(()) };
        }
        let pending = self.backlog();
        let total = pending + hdr.len() + payload.len();
        let mut written = 0;
        while written < total {
            match write_now(
                self.fd(),
                &[&self.tx[self.tx_start..], hdr, payload],
                written,
            ) {
                Ok(0) => break,
                Ok(n) => written += n,
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) => return Err(self.io_failed(e)),
            }
        }
        if written >= pending {
            self.tx.clear();
            self.tx_start = 0;
            let rest = written - pending;
            if rest < hdr.len() {
                self.tx.extend_from_slice(&hdr[rest..]);
                self.tx.extend_from_slice(payload);
            } else {
                self.tx.extend_from_slice(&payload[rest - hdr.len()..]);
            }
        } else {
            self.tx_start += written;
            self.tx.extend_from_slice(hdr);
            self.tx.extend_from_slice(payload);
        }
        Ok(())
    }

    /// Serve the connection (flush, read, handle packets, stash PUBLISHes) until `done` holds,
    /// for at most [`SEND_STALL_NS`].
    fn wait_until(
        &mut self,
        done: impl Fn(&Session) -> bool,
        what: &str,
    ) -> Result<(), TransportError> {
        let end = now_ns() + SEND_STALL_NS;
        while !done(self) {
            let now = now_ns();
            if now >= end {
                return Err(TransportError::Io(io::Error::new(
                    ErrorKind::TimedOut,
                    format!("the MQTT broker at {} did not {what} for 10 s", self.broker),
                )));
            }
            self.service((end - now).min(100_000_000))?;
        }
        Ok(())
    }

    /// One round of serving the connection without handing out messages: wait at most
    /// `wait_ns` for the socket, flush, read, handle every complete packet (PUBLISHes stashed).
    fn service(&mut self, wait_ns: u64) -> Result<(), TransportError> {
        self.release();
        let events = if self.backlog() > 0 {
            libc::POLLIN | libc::POLLOUT
        } else {
            libc::POLLIN
        };
        poll::wait(self.fd(), events, wait_ns)?;
        self.flush()?;
        for _ in 0..16 {
            if !self.fill(libc::MSG_DONTWAIT)? {
                break;
            }
        }
        while let Some(p) = self.parse_one()? {
            let s = Stashed {
                topic: self.rx[p.topic.clone()].to_vec(),
                payload: self.rx[p.payload.clone()].to_vec(),
                response_topic: p.response_topic.map(|r| self.rx[r].to_vec()),
                correlation: p.correlation.map(|r| self.rx[r].to_vec()),
            };
            self.stash.push_back(s);
            self.release();
        }
        Ok(())
    }

    /// Consume what the last `next` lent out.
    fn release(&mut self) {
        if self.lent > 0 {
            self.rx_start += self.lent;
            self.lent = 0;
        }
        self.lent_stash = None;
        if self.rx_start == self.rx_end {
            (self.rx_start, self.rx_end) = (0, 0);
        }
    }

    /// Handle complete packets in the receive buffer until a PUBLISH to deliver (its packet
    /// length is then in `self.lent`, its ranges relative to `rx`), or none is left.
    fn parse_one(&mut self) -> Result<Option<codec::Publish>, TransportError> {
        loop {
            let decoded = codec::decode(&self.rx[self.rx_start..self.rx_end], self.version)
                .map_err(|e| self.malformed(e))?;
            let Some((packet, n)) = decoded else {
                return Ok(None);
            };
            let base = self.rx_start;
            match packet {
                Packet::Publish(mut p) => {
                    let deliver = match p.qos {
                        QoS::AtMostOnce => true,
                        QoS::AtLeastOnce => {
                            self.queue_ack(Ack::PubAck, p.pkid);
                            true
                        }
                        QoS::ExactlyOnce => {
                            self.queue_ack(Ack::PubRec, p.pkid);
                            self.qos2_received.insert(p.pkid) // a resend before PUBREL is a duplicate
                        }
                    };
                    if deliver {
                        let shift = |r: std::ops::Range<usize>| base + r.start..base + r.end;
                        p.topic = shift(p.topic);
                        p.payload = shift(p.payload);
                        p.response_topic = p.response_topic.map(shift);
                        p.correlation = p.correlation.map(shift);
                        self.lent = n;
                        return Ok(Some(p));
                    }
                }
                Packet::PubAck(id) | Packet::PubComp(id) => {
                    self.in_flight.remove(id);
                }
                Packet::PubRec(id) => {
                    self.awaiting_rec.remove(id);
                    if self.in_flight.contains(id) {
                        self.queue_ack(Ack::PubRel, id);
                    }
                }
                Packet::PubRel(id) => {
                    self.qos2_received.remove(id);
                    self.queue_ack(Ack::PubComp, id);
                }
                Packet::SubAck { pkid, codes } => {
                    let ok = self.rx[base + codes.start..base + codes.end]
                        .iter()
                        .all(|c| *c <= 2);
                    self.subacks.push((pkid, ok));
                    self.suback_news = true;
                }
                Packet::ConnAck { .. } => {
                    return Err(self.fail(format!(
                        "a second CONNACK from the broker at {}",
                        self.broker
                    )))
                }
                Packet::Disconnect(code) => {
                    return Err(self.fail(format!(
                        "the broker at {} closed the connection (MQTT 5 reason code 0x{code:02x})",
                        self.broker
                    )))
                }
                Packet::UnsubAck(_) | Packet::PingResp => {}
            }
            self.rx_start += n;
        }
    }

    /// The next PUBLISH from the broker, waiting at most `wait_ns` (0 = do not block);
    /// `Ok(None)` = nothing yet, a signal, or a SUBACK came (see [`Session::suback`]).
    /// The delivery is valid until the next call.
    pub fn next(&mut self, wait_ns: u64) -> Result<Option<Delivery<'_>>, TransportError> {
        self.check_broken()?;
        self.release();
        if let Some(s) = self.stash.pop_front() {
            let s = self.lent_stash.insert(s);
            return Ok(Some(Delivery {
                topic: &s.topic,
                payload: &s.payload,
                response_topic: s.response_topic.as_deref(),
                correlation: s.correlation.as_deref(),
            }));
        }
        let deadline = now_ns().saturating_add(wait_ns);
        let found = loop {
            if let Some(p) = self.parse_one()? {
                break p;
            }
            if std::mem::take(&mut self.suback_news) {
                return Ok(None);
            }
            self.flush()?;
            // Busy pollers read without blocking; long waits block in one recv bounded by
            // SO_RCVTIMEO; short waits (or a backlog to flush) ppoll first.
            let left = deadline.saturating_sub(now_ns());
            let flags = if wait_ns == 0 || left == 0 {
                libc::MSG_DONTWAIT
            } else if left >= LONG_WAIT_NS && self.backlog() == 0 {
                let fd = self.fd();
                self.rcvtimeo.set(fd, coarse_timeout(left))?;
                0
            } else {
                let events = if self.backlog() > 0 {
                    libc::POLLIN | libc::POLLOUT
                } else {
                    libc::POLLIN
                };
                if !poll::wait(self.fd(), events, left)? && now_ns() < deadline {
                    return Ok(None); // interrupted by a signal
                }
                libc::MSG_DONTWAIT
            };
            if self.fill(flags)? {
                continue;
            }
            if wait_ns == 0 || now_ns() >= deadline {
                return Ok(None);
            }
        };
        Ok(Some(Delivery {
            topic: &self.rx[found.topic],
            payload: &self.rx[found.payload],
            response_topic: found.response_topic.map(|r| &self.rx[r]),
            correlation: found.correlation.map(|r| &self.rx[r]),
        }))
    }

    /// Read what the socket has into the receive buffer. Ok(false) = nothing available.
    fn fill(&mut self, flags: libc::c_int) -> Result<bool, TransportError> {
        if self.rx_start > 0 && self.lent == 0 {
            // Move the unparsed tail to the front (at most one partial packet).
            self.rx.copy_within(self.rx_start..self.rx_end, 0);
            (self.rx_start, self.rx_end) = (0, self.rx_end - self.rx_start);
        }
        // Room for the packet being assembled, so large messages need few reads.
        let want = match codec::frame_len(&self.rx[self.rx_start..self.rx_end]) {
            Ok(Some(len)) => (self.rx_start + len).max(crate::stream::room(self.rx_end)),
            _ => crate::stream::room(self.rx_end),
        };
        if self.rx.len() < want {
            self.rx.resize(want, 0);
        }
        if let Wire::Tls(t) = &mut self.wire {
            // grows rx by what it decrypted: nothing decrypted stays inside rustls
            return match t.recv(&mut self.rx, &mut self.rx_end, flags) {
                Ok(_) => Ok(true),
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::Interrupted) => {
                    Ok(false)
                }
                Err(e) => Err(self.io_failed(e)),
            };
        }
        let fd = self.fd();
        let spare = &mut self.rx[self.rx_end..];
        // SAFETY: `spare` is valid for its length.
        match check(unsafe {
            libc::recv(
                fd,
                spare.as_mut_ptr() as *mut libc::c_void,
                spare.len(),
                flags,
            )
        }) {
            Ok(0) => Err(self.io_failed(io::Error::from(ErrorKind::UnexpectedEof))),
            Ok(n) => {
                self.rx_end += n;
                Ok(true)
            }
            Err(e) => match e.kind() {
                ErrorKind::WouldBlock | ErrorKind::Interrupted => Ok(false),
                _ => Err(self.io_failed(e)),
            },
        }
    }

    /// Serve the connection until `done` holds or `limit_ns` passed (used when closing).
    pub fn settle(&mut self, limit_ns: u64, done: impl Fn(&Session) -> bool) {
        let end = now_ns() + limit_ns;
        while self.broken.is_none() && !done(self) {
            let now = now_ns();
            if now >= end || self.service((end - now).min(50_000_000)).is_err() {
                break;
            }
        }
    }

    /// Queued bytes still to write.
    pub fn unsent(&self) -> usize {
        self.backlog()
    }

    /// Queue DISCONNECT and give everything queued up to `limit_ns` to leave.
    pub fn disconnect(&mut self, limit_ns: u64) {
        if self.broken.is_some() {
            return;
        }
        codec::disconnect(&mut self.tx);
        let end = now_ns() + limit_ns;
        while self.backlog() > 0 && self.flush().is_ok() {
            let now = now_ns();
            if now >= end || poll::wait(self.fd(), libc::POLLOUT, end - now).is_err() {
                break;
            }
        }
        self.wire.shutdown_write();
    }
}

/// One non-blocking gathering send of `parts` (at most 3) after skipping their first `skip`
/// bytes, on a (blocking) socket; never raises SIGPIPE.
fn write_now(fd: RawFd, parts: &[&[u8]], mut skip: usize) -> io::Result<usize> {
    let mut iov: [libc::iovec; 3] = [libc::iovec {
        iov_base: std::ptr::null_mut(),
        iov_len: 0,
    }; 3];
    let mut n = 0;
    for p in parts.iter().take(3) {
        if skip >= p.len() {
            skip -= p.len();
            continue;
        }
        let p = &p[skip..];
        skip = 0;
        iov[n] = libc::iovec {
            iov_base: p.as_ptr() as *mut libc::c_void,
            iov_len: p.len(),
        };
        n += 1;
    }
    if n == 0 {
        return Ok(0);
    }
    // SAFETY: an all-zero msghdr is valid; it points at `n` iovecs that borrow live slices.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = iov.as_mut_ptr();
    msg.msg_iovlen = n as _;
    // SAFETY: `msg` is a valid msghdr for the duration of the call.
    check(unsafe { libc::sendmsg(fd, &msg, libc::MSG_DONTWAIT | libc::MSG_NOSIGNAL) })
}

/// CONNACK return codes (3.1.1 §3.2.2.3, 5.0 §3.2.2.2) for people.
fn connack_reason(code: u8, version: Version) -> String {
    if version == Version::V5 {
        return match code {
            0x84 => "it does not speak MQTT 5 (reason code 0x84); mosquitto speaks it from 1.6".into(),
            0x86 | 0x87 => format!("not authorized (reason code 0x{code:02x}); mwperf connects anonymously: set `allow_anonymous true` in the broker config"),
            _ => format!("reason code 0x{code:02x}"),
        };
    }
    match code {
        1 => "it does not speak MQTT 3.1.1 (code 1)".into(),
        2 => "client id rejected (code 2)".into(),
        3 => "server unavailable (code 3)".into(),
        4 | 5 => format!("not authorized (code {code}); mwperf connects anonymously: set `allow_anonymous true` in the broker config"),
        _ => format!("return code {code}"),
    }
}

/// A stall before any byte of a message was written: the message was not sent (`Blocked`,
/// a sender may try it again); other errors pass unchanged.
fn not_sent(e: TransportError) -> TransportError {
    match e {
        TransportError::Io(io) if io.kind() == ErrorKind::TimedOut => TransportError::Blocked {
            transport: TRANSPORT,
            detail: io.to_string(),
        },
        other => other,
    }
}
