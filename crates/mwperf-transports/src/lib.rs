//! mwperf transports: one module per middleware, all behind the [`Endpoint`] trait, registered in
//! one place ([`Kind`], [`open`]). Middleware transports are cargo features (all on by default);
//! one compiled out stays listed and fails with [`TransportError::NotBuilt`].
//!
//! # The Endpoint contract (checked for every transport by `tests/conformance.rs`)
//! - An endpoint moves whole messages: what one `send` was given, one `recv` returns, byte for
//!   byte, or not at all (loss is allowed only where the transport itself may lose).
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

use std::fmt;

mod middleware;
mod poll;
pub mod spec;
mod stream;
pub mod tcp;
pub mod udp;
pub mod uds;

pub use spec::{Durability, History, Qos, Reliability, Spec};

/// One message-oriented endpoint (see the module docs for the contract).
pub trait Endpoint: Send {
    /// Send one whole message.
    fn send(&mut self, msg: &[u8]) -> Result<(), TransportError>;
    /// Receive one whole message into `buf` (resized to its length); `Ok(None)` = nothing yet.
    fn recv(&mut self, buf: &mut Vec<u8>, wait_ns: u64) -> Result<Option<usize>, TransportError>;
    /// The address a peer passes to reach this endpoint (`host:port`, a socket path, a topic base).
    fn local_addr(&self) -> String;
    /// Connections accepted so far (stream listeners); 0 where there are none.
    fn connections(&self) -> u64 {
        0
    }
    /// Wait until discovery has matched the peer (both directions for a Ping), at most `timeout_ns`.
    fn wait_matched(&mut self, _timeout_ns: u64) -> Result<(), TransportError> {
        Ok(())
    }
    /// How many subscribers discovery has matched to this endpoint's publishing side so far
    /// (a pub waiting for `--subscribers N`); None where the middleware cannot tell.
    fn matched_subscribers(&mut self) -> Option<u64> {
        None
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

/// The transports this binary knows (compiled in or not).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Udp,
    Tcp,
    Uds,
    Iceoryx2,
    CycloneDds,
    RustDds,
    Zenoh,
    Mqtt,
    Ros1,
}

impl Kind {
    pub const ALL: &'static [Kind] = &[Kind::Udp, Kind::Tcp, Kind::Uds, Kind::Iceoryx2, Kind::CycloneDds, Kind::RustDds, Kind::Zenoh, Kind::Mqtt, Kind::Ros1];

    pub fn name(self) -> &'static str {
        match self {
            Kind::Udp => "udp",
            Kind::Tcp => "tcp",
            Kind::Uds => "uds",
            Kind::Iceoryx2 => "iceoryx2",
            Kind::CycloneDds => "cyclonedds",
            Kind::RustDds => "rustdds",
            Kind::Zenoh => "zenoh",
            Kind::Mqtt => "mqtt",
            Kind::Ros1 => "ros1",
        }
    }

    pub fn parse(text: &str) -> Result<Kind, String> {
        Kind::ALL.iter().copied().find(|k| k.name() == text).ok_or_else(|| {
            let names: Vec<_> = Kind::ALL.iter().map(|k| k.name()).collect();
            format!("unknown transport '{text}'; allowed: {}", names.join(", "))
        })
    }

    /// One line for `transports` listings.
    pub fn describe(self) -> &'static str {
        match self {
            Kind::Udp => "UDP datagrams (loopback or any IP)",
            Kind::Tcp => "TCP stream, length-framed",
            Kind::Uds => "Unix domain stream socket",
            Kind::Iceoryx2 => "iceoryx2 zero-copy shared-memory publish/subscribe (one host)",
            Kind::CycloneDds => "Eclipse Cyclone DDS (Debian libddsc), ROS 2 topic and type names",
            Kind::RustDds => "RustDDS (pure Rust DDS), ROS 2 topic and type names",
            Kind::Zenoh => "zenoh, peer mode or client mode through a router",
            Kind::Mqtt => "MQTT 3.1.1 through a mosquitto broker, QoS 0/1/2",
            Kind::Ros1 => "ROS 1 TCPROS through rosmaster",
        }
    }

    /// Whether this binary was built with the transport (cargo feature of the same name).
    pub fn built(self) -> bool {
        match self {
            Kind::Udp | Kind::Tcp | Kind::Uds => true,
            Kind::Iceoryx2 => cfg!(feature = "iceoryx2"),
            Kind::CycloneDds => cfg!(feature = "cyclonedds"),
            Kind::RustDds => cfg!(feature = "rustdds"),
            Kind::Zenoh => cfg!(feature = "zenoh"),
            Kind::Mqtt => cfg!(feature = "mqtt"),
            Kind::Ros1 => cfg!(feature = "ros1"),
        }
    }

    /// Whether peers find each other through discovery (everything but plain sockets).
    pub fn has_discovery(self) -> bool {
        !matches!(self, Kind::Udp | Kind::Tcp | Kind::Uds)
    }

    /// The daemon the control plane must start first, if any.
    pub fn daemon(self) -> Option<&'static str> {
        match self {
            Kind::Mqtt => Some("mosquitto"),
            Kind::Ros1 => Some("rosmaster"),
            _ => None,
        }
    }

    /// Largest message (header + payload) one send can carry, if limited.
    pub fn max_message(self) -> Option<usize> {
        match self {
            Kind::Udp => Some(udp::MAX_DATAGRAM),
            _ => None,
        }
    }

    /// Whether the transport itself may drop or reorder messages (datagrams).
    pub fn datagram(self) -> bool {
        self == Kind::Udp
    }

    /// What the address looks like, for error messages and `transports`.
    pub fn address_form(self) -> &'static str {
        match self {
            Kind::Udp | Kind::Tcp => "host:port",
            Kind::Uds => "a socket file path",
            Kind::Iceoryx2 => "<base> (service names mwperf/<base>/ping|pong; 'auto' picks one)",
            Kind::CycloneDds | Kind::RustDds => "[<domain>/]<base> (topics rt/mwperf/<base>/ping|pong; 'auto' picks one)",
            Kind::Zenoh => "<endpoint>[#<base>], e.g. tcp/127.0.0.1:7447#demo",
            Kind::Mqtt => "<broker host>:<port>[/<base>]",
            Kind::Ros1 => "http://<master host>:<port>/[#<base>]",
        }
    }
}

