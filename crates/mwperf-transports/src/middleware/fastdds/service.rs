//! Fast DDS request/response the rmw_fastrtps way (see crate::service): the service
//! `/mwperf/<base>` is a request topic `rq/mwperf/<base>Request` (type
//! `mwperf_msgs::srv::dds_::Bytes_Request_`) and a reply topic `rr/mwperf/<base>Reply`
//! (`..._Response_`), both `sequence<octet> data` with no header; requests and replies are
//! matched by RTPS sample identities (the shim's `mwfd_write_related` / `mwfd_take_info`):
//! - the client writes each request with `related_sample_identity` = (its reply reader's GUID,
//!   SN unknown) (rmw_fastrtps `rmw_send_request`); the call id is the request's own SN;
//! - the server's request id is (the related GUID if known, else the request writer's GUID; the
//!   request's SN), written back as the reply's `related_sample_identity`;
//! - a client keeps the replies whose related GUID is its reply reader's or its request
//!   writer's, the related SN being the call id; other clients' replies (the reply topic is
//!   shared) are counted ([`Client::others_replies`]) and dropped.
//!
//! Foreign payloads that are not a `sequence<octet>` (rmw_cyclonedds's 16-byte header read as a
//! length) fail the shim's deserializer and Fast DDS drops them. Unlike rmw_fastrtps the server
//! does not wait for the client's reply reader to match before it answers: a reply racing
//! discovery is lost like any early sample (the caller times the call out).
//!
//! QoS and options as for topics (`spec.qos` on both topics; its default is ROS 2's services
//! profile: reliable, volatile, keep-last 10).

use crate::service::{Client, Server};
use crate::{Spec, TransportError};

#[cfg(mwperf_fastdds)]
pub fn client(spec: &Spec) -> Result<Box<dyn Client>, TransportError> {
    Ok(Box::new(imp::FastddsClient::open(spec)?))
}

#[cfg(mwperf_fastdds)]
pub fn server(spec: &Spec) -> Result<Box<dyn Server>, TransportError> {
    Ok(Box::new(imp::FastddsServer::open(spec)?))
}

#[cfg(not(mwperf_fastdds))]
pub fn client(spec: &Spec) -> Result<Box<dyn Client>, TransportError> {
    super::open(crate::Side::Ping, spec).map(|_| unreachable!("built without Fast DDS"))
}

#[cfg(not(mwperf_fastdds))]
pub fn server(spec: &Spec) -> Result<Box<dyn Server>, TransportError> {
    super::open(crate::Side::Pong, spec).map(|_| unreachable!("built without Fast DDS"))
}

#[cfg(mwperf_fastdds)]
mod imp {
    use std::collections::HashMap;

    use super::super::{FastddsEndpoint, MAX_WAIT_NS, T};
    use crate::middleware::dds_address::Address;
    use crate::service::{CallId, Client, Reply, Server, Token};
    use crate::{Spec, TransportError};

    const REQUEST_TYPE: &str = "mwperf_msgs::srv::dds_::Bytes_Request_";
    const RESPONSE_TYPE: &str = "mwperf_msgs::srv::dds_::Bytes_Response_";
    /// `SequenceNumber_t::unknown()` {-1, 0} as high << 32 | low.
    const SN_UNKNOWN: i64 = -1 << 32;

    /// A sample identity: writer GUID (16 bytes) and sequence number.
    type Identity = ([u8; 16], i64);

    /// One received sample's identities (the body is in the caller's buffer).
    struct Got {
        own: Identity,
        related: Identity,
    }

    fn open(spec: &Spec, server: bool) -> Result<FastddsEndpoint, TransportError> {
        let addr = Address::parse(T, &spec.addr, server)?;
        let (rq, rr) = addr.service_topics();
        let (out, in_) = if server {
            ((rr, RESPONSE_TYPE), (rq, REQUEST_TYPE))
        } else {
            ((rq, REQUEST_TYPE), (rr, RESPONSE_TYPE))
        };
        FastddsEndpoint::open_topics(
            spec,
            addr,
            Some((out.0, Some(out.1))),
            Some((in_.0, Some(in_.1))),
        )
    }

    impl FastddsEndpoint {
        /// Write `data` relating to `related`; the written sample's SN.
        fn write_related(&self, data: &[u8], related: Identity) -> Result<i64, TransportError> {
            let name = self.out_topic.as_deref().unwrap_or("?");
            let len = u32::try_from(data.len()).map_err(|_| TransportError::TooLarge {
                size: data.len(),
                max: u32::MAX as usize,
                transport: T,
            })?;
            let (mut guid, mut sn) = ([0u8; 16], 0i64);
            // SAFETY: valid handle; data and related live for the call (Fast DDS serializes
            // before returning); guid/sn are writable.
            let rc = unsafe {
                (self.api.write_related)(
                    self.ep,
                    data.as_ptr(),
                    len,
                    related.0.as_ptr(),
                    related.1,
                    guid.as_mut_ptr(),
                    &mut sn,
                )
            };
            match rc {
                0 => Ok(sn),
                -1 => Err(TransportError::Middleware { transport: T, detail: format!("write on {name} failed: with reliable QoS the history stayed full of unacknowledged samples for --opt max-blocking (--history)") }),
                _ => Err(TransportError::Middleware { transport: T, detail: format!("write on {name} failed") }),
            }
        }

