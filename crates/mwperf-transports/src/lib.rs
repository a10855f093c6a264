//! mwperf transports: one module per middleware, all behind the [`Endpoint`] trait, registered in
//! one place ([`Kind`], [`listen`], [`connect`]).
//!
//! # The Endpoint contract (checked for every transport by `tests/conformance.rs`)
//! - An endpoint moves whole messages: what one `send` was given, one `recv` returns, byte for
//!   byte, or not at all (loss is allowed only where the transport itself may lose).
//! - `recv(buf, wait_ns)` waits at most `wait_ns` (0 = do not block, for busy polling) and returns
//!   `Ok(None)` when nothing arrived; it returns early (also `Ok(None)`) when a signal arrives, so
//!   callers can check their stop flag. It never panics on foreign or malformed input: bytes that
//!   cannot be framed are returned as one message for the caller to classify with
//!   `mwperf_core::wire::Header::decode` (stream transports then drop that connection).
//! - A *listening* endpoint (pong, sub) answers with `send` to the peer it last heard from.
//!   A *connecting* endpoint (ping, pub) talks to the one peer it was given.
//! - `send` never blocks forever: stream transports queue what the socket cannot take yet and
//!   flush it during later `send`/`recv` calls, so two peers writing at once cannot deadlock.
//! - Dropping an endpoint releases everything it created (sockets, socket files).

use std::fmt;

mod poll;
mod stream;
pub mod tcp;
pub mod udp;
pub mod uds;

/// One message-oriented connection to a peer (see the module docs for the contract).
pub trait Endpoint: Send {
    /// Send one whole message.
    fn send(&mut self, msg: &[u8]) -> Result<(), TransportError>;
    /// Receive one whole message into `buf` (resized to its length); `Ok(None)` = nothing yet.
    fn recv(&mut self, buf: &mut Vec<u8>, wait_ns: u64) -> Result<Option<usize>, TransportError>;
    /// The local address, as a peer would use it (`host:port`, or a socket path).
    fn local_addr(&self) -> String;
    /// Connections accepted so far (stream listeners); 0 for connectionless transports.
    fn connections(&self) -> u64 {
        0
    }
}

/// The transports built into this binary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Udp,
    Tcp,
    Uds,
}

impl Kind {
    pub const ALL: &'static [Kind] = &[Kind::Udp, Kind::Tcp, Kind::Uds];

    pub fn name(self) -> &'static str {
        match self {
            Kind::Udp => "udp",
            Kind::Tcp => "tcp",
            Kind::Uds => "uds",
        }
    }

    pub fn parse(text: &str) -> Result<Kind, String> {
        Kind::ALL.iter().copied().find(|k| k.name() == text).ok_or_else(|| {
            let names: Vec<_> = Kind::ALL.iter().map(|k| k.name()).collect();
            format!("unknown transport '{text}'; allowed: {}", names.join(", "))
        })
    }

    /// Largest message (header + payload) one send can carry, if limited.
    pub fn max_message(self) -> Option<usize> {
        match self {
            Kind::Udp => Some(udp::MAX_DATAGRAM),
            Kind::Tcp | Kind::Uds => None,
        }
    }

    /// What the address looks like, for error messages.
    pub fn address_form(self) -> &'static str {
        match self {
            Kind::Udp | Kind::Tcp => "host:port",
            Kind::Uds => "a socket file path",
        }
    }
}

/// Open the receiving side (pong, sub) at `addr`.
pub fn listen(kind: Kind, addr: &str) -> Result<Box<dyn Endpoint>, TransportError> {
    Ok(match kind {
        Kind::Udp => Box::new(udp::UdpEndpoint::listen(addr)?),
        Kind::Tcp => Box::new(tcp::listen(addr)?),
        Kind::Uds => Box::new(uds::listen(addr)?),
    })
}

/// Open the sending side (ping, pub) towards `addr`.
pub fn connect(kind: Kind, addr: &str) -> Result<Box<dyn Endpoint>, TransportError> {
    Ok(match kind {
        Kind::Udp => Box::new(udp::UdpEndpoint::connect(addr)?),
        Kind::Tcp => Box::new(tcp::connect(addr)?),
        Kind::Uds => Box::new(uds::connect(addr)?),
    })
}

/// What went wrong, phrased for people. `Address` and `TooLarge` are usage errors.
#[derive(Debug)]
pub enum TransportError {
    /// The address text cannot be used (names the form expected).
    Address(String),
    /// A message larger than the transport can carry.
    TooLarge { size: usize, max: usize, transport: &'static str },
    /// Binding failed (e.g. address in use).
    Bind { addr: String, err: std::io::Error },
    /// The peer cannot be reached or refused (e.g. nothing listens there).
    Unreachable { addr: String, err: std::io::Error },
    /// The peer closed the connection.
    Closed,
    /// Any other I/O error.
    Io(std::io::Error),
}

impl TransportError {
    pub fn is_usage(&self) -> bool {
        matches!(self, TransportError::Address(_) | TransportError::TooLarge { .. })
    }
}

impl fmt::Display for TransportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TransportError::Address(m) => write!(f, "{m}"),
            TransportError::TooLarge { size, max, transport } => {
                write!(f, "a {size}-byte message does not fit {transport} (at most {max} bytes per message); use a smaller --payload or a stream transport (tcp, uds)")
            }
            TransportError::Bind { addr, err } => write!(f, "cannot listen on {addr}: {err}"),
            TransportError::Unreachable { addr, err } => write!(f, "peer {addr} unreachable: {err}"),
            TransportError::Closed => write!(f, "the peer closed the connection"),
            TransportError::Io(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for TransportError {}

impl From<std::io::Error> for TransportError {
    fn from(e: std::io::Error) -> Self {
        TransportError::Io(e)
    }
}
