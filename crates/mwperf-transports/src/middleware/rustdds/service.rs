//! RustDDS request/response as ROS 2 services (see crate::service): the service `/mwperf/<base>`
//! is a request topic `rq/mwperf/<base>Request` (type `mwperf_msgs::srv::dds_::Bytes_Request_`)
//! and a reply topic `rr/mwperf/<base>Reply` (`..._Response_`), in one of ros2-client's two
//! header-less-or-not mappings, chosen with `--opt service-mapping`:
//!
//! - `cyclone` (default; rmw_cyclonedds's and ros2-client's `Cyclone`): every sample starts with
//!   a 16-byte header, the client's id (`guid`: a u64 folded from its request writer's GUID) and
//!   its call counter (`seq`, the call id); the server echoes both; a client keeps the replies
//!   with its own guid.
//! - `enhanced` (rmw_fastrtps's and ros2-client's `Enhanced`): no header; matching rides the RTPS
//!   sample identities in the DATA's inline QoS (RustDDS writes PID 0x0083 and Fast DDS's
//!   0x800f, reads either). The client writes each request with `related_sample_identity` =
//!   (its reply reader's GUID, SN unknown), as rmw_fastrtps; the call id is the request's own
//!   SN. The server's request id is (the related GUID if the request had one, else the request
//!   writer's; the request's SN) and goes out as the reply's `related_sample_identity`; a client
//!   keeps replies whose related GUID is its reply reader's or its request writer's, the related
//!   SN being the call id.
//!
//! Why `cyclone` is the default: RustDDS 0.15.1 serializes the inline QoS of a DATA_FRAG
//! submessage as a speedy `Option` (`DataFrag::write_to` writes `&self.inline_qos`, adding a
//! one-byte tag before the parameter list; `Data::write_to` unwraps it), so every fragmented
//! sample that carries a related sample identity is malformed on the wire and lost (measured:
//! replies up to 65 000 bytes arrive, 70 000 never; without the identity both do). The
//! `enhanced` mapping therefore refuses requests and replies above [`ENHANCED_MAX`] bytes
//! (RustDDS fragments above about 64 KiB on loopback; over a real interface the path MTU sets a
//! much lower limit, about 1.4 KB, which is not checked).
//!
//! Replies of other clients (the reply topic is shared) and samples this side cannot read (too
//! short for the header or the sequence, no identity) are dropped; a client counts both in
//! [`Client::others_replies`], a server in its `unreadable` count.
//!
//! QoS: `spec.qos` on both topics (its default is ROS 2's services profile: reliable, volatile,
//! keep-last 10). Client and server each need a participant of their own (RustDDS never delivers
//! between a writer and a reader of one participant).

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::time::{Duration, Instant};

use ::rustdds::mio1::{Events, Interest, Poll};
use ::rustdds::no_key::{DataReader, DataWriter};
use ::rustdds::with_key::WriteOptionsBuilder;
use ::rustdds::{RTPSEntity, SampleIdentity, SequenceNumber, TopicKind, GUID};

use super::cdr::{self, CycloneHeader, Encoded, RawCdr, RawMsg};
use super::{
    middleware, network, participant, qos, reader_status, wait_ready, writer_status, NAME, READER,
};
use crate::middleware::dds_address::Address;
use crate::service::{CallId, Client, Reply, Server, Token};
use crate::{Spec, TransportError};

/// Largest request or reply body of the `enhanced` mapping (see the module docs).
pub const ENHANCED_MAX: usize = 64_000;

/// How requests are matched to replies (`--opt service-mapping`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mapping {
    Cyclone,
    Enhanced,
}

impl Mapping {
    fn parse(value: Option<&str>) -> Result<Mapping, TransportError> {
        match value {
            None | Some("cyclone") => Ok(Mapping::Cyclone),
            Some("enhanced") => Ok(Mapping::Enhanced),
            Some(v) => Err(TransportError::Unsupported {
                transport: NAME,
                what: format!("--opt service-mapping={v} (allowed: cyclone, enhanced)"),
            }),
        }
    }
}

