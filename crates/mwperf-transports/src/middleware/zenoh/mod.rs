//! zenoh (crate `zenoh` 1.10, TCP and TLS links), used synchronously through `zenoh::Wait`.
//!
//! Address `<endpoint>[#<base>]`, keys `mwperf/<base>/ping` and `mwperf/<base>/pong`.
//! - Peer mode (default): the listening side (pong/sub) listens on the endpoint (`tcp/HOST:0`
//!   picks a free port), the other side connects to it directly.
//! - Client mode (`--opt mode=client`): both sides connect to a zenoh router at the endpoint
//!   (`mwperf-agent router --transport zenoh --listen tcp/127.0.0.1:PORT`, see [`router`]).
//! - TLS (`mwperf run --secure tls|mtls`): `tls/HOST:PORT` endpoints with `--opt tls=` (the
//!   files: [`crate::tls_files`]), zenoh's own TLS link (rustls); see [`settings::check_link`].
//!
//! One session per endpoint; with `Spec::shared_session` (a graph node) one per process, mode and
//! endpoint, shared by the endpoints ([`session`]), each with its own publisher and subscriber.
//!
//! Multicast scouting is always off and only the given endpoint is listened on / connected to,
//! so no traffic leaves through other interfaces. QoS mapping: see [`settings`].

mod address;
mod cdr;
pub mod probe;
mod router;
pub mod service;
mod session;
mod settings;

use std::time::{Duration, Instant};

use zenoh::handlers::{FifoChannel, FifoChannelHandler, RingChannel, RingChannelHandler};
use zenoh::pubsub::{Publisher, Subscriber};
use zenoh::sample::Sample;
use zenoh::{Session, Wait};

use crate::tls_files::TlsFiles;
use crate::{Endpoint, Side, Spec, TransportError};
use address::Address;
pub use router::start_router;
use settings::{Mode, Settings};

pub(crate) const NAME: &str = "zenoh";

/// The longest single wait inside `recv`, so callers see their stop flag (zenoh's waits do not
/// return early on signals).
const MAX_WAIT: Duration = Duration::from_millis(100);

/// How often `wait_matched` looks at the publisher's matching status.
const MATCH_POLL: Duration = Duration::from_millis(1);

/// Poll `matching` every [`MATCH_POLL`] until it holds, at most `timeout_ns`; NotMatched with
/// `detail` otherwise (a publisher's or a querier's matching status).
pub(crate) fn wait_for_match(
    timeout_ns: u64,
    mut matching: impl FnMut() -> Result<bool, TransportError>,
    detail: impl FnOnce() -> String,
) -> Result<(), TransportError> {
    let start = Instant::now();
    let timeout = Duration::from_nanos(timeout_ns);
    loop {
        if matching()? {
            return Ok(());
        }
        let waited = start.elapsed();
        if waited >= timeout {
            return Err(TransportError::NotMatched {
                transport: NAME,
                waited_ns: waited.as_nanos() as u64,
                detail: detail(),
            });
        }
        std::thread::sleep(MATCH_POLL.min(timeout - waited));
    }
}

/// Attempts at binding a free port for `tcp/HOST:0` (another program may take it in between).
const FREE_PORT_ATTEMPTS: usize = 5;

pub(crate) fn middleware_error(
    what: impl std::fmt::Display,
    err: impl std::fmt::Display,
) -> TransportError {
    TransportError::Middleware {
        transport: NAME,
        detail: format!("{what}: {err}"),
    }
}

/// A subscriber's queue: keep-last N drops its oldest sample when full, keep-all holds
/// zenoh's receiving thread (and so a reliable publisher) until the reader takes one.
enum Inbox {
    Ring(Subscriber<RingChannelHandler<Sample>>),
    Fifo(Subscriber<FifoChannelHandler<Sample>>),
}

impl Inbox {
    fn try_recv(&self) -> zenoh::Result<Option<Sample>> {
        match self {
            Inbox::Ring(s) => s.try_recv(),
            Inbox::Fifo(s) => s.try_recv(),
        }
    }

    fn recv_timeout(&self, wait: Duration) -> zenoh::Result<Option<Sample>> {
        match self {
            Inbox::Ring(s) => s.recv_timeout(wait),
            Inbox::Fifo(s) => s.recv_timeout(wait),
        }
    }

