//! MQTT 3.1.1 through a broker (mosquitto), with an own blocking client (no runtime, no crates).
//!
//! Address `<broker host>:<port>[/<base>]`; topics `mwperf/<base>/ping|pong`. Every endpoint is
//! one client connection (clean session, keep-alive 0 so nothing is sent during runs).
//!
//! Matching: a pong/sub subscribes, waits for its SUBACK, then publishes a retained
//! `mwperf/<base>/ready` (and registers an empty retained will on it, so a crashed pong clears
//! it; a clean close clears it too). A ping/pub subscribes to `ready` (and a ping to `pong`);
//! `wait_matched` returns once a non-empty `ready` and its own SUBACK arrived: from then on
//! nothing either side publishes is lost for want of a subscriber. A ping that sees `ready`
//! cleared later reports the peer gone (`Closed`), like a closed TCP connection.
//!
//! QoS mapping and `--opt tls` (the broker over TLS, mTLS with a client certificate): see
//! [`mapping`].

mod address;
pub(crate) mod codec;
mod mapping;
pub(crate) mod properties;
pub mod service;
mod session;

use std::collections::VecDeque;
use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

use mwperf_core::clock::now_ns;

use self::address::{Address, Topics};
use self::codec::{QoS, Version, Will};
use self::mapping::TRANSPORT;
use self::session::Session;
use super::pumped::{Got, Pumped};
use crate::tls_client::Wire;
use crate::tls_client::{client_config, TlsConn};
use crate::tls_files::TlsFiles;
use crate::{spec, Endpoint, Side, Spec, TransportError};

const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);
const CONNACK_NS: u64 = 5_000_000_000;
/// A pong/sub waits this long for its SUBACK before it reports ready.
const SUBACK_NS: u64 = 5_000_000_000;
/// On close: how long queued messages and unacknowledged ones get to reach the broker.
const CLOSE_NS: u64 = 1_000_000_000;

pub fn open(side: Side, spec: &Spec) -> Result<Box<dyn Endpoint>, TransportError> {
    let delivery = mapping::delivery(spec)?;
    let addr = Address::parse(&spec.addr)?;
    let base = match (&addr.base, side.is_listener()) {
        (Some(b), _) if b != "auto" => b.clone(),
        (_, true) => spec::auto_base(),
        (_, false) => {
            return Err(TransportError::Address(format!(
                "mqtt needs the topic base to connect: <broker host>:<port>/<base>, as printed on the pong's READY line (got '{}')",
                spec.addr
            )))
        }
    };
    let topics = Topics::new(&base, side);
    let local = format!("{}/{base}", addr.broker);
    let will = Will {
        topic: &topics.ready,
        payload: b"",
        qos: QoS::AtLeastOnce,
        retain: true,
    };
    let session = connect(
        &addr.broker,
        Version::V311,
        &client_id(role(side)),
        side.is_listener().then_some(&will),
        delivery.tls.as_ref(),
    )?;
    let data_qos = delivery.qos;
    let mut ep = MqttEndpoint {
        session,
        side,
        topics,
        qos: data_qos,
        retain: delivery.retain,
        local,
        sub_pkid: 0,
        peer_ready: false,
        matched: false,
        early: VecDeque::new(),
    };
    if side.is_listener() {
        ep.listen()?;
    } else {
        let mut subs = vec![(ep.topics.ready.as_str(), QoS::AtLeastOnce)];
        if let Some(t) = &ep.topics.input {
            subs.push((t.as_str(), data_qos));
        }
        ep.sub_pkid = ep.session.subscribe(&subs)?;
    }
    Ok(Box::new(ep))
}

