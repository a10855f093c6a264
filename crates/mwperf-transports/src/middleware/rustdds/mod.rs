//! RustDDS (pure Rust DDS): the same topics, type and QoS as the Cyclone DDS transport, so the two
//! interoperate (`rt/mwperf/<base>/ping|pong`, type `mwperf_msgs::msg::dds_::Bytes_`, CDR LE).
//!
//! Each endpoint owns one DomainParticipant (with `Spec::shared_session`, a graph node's
//! endpoints share one per domain and network instead: [`participant`]), by default pinned to 127.0.0.1: `lo` has no
//! multicast, so discovery rides RustDDS's same-host loopback mode (SPDP announced by unicast to
//! the well-known ports of participant ids 0..12 on 127.0.0.1; a participant beyond those still
//! finds the lower ones, which answer it by unicast). `--opt network=auto|<IPv4>` puts it on
//! real interfaces instead, with multicast discovery (network.rs): how it crosses emulated links.
//!
//! `--opt ros2-type=<pkg>/msg/<Type>` ([`super::ros2_wire`]): the topics carry that ROS 2 type
//! under its ROS 2 DDS name, as CDR written and read here, so real ROS 2 nodes are the peers.
//!
//! Latency cost to know about: a sample goes writer → the participant's event-loop thread →
//! UDP → the peer's event-loop thread → a socketpair notification → this reader, i.e. two extra
//! thread wake-ups per message compared with a plain socket.

mod cdr;
mod network;
mod participant;
mod qos;
pub mod service;
mod signals;

use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

use ::rustdds::mio1::{Events, Interest, Poll, Token};
use ::rustdds::no_key::{DataReader, DataWriter};
use ::rustdds::{DataReaderStatus, DataWriterStatus, StatusEvented, TopicKind};
use mwperf_core::wire::Header;

use super::dds_address::Address;
use super::ros2_wire::{self, Ros2Wire};
use crate::{Endpoint, Side, Spec, TransportError};
use cdr::{BytesCdr, BytesMsg, Encoded, RawCdr, RawMsg};

const NAME: &str = "rustdds";
/// Kernel socket buffers to ask for (RustDDS asks 8 MiB by default and warns when the kernel
/// clamps it; 4 MiB is the usual `net.core.rmem_max` ceiling here).
const SOCKET_BUFFER: usize = 4 << 20;
const READER: Token = Token(0);

fn middleware(what: &str, e: impl std::fmt::Display) -> TransportError {
    TransportError::Middleware {
        transport: NAME,
        detail: format!("{what}: {e}"),
    }
}

pub fn open(side: Side, spec: &Spec) -> Result<Box<dyn Endpoint>, TransportError> {
    let opts = spec.options_of(&super::rustdds_descriptor::DESCRIPTOR)?;
    let network = network::Network::parse(opts.get("network"))?;
    let security = security_of(&opts)?;
    let addr = Address::parse("rustdds", &spec.addr, side.is_listener())?;
    let ros2 = Ros2Wire::from_opt(NAME, opts.get(ros2_wire::OPT))?;
    Ok(Box::new(RustDdsEndpoint::open(
        side,
        spec,
        addr,
        &network,
        security.as_ref(),
        ros2,
    )?))
}

/// `--opt security=`: the identity this endpoint's participant joins as (dds_security.rs).
fn security_of(
    opts: &crate::spec::Options<'_>,
) -> Result<Option<crate::dds_security::SecurityFiles>, TransportError> {
    opts.get(crate::dds_security::OPT)
        .map(|v| crate::dds_security::SecurityFiles::parse(NAME, v))
        .transpose()
}

/// Sleep until the reader registered in `poll` may have data, at most `wait_ns`; false = timed
/// out or a signal. mio rounds poll timeouts up to whole milliseconds (epoll_wait), which would
/// make every sub-millisecond wait up to 1 ms late; ppoll on the epoll fd waits to the ns. The
/// ready events are then consumed (else the epoll fd stays readable), without blocking. A
/// wake-up may be stale (the sample was taken before the wait): callers take and retry.
fn wait_ready(poll: &mut Poll, events: &mut Events, wait_ns: u64) -> Result<bool, TransportError> {
    if !crate::poll::wait(poll.as_raw_fd(), libc::POLLIN, wait_ns)? {
        return Ok(false);
    }
    match poll.poll(events, Some(Duration::ZERO)) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => Ok(false),
        Err(e) => Err(e.into()),
    }
}

/// Fold the writer's status events queued so far into its matched count.
fn writer_status<D, SA: ::rustdds::no_key::SerializerAdapter<D>>(
    w: &DataWriter<D, SA>,
    matched: &mut i32,
) {
    while let Some(ev) = w.try_recv_status() {
        if let DataWriterStatus::PublicationMatched { current, .. } = ev {
            *matched = current.count();
        }
    }
}