pub fn client(spec: &Spec) -> Result<Box<dyn Client>, TransportError> {
    let pair = Pair::open(spec, false)?;
    let mine = [pair.reader.guid(), pair.writer.guid()];
    let mut h = std::collections::hash_map::DefaultHasher::new();
    mine[1].hash(&mut h);
    Ok(Box::new(RustDdsClient {
        pair,
        mine,
        guid: h.finish(),
        next: 0,
        others: 0,
    }))
}

pub fn server(spec: &Spec) -> Result<Box<dyn Server>, TransportError> {
    Ok(Box::new(RustDdsServer {
        pair: Pair::open(spec, true)?,
        pending: HashMap::new(),
        next: 0,
        unreadable: 0,
    }))
}

/// One side's writer and reader (client: request writer, reply reader; server: the reverse).
struct Pair {
    // Fields drop in order: reader and writer before the participant that runs them.
    writer: DataWriter<Encoded, RawCdr>,
    reader: DataReader<RawMsg, RawCdr>,
    mapping: Mapping,
    poll: Poll,
    events: Events,
    writer_matched: i32,
    reader_matched: i32,
    out_topic: String,
    in_topic: String,
    addr: Address,
    _participant: participant::Held,
}

/// A received sample: its body (the data only, once read), its own identity and the identity it
/// relates to (enhanced), its header (cyclone); `header` None with `readable` false: unreadable.
struct Got {
    msg: RawMsg,
    identity: SampleIdentity,
    related: Option<SampleIdentity>,
    header: Option<CycloneHeader>,
    readable: bool,
}

impl Pair {
    fn open(spec: &Spec, server: bool) -> Result<Pair, TransportError> {
        let opts = spec.options_of(&super::super::rustdds_descriptor::DESCRIPTOR)?;
        if opts.get(super::super::ros2_wire::OPT).is_some() {
            return Err(TransportError::Unsupported {
                transport: NAME,
                what: "--opt ros2-type with services (it carries topics in a ROS 2 message type; services keep mwperf_msgs/srv/Bytes; allowed for services: network, service-mapping)".into(),
            });
        }
        let network = network::Network::parse(opts.get("network"))?;
        let security = super::security_of(&opts)?;
        let mapping = Mapping::parse(opts.get("service-mapping"))?;
        let addr = Address::parse(NAME, &spec.addr, server)?;
        let (rq, rr) = addr.service_topics();
        let ((out_topic, out_type), (in_topic, in_type)) = if server {
            ((rr, cdr::RESPONSE_TYPE_NAME), (rq, cdr::REQUEST_TYPE_NAME))
        } else {
            ((rq, cdr::REQUEST_TYPE_NAME), (rr, cdr::RESPONSE_TYPE_NAME))
        };
        let held = participant::session(
            addr.domain,
            &network,
            security.as_ref(),
            spec.shared_session,
            vec![out_topic.clone(), in_topic.clone()],
        )?;
        let dp = &held.participant.dp;
        let qos = qos::policies(&spec.qos);
        let topic = |name: &str, type_name: &str| {
            dp.create_topic(
                name.to_string(),
                type_name.to_string(),
                &qos,
                TopicKind::NoKey,
            )
            .map_err(|e| middleware(&format!("topic {name}"), e))
        };
        let t_out = topic(&out_topic, out_type)?;
        let t_in = topic(&in_topic, in_type)?;
        let writer = dp
            .create_publisher(&qos)
            .map_err(|e| middleware("publisher", e))?
            .create_datawriter_no_key::<Encoded, RawCdr>(&t_out, Some(qos.clone()))
            .map_err(|e| middleware(&format!("writer on {out_topic}"), e))?;
        let mut reader = dp
            .create_subscriber(&qos)
            .map_err(|e| middleware("subscriber", e))?
            .create_datareader_no_key::<RawMsg, RawCdr>(&t_in, Some(qos.clone()))
            .map_err(|e| middleware(&format!("reader on {in_topic}"), e))?;
        let poll = Poll::new()?;
        poll.registry()
            .register(&mut reader, READER, Interest::READABLE)?;
        Ok(Pair {
            writer,
            reader,
            mapping,
            poll,
            events: Events::with_capacity(4),
            writer_matched: 0,
            reader_matched: 0,
            out_topic,
            in_topic,
            addr,
            _participant: held,
        })
    }

