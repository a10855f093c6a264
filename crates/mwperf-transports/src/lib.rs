//! mwperf transports: one module per middleware, all behind the [`Endpoint`] trait, registered in
//! one list (the `transports!` table below: [`Kind`], [`open`]). Middleware transports are cargo features (all on by default);
//! one compiled out stays listed and fails with [`TransportError::NotBuilt`].
//!
//! - The contract: [`Endpoint`] (endpoint.rs), checked for every transport by
//!   `tests/transports/conformance.rs`.
//! - What each transport is: its [`Descriptor`] (descriptor.rs), declared next to its code;
//!   [`Kind::descriptor`] is the one table that maps a kind to it.

use std::fmt;

pub mod dds_security;
pub mod descriptor;
mod endpoint;
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
mod middleware;
#[allow(dead_code)] // used by the middleware compiled in
mod netif;
mod poll;
pub mod preparing;
pub mod ros2probe;
pub mod service;
mod service_open;
pub mod session;
pub mod spec;
mod stream;
mod stream_service;
pub mod tcp;
#[cfg(any(feature = "mqtt", feature = "foxglove"))]
mod tls_client;
pub mod tls_files;
pub mod udp;
mod udp_service;
pub mod uds;

pub use descriptor::{Descriptor, Fanout, Framing, Opt, QosSupport};
pub use endpoint::{Endpoint, Side};
pub use service::{open_client, open_server, CallId, Client, Reply, Server, Services, Token};
pub use spec::{Durability, History, Qos, Reliability, Spec};

/// The one list of transports: a new transport is one line here (its module exposes
/// `DESCRIPTOR` and `open(side, spec)`), its module, its cargo feature, one conformance line.
/// Sockets are always built; a middleware is built with the cargo feature of its name.
macro_rules! transports {
    (
        sockets { $($sk:ident => $smod:ident),* $(,)? }
        middleware { $($mk:ident => $mmod:ident, $desc:ident, $feat:literal),* $(,)? }
    ) => {
        /// The transports this binary knows (compiled in or not), in listing order.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum Kind {
            $($sk,)*
            $($mk,)*
        }

        impl Kind {
            pub const ALL: &'static [Kind] = &[$(Kind::$sk,)* $(Kind::$mk,)*];

            /// What the transport is (declared by its own module).
            pub fn descriptor(self) -> &'static Descriptor {
                match self {
                    $(Kind::$sk => &$smod::DESCRIPTOR,)*
                    $(Kind::$mk => &middleware::$desc::DESCRIPTOR,)*
                }
            }

            /// Whether this binary was built with the transport (cargo feature of the same name).
            pub fn built(self) -> bool {
                match self {
                    $(Kind::$sk => true,)*
                    $(Kind::$mk => cfg!(feature = $feat),)*
                }
            }
        }

        /// The transport's own `open`, or NotBuilt when its feature is off.
        fn open_built(kind: Kind, side: Side, spec: &Spec) -> Result<Box<dyn Endpoint>, TransportError> {
            match kind {
                $(Kind::$sk => $smod::open(side, spec),)*
                $(Kind::$mk => {
                    #[cfg(feature = $feat)]
                    let opened = middleware::$mmod::open(side, spec);
                    #[cfg(not(feature = $feat))]
                    let opened = {
                        let _ = (side, spec);
                        Err(TransportError::NotBuilt { transport: kind.name() })
                    };
                    opened
                })*
            }
        }
    };
}

transports! {
    sockets {
        Udp => udp,
        Tcp => tcp,
        Uds => uds,
    }
    middleware {
        Iceoryx2 => iceoryx2, iceoryx2_descriptor, "iceoryx2",
        CycloneDds => cyclonedds, cyclonedds_descriptor, "cyclonedds",
        FastDds => fastdds, fastdds_descriptor, "fastdds",
        RustDds => rustdds, rustdds_descriptor, "rustdds",
        Zenoh => zenoh, zenoh_descriptor, "zenoh",
        Mqtt => mqtt, mqtt_descriptor, "mqtt",
        Foxglove => foxglove, foxglove_descriptor, "foxglove",
        Ros1 => ros1, ros1_descriptor, "ros1",
        Ros2 => ros2, ros2_descriptor, "ros2",
    }
}