/// Fold the reader's status events queued so far into its matched count.
fn reader_status<D: 'static, DA: ::rustdds::no_key::DeserializerAdapter<D> + 'static>(
    r: &DataReader<D, DA>,
    matched: &mut i32,
) {
    while let Some(ev) = r.try_recv_status() {
        if let DataReaderStatus::SubscriptionMatched { current, .. } = ev {
            *matched = current.count();
        }
    }
}

pub struct RustDdsEndpoint {
    // Fields drop in order: reader and writer before the participant that runs them.
    writer: Option<DataWriter<Encoded, BytesCdr>>,
    reader: Option<Reader>,
    /// `--opt ros2-type`: messages travel as that ROS 2 type's CDR (written and read here).
    ros2: Option<Ros2Wire>,
    /// The CDR of the message being written (reused; with `ros2`).
    out: Vec<u8>,
    /// Samples of the ROS 2 type that held no readable message (a foreign publisher).
    malformed: u64,
    poll: Poll,
    events: Events,
    /// Current matched counts, from the status events seen so far.
    writer_matched: i32,
    reader_matched: i32,
    addr: Address,
    _participant: participant::Held,
}

/// The reader: of mwperf_msgs/msg/Bytes, or of a ROS 2 type read as its CDR (`ros2`).
enum Reader {
    Bytes(DataReader<BytesMsg, BytesCdr>),
    Raw(DataReader<RawMsg, RawCdr>),
}

impl RustDdsEndpoint {
    fn open(
        side: Side,
        spec: &Spec,
        addr: Address,
        network: &network::Network,
        security: Option<&crate::dds_security::SecurityFiles>,
        ros2: Option<Ros2Wire>,
    ) -> Result<Self, TransportError> {
        let type_name = ros2
            .as_ref()
            .map_or(cdr::TYPE_NAME.to_string(), |w| w.type_name.clone());
        let topics = [side.out_topic(), side.in_topic()]
            .into_iter()
            .flatten()
            .map(|suffix| addr.topic(suffix))
            .collect();
        let held =
            participant::session(addr.domain, network, security, spec.shared_session, topics)?;
        let participant = &held.participant.dp;
        let qos = qos::policies(&spec.qos);
        let topic = |suffix: &str| {
            participant
                .create_topic(
                    addr.topic(suffix),
                    type_name.clone(),
                    &qos,
                    TopicKind::NoKey,
                )
                .map_err(|e| middleware(&format!("topic {}", addr.topic(suffix)), e))
        };
        let writer = match side.out_topic() {
            Some(suffix) => {
                let t = topic(suffix)?;
                let publisher = participant
                    .create_publisher(&qos)
                    .map_err(|e| middleware("publisher", e))?;
                Some(
                    publisher
                        .create_datawriter_no_key::<Encoded, BytesCdr>(&t, Some(qos.clone()))
                        .map_err(|e| middleware("writer", e))?,
                )
            }
            None => None,
        };
        let mut reader = match side.in_topic() {
            Some(suffix) => {
                let t = topic(suffix)?;
                let subscriber = participant
                    .create_subscriber(&qos)
                    .map_err(|e| middleware("subscriber", e))?;
                Some(if ros2.is_some() {
                    Reader::Raw(
                        subscriber
                            .create_datareader_no_key::<RawMsg, RawCdr>(&t, Some(qos.clone()))
                            .map_err(|e| middleware("reader", e))?,
                    )
                } else {
                    Reader::Bytes(
                        subscriber
                            .create_datareader_no_key::<BytesMsg, BytesCdr>(&t, Some(qos.clone()))
                            .map_err(|e| middleware("reader", e))?,
                    )
                })
            }
            None => None,
        };
        let poll = Poll::new()?;
        match reader.as_mut() {
            Some(Reader::Bytes(r)) => poll.registry().register(r, READER, Interest::READABLE)?,
            Some(Reader::Raw(r)) => poll.registry().register(r, READER, Interest::READABLE)?,
            None => {}
        }
        Ok(RustDdsEndpoint {
            writer,
            reader,
            ros2,
            out: Vec::new(),
            malformed: 0,
            poll,
            events: Events::with_capacity(4),
            writer_matched: 0,
            reader_matched: 0,
            addr,
            _participant: held,
        })
    }

    /// Fold the status events queued so far into the matched counts.
    fn drain_status(&mut self) {
        if let Some(w) = &self.writer {
            writer_status(w, &mut self.writer_matched);
        }
        match &self.reader {
            Some(Reader::Bytes(r)) => reader_status(r, &mut self.reader_matched),
            Some(Reader::Raw(r)) => reader_status(r, &mut self.reader_matched),
            None => {}
        }
    }

    fn matched(&self) -> bool {
        (self.writer.is_none() || self.writer_matched > 0)
            && (self.reader.is_none() || self.reader_matched > 0)
    }

