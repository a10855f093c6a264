//! The Foxglove WebSocket protocol (the one foxglove_bridge and foxglove-sdk servers speak), as a
//! client: an endpoint publishes with "client publish" and receives by subscribing to a server
//! channel, through a server (mwperf's foxglove-sdk server: python/mwperf/bridges/
//! foxglove_server.py, a relay between clients, or a bridge to DDS).
//!
//! Address `<server host>:<port>[/<base>]`; topics `/mwperf/<base>/ping|pong` (with '-' in the
//! base as '_', the ROS 2 names the DDS transports use, so a bridge maps `rt/mwperf/...` onto
//! them). Messages are binary, encoding `mwperf` (the mwperf message as it is).
//!
//! Protocol use (JSON text messages, binary message data):
//! - a listener (pong/sub) advertises a client channel for its output topic (to publish on it),
//!   one for its input topic and one for `/mwperf/<base>/ready/<unique>` (never published on:
//!   the relay keeps a server channel for every advertised topic, so the input's channel exists
//!   before any publisher, and the ready channel tells publishers a listener is there); it
//!   subscribes to its input's server channel, and `open` returns once the server has handled
//!   that subscription, so a listener is subscribed as soon as it is open, as a DDS reader is;
//! - a ping/pub advertises its output topic and subscribes to its input's channel when it is
//!   advertised; it is matched once a ready channel is advertised to it (and, for a ping, its
//!   subscription is made); the ready channels are `matched_subscribers`; the last one going
//!   after matching = the peer left (`Closed`), like a closed TCP connection;
//! - "the server has handled what I sent": `subscribeConnectionGraph`, answered by the graph's
//!   initial update after everything the client sent before (one client's messages are handled
//!   in order); the graph itself is not used.

mod servers;
pub mod service;
pub(crate) mod ws;

use std::collections::VecDeque;
use std::time::Duration;

use mwperf_core::clock::now_ns;
use serde_json::{json, Value};

use self::ws::{Incoming, WebSocket, BINARY, TEXT};
use super::foxglove_descriptor::DESCRIPTOR;
use super::pumped::{Got, Pumped};
use crate::tls_client::client_config;
use crate::tls_files::{self, TlsFiles};
use crate::{spec, Durability, Endpoint, Side, Spec, TransportError};

const TRANSPORT: &str = "foxglove";
const FORM: &str = "<server host>:<port>[/<base>], e.g. 127.0.0.1:8765/demo (a sub: <host>:<port>,<host>:<port>,.../<base> subscribes on every one of those servers)";
/// Subprotocols offered, newest first (foxglove-sdk servers accept both).
const SUBPROTOCOLS: &[&str] = &["foxglove.sdk.v1", "foxglove.websocket.v1"];
const ENCODING: &str = "mwperf";
const SCHEMA: &str = "mwperf_msgs/msg/Bytes";
const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);
/// How long the server may take to answer a barrier.
const BARRIER_NS: u64 = 5_000_000_000;
/// The client channel id of the output topic (advertised first).
const OUT_CHANNEL: u32 = 1;
/// Server -> client binary opcode: message data (u32 subscription id, u64 time, payload).
const OP_MESSAGE_DATA: u8 = 0x01;
const DATA_PREFIX: usize = 1 + 4 + 8;

pub fn open(side: Side, spec: &Spec) -> Result<Box<dyn Endpoint>, TransportError> {
    if let Some((servers, base)) = spec.addr.split_once('/') {
        if side == Side::Sub && servers.contains(',') {
            return servers::open(servers, base, spec);
        }
    }
    Ok(Box::new(open_one(side, spec)?))
}