/// Open `side` of a measurement over `kind`.
pub fn open(kind: Kind, side: Side, spec: &Spec) -> Result<Box<dyn Endpoint>, TransportError> {
    match kind {
        Kind::Udp => Ok(Box::new(if side.is_listener() { udp::UdpEndpoint::listen(&spec.addr)? } else { udp::UdpEndpoint::connect(&spec.addr)? })),
        Kind::Tcp => Ok(if side.is_listener() { Box::new(tcp::listen(&spec.addr)?) } else { Box::new(tcp::connect(&spec.addr)?) }),
        Kind::Uds => Ok(if side.is_listener() { Box::new(uds::listen(&spec.addr)?) } else { Box::new(uds::connect(&spec.addr)?) }),
        #[cfg(feature = "iceoryx2")]
        Kind::Iceoryx2 => middleware::iceoryx2::open(side, spec),
        #[cfg(feature = "cyclonedds")]
        Kind::CycloneDds => middleware::cyclonedds::open(side, spec),
        #[cfg(feature = "rustdds")]
        Kind::RustDds => middleware::rustdds::open(side, spec),
        #[cfg(feature = "zenoh")]
        Kind::Zenoh => middleware::zenoh::open(side, spec),
        #[cfg(feature = "mqtt")]
        Kind::Mqtt => middleware::mqtt::open(side, spec),
        #[cfg(feature = "ros1")]
        Kind::Ros1 => middleware::ros1::open(side, spec),
        #[allow(unreachable_patterns)]
        _ => Err(TransportError::NotBuilt { transport: kind.name() }),
    }
}

/// A middleware router or broker run inside this process (`mwperf-agent router`); dropping it
/// stops it and frees its address.
pub trait Router: Send {
    /// The address clients connect to (`--connect` of ping and pong with client mode).
    fn local_addr(&self) -> String;
}

/// Start `kind`'s router listening on `listen` (only zenoh has one built in).
pub fn router(kind: Kind, listen: &str) -> Result<Box<dyn Router>, TransportError> {
    match kind {
        #[cfg(feature = "zenoh")]
        Kind::Zenoh => Ok(Box::new(middleware::zenoh::start_router(listen)?)),
        #[allow(unreachable_patterns)]
        Kind::Zenoh => {
            let _ = listen;
            Err(TransportError::NotBuilt { transport: kind.name() })
        }
        _ => Err(TransportError::Unsupported { transport: kind.name(), what: "running a router in the agent (only zenoh has one)".into() }),
    }
}

/// Open the receiving side (pong) at `addr` with default QoS (socket transports, tests).
pub fn listen(kind: Kind, addr: &str) -> Result<Box<dyn Endpoint>, TransportError> {
    open(kind, Side::Pong, &Spec::new(addr))
}

/// Open the sending side (ping) towards `addr` with default QoS (socket transports, tests).
pub fn connect(kind: Kind, addr: &str) -> Result<Box<dyn Endpoint>, TransportError> {
    open(kind, Side::Ping, &Spec::new(addr))
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
    /// A setting or option the transport cannot honour (names it and what is possible).
    Unsupported { transport: &'static str, what: String },
    /// This binary was built without the transport.
    NotBuilt { transport: &'static str },
    /// A library, program or daemon the transport needs is not there.
    Missing { what: String, install: String },
    /// Discovery did not match the peer in time.
    NotMatched { transport: &'static str, waited_ns: u64, detail: String },
    /// The middleware library reported an error.
    Middleware { transport: &'static str, detail: String },
}

impl TransportError {
    pub fn is_usage(&self) -> bool {
        matches!(self, TransportError::Address(_) | TransportError::TooLarge { .. } | TransportError::Unsupported { .. })
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
            TransportError::Unsupported { transport, what } => write!(f, "{what} is not supported by {transport}"),
            TransportError::NotBuilt { transport } => {
                write!(f, "this mwperf-agent was built without the {transport} transport; rebuild with `cargo build --release --features {transport}` (on by default)")
            }
            TransportError::Missing { what, install } => write!(f, "{what} not found; {install}"),
            TransportError::NotMatched { transport, waited_ns, detail } => {
                write!(f, "{transport}: no peer matched within {} ({detail}); is the peer running with the same address and QoS? (--discovery-timeout)", mwperf_core::units::format_ns(*waited_ns as f64))
            }
            TransportError::Middleware { transport, detail } => write!(f, "{transport}: {detail}"),
        }
    }
}

impl std::error::Error for TransportError {}

impl From<std::io::Error> for TransportError {
    fn from(e: std::io::Error) -> Self {
        TransportError::Io(e)
    }
}