/// TCP connection (+ the TLS handshake with `tls`) + CONNECT/CONNACK (clean session,
/// keep-alive 0) with `will` registered.
fn connect(
    broker: &str,
    version: Version,
    client_id: &str,
    will: Option<&Will>,
    tls: Option<&TlsFiles>,
) -> Result<Session, TransportError> {
    let config = tls
        .map(|files| client_config(TRANSPORT, files))
        .transpose()?;
    let to = broker
        .to_socket_addrs()
        .map_err(|e| {
            TransportError::Address(format!("cannot resolve the MQTT broker '{broker}': {e}"))
        })?
        .next()
        .ok_or_else(|| {
            TransportError::Address(format!("the MQTT broker '{broker}' resolves to nothing"))
        })?;
    let sock =
        TcpStream::connect_timeout(&to, CONNECT_TIMEOUT).map_err(|e| TransportError::Missing {
            what: format!("an MQTT broker at {broker} ({e})"),
            install: format!(
                "start one first, e.g. `mosquitto -p {}` (install: apt-get install mosquitto)",
                to.port()
            ),
        })?;
    sock.set_nodelay(true)?;
    let wire = match config {
        None => Wire::Plain(sock),
        Some(config) => {
            let host = broker.rsplit_once(':').map_or(broker, |(h, _)| h);
            Wire::Tls(Box::new(TlsConn::handshake(
                TRANSPORT,
                sock,
                host,
                config,
                CONNECT_TIMEOUT,
            )?))
        }
    };
    let mut packet = Vec::new();
    codec::connect(&mut packet, version, client_id, 0, true, will);
    Session::connect(wire, broker, &packet, version, CONNACK_NS)
}

fn role(side: Side) -> &'static str {
    match side {
        Side::Ping => "ping",
        Side::Pong => "pong",
        Side::Pub => "pub",
        Side::Sub => "sub",
    }
}