/// One endpoint on one server.
fn open_one(side: Side, spec: &Spec) -> Result<FoxgloveEndpoint, TransportError> {
    let opts = spec.options_of(&DESCRIPTOR)?;
    let quickack = match opts.get("quickack") {
        None | Some("off") => false,
        Some("on") => true,
        Some(other) => {
            return Err(TransportError::Unsupported {
                transport: TRANSPORT,
                what: format!("'--opt quickack={other}' (allowed: on, off)"),
            })
        }
    };
    if spec.qos.durability == Durability::TransientLocal {
        return Err(TransportError::Unsupported {
            transport: TRANSPORT,
            what: "--durability transient-local (the server keeps no history for late joiners; use volatile)".into(),
        });
    }
    // wss: the server's certificate checked against the CA (the sdk's server asks for no
    // client certificate, so there is no mutual TLS to offer)
    let tls = TlsFiles::of(TRANSPORT, opts.get(tls_files::OPT))?
        .map(|files| client_config(TRANSPORT, &files))
        .transpose()?;
    let (server, base) = parse(&spec.addr, side.is_listener())?;
    let topic = |suffix: &str| format!("/mwperf/{}/{suffix}", base.replace('-', "_"));
    let (mut socket, _protocol) = WebSocket::connect(&server, "/", SUBPROTOCOLS, CONNECT_TIMEOUT, tls)
        .map_err(|e| match e {
            TransportError::Unreachable { err, .. } => TransportError::Missing {
                what: format!("a Foxglove WebSocket server at {server} ({err})"),
                install: "mwperf run starts one; by hand: python3 python/mwperf/bridges/foxglove_server.py --port PORT (pip install foxglove-sdk)".into(),
            },
            other => other,
        })?;
    socket.quickack = quickack;
    let out = side.out_topic().map(topic);
    let input = side.in_topic().map(topic);
    let ready_prefix = topic("ready/");
    let mut channels = Vec::new();
    if let Some(t) = &out {
        channels.push(t.clone());
    }
    if side.is_listener() {
        channels.extend(input.clone());
        channels.push(format!(
            "{ready_prefix}{}",
            spec::auto_base().replace('-', "_")
        ));
    }
    let channels: Vec<Value> = channels
        .iter()
        .zip(1u32..)
        .map(|(t, id)| json!({"id": id, "topic": t, "encoding": ENCODING, "schemaName": SCHEMA}))
        .collect();
    if !channels.is_empty() {
        send_json(
            &mut socket,
            &json!({"op": "advertise", "channels": channels}),
        )?;
    }
    let mut ep = FoxgloveEndpoint {
        ws: socket,
        side,
        out,
        input,
        ready_prefix,
        local: format!("{server}/{base}"),
        subscription: None,
        next_sub: 0,
        ready: Vec::new(),
        barriers: 0,
        matched: false,
        publish_allowed: None,
        early: VecDeque::new(),
    };
    // 1: our advertisement handled (the input's channel, if any, advertised to us: subscribed)
    ep.barrier()?;
    // 2 (listeners): our subscription handled
    if side.is_listener() && ep.subscription.is_some() {
        ep.barrier()?;
    }
    Ok(ep)
}

/// `<host>:<port>[/<base>]` -> (host:port, base); a listener without a base gets a fresh one.
fn parse(text: &str, listening: bool) -> Result<(String, String), TransportError> {
    let (server, base) = text.split_once('/').unwrap_or((text, ""));
    let port_ok = server
        .rsplit_once(':')
        .is_some_and(|(h, p)| !h.is_empty() && p.parse::<u16>().is_ok_and(|p| p > 0));
    if !port_ok {
        return Err(TransportError::Address(format!(
            "foxglove address '{text}' does not start with the server's host:port; expected {FORM}"
        )));
    }
    let base = match base {
        "" | "auto" if listening => spec::auto_base(),
        "" | "auto" => {
            return Err(TransportError::Address(format!(
                "foxglove needs the topic base to connect: {FORM}, as printed on the pong's READY line (got '{text}')"
            )))
        }
        b if b
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '/'))
            && !b.starts_with('/')
            && !b.ends_with('/')
            && !b.contains("//") =>
        {
            b.to_string()
        }
        b => {
            return Err(TransportError::Address(format!(
                "foxglove topic base '{b}' cannot be used (letters, digits, '_', '-', '/'; no empty levels); expected {FORM}"
            )))
        }
    };
    Ok((server.to_string(), base))
}

fn send_json(ws: &mut WebSocket, v: &Value) -> Result<(), TransportError> {
    ws.send(TEXT, &[v.to_string().as_bytes()])
}

pub struct FoxgloveEndpoint {
    ws: WebSocket,
    side: Side,
    out: Option<String>,
    input: Option<String>,
    local: String,
    /// (server channel id, subscription id) of the input topic's channel, once subscribed.
    subscription: Option<(u64, u32)>,
    next_sub: u32,
    /// `/mwperf/<base>/ready/`: listeners' presence channels start with it.
    ready_prefix: String,
    /// Server channel ids of the listeners' presence channels advertised to us.
    ready: Vec<u64>,
    /// Barrier answers (connection graph updates) received so far.
    barriers: u64,
    /// Ping/pub: `wait_matched` succeeded (a subscriber count of 0 after it = the peer left).
    matched: bool,
    /// From serverInfo: whether the server accepts client publishing (None: not heard yet).
    publish_allowed: Option<bool>,
    /// Messages that arrived while `open`/`wait_matched` waited for something else.
    early: VecDeque<Vec<u8>>,
}