impl Kind {
    pub fn name(self) -> &'static str {
        self.descriptor().name
    }

    pub fn parse(text: &str) -> Result<Kind, String> {
        Kind::ALL
            .iter()
            .copied()
            .find(|k| k.name() == text)
            .ok_or_else(|| {
                let names: Vec<_> = Kind::ALL.iter().map(|k| k.name()).collect();
                format!("unknown transport '{text}'; allowed: {}", names.join(", "))
            })
    }

    /// One line for `transports` listings.
    pub fn describe(self) -> &'static str {
        self.descriptor().description
    }

    /// Whether peers find each other through discovery (everything but plain sockets).
    pub fn has_discovery(self) -> bool {
        self.descriptor().discovery
    }

    /// The daemon the control plane must start first, if any.
    pub fn daemon(self) -> Option<&'static str> {
        self.descriptor().daemon
    }

    /// Largest message (header + payload) one send can carry, if limited.
    pub fn max_message(self) -> Option<usize> {
        self.descriptor().max_message
    }

    /// Largest payload (after the mwperf header) one message carries with this agent: the
    /// largest message less the header, never above the agent's payload limit
    /// (`mwperf_core::payload::MAX_PAYLOAD`). The listing exports it as `max_payload`: the one
    /// size limit every sized option is checked against, by the agent and the control plane.
    pub fn max_payload(self) -> usize {
        let most = mwperf_core::payload::MAX_PAYLOAD;
        self.max_message().map_or(most, |m| {
            m.saturating_sub(mwperf_core::wire::HEADER_LEN).min(most)
        })
    }

    /// Whether the transport itself may drop or reorder messages (datagrams).
    pub fn datagram(self) -> bool {
        self.descriptor().datagram()
    }

    /// What the address looks like, for error messages and `transports`.
    pub fn address_form(self) -> &'static str {
        self.descriptor().address
    }
}

/// How many shared middleware sessions of `kind` this process has open now
/// ([`Spec::shared_session`]; endpoints opened without it are not counted).
pub fn shared_sessions(kind: Kind) -> usize {
    session::live(kind.name())
}

/// Keep the shared sessions opened from now on open past their last endpoint, until
/// [`release_held_sessions`] (a graph node writes its report first). Only ros2's: closing a
/// ROS 2 node can hang inside the RMW; the other transports close with their last endpoint.
pub fn hold_shared_sessions() {
    #[cfg(feature = "ros2")]
    middleware::ros2::hold_shared_nodes();
}

/// Close what [`hold_shared_sessions`] kept open; stop holding.
pub fn release_held_sessions() {
    #[cfg(feature = "ros2")]
    middleware::ros2::release_held_nodes();
}

/// Before the process exits: stop what the middleware libraries keep running past their last
/// endpoint (Cyclone DDS's domains and their threads), so that no such thread is still calling
/// into a library while exit's handlers tear it down.
pub fn shutdown() {
    #[cfg(mwperf_cyclonedds)]
    middleware::cyclonedds::domain::close_all();
}

/// Open `side` of a measurement over `kind`.
pub fn open(kind: Kind, side: Side, spec: &Spec) -> Result<Box<dyn Endpoint>, TransportError> {
    // every transport refuses an --opt it does not know (the sockets know none), not only
    // those that read options
    spec.options_for(kind.name(), &kind.descriptor().opt_keys())?;
    open_built(kind, side, spec)
}

/// A middleware router or broker run inside this process (`mwperf-agent router`); dropping it
/// stops it and frees its address.
pub trait Router: Send {
    /// The address clients connect to (`--connect` of ping and pong with client mode).
    fn local_addr(&self) -> String;
}

/// Start `kind`'s router listening on `listen` (only zenoh has one built in).
/// `options`: the router's `--opt`s (zenoh: `tls`, the files of a `tls/` endpoint).
pub fn router(
    kind: Kind,
    listen: &str,
    options: &[(String, String)],
) -> Result<Box<dyn Router>, TransportError> {
    let spec = options.iter().fold(Spec::new(listen), |s, (k, v)| {
        s.with_option(k.as_str(), v.as_str())
    });
    let opts = spec.options_for(kind.name(), &[tls_files::OPT])?;
    let tls = tls_files::TlsFiles::of(kind.name(), opts.get(tls_files::OPT))?;
    match kind {
        #[cfg(feature = "zenoh")]
        Kind::Zenoh => Ok(Box::new(middleware::zenoh::start_router(
            listen,
            tls.as_ref(),
        )?)),
        #[allow(unreachable_patterns)]
        Kind::Zenoh => {
            let _ = (listen, tls);
            Err(TransportError::NotBuilt {
                transport: kind.name(),
            })
        }
        _ => Err(TransportError::Unsupported {
            transport: kind.name(),
            what: "running a router in the agent (only zenoh has one)".into(),
        }),
    }
}