    fn undeclare(self) -> zenoh::Result<()> {
        match self {
            Inbox::Ring(s) => s.undeclare().wait(),
            Inbox::Fifo(s) => s.undeclare().wait(),
        }
    }
}

/// One side of a measurement over a zenoh session.
pub struct ZenohEndpoint {
    publisher: Option<Publisher<'static>>,
    subscriber: Option<Inbox>,
    /// Dropped after the publisher and subscriber are undeclared (closed with its last endpoint).
    _session: crate::session::SessionRef<session::Opened>,
    /// What the peer passes to `--connect` (`<endpoint>#<base>`).
    addr: String,
    /// The key this side publishes on (for messages).
    out_key: String,
    mode: Mode,
    /// `--opt cdr=true`: messages travel as CDR samples (see [`cdr`]).
    cdr: bool,
}

pub fn open(side: Side, spec: &Spec) -> Result<Box<dyn Endpoint>, TransportError> {
    let settings = Settings::from_spec(spec)?;
    let address = Address::parse(&spec.addr)?;
    let base = match (&address.base, side.is_listener()) {
        (Some(b), _) => b.clone(),
        (None, true) => address.base_or_auto(),
        (None, false) => {
            return Err(TransportError::Address(format!(
                "zenoh address '{}' has no #<base>; pass what the pong's READY line printed, e.g. {}#demo",
                spec.addr, address.endpoint
            )))
        }
    };
    let opened = session::session(side, &settings, &address, spec.shared_session)?;
    let (session, endpoint) = (&opened.session, opened.endpoint.clone());
    let key = |suffix: &str| format!("mwperf/{base}/{suffix}");
    let publisher = match side.out_topic() {
        Some(t) => Some(
            session
                .declare_publisher(key(t))
                .congestion_control(settings.congestion)
                .express(settings.express)
                .wait()
                .map_err(|e| middleware_error(format!("declare publisher {}", key(t)), e))?,
        ),
        None => None,
    };
    let subscriber = match side.in_topic() {
        Some(t) => {
            let declared = session.declare_subscriber(key(t));
            let inbox = match settings.depth {
                Some(depth) => declared
                    .with(RingChannel::new(depth))
                    .wait()
                    .map(Inbox::Ring),
                None => declared
                    .with(FifoChannel::default())
                    .wait()
                    .map(Inbox::Fifo),
            };
            Some(inbox.map_err(|e| middleware_error(format!("declare subscriber {}", key(t)), e))?)
        }
        None => None,
    };
    let out_key = side.out_topic().map_or_else(String::new, key);
    Ok(Box::new(ZenohEndpoint {
        publisher,
        subscriber,
        _session: opened.clone(),
        addr: format!("{endpoint}#{base}"),
        out_key,
        mode: settings.mode,
        cdr: settings.cdr,
    }))
}

/// Open the session for `side`; returns it with the endpoint actually used (port 0 resolved).
fn open_session(
    side: Side,
    mode: Mode,
    address: &Address,
    tls: Option<&TlsFiles>,
) -> Result<(Session, String), TransportError> {
    match (mode, side.is_listener()) {
        (Mode::Peer, true) => listen_session("peer", address, tls),
        (Mode::Peer, false) => {
            let cfg = settings::session_config("peer", None, Some(&address.endpoint), tls)?;
            Ok((
                zenoh::open(cfg).wait().map_err(|e| {
                    middleware_error(format!("open peer session towards {}", address.endpoint), e)
                })?,
                address.endpoint.clone(),
            ))
        }
        (Mode::Client, _) => {
            if address.wants_free_port().is_some() {
                return Err(TransportError::Address(format!(
                    "--opt mode=client connects to a zenoh router: give its port, not {}",
                    address.endpoint
                )));
            }
            let cfg = settings::session_config("client", None, Some(&address.endpoint), tls)?;
            let session = zenoh::open(cfg)
                .wait()
                .map_err(|e| TransportError::Unreachable {
                    addr: format!("zenoh router {}", address.endpoint),
                    err: std::io::Error::new(
                        std::io::ErrorKind::ConnectionRefused,
                        format!(
                            "{e}; is `mwperf-agent router --transport zenoh --listen {}` running?",
                            address.endpoint
                        ),
                    ),
                })?;
            Ok((session, address.endpoint.clone()))
        }
    }
}