    /// Write one sample: `header` first (cyclone), relating to `related` (enhanced); the
    /// identity RustDDS gave it.
    fn write(
        &self,
        data: &[u8],
        header: Option<CycloneHeader>,
        related: Option<SampleIdentity>,
    ) -> Result<SampleIdentity, TransportError> {
        if self.mapping == Mapping::Enhanced && data.len() > ENHANCED_MAX {
            return Err(TransportError::TooLarge {
                size: data.len(),
                max: ENHANCED_MAX,
                transport: "rustdds (--opt service-mapping=enhanced: RustDDS 0.15.1 loses fragmented samples that carry a sample identity; the cyclone mapping has no limit)",
            });
        }
        let sample = cdr::encode_service(header, data).map_err(|e| middleware("serialize", e))?;
        let options = WriteOptionsBuilder::new()
            .related_sample_identity_opt(related)
            .build();
        self.writer
            .write_with_options(sample, options)
            .map_err(|e| match e {
                ::rustdds::dds::result::WriteError::WouldBlock { .. } => {
                    TransportError::Middleware {
                        transport: NAME,
                        detail: format!(
                            "reliable send window on {} still full after {} ms (is the reader keeping up?)",
                            self.out_topic,
                            qos::MAX_BLOCKING_MS
                        ),
                    }
                }
                other => middleware(&format!("write on {}", self.out_topic), other),
            })
    }

    /// Take one sample if there is one (never blocks), read per the mapping.
    fn take(&mut self) -> Result<Option<Got>, TransportError> {
        match self.reader.take_next_sample() {
            Ok(Some(sample)) => {
                let info = sample.sample_info();
                let (identity, related) = (info.sample_identity(), info.related_sample_identity());
                let mut msg = sample.into_value();
                let read = cdr::decode_service(&mut msg, self.mapping == Mapping::Cyclone);
                Ok(Some(Got {
                    msg,
                    identity,
                    related,
                    header: read.flatten(),
                    readable: read.is_some(),
                }))
            }
            Ok(None) => Ok(None),
            Err(e) => Err(middleware(&format!("take from {}", self.in_topic), e)),
        }
    }

    /// Take one sample, waiting until `end` when none is there.
    fn take_until(&mut self, end: Instant) -> Result<Option<Got>, TransportError> {
        loop {
            if let Some(got) = self.take()? {
                return Ok(Some(got));
            }
            let now = Instant::now();
            if now >= end {
                return Ok(None);
            }
            let remaining = (end - now).as_nanos() as u64;
            if !wait_ready(&mut self.poll, &mut self.events, remaining)? {
                return Ok(None); // timed out, or a signal (callers check their stop flag)
            }
        }
    }
}

struct RustDdsClient {
    pair: Pair,
    /// Enhanced: the related GUIDs a reply to this client carries (reply reader, request writer).
    mine: [GUID; 2],
    /// Cyclone: this client's header guid.
    guid: u64,
    next: i64,
    others: u64,
}

impl Client for RustDdsClient {
    fn wait_matched(&mut self, timeout_ns: u64) -> Result<(), TransportError> {
        let start = Instant::now();
        let limit = Duration::from_nanos(timeout_ns);
        let p = &mut self.pair;
        loop {
            writer_status(&p.writer, &mut p.writer_matched);
            reader_status(&p.reader, &mut p.reader_matched);
            if p.writer_matched > 0 && p.reader_matched > 0 {
                return Ok(());
            }
            if start.elapsed() >= limit {
                return Err(TransportError::NotMatched {
                    transport: NAME,
                    waited_ns: start.elapsed().as_nanos() as u64,
                    detail: format!(
                        "domain {}: readers on {}: {}, writers on {}: {}",
                        p.addr.domain, p.out_topic, p.writer_matched, p.in_topic, p.reader_matched
                    ),
                });
            }
            // Status events arrive on RustDDS's threads; 1 ms steps bound the added delay.
            std::thread::sleep(Duration::from_millis(1).min(limit.saturating_sub(start.elapsed())));
        }
    }

