//! Cyclone DDS request/response the rmw_cyclonedds way (see crate::service): the service
//! `/mwperf/<base>` is a request topic `rq/mwperf/<base>Request` (type
//! `mwperf_msgs::srv::dds_::Bytes_Request_`) and a reply topic `rr/mwperf/<base>Reply` (type
//! `..._Response_`); every sample starts with rmw_cyclonedds's 16-byte header, the client's
//! request-writer instance handle (`guid`) and its call counter (`seq`), then the body
//! (`sequence<octet> data`, the caller's bytes). The IDL structs `{guid, seq, data}` put those
//! bytes on the wire exactly (idl/mwperf_msgs.idl). The server echoes guid and seq; every client
//! reads the one reply topic and keeps the replies with its own guid (the others are counted,
//! [`Client::others_replies`]). The call id is `seq`.
//!
//! Foreign samples: a request or reply too short for the header, or whose body is not a valid
//! sequence, fails Cyclone's deserialization (the generated type's checks), so Cyclone drops it
//! before `take`; a well-formed sample of another client is counted and dropped.
//!
//! QoS: `spec.qos` on both topics (its default is ROS 2's services profile: reliable, volatile,
//! keep-last 10). Options as for topics (`max-blocking`, `config`); `ros-node` is refused.

use crate::service::{Client, Server};
use crate::{Spec, TransportError};

#[cfg(mwperf_cyclonedds)]
pub fn client(spec: &Spec) -> Result<Box<dyn Client>, TransportError> {
    Ok(Box::new(imp::CycloneClient::open(spec)?))
}

#[cfg(mwperf_cyclonedds)]
pub fn server(spec: &Spec) -> Result<Box<dyn Server>, TransportError> {
    Ok(Box::new(imp::CycloneServer::open(spec)?))
}

#[cfg(not(mwperf_cyclonedds))]
pub fn client(spec: &Spec) -> Result<Box<dyn Client>, TransportError> {
    super::open(crate::Side::Ping, spec).map(|_| unreachable!("built without Cyclone DDS"))
}

#[cfg(not(mwperf_cyclonedds))]
pub fn server(spec: &Spec) -> Result<Box<dyn Server>, TransportError> {
    super::open(crate::Side::Pong, spec).map(|_| unreachable!("built without Cyclone DDS"))
}

#[cfg(mwperf_cyclonedds)]
mod imp {
    use std::collections::HashMap;
    use std::ffi::c_void;

    use super::super::super::dds_address::Address;
    use super::super::ffi::{self, Api, SampleInfo, SeqOctet, SrvBytes};
    use super::super::sample::Sample;
    use super::super::{
        check, create_topic, create_writer, domain, max_blocking, participant, qos, reader_matched,
        reader_with_waitset, wait, writer_matched, T,
    };
    use crate::service::{CallId, Client, Reply, Server, Token};
    use crate::session::SessionRef;
    use crate::{Spec, TransportError};

    /// One side's writer and reader (client: request writer, reply reader; server: the reverse),
    /// in a participant of its own; everything deleted on drop.
    struct Pair {
        api: &'static Api,
        /// Where the entities live; dropped after them (fields drop after `Drop::drop`).
        _participant: SessionRef<participant::Participant>,
        writer: ffi::dds_entity_t,
        out_topic: String,
        reader: ffi::dds_entity_t,
        waitset: ffi::dds_entity_t,
        in_topic: String,
        /// Topics, then the reader/writer/waitset as they were created (deleted in reverse).
        entities: Vec<ffi::dds_entity_t>,
        sample: Sample<SrvBytes>,
        addr: Address,
    }

    // SAFETY: entity handles are plain integers; Cyclone is thread-safe; the sample is ours.
    unsafe impl Send for Pair {}