    /// Take one sample if there is one (never blocks).
    fn take(&mut self, buf: &mut Vec<u8>) -> Result<Option<usize>, TransportError> {
        let reader = match self.reader.as_mut() {
            None => return Ok(None),
            Some(Reader::Bytes(r)) => r,
            Some(Reader::Raw(r)) => {
                let Some(wire) = &self.ros2 else {
                    unreachable!("a raw reader is opened with --opt ros2-type")
                };
                // samples that are no readable message of the type (a foreign publisher) are
                // counted and skipped
                loop {
                    let msg = match r.take_next_sample() {
                        Ok(Some(sample)) => sample.into_value(),
                        Ok(None) => return Ok(None),
                        Err(e) => return Err(middleware("take", e)),
                    };
                    // the type's CDR as it was written: the encapsulation header, the body
                    self.out.clear();
                    self.out.extend_from_slice(&[0, u8::from(msg.little), 0, 0]);
                    self.out.extend_from_slice(&msg.body);
                    match wire.decode(&self.out) {
                        Ok(data) => {
                            buf.clear();
                            buf.extend_from_slice(data);
                            return Ok(Some(buf.len()));
                        }
                        Err(_) => self.malformed += 1,
                    }
                }
            }
        };
        match reader.take_next_sample() {
            Ok(Some(sample)) => {
                // The decoded Vec becomes the caller's buffer: no second copy.
                *buf = sample.into_value().data;
                Ok(Some(buf.len()))
            }
            Ok(None) => Ok(None),
            Err(e) => Err(middleware("take", e)),
        }
    }
}

impl Endpoint for RustDdsEndpoint {
    fn send(&mut self, msg: &[u8]) -> Result<(), TransportError> {
        let Some(writer) = &self.writer else {
            return Err(TransportError::Unsupported {
                transport: NAME,
                what: "sending on a subscribe-only (sub) endpoint".into(),
            });
        };
        // time and id mirror the mwperf header so a plain DDS tool sees them; junk gets zeros.
        let (time, id) = Header::decode_header(msg)
            .map(|h| (h.sent_ns as i64, h.seq))
            .unwrap_or((0, 0));
        let sample = match &self.ros2 {
            Some(wire) => {
                // RustDDS writes the encapsulation header itself (CDR_LE, as ours): the body
                wire.encode(&mut self.out, msg)
                    .map_err(|e| middleware("serialize", e))?;
                Encoded(::rustdds::bytes::Bytes::copy_from_slice(&self.out[4..]))
            }
            None => cdr::encode(msg, time, id).map_err(|e| middleware("serialize", e))?,
        };
        writer.write(sample, None).map_err(|e| match e {
            ::rustdds::dds::result::WriteError::WouldBlock { .. } => TransportError::Blocked {
                transport: NAME,
                detail: format!(
                    "reliable send window still full after {} ms (is the reader keeping up?)",
                    qos::MAX_BLOCKING_MS
                ),
            },
            other => middleware("write", other),
        })
    }

    fn recv(&mut self, buf: &mut Vec<u8>, wait_ns: u64) -> Result<Option<usize>, TransportError> {
        if let Some(n) = self.take(buf)? {
            return Ok(Some(n));
        }
        if wait_ns == 0 {
            return Ok(None);
        }
        let end = Instant::now() + Duration::from_nanos(wait_ns);
        loop {
            let now = Instant::now();
            if now >= end {
                return Ok(None);
            }
            let remaining = (end - now).as_nanos() as u64;
            if !wait_ready(&mut self.poll, &mut self.events, remaining)? {
                return Ok(None); // timed out, or a signal (callers check their stop flag)
            }
            // A wake-up may be stale (the sample was taken before we waited): take and retry.
            if let Some(n) = self.take(buf)? {
                return Ok(Some(n));
            }
        }
    }

    fn local_addr(&self) -> String {
        self.addr.text()
    }

    fn matched_subscribers(&mut self) -> Option<u64> {
        self.drain_status();
        self.writer
            .as_ref()
            .map(|_| self.writer_matched.max(0) as u64)
    }

    fn wait_matched(&mut self, timeout_ns: u64) -> Result<(), TransportError> {
        let start = Instant::now();
        let limit = Duration::from_nanos(timeout_ns);
        loop {
            self.drain_status();
            if self.matched() {
                return Ok(());
            }
            if start.elapsed() >= limit {
                let detail = format!(
                    "topics {} in domain {}: writer matched {}, reader matched {}",
                    self.addr.topic("ping|pong"),
                    self.addr.domain,
                    self.writer
                        .as_ref()
                        .map_or("-".into(), |_| self.writer_matched.to_string()),
                    self.reader
                        .as_ref()
                        .map_or("-".into(), |_| self.reader_matched.to_string()),
                );
                return Err(TransportError::NotMatched {
                    transport: NAME,
                    waited_ns: start.elapsed().as_nanos() as u64,
                    detail,
                });
            }
            // Status events arrive on RustDDS's threads; 1 ms steps bound the added delay.
            std::thread::sleep(Duration::from_millis(1).min(limit.saturating_sub(start.elapsed())));
        }
    }
}