    fn call(&mut self, request: &[u8]) -> Result<CallId, TransportError> {
        match self.pair.mapping {
            Mapping::Cyclone => {
                self.next += 1;
                self.pair
                    .write(request, Some((self.guid, self.next)), None)?;
                Ok(self.next as CallId)
            }
            Mapping::Enhanced => {
                // As rmw_fastrtps: the reply reader's GUID, the sequence number unknown.
                let related = SampleIdentity {
                    writer_guid: self.mine[0],
                    sequence_number: SequenceNumber::UNKNOWN,
                };
                let id = self.pair.write(request, None, Some(related))?;
                Ok(i64::from(id.sequence_number) as CallId)
            }
        }
    }

    fn recv_reply(
        &mut self,
        buf: &mut Vec<u8>,
        wait_ns: u64,
    ) -> Result<Option<Reply>, TransportError> {
        let end = Instant::now() + Duration::from_nanos(wait_ns);
        loop {
            let Some(got) = self.pair.take_until(end)? else {
                return Ok(None);
            };
            let call = match (self.pair.mapping, got.readable) {
                (_, false) => None,
                (Mapping::Cyclone, true) => got
                    .header
                    .filter(|(guid, _)| *guid == self.guid)
                    .map(|(_, seq)| seq as CallId),
                (Mapping::Enhanced, true) => got
                    .related
                    .filter(|r| self.mine.contains(&r.writer_guid))
                    .map(|r| i64::from(r.sequence_number) as CallId),
            };
            match call {
                Some(call) => {
                    *buf = got.msg.body; // the decoded Vec becomes the caller's buffer
                    return Ok(Some(Reply { call, ok: true }));
                }
                // another client's reply (the topic is shared), or one this client cannot read
                None => self.others += 1,
            }
        }
    }

    fn others_replies(&self) -> u64 {
        self.others
    }
}

/// What a reply needs of its request.
enum Pending {
    Cyclone(CycloneHeader),
    Enhanced(SampleIdentity),
}

struct RustDdsServer {
    pair: Pair,
    pending: HashMap<Token, Pending>,
    next: Token,
    /// Requests dropped because they could not be read (too short for the header or the
    /// sequence).
    unreadable: u64,
}

impl Server for RustDdsServer {
    fn local_addr(&self) -> String {
        self.pair.addr.text()
    }

    fn recv_request(
        &mut self,
        buf: &mut Vec<u8>,
        wait_ns: u64,
    ) -> Result<Option<Token>, TransportError> {
        let end = Instant::now() + Duration::from_nanos(wait_ns);
        loop {
            let Some(got) = self.pair.take_until(end)? else {
                return Ok(None);
            };
            let pending = match (got.readable, got.header) {
                (false, _) => {
                    self.unreadable += 1;
                    continue;
                }
                (true, Some(header)) => Pending::Cyclone(header),
                // rmw_fastrtps's request id: the related GUID if known (the client's reply
                // reader), else the request writer's; the request's own sequence number.
                (true, None) => Pending::Enhanced(SampleIdentity {
                    writer_guid: match got.related {
                        Some(r) if r.writer_guid != GUID::GUID_UNKNOWN => r.writer_guid,
                        _ => got.identity.writer_guid,
                    },
                    sequence_number: got.identity.sequence_number,
                }),
            };
            *buf = got.msg.body;
            self.next += 1;
            self.pending.insert(self.next, pending);
            return Ok(Some(self.next));
        }
    }

    fn reply(&mut self, token: Token, reply: &[u8]) -> Result<(), TransportError> {
        let request = self
            .pending
            .remove(&token)
            .ok_or_else(|| TransportError::Middleware {
                transport: NAME,
                detail: format!("no pending request {token} to answer"),
            })?;
        let (header, related) = match request {
            Pending::Cyclone(h) => (Some(h), None),
            Pending::Enhanced(id) => (None, Some(id)),
        };
        self.pair.write(reply, header, related).map(|_| ())
    }
}