    impl Pair {
        fn open(spec: &Spec, server: bool) -> Result<Pair, TransportError> {
            let opts = spec.options_of(&super::super::super::cyclonedds_descriptor::DESCRIPTOR)?;
            if opts.get("ros-node").is_some() {
                return Err(TransportError::Unsupported {
                    transport: T,
                    what: "--opt ros-node with services (announcing a client or service on ros_discovery_info is not implemented; allowed for services: max-blocking, config)".into(),
                });
            }
            if opts.get(super::super::super::ros2_wire::OPT).is_some() {
                return Err(TransportError::Unsupported {
                    transport: T,
                    what: "--opt ros2-type with services (it carries topics in a ROS 2 message type; services keep mwperf_msgs/srv/Bytes; allowed for services: max-blocking, config)".into(),
                });
            }
            let max_blocking = max_blocking(&opts)?;
            let addr = Address::parse(T, &spec.addr, server)?;
            let api = ffi::api()?;
            domain::ensure(api, addr.domain, opts.get("config"))?;
            let shared = participant::Participant::session(api, addr.domain, spec.shared_session)?;
            let dp = shared.handle;
            let (rq, rr) = addr.service_topics();
            let (rq_type, rr_type) = ffi::service_descriptors();
            let ((out_topic, out_type), (in_topic, in_type)) = if server {
                ((rr, rr_type), (rq, rq_type))
            } else {
                ((rq, rq_type), (rr, rr_type))
            };
            let mut pair = Pair {
                api,
                _participant: shared,
                writer: 0,
                out_topic,
                reader: 0,
                waitset: 0,
                in_topic,
                entities: Vec::new(),
                sample: Sample::new(api),
                addr,
            };
            let qos = qos::build(api, &spec.qos, max_blocking)?;
            let t_out = create_topic(api, dp, out_type, &pair.out_topic)?;
            pair.entities.push(t_out);
            let t_in = create_topic(api, dp, in_type, &pair.in_topic)?;
            pair.entities.push(t_in);
            pair.writer = create_writer(api, dp, t_out, &qos, &pair.out_topic, &spec.qos)?;
            pair.entities.push(pair.writer);
            let (r, ws) = reader_with_waitset(api, dp, t_in, &qos, &pair.in_topic, &spec.qos)?;
            pair.entities.extend([r, ws]);
            (pair.reader, pair.waitset) = (r, ws);
            Ok(pair)
        }

        /// Write one sample: the header, then `data` (not copied before Cyclone serializes it).
        fn write(&self, guid: u64, seq: i64, data: &[u8]) -> Result<(), TransportError> {
            let len = u32::try_from(data.len()).map_err(|_| TransportError::TooLarge {
                size: data.len(),
                max: u32::MAX as usize,
                transport: T,
            })?;
            let sample = SrvBytes {
                guid,
                seq,
                data: SeqOctet {
                    maximum: len,
                    length: len,
                    buffer: data.as_ptr() as *mut u8,
                    release: false,
                },
            };
            // SAFETY: valid writer; the sample points into `data`, alive for the call; Cyclone
            // serializes it before returning and never frees it (release = false).
            let rc = unsafe {
                (self.api.dds_write)(self.writer, (&sample as *const SrvBytes).cast::<c_void>())
            };
            if rc == ffi::DDS_RETCODE_TIMEOUT {
                return Err(TransportError::Middleware {
                    transport: T,
                    detail: format!("write on {} timed out: the reliable history is full of unacknowledged samples (--opt max-blocking, --history)", self.out_topic),
                });
            }
            check(self.api, rc, format_args!("writing on {}", self.out_topic)).map(|_| ())
        }

        /// Take one sample with data (its header; the body stays in `self.sample`).
        fn take(&mut self) -> Result<Option<(u64, i64)>, TransportError> {
            loop {
                let mut info = SampleInfo::default();
                let mut ptr = self.sample.as_mut_ptr();
                // SAFETY: one sample slot of the generated type and one info slot.
                let n = unsafe { (self.api.dds_take)(self.reader, &mut ptr, &mut info, 1, 1) };
                check(self.api, n, format_args!("taking from {}", self.in_topic))?;
                if n == 0 {
                    return Ok(None);
                }
                if info.valid_data {
                    let v = self.sample.value();
                    return Ok(Some((v.guid, v.seq)));
                }
            }
        }

        /// Take one sample, waiting at most `wait_ns` (once) when none is there.
        fn take_within(&mut self, wait_ns: u64) -> Result<Option<(u64, i64)>, TransportError> {
            if let Some(h) = self.take()? {
                return Ok(Some(h));
            }
            if wait_ns == 0 || !wait(self.api, self.waitset, wait_ns)? {
                return Ok(None);
            }
            self.take()
        }

