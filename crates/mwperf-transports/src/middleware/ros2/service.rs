//! ROS 2 services through rcl (see crate::service): an rcl service server and an rcl client
//! (`rcl_service_init` / `rcl_client_init`, `rcl_send_request`, `rcl_take_request`,
//! `rcl_send_response`, `rcl_take_response`), each waiting in its own rcl wait set, in the node
//! of the endpoint's domain ([`super::node`]: a graph node's servers and clients share one). The
//! service is `/mwperf/<base>` (DDS topics `rq/mwperf/<base>Request` and
//! `rr/mwperf/<base>Reply`, as the DDS transports name theirs), QoS as the topics'.
//!
//! **The type.** No service the installed packages ship has a byte array on both sides (the
//! ROS 2 wheels' `rcl_interfaces`, `lifecycle_msgs`, `action_msgs`, `sensor_msgs`,
//! `type_description_interfaces`; `std_srvs` and `test_msgs` on PyPI have none either), and rcl
//! has no serialized service calls, so a real type carries the bytes:
//! [`SERVICE_TYPE`], which comes with rcl itself (every ROS 2 node serves it for its
//! parameters). The request's bytes travel base64-encoded (standard alphabet, padded) in
//! `names[0]`: a ROS 2 string carries no NUL and rclpy reads it as UTF-8, so raw bytes would not
//! survive; the reply's bytes as they are in `values[0].byte_array_value` (`type` =
//! `PARAMETER_BYTE_ARRAY`). So a request of N bytes is 4⌈N/3⌉ bytes on the wire plus a
//! NUL, and no payload limit applies beyond the RMW's. A real rclpy client or server of that
//! type interoperates (tests/ros2peers). A request whose `names[0]` is no base64 (a foreign
//! client asking for parameters) is passed on as its text, so the server answers it as foreign.
//!
//! Reply matching is the RMW's: the call id is the request's sequence number
//! (`rcl_send_request`), which `rcl_take_response` returns with the reply; rmw_fastrtps_cpp
//! drops replies meant for other clients itself, so [`Client::others_replies`] stays 0.
//! `--opt type` names the topics' message type (a graph node's topics and services share the
//! node's options); a service has its one type (`mwperf run --mode service` refuses the option:
//! python/mwperf/parts/ros2.py).

use std::collections::HashMap;
use std::ffi::{c_char, CString};

use base64::engine::general_purpose::STANDARD;
use base64::Engine;

use super::super::dds_address::Address;
use super::ffi::{self, Api};
use super::node::Node;
use super::{MAX_WAIT_NS, T};
use crate::service::{CallId, Client, Reply, Server, Token};
use crate::session::SessionRef;
use crate::{Spec, TransportError};

/// The ROS 2 service type of mwperf's ros2 services.
pub const SERVICE_TYPE: &str = "rcl_interfaces/srv/GetParameters";

pub fn client(spec: &Spec) -> Result<Box<dyn Client>, TransportError> {
    Ok(Box::new(Ros2Client::open(spec)?))
}

pub fn server(spec: &Spec) -> Result<Box<dyn Server>, TransportError> {
    Ok(Box::new(Ros2Server::open(spec)?))
}

fn middleware(detail: String) -> TransportError {
    TransportError::Middleware {
        transport: T,
        detail,
    }
}

/// What both sides open with: the shim, the node, the address, the ROS 2 service name and the
/// config naming it.
struct Opening {
    api: &'static Api,
    node: SessionRef<Node>,
    addr: Address,
    name: String,
    /// The text `config.topic_out` points at.
    _c_name: CString,
    config: ffi::Config,
}