/// A server's binary "message data" (opcode 0x01, u32 subscription id, u64 time, payload):
/// the subscription id and the payload; None for any other binary message.
pub fn message_data(data: &[u8]) -> Option<(u32, &[u8])> {
    if data.len() < DATA_PREFIX || data[0] != OP_MESSAGE_DATA {
        return None;
    }
    let sub = u32::from_le_bytes(data[1..5].try_into().unwrap());
    Some((sub, &data[DATA_PREFIX..]))
}

/// What a server's JSON text message means to a client endpoint (the ops mwperf uses; anything
/// else, or a field of the wrong type, is ignored).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Control<'a> {
    /// Whether the server's capabilities include "clientPublish".
    ServerInfo {
        client_publish: bool,
    },
    /// (channel id, topic) of each well-formed channel.
    Advertise(Vec<(u64, &'a str)>),
    Unadvertise(Vec<u64>),
    GraphUpdate,
    Other,
}

impl<'a> Control<'a> {
    pub fn parse(v: &'a Value) -> Control<'a> {
        match v.get("op").and_then(Value::as_str).unwrap_or("") {
            "serverInfo" => {
                let caps = v.get("capabilities").and_then(Value::as_array);
                Control::ServerInfo {
                    client_publish: caps.is_some_and(|c| c.iter().any(|x| x == "clientPublish")),
                }
            }
            "advertise" => Control::Advertise(
                v.get("channels")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(|ch| {
                        Some((
                            ch.get("id").and_then(Value::as_u64)?,
                            ch.get("topic").and_then(Value::as_str)?,
                        ))
                    })
                    .collect(),
            ),
            "unadvertise" => Control::Unadvertise(
                v.get("channelIds")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_u64)
                    .collect(),
            ),
            "connectionGraphUpdate" => Control::GraphUpdate,
            _ => Control::Other,
        }
    }
}

impl FoxgloveEndpoint {
    /// Look at the connection once (waiting at most `wait_ns`): message data for our
    /// subscription goes into `out` when given, else into `early`; control messages update
    /// the subscription and the graph.
    fn look(&mut self, out: Option<&mut Vec<u8>>, wait_ns: u64) -> Result<Got, TransportError> {
        let text: Value = match self.ws.next(wait_ns)? {
            Incoming::Nothing => return Ok(Got::Nothing),
            Incoming::Message(BINARY, data) => {
                let ours = self.subscription.map(|(_, s)| s);
                let Some(payload) = message_data(data)
                    .filter(|(sub, _)| Some(*sub) == ours)
                    .map(|(_, p)| p)
                else {
                    return Ok(Got::Other); // time, service replies, a stale subscription
                };
                match out {
                    Some(buf) => {
                        buf.clear();
                        buf.extend_from_slice(payload);
                    }
                    None => self.early.push_back(payload.to_vec()),
                }
                return Ok(Got::Message(payload.len()));
            }
            Incoming::Message(_, data) => match serde_json::from_slice(data) {
                Ok(v) => v,
                Err(_) => return Ok(Got::Other), // not ours to judge: ignored
            },
        };
        self.control(&text)
    }

    fn control(&mut self, v: &Value) -> Result<Got, TransportError> {
        match Control::parse(v) {
            Control::ServerInfo { client_publish } => {
                self.publish_allowed = Some(client_publish);
                if !client_publish && self.out.is_some() {
                    return Err(TransportError::Middleware {
                        transport: TRANSPORT,
                        detail: format!(
                            "the WebSocket server at {} does not accept client publishing (capability clientPublish)",
                            self.server()
                        ),
                    });
                }
            }
            Control::Advertise(channels) => {
                for (id, topic) in channels {
                    if topic.starts_with(&self.ready_prefix) && !self.ready.contains(&id) {
                        self.ready.push(id);
                    }
                    if Some(topic) == self.input.as_deref()
                        && self.subscription.map(|(c, _)| c) != Some(id)
                    {
                        self.next_sub += 1;
                        let sub = self.next_sub;
                        send_json(
                            &mut self.ws,
                            &json!({"op": "subscribe", "subscriptions": [{"id": sub, "channelId": id}]}),
                        )?;
                        self.subscription = Some((id, sub));
                    }
                }
            }
            Control::Unadvertise(ids) => {
                self.ready.retain(|r| !ids.contains(r));
                if self.subscription.is_some_and(|(c, _)| ids.contains(&c)) {
                    self.subscription = None;
                }
                let gone = self.ready.is_empty()
                    || (self.side == Side::Ping && self.subscription.is_none());
                if self.matched && gone {
                    self.matched = false;
                    return Ok(Got::PeerLeft);
                }
            }
            Control::GraphUpdate => self.barriers += 1,
            Control::Other => {} // status, time, parameters: nothing mwperf needs
        }
        Ok(Got::Other)
    }

    /// The connection's socket (to wait on several servers' connections at once).
    fn fd(&self) -> std::os::fd::RawFd {
        self.ws.fd()
    }

    fn server(&self) -> &str {
        self.local
            .split_once('/')
            .map(|(s, _)| s)
            .unwrap_or(&self.local)
    }

    fn is_matched(&self) -> bool {
        !self.ready.is_empty() && (self.side != Side::Ping || self.subscription.is_some())
    }

    /// Wait until the server has handled everything sent so far (see the module doc).
    fn barrier(&mut self) -> Result<(), TransportError> {
        let want = self.barriers + 1;
        send_json(&mut self.ws, &json!({"op": "subscribeConnectionGraph"}))?;
        let end = now_ns() + BARRIER_NS;
        while self.barriers < want {
            let now = now_ns();
            if now >= end {
                return Err(TransportError::Middleware {
                    transport: TRANSPORT,
                    detail: format!(
                        "the WebSocket server at {} did not answer subscribeConnectionGraph within 5 s (is it a foxglove-sdk server with the connectionGraph capability?)",
                        self.server()
                    ),
                });
            }
            self.look(None, end - now)?;
        }
        send_json(&mut self.ws, &json!({"op": "unsubscribeConnectionGraph"}))
    }
}

impl Endpoint for FoxgloveEndpoint {
    fn send(&mut self, msg: &[u8]) -> Result<(), TransportError> {
        if self.out.is_none() {
            return Err(TransportError::Unsupported {
                transport: TRANSPORT,
                what: "sending from a sub (it only subscribes)".into(),
            });
        }
        let max = DESCRIPTOR.max_message.expect("declared");
        if msg.len() > max {
            return Err(TransportError::TooLarge {
                size: msg.len(),
                max,
                transport: TRANSPORT,
            });
        }
        // client message data: opcode 0x01, u32 client channel id, payload
        let mut prefix = [0u8; 5];
        prefix[0] = 0x01;
        prefix[1..].copy_from_slice(&OUT_CHANNEL.to_le_bytes());
        self.ws.send(BINARY, &[&prefix, msg])
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
        while !self.is_matched() {
            let now = now_ns();
            if now >= end {
                let out = self.out.as_deref().unwrap_or("-");
                return Err(TransportError::NotMatched {
                    transport: TRANSPORT,
                    waited_ns: timeout_ns,
                    detail: format!(
                        "no pong/sub is connected to the server at {} for {out}{}",
                        self.server(),
                        if self.side == Side::Ping && self.subscription.is_none() {
                            " and has not advertised the reply topic"
                        } else {
                            ""
                        }
                    ),
                });
            }
            if let Got::PeerLeft = self.look(None, (end - now).min(100_000_000))? {
                return Err(TransportError::Closed);
            }
        }
        self.matched = true;
        Ok(())
    }

    fn matched_subscribers(&mut self) -> Option<u64> {
        while let Got::Other | Got::Message(_) = self.look(None, 0).unwrap_or(Got::Nothing) {}
        Some(self.ready.len() as u64)
    }
}

impl Drop for FoxgloveEndpoint {
    fn drop(&mut self) {
        self.ws.close();
    }
}

impl Pumped for FoxgloveEndpoint {
    fn early(&mut self) -> &mut VecDeque<Vec<u8>> {
        &mut self.early
    }
    fn pump(&mut self, out: Option<&mut Vec<u8>>, wait_ns: u64) -> Result<Got, TransportError> {
        self.look(out, wait_ns)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_name_the_form_when_wrong() {
        assert_eq!(
            parse("127.0.0.1:8765/demo-1", false).unwrap(),
            ("127.0.0.1:8765".into(), "demo-1".into())
        );
        assert!(parse("127.0.0.1:8765", true).unwrap().1.len() > 3);
        for bad in ["127.0.0.1", ":1/x", "h:0/x", "h:1/a//b", "h:1/a b"] {
            let e = parse(bad, false).unwrap_err().to_string();
            assert!(e.contains("<server host>:<port>"), "{bad}: {e}");
        }
        let e = parse("h:1", false).unwrap_err().to_string();
        assert!(e.contains("READY"), "{e}");
    }
}