        fn body_into(&self, buf: &mut Vec<u8>) {
            buf.clear();
            buf.extend_from_slice(self.sample.data());
        }
    }

    impl Drop for Pair {
        fn drop(&mut self) {
            for &e in self.entities.iter().rev() {
                // SAFETY: each entity is ours and deleted once (topics last).
                unsafe { (self.api.dds_delete)(e) };
            }
        }
    }

    pub struct CycloneClient {
        pair: Pair,
        /// This client's request-writer instance handle: the header's guid.
        guid: u64,
        next: i64,
        others: u64,
    }

    impl CycloneClient {
        pub fn open(spec: &Spec) -> Result<CycloneClient, TransportError> {
            let pair = Pair::open(spec, false)?;
            let mut guid = 0u64;
            // SAFETY: valid writer, one writable u64.
            let rc = unsafe { (pair.api.dds_get_instance_handle)(pair.writer, &mut guid) };
            check(pair.api, rc, "the request writer's instance handle")?;
            Ok(CycloneClient {
                pair,
                guid,
                next: 0,
                others: 0,
            })
        }
    }

    impl Client for CycloneClient {
        fn wait_matched(&mut self, timeout_ns: u64) -> Result<(), TransportError> {
            let p = &self.pair;
            super::super::super::dds_match::wait_matched(
                T,
                p.addr.domain,
                Some(&p.out_topic),
                Some(&p.in_topic),
                timeout_ns,
                || {
                    Ok((
                        Some(writer_matched(p.api, p.writer, &p.out_topic)?),
                        Some(reader_matched(p.api, p.reader, &p.in_topic)?),
                    ))
                },
            )
        }

        fn call(&mut self, request: &[u8]) -> Result<CallId, TransportError> {
            self.next += 1;
            self.pair.write(self.guid, self.next, request)?;
            Ok(self.next as CallId)
        }

        fn recv_reply(
            &mut self,
            buf: &mut Vec<u8>,
            wait_ns: u64,
        ) -> Result<Option<Reply>, TransportError> {
            let end = mwperf_core::clock::now_ns().saturating_add(wait_ns);
            loop {
                let left = end.saturating_sub(mwperf_core::clock::now_ns());
                match self.pair.take_within(left)? {
                    None => return Ok(None),
                    // another client's (the reply topic is shared): count, look again
                    Some((guid, _)) if guid != self.guid => self.others += 1,
                    Some((_, seq)) => {
                        self.pair.body_into(buf);
                        return Ok(Some(Reply {
                            call: seq as CallId,
                            ok: true,
                        }));
                    }
                }
            }
        }

        fn others_replies(&self) -> u64 {
            self.others
        }
    }

    pub struct CycloneServer {
        pair: Pair,
        /// The header of each request not answered yet, by token.
        pending: HashMap<Token, (u64, i64)>,
        next: Token,
    }

    impl CycloneServer {
        pub fn open(spec: &Spec) -> Result<CycloneServer, TransportError> {
            Ok(CycloneServer {
                pair: Pair::open(spec, true)?,
                pending: HashMap::new(),
                next: 0,
            })
        }
    }

    impl Server for CycloneServer {
        fn local_addr(&self) -> String {
            self.pair.addr.text()
        }

        fn recv_request(
            &mut self,
            buf: &mut Vec<u8>,
            wait_ns: u64,
        ) -> Result<Option<Token>, TransportError> {
            let Some(header) = self.pair.take_within(wait_ns)? else {
                return Ok(None);
            };
            self.pair.body_into(buf);
            self.next += 1;
            self.pending.insert(self.next, header);
            Ok(Some(self.next))
        }

        fn reply(&mut self, token: Token, reply: &[u8]) -> Result<(), TransportError> {
            let (guid, seq) =
                self.pending
                    .remove(&token)
                    .ok_or_else(|| TransportError::Middleware {
                        transport: T,
                        detail: format!("no pending request {token} to answer"),
                    })?;
            self.pair.write(guid, seq, reply)
        }
    }
}