/// A session in `mode` ("peer" or "router") listening on the address's endpoint; `HOST:0` picks
/// a free port first, because zenoh's stable API cannot tell which port it bound.
pub(crate) fn listen_session(
    mode: &str,
    address: &Address,
    tls: Option<&TlsFiles>,
) -> Result<(Session, String), TransportError> {
    let bind_error = |endpoint: &str, e: zenoh::Error| TransportError::Bind {
        addr: endpoint.to_string(),
        err: std::io::Error::new(std::io::ErrorKind::AddrInUse, e.to_string()),
    };
    let Some((host, proto)) = address.wants_free_port() else {
        let cfg = settings::session_config(mode, Some(&address.endpoint), None, tls)?;
        return zenoh::open(cfg)
            .wait()
            .map(|s| (s, address.endpoint.clone()))
            .map_err(|e| bind_error(&address.endpoint, e));
    };
    let free_port = match proto {
        "tcp" | "tls" => address::free_tcp_port,
        "quic" => address::free_udp_port,
        _ => {
            return Err(TransportError::Address(format!(
                "zenoh endpoint {}: port 0 (pick a free port) works for tcp/, tls/ and quic/ endpoints only",
                address.endpoint
            )))
        }
    };
    let mut last = None;
    for _ in 0..FREE_PORT_ATTEMPTS {
        let endpoint = address.with_port(free_port(host)?);
        let cfg = settings::session_config(mode, Some(&endpoint), None, tls)?;
        match zenoh::open(cfg).wait() {
            Ok(s) => return Ok((s, endpoint)),
            Err(e) => last = Some(bind_error(&endpoint, e)),
        }
    }
    Err(last.expect("at least one attempt"))
}

impl Endpoint for ZenohEndpoint {
    fn send(&mut self, msg: &[u8]) -> Result<(), TransportError> {
        let Some(p) = &self.publisher else {
            return Err(TransportError::Middleware {
                transport: NAME,
                detail: "this side only subscribes (a sub does not send)".into(),
            });
        };
        let payload = if self.cdr {
            let mut wrapped = Vec::with_capacity(msg.len() + 32);
            cdr::wrap(msg, &mut wrapped);
            wrapped
        } else {
            msg.to_vec()
        };
        p.put(payload)
            .wait()
            .map_err(|e| middleware_error(format!("put on {}", self.out_key), e))
    }

    fn recv(&mut self, buf: &mut Vec<u8>, wait_ns: u64) -> Result<Option<usize>, TransportError> {
        let Some(sub) = &self.subscriber else {
            // A pub has nothing to receive: just wait, so the caller's pacing loop does not spin.
            std::thread::sleep(Duration::from_nanos(wait_ns).min(MAX_WAIT));
            return Ok(None);
        };
        let got = if wait_ns == 0 {
            sub.try_recv()
        } else {
            sub.recv_timeout(Duration::from_nanos(wait_ns).min(MAX_WAIT))
        };
        match got.map_err(|e| middleware_error("receive", e))? {
            Some(sample) => {
                buf.clear();
                for slice in sample.payload().slices() {
                    buf.extend_from_slice(slice);
                }
                if self.cdr {
                    cdr::unwrap(buf); // not a sample: handed on as it came, to be classified
                }
                Ok(Some(buf.len()))
            }
            None => Ok(None),
        }
    }

    fn local_addr(&self) -> String {
        self.addr.clone()
    }

    /// Ping/pub: until our publisher sees a matching subscriber (the pong's or sub's). That the
    /// pong's publisher sees our subscriber cannot be observed through zenoh's stable API: the
    /// first-contact probes cover that direction. A sub has no publisher and returns at once.
    fn wait_matched(&mut self, timeout_ns: u64) -> Result<(), TransportError> {
        let Some(p) = &self.publisher else {
            return Ok(());
        };
        wait_for_match(
            timeout_ns,
            || {
                Ok(p.matching_status()
                    .wait()
                    .map_err(|e| middleware_error("matching status", e))?
                    .matching())
            },
            || {
                format!(
                    "no subscriber for {} reached through {} in {} mode",
                    self.out_key,
                    self.addr,
                    self.mode.name()
                )
            },
        )
    }
}

impl Drop for ZenohEndpoint {
    /// Undeclare first so the peer learns at once; the session closes (freeing its port) with
    /// the last endpoint holding it.
    fn drop(&mut self) {
        if let Some(p) = self.publisher.take() {
            let _ = p.undeclare().wait();
        }
        if let Some(s) = self.subscriber.take() {
            let _ = s.undeclare();
        }
    }
}