/// Open the receiving side (pong) at `addr` with default QoS (socket transports, tests).
/// Listen to a live system's messages as an ordinary subscriber, publishing nothing (`mwperf
/// probe`): `each(arrival_unix_ns, payload_bytes, topic)` per message until `stop()`. zenoh only.
pub fn probe(
    kind: Kind,
    endpoint: &str,
    keys: &[String],
    stop: &dyn Fn() -> bool,
    each: &mut dyn FnMut(u64, usize, &str),
) -> Result<(), TransportError> {
    match kind {
        #[cfg(feature = "zenoh")]
        Kind::Zenoh => middleware::zenoh::probe::listen(endpoint, keys, stop, each),
        #[allow(unreachable_patterns)]
        Kind::Zenoh => {
            let _ = (endpoint, keys, stop, each);
            Err(TransportError::NotBuilt {
                transport: kind.name(),
            })
        }
        _ => Err(TransportError::Unsupported {
            transport: kind.name(),
            what: "probing from the agent (mwperf probe --ros1/--mqtt use the system's own tools)"
                .into(),
        }),
    }
}

/// Listen to a live ROS 2 / DDS domain with Cyclone DDS (`ros2probe`), changing nothing in it,
/// until `opts.duration_ns` after the discovery time or `stop`.
pub fn probe_ros2(
    opts: &ros2probe::Options,
    stop: &dyn Fn() -> bool,
    sink: std::sync::Arc<dyn ros2probe::Sink>,
) -> Result<(), TransportError> {
    #[cfg(all(feature = "cyclonedds", mwperf_cyclonedds))]
    return middleware::cyclonedds::probe::run(opts, stop, sink);
    #[cfg(not(all(feature = "cyclonedds", mwperf_cyclonedds)))]
    {
        let _ = (opts, stop, sink);
        Err(TransportError::Missing {
            what: "Cyclone DDS in this mwperf-agent (built without cyclonedds or its headers)"
                .into(),
            install: "install cyclonedds-dev cyclonedds-tools and rebuild".into(),
        })
    }
}

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
    TooLarge {
        size: usize,
        max: usize,
        transport: &'static str,
    },
    /// Binding failed (e.g. address in use).
    Bind { addr: String, err: std::io::Error },
    /// The peer cannot be reached or refused (e.g. nothing listens there).
    Unreachable { addr: String, err: std::io::Error },
    /// The peer closed the connection.
    Closed,
    /// Any other I/O error.
    Io(std::io::Error),
    /// A setting or option the transport cannot honour (names it and what is possible).
    Unsupported {
        transport: &'static str,
        what: String,
    },
    /// This binary was built without the transport.
    NotBuilt { transport: &'static str },
    /// A library, program or daemon the transport needs is not there.
    Missing { what: String, install: String },
    /// Discovery did not match the peer in time.
    NotMatched {
        transport: &'static str,
        waited_ns: u64,
        detail: String,
    },
    /// The middleware library reported an error.
    Middleware {
        transport: &'static str,
        detail: String,
    },
    /// A reliable send waited its bound for the receiver(s) to make room (flow control: a full
    /// history of unacknowledged messages, a full socket) and gave up: the message was NOT sent
    /// and sending it again may succeed once the receiver reads. `detail` names the bound.
    Blocked {
        transport: &'static str,
        detail: String,
    },
}

impl TransportError {
    pub fn is_usage(&self) -> bool {
        matches!(
            self,
            TransportError::Address(_)
                | TransportError::TooLarge { .. }
                | TransportError::Unsupported { .. }
        )
    }
}

impl fmt::Display for TransportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TransportError::Address(m) => write!(f, "{m}"),
            TransportError::TooLarge {
                size,
                max,
                transport,
            } => {
                write!(f, "a {size}-byte message does not fit {transport} (at most {max} bytes per message); use a smaller --payload or a stream transport (tcp, uds)")
            }
            TransportError::Bind { addr, err } => write!(f, "cannot listen on {addr}: {err}"),
            TransportError::Unreachable { addr, err } => {
                write!(f, "peer {addr} unreachable: {err}")
            }
            TransportError::Closed => write!(f, "the peer closed the connection"),
            TransportError::Io(e) => write!(f, "{e}"),
            TransportError::Unsupported { transport, what } => {
                write!(f, "{what} is not supported by {transport}")
            }
            TransportError::NotBuilt { transport } => {
                write!(f, "this mwperf-agent was built without the {transport} transport; rebuild with `cargo build --release --features {transport}` (on by default)")
            }
            TransportError::Missing { what, install } => write!(f, "{what} not found; {install}"),
            TransportError::NotMatched {
                transport,
                waited_ns,
                detail,
            } => {
                write!(f, "{transport}: no peer matched within {} ({detail}); is the peer running with the same address and QoS? (--discovery-timeout)", mwperf_core::units::format_ns(*waited_ns as f64))
            }
            TransportError::Middleware { transport, detail } => write!(f, "{transport}: {detail}"),
            TransportError::Blocked { transport, detail } => {
                write!(
                    f,
                    "{transport}: the receiver did not make room in time ({detail})"
                )
            }
        }
    }
}

impl std::error::Error for TransportError {}

impl From<std::io::Error> for TransportError {
    fn from(e: std::io::Error) -> Self {
        TransportError::Io(e)
    }
}