/// Unique per endpoint (a broker disconnects the older of two clients with one id); only
/// letters, digits and '-', so it can be a topic level.
fn client_id(role: &str) -> String {
    use std::sync::atomic::{AtomicU32, Ordering};
    static N: AtomicU32 = AtomicU32::new(0);
    let salt = (now_ns() >> 10) as u16;
    format!(
        "mwperf-{role}-{}-{}-{salt:04x}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    )
}

pub struct MqttEndpoint {
    session: Session,
    side: Side,
    topics: Topics,
    qos: QoS,
    retain: bool,
    local: String,
    /// Ping/pub: packet id of the SUBSCRIBE whose SUBACK `wait_matched` waits for.
    sub_pkid: u16,
    /// Ping/pub: the latest `ready` was non-empty.
    peer_ready: bool,
    /// Ping/pub: `wait_matched` succeeded (a cleared `ready` after it = the peer left).
    matched: bool,
    /// Messages that arrived while `open`/`wait_matched` waited for something else.
    early: VecDeque<Vec<u8>>,
}

impl MqttEndpoint {
    /// Pong/sub: subscribe, wait for SUBACK, announce `ready` (retained).
    fn listen(&mut self) -> Result<(), TransportError> {
        let input = self.topics.input.clone().expect("listeners subscribe");
        let pkid = self.session.subscribe(&[(&input, self.qos)])?;
        let end = now_ns() + SUBACK_NS;
        loop {
            match self.session.suback(pkid) {
                Some(true) => break,
                Some(false) => return Err(self.refused(&input)),
                None => {}
            }
            let now = now_ns();
            if now >= end {
                return Err(TransportError::Middleware {
                    transport: TRANSPORT,
                    detail: format!(
                        "no SUBACK for {input} from the broker at {} within 5 s",
                        self.broker()
                    ),
                });
            }
            self.look(None, end - now)?;
        }
        let hello = format!(
            "mwperf {} pid {}",
            if self.side == Side::Pong {
                "pong"
            } else {
                "sub"
            },
            std::process::id()
        );
        let ready = self.topics.ready.clone();
        self.session
            .publish(&ready, QoS::AtLeastOnce, true, hello.as_bytes())
    }

    fn broker(&self) -> &str {
        self.local
            .rsplit_once('/')
            .map(|(b, _)| b)
            .unwrap_or(&self.local)
    }

    fn refused(&self, topic: &str) -> TransportError {
        TransportError::Middleware {
            transport: TRANSPORT,
            detail: format!(
                "the broker at {} refused the subscription to {topic} (check its ACL / max_qos)",
                self.broker()
            ),
        }
    }

    /// Look at the connection once (waiting at most `wait_ns`): a data message goes into `out`
    /// when given, else into `early`; `ready` updates the match state.
    fn look(&mut self, out: Option<&mut Vec<u8>>, wait_ns: u64) -> Result<Got, TransportError> {
        let Some(d) = self.session.next(wait_ns)? else {
            return Ok(Got::Nothing);
        };
        if self
            .topics
            .input
            .as_ref()
            .is_some_and(|t| t.as_bytes() == d.topic)
        {
            let n = d.payload.len();
            match out {
                Some(buf) => {
                    buf.clear();
                    buf.extend_from_slice(d.payload);
                }
                None => self.early.push_back(d.payload.to_vec()),
            }
            return Ok(Got::Message(n));
        }
        if self.topics.ready.as_bytes() == d.topic && !self.side.is_listener() {
            self.peer_ready = !d.payload.is_empty();
            if !self.peer_ready && self.matched {
                self.matched = false;
                return Ok(Got::PeerLeft);
            }
        }
        Ok(Got::Other)
    }
}

impl Endpoint for MqttEndpoint {
    fn send(&mut self, msg: &[u8]) -> Result<(), TransportError> {
        let Some(topic) = &self.topics.out else {
            return Err(TransportError::Unsupported {
                transport: TRANSPORT,
                what: "sending from a sub (it only subscribes)".into(),
            });
        };
        self.session.publish(topic, self.qos, self.retain, msg)
    }

    fn recv(&mut self, buf: &mut Vec<u8>, wait_ns: u64) -> Result<Option<usize>, TransportError> {
        self.recv_pumped(buf, wait_ns)
    }

    fn local_addr(&self) -> String {
        self.local.clone()
    }

    fn wait_matched(&mut self, timeout_ns: u64) -> Result<(), TransportError> {
        if self.side.is_listener() || self.matched {
            return Ok(());
        }
        let end = now_ns().saturating_add(timeout_ns);
        loop {
            let subscribed = self.session.suback(self.sub_pkid);
            if subscribed == Some(false) {
                let topics = format!(
                    "{} / {}",
                    self.topics.ready,
                    self.topics.input.as_deref().unwrap_or("-")
                );
                return Err(self.refused(&topics));
            }
            if subscribed == Some(true) && self.peer_ready {
                self.matched = true;
                return Ok(());
            }
            let now = now_ns();
            if now >= end {
                let detail = match subscribed {
                    None => format!(
                        "the broker at {} did not acknowledge the subscription",
                        self.broker()
                    ),
                    Some(_) => format!(
                        "no pong/sub announced itself on {} at the broker {}",
                        self.topics.ready,
                        self.broker()
                    ),
                };
                return Err(TransportError::NotMatched {
                    transport: TRANSPORT,
                    waited_ns: timeout_ns,
                    detail,
                });
            }
            self.look(None, (end - now).min(100_000_000))?;
        }
    }
}

impl Drop for MqttEndpoint {
    /// A listener clears its `ready`; everyone lets queued and unacknowledged messages reach the
    /// broker (bounded), then says DISCONNECT (so no will is published).
    fn drop(&mut self) {
        if self.side.is_listener() {
            let ready = self.topics.ready.clone();
            let _ = self.session.publish(&ready, QoS::AtLeastOnce, true, b"");
        }
        self.session
            .settle(CLOSE_NS, |s| s.unacknowledged() == 0 && s.unsent() == 0);
        self.session.disconnect(CLOSE_NS);
    }
}

impl Pumped for MqttEndpoint {
    fn early(&mut self) -> &mut VecDeque<Vec<u8>> {
        &mut self.early
    }
    fn pump(&mut self, out: Option<&mut Vec<u8>>, wait_ns: u64) -> Result<Got, TransportError> {
        self.look(out, wait_ns)
    }
}
