//! Request/response: a client calling a server through the middleware's **own** service
//! machinery (ROS 1 TCPROS service calls, ROS 2 `rq/`+`rr/` topics with each RMW's request
//! matching, zenoh queryable/get, MQTT 5 response topic + correlation data, iceoryx2's
//! request-response, Foxglove service calls; the sockets a request/reply baseline). Checked for
//! every transport that has services by `tests/transports/service_conformance.rs`.
//!
//! The contract:
//! - A [`Client`] sends whole requests and gets whole replies back, each reply carrying the
//!   [`CallId`] the middleware matched it to (its own matching: a sequence number, a sample
//!   identity, a correlation datum, a query). Replies the middleware addresses to *other*
//!   clients (a shared reply topic) are dropped by the transport, counted in
//!   [`Client::others_replies`]. A reply whose id matches no call of this client still comes
//!   back: the caller counts it (late after a timeout, duplicated).
//! - A [`Server`] gets whole requests with a [`Token`] and answers each with [`Server::reply`]
//!   once, in any order; the token is the transport's handle to whatever the reply needs (the
//!   connection, the request header to echo, the response topic, the query).
//! - Neither side interprets the bytes: the mwperf header at the start of a request (56 bytes)
//!   is the caller's business, except for the socket baseline, whose call id is that header's
//!   `seq` (it has no request ids of its own). Foreign or malformed bytes never panic.
//! - `recv_*` wait at most `wait_ns` (0 = poll), may return early with `Ok(None)`.
//! - Dropping either side releases everything it created.

use crate::{Kind, Spec, TransportError};

/// The middleware's id of one call, unique per client while the client lives.
pub type CallId = u64;

/// The server's handle to one received request, valid until it was answered.
pub type Token = u64;

/// One reply as the client got it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reply {
    /// The call the middleware matched it to.
    pub call: CallId,
    /// False: the server answered with a failure (ROS 1's ok byte 0, a zenoh error reply); the
    /// buffer then holds its message if it sent one.
    pub ok: bool,
}

/// The calling side of a service (see the module docs).
pub trait Client: Send {
    /// Wait until the server is known (discovery matched the request reader and the reply
    /// writer; ROS 1's master knows the service), at most `timeout_ns`.
    fn wait_matched(&mut self, _timeout_ns: u64) -> Result<(), TransportError> {
        Ok(())
    }
    /// Send one request; the id the middleware gave the call.
    fn call(&mut self, request: &[u8]) -> Result<CallId, TransportError>;
    /// One reply into `buf` (resized to its length); `Ok(None)` = none within `wait_ns`.
    fn recv_reply(
        &mut self,
        buf: &mut Vec<u8>,
        wait_ns: u64,
    ) -> Result<Option<Reply>, TransportError>;
    /// The caller gave up on `call` (timed out): release what the transport keeps for it.
    fn abandon(&mut self, _call: CallId) {}
    /// Replies this client received that the middleware addressed to other clients (a shared
    /// reply topic) and dropped.
    fn others_replies(&self) -> u64 {
        0
    }
    /// How many calls this client can have outstanding at once (None = no limit of its own).
    fn max_in_flight(&self) -> Option<usize> {
        None
    }
    /// Connections opened so far, where the transport has connections (ROS 1 non-persistent:
    /// one per call).
    fn connections(&self) -> Option<u64> {
        None
    }
}

/// The answering side of a service (see the module docs).
pub trait Server: Send {
    /// What a client passes to reach this server (the service name, `host:port`, a path).
    fn local_addr(&self) -> String;
    /// One request into `buf` (resized to its length) and the token to answer it with;
    /// `Ok(None)` = none within `wait_ns`.
    fn recv_request(
        &mut self,
        buf: &mut Vec<u8>,
        wait_ns: u64,
    ) -> Result<Option<Token>, TransportError>;
    /// Answer the request `token` with `reply`.
    fn reply(&mut self, token: Token, reply: &[u8]) -> Result<(), TransportError>;
    /// Clients connected so far, where the transport has connections to count.
    fn connections(&self) -> Option<u64> {
        None
    }
}

/// Whether and how a transport does request/response (declared in its [`crate::Descriptor`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Services {
    /// Built on this mechanism (one line for listings).
    Native(&'static str),
    /// No services: why (one line, for the "not supported" error).
    None(&'static str),
}

impl Services {
    pub fn supported(self) -> bool {
        matches!(self, Services::Native(_))
    }
    /// One line: the mechanism, or why there is none.
    pub fn text(self) -> &'static str {
        match self {
            Services::Native(t) | Services::None(t) => t,
        }
    }
}

fn unsupported(kind: Kind) -> TransportError {
    TransportError::Unsupported {
        transport: kind.name(),
        what: format!(
            "request/response (--mode service: {})",
            kind.descriptor().services.text()
        ),
    }
}

fn not_built(kind: Kind) -> TransportError {
    TransportError::NotBuilt {
        transport: kind.name(),
    }
}

/// Open a client of the service at `spec.addr` over `kind`.
pub fn open_client(kind: Kind, spec: &Spec) -> Result<Box<dyn Client>, TransportError> {
    spec.options_for(kind.name(), &kind.descriptor().opt_keys())?;
    if !kind.descriptor().services.supported() {
        return Err(unsupported(kind));
    }
    if !kind.built() {
        return Err(not_built(kind));
    }
    crate::service_open::client(kind, spec)
}

/// Open a server of the service at `spec.addr` over `kind`.
pub fn open_server(kind: Kind, spec: &Spec) -> Result<Box<dyn Server>, TransportError> {
    spec.options_for(kind.name(), &kind.descriptor().opt_keys())?;
    if !kind.descriptor().services.supported() {
        return Err(unsupported(kind));
    }
    if !kind.built() {
        return Err(not_built(kind));
    }
    crate::service_open::server(kind, spec)
}