fn opening(spec: &Spec, server: bool) -> Result<Opening, TransportError> {
    let addr = Address::parse(T, &spec.addr, server)?;
    let (api, qos) = super::prepare(spec)?;
    let (rq, _) = addr.service_topics();
    let base = rq
        .strip_prefix("rq/")
        .and_then(|s| s.strip_suffix("Request"))
        .expect("service_topics names rq/<name>Request");
    let name = format!("/{base}");
    let c_name = CString::new(name.clone()).expect("service names have no NUL");
    let config = ffi::Config {
        topic_out: c_name.as_ptr(),
        topic_in: std::ptr::null(),
        type_library: std::ptr::null(),
        type_symbol: std::ptr::null(),
        reliable: qos.reliable,
        keep_all: qos.keep_all,
        depth: qos.depth,
        transient_local: qos.transient_local,
    };
    let node = Node::session(api, addr.domain, spec.shared_session)?;
    Ok(Opening {
        api,
        node,
        addr,
        name,
        _c_name: c_name,
        config,
    })
}

impl Opening {
    fn failed(&self, err: &[c_char], spec: &Spec) -> TransportError {
        middleware(format!(
            "{} (service {} of type {SERVICE_TYPE}, node {}, domain {}, {}, ROS 2 {})",
            ffi::text(err),
            self.name,
            self.node.name,
            self.addr.domain,
            spec.qos,
            self.api.installation.describe()
        ))
    }
}

/// A client of `/mwperf/<base>`.
pub struct Ros2Client {
    api: &'static Api,
    c: *mut super::service_ffi::mwr_client,
    /// The node the client lives in: closed after it, with its last entity.
    node: SessionRef<Node>,
    name: String,
    /// The request's base64 text, NUL-terminated (reused).
    text: String,
}

// SAFETY: the handle is used from one thread at a time (the client is moved, not shared); its
// node's shared parts are behind the node's lock.
unsafe impl Send for Ros2Client {}

impl Ros2Client {
    pub fn open(spec: &Spec) -> Result<Ros2Client, TransportError> {
        let o = opening(spec, false)?;
        let mut err = [0 as c_char; 512];
        let c = {
            let _entities = o.node.entities.lock().unwrap_or_else(|p| p.into_inner());
            // SAFETY: the config's strings live until the call returns; err is writable; the
            // node outlives the client (held by it).
            unsafe {
                (o.api.services.client_open)(o.node.ptr, &o.config, err.as_mut_ptr(), err.len())
            }
        };
        if c.is_null() {
            return Err(o.failed(&err, spec));
        }
        Ok(Ros2Client {
            api: o.api,
            c,
            node: o.node,
            name: o.name,
            text: String::new(),
        })
    }

    /// One reply into `buf`, without waiting.
    fn take(&mut self, buf: &mut Vec<u8>) -> Result<Option<Reply>, TransportError> {
        let (mut data, mut len, mut seq): (*const u8, usize, i64) = (std::ptr::null(), 0, 0);
        let mut err = [0 as c_char; 512];
        // SAFETY: valid handle; data/len point into the client's taken reply until the next take.
        let rc = unsafe {
            (self.api.services.client_take)(
                self.c,
                &mut data,
                &mut len,
                &mut seq,
                err.as_mut_ptr(),
                err.len(),
            )
        };
        match rc {
            1 => {
                buf.clear();
                if len > 0 && !data.is_null() {
                    // SAFETY: the shim's reply holds len bytes at data until the next take.
                    buf.extend_from_slice(unsafe { std::slice::from_raw_parts(data, len) });
                }
                Ok(Some(Reply {
                    call: seq as CallId,
                    ok: true,
                }))
            }
            0 => Ok(None),
            _ => Err(middleware(format!(
                "taking a reply of {}: {}",
                self.name,
                ffi::text(&err)
            ))),
        }
    }
}