        /// Take one sample into `buf` with its identities (never blocks).
        fn take_info(&mut self, buf: &mut Vec<u8>) -> Result<Option<Got>, TransportError> {
            let (mut data, mut len): (*const u8, u32) = (std::ptr::null(), 0);
            let mut got = Got {
                own: ([0; 16], 0),
                related: ([0; 16], 0),
            };
            // SAFETY: valid handle; the out pointers are writable; data/len point into the
            // shim's sample until the next take.
            let rc = unsafe {
                (self.api.take_info)(
                    self.ep,
                    &mut data,
                    &mut len,
                    got.own.0.as_mut_ptr(),
                    &mut got.own.1,
                    got.related.0.as_mut_ptr(),
                    &mut got.related.1,
                )
            };
            match rc {
                1 => {
                    buf.clear();
                    if len > 0 {
                        // SAFETY: the shim's sample holds len bytes at data.
                        buf.extend_from_slice(unsafe {
                            std::slice::from_raw_parts(data, len as usize)
                        });
                    }
                    Ok(Some(got))
                }
                0 => Ok(None),
                _ => Err(TransportError::Middleware {
                    transport: T,
                    detail: format!("taking from {}", self.in_topic.as_deref().unwrap_or("?")),
                }),
            }
        }

        /// Take one sample, waiting (once) at most `wait_ns` when none is there.
        fn take_info_within(
            &mut self,
            buf: &mut Vec<u8>,
            wait_ns: u64,
        ) -> Result<Option<Got>, TransportError> {
            if let Some(got) = self.take_info(buf)? {
                return Ok(Some(got));
            }
            if wait_ns == 0 {
                return Ok(None);
            }
            // SAFETY: valid handle with a reader.
            if unsafe { (self.api.wait)(self.ep, wait_ns.min(MAX_WAIT_NS) as i64) } <= 0 {
                return Ok(None);
            }
            self.take_info(buf)
        }

        /// (writer GUID, reader GUID).
        fn guids(&self) -> Result<([u8; 16], [u8; 16]), TransportError> {
            let (mut w, mut r) = ([0u8; 16], [0u8; 16]);
            // SAFETY: valid handle, two writable 16-byte buffers.
            if unsafe { (self.api.guids)(self.ep, w.as_mut_ptr(), r.as_mut_ptr()) } < 0 {
                return Err(TransportError::Middleware {
                    transport: T,
                    detail: "reading the writer's and reader's GUIDs".into(),
                });
            }
            Ok((w, r))
        }
    }

    pub struct FastddsClient {
        ep: FastddsEndpoint,
        /// The request writer's and the reply reader's GUIDs: a reply to this client relates
        /// to one of them.
        writer: [u8; 16],
        reader: [u8; 16],
        others: u64,
    }

    impl FastddsClient {
        pub fn open(spec: &Spec) -> Result<FastddsClient, TransportError> {
            let ep = open(spec, false)?;
            let (writer, reader) = ep.guids()?;
            Ok(FastddsClient {
                ep,
                writer,
                reader,
                others: 0,
            })
        }
    }

    impl Client for FastddsClient {
        fn wait_matched(&mut self, timeout_ns: u64) -> Result<(), TransportError> {
            crate::Endpoint::wait_matched(&mut self.ep, timeout_ns)
        }

        fn call(&mut self, request: &[u8]) -> Result<CallId, TransportError> {
            // As rmw_fastrtps: the reply reader's GUID, the sequence number unknown.
            let sn = self.ep.write_related(request, (self.reader, SN_UNKNOWN))?;
            Ok(sn as CallId)
        }

        fn recv_reply(
            &mut self,
            buf: &mut Vec<u8>,
            wait_ns: u64,
        ) -> Result<Option<Reply>, TransportError> {
            let end = mwperf_core::clock::now_ns().saturating_add(wait_ns);
            loop {
                let left = end.saturating_sub(mwperf_core::clock::now_ns());
                let Some(got) = self.ep.take_info_within(buf, left)? else {
                    return Ok(None);
                };
                let (guid, sn) = got.related;
                if guid == self.reader || guid == self.writer {
                    return Ok(Some(Reply {
                        call: sn as CallId,
                        ok: true,
                    }));
                }
                // another client's reply (the topic is shared): count, look again
                self.others += 1;
            }
        }

        fn others_replies(&self) -> u64 {
            self.others
        }
    }

    pub struct FastddsServer {
        ep: FastddsEndpoint,
        /// The request id of each request not answered yet, by token.
        pending: HashMap<Token, Identity>,
        next: Token,
    }

    impl FastddsServer {
        pub fn open(spec: &Spec) -> Result<FastddsServer, TransportError> {
            Ok(FastddsServer {
                ep: open(spec, true)?,
                pending: HashMap::new(),
                next: 0,
            })
        }
    }

    impl Server for FastddsServer {
        fn local_addr(&self) -> String {
            self.ep.addr.text()
        }

        fn recv_request(
            &mut self,
            buf: &mut Vec<u8>,
            wait_ns: u64,
        ) -> Result<Option<Token>, TransportError> {
            let Some(got) = self.ep.take_info_within(buf, wait_ns)? else {
                return Ok(None);
            };
            // rmw_fastrtps's request id: the related GUID if known (the client's reply reader;
            // GUID_t::unknown() is all zeros), else the request writer's; the request's SN.
            let guid = if got.related.0 != [0; 16] {
                got.related.0
            } else {
                got.own.0
            };
            self.next += 1;
            self.pending.insert(self.next, (guid, got.own.1));
            Ok(Some(self.next))
        }

        fn reply(&mut self, token: Token, reply: &[u8]) -> Result<(), TransportError> {
            let request =
                self.pending
                    .remove(&token)
                    .ok_or_else(|| TransportError::Middleware {
                        transport: T,
                        detail: format!("no pending request {token} to answer"),
                    })?;
            self.ep.write_related(reply, request).map(|_| ())
        }
    }
}