impl Client for Ros2Client {
    /// Until `rcl_service_server_is_available` (the server's request reader and reply writer
    /// matched this client's).
    fn wait_matched(&mut self, timeout_ns: u64) -> Result<(), TransportError> {
        let start = mwperf_core::clock::now_ns();
        loop {
            // SAFETY: valid handle.
            match unsafe { (self.api.services.client_ready)(self.c) } {
                1 => return Ok(()),
                0 => {}
                _ => {
                    return Err(middleware(format!(
                        "asking whether {} is served",
                        self.name
                    )))
                }
            }
            let waited = mwperf_core::clock::now_ns().saturating_sub(start);
            if waited >= timeout_ns {
                return Err(TransportError::NotMatched {
                    transport: T,
                    waited_ns: waited,
                    detail: format!("no server of {} ({SERVICE_TYPE})", self.name),
                });
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
    }

    fn call(&mut self, request: &[u8]) -> Result<CallId, TransportError> {
        self.text.clear();
        STANDARD.encode_string(request, &mut self.text);
        let len = self.text.len();
        self.text.push('\0');
        let mut seq: i64 = 0;
        let mut err = [0 as c_char; 512];
        // SAFETY: valid handle; the text (NUL at len) lives for the call and the RMW serializes
        // it before returning.
        let rc = unsafe {
            (self.api.services.client_call)(
                self.c,
                self.text.as_ptr().cast(),
                len,
                &mut seq,
                err.as_mut_ptr(),
                err.len(),
            )
        };
        if rc != 0 {
            return Err(middleware(format!(
                "calling {}: {}",
                self.name,
                ffi::text(&err)
            )));
        }
        Ok(seq as CallId)
    }

    fn recv_reply(
        &mut self,
        buf: &mut Vec<u8>,
        wait_ns: u64,
    ) -> Result<Option<Reply>, TransportError> {
        if let Some(r) = self.take(buf)? {
            return Ok(Some(r));
        }
        if wait_ns == 0 {
            return Ok(None);
        }
        let mut err = [0 as c_char; 512];
        // SAFETY: valid handle with its wait set.
        let rc = unsafe {
            (self.api.services.client_wait)(
                self.c,
                wait_ns.min(MAX_WAIT_NS) as i64,
                err.as_mut_ptr(),
                err.len(),
            )
        };
        match rc {
            0 => Ok(None),
            1 => self.take(buf),
            _ => Err(middleware(format!(
                "waiting for replies of {}: {}",
                self.name,
                ffi::text(&err)
            ))),
        }
    }
}

impl Drop for Ros2Client {
    fn drop(&mut self) {
        let _entities = self.node.entities.lock().unwrap_or_else(|p| p.into_inner());
        // SAFETY: closed once; nothing refers to it afterwards. The node follows with its last
        // entity.
        unsafe { (self.api.services.client_close)(self.c) };
    }
}

/// A server of `/mwperf/<base>`.
pub struct Ros2Server {
    api: &'static Api,
    s: *mut super::service_ffi::mwr_server,
    node: SessionRef<Node>,
    addr: Address,
    name: String,
    /// The request id (an `rmw_request_id_t`'s bytes) of each request not answered yet.
    pending: HashMap<Token, Vec<u8>>,
    next: Token,
}

// SAFETY: as for Ros2Client.
unsafe impl Send for Ros2Server {}

impl Ros2Server {
    pub fn open(spec: &Spec) -> Result<Ros2Server, TransportError> {
        let o = opening(spec, true)?;
        let mut err = [0 as c_char; 512];
        let s = {
            let _entities = o.node.entities.lock().unwrap_or_else(|p| p.into_inner());
            // SAFETY: as in Ros2Client::open.
            unsafe {
                (o.api.services.server_open)(o.node.ptr, &o.config, err.as_mut_ptr(), err.len())
            }
        };
        if s.is_null() {
            return Err(o.failed(&err, spec));
        }
        Ok(Ros2Server {
            api: o.api,
            s,
            node: o.node,
            addr: o.addr,
            name: o.name,
            pending: HashMap::new(),
            next: 0,
        })
    }

    /// One request into `buf`, without waiting.
    fn take(&mut self, buf: &mut Vec<u8>) -> Result<Option<Token>, TransportError> {
        let (mut text, mut len): (*const u8, usize) = (std::ptr::null(), 0);
        let mut id = vec![0u8; self.api.services.request_id_size];
        let mut err = [0 as c_char; 512];
        // SAFETY: valid handle; id has request_id_size bytes; text/len point into the server's
        // taken request until the next take.
        let rc = unsafe {
            (self.api.services.server_take)(
                self.s,
                &mut text,
                &mut len,
                id.as_mut_ptr(),
                err.as_mut_ptr(),
                err.len(),
            )
        };
        match rc {
            1 => {}
            0 => return Ok(None),
            _ => {
                return Err(middleware(format!(
                    "taking a request of {}: {}",
                    self.name,
                    ffi::text(&err)
                )))
            }
        }
        let text: &[u8] = if len == 0 || text.is_null() {
            &[]
        } else {
            // SAFETY: the shim's request holds len bytes at text until the next take.
            unsafe { std::slice::from_raw_parts(text, len) }
        };
        buf.clear();
        if STANDARD.decode_vec(text, buf).is_err() {
            buf.clear();
            buf.extend_from_slice(text); // a foreign client's parameter name
        }
        self.next += 1;
        self.pending.insert(self.next, id);
        Ok(Some(self.next))
    }
}

impl Server for Ros2Server {
    fn local_addr(&self) -> String {
        self.addr.text()
    }

    fn recv_request(
        &mut self,
        buf: &mut Vec<u8>,
        wait_ns: u64,
    ) -> Result<Option<Token>, TransportError> {
        if let Some(t) = self.take(buf)? {
            return Ok(Some(t));
        }
        if wait_ns == 0 {
            return Ok(None);
        }
        let mut err = [0 as c_char; 512];
        // SAFETY: valid handle with its wait set.
        let rc = unsafe {
            (self.api.services.server_wait)(
                self.s,
                wait_ns.min(MAX_WAIT_NS) as i64,
                err.as_mut_ptr(),
                err.len(),
            )
        };
        match rc {
            0 => Ok(None),
            1 => self.take(buf),
            _ => Err(middleware(format!(
                "waiting for requests of {}: {}",
                self.name,
                ffi::text(&err)
            ))),
        }
    }

    fn reply(&mut self, token: Token, reply: &[u8]) -> Result<(), TransportError> {
        let id = self
            .pending
            .remove(&token)
            .ok_or_else(|| middleware(format!("no pending request {token} to answer")))?;
        let mut err = [0 as c_char; 512];
        // SAFETY: valid handle; id is a request id the shim wrote; the reply lives for the call
        // and the RMW serializes it before returning.
        let rc = unsafe {
            (self.api.services.server_reply)(
                self.s,
                id.as_ptr(),
                reply.as_ptr(),
                reply.len(),
                err.as_mut_ptr(),
                err.len(),
            )
        };
        if rc != 0 {
            return Err(middleware(format!(
                "answering on {}: {}",
                self.name,
                ffi::text(&err)
            )));
        }
        Ok(())
    }
}

impl Drop for Ros2Server {
    fn drop(&mut self) {
        let _entities = self.node.entities.lock().unwrap_or_else(|p| p.into_inner());
        // SAFETY: closed once; nothing refers to it afterwards.
        unsafe { (self.api.services.server_close)(self.s) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a request's bytes look like on the wire and back (the server's decoding), the
    /// base64 Python's `base64.b64encode` writes.
    #[test]
    fn requests_travel_as_padded_standard_base64() {
        let bytes = [0u8, 0xff, 0xfe, b'm', b'w'];
        let text = STANDARD.encode(bytes);
        assert_eq!(text, "AP/+bXc=");
        let mut back = Vec::new();
        STANDARD.decode_vec(text.as_bytes(), &mut back).unwrap();
        assert_eq!(back, bytes);
        assert!(STANDARD.decode("use_sim_time").is_err(), "a parameter name");
    }
}
