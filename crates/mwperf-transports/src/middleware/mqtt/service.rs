//! MQTT request/response (see crate::service), MQTT 5's own way (OASIS MQTT 5.0 §4.10): a
//! request is a PUBLISH on `mwperf/<base>/request` carrying a Response Topic and Correlation
//! Data; the server answers with a PUBLISH on that response topic carrying the same correlation
//! data. So both sides connect with MQTT 5 (the pub/sub endpoints stay on 3.1.1).
//!
//! - Server: subscribes to the request topic (SUBACK awaited when opening); each request's
//!   response topic and correlation data are kept under its [`Token`]. A request without a
//!   response topic cannot be answered: it is counted, not returned (the count is one line on
//!   stderr when the server closes).
//! - Client: subscribes to its own `mwperf/<base>/reply/<client id>`; the correlation data of a
//!   call is its [`CallId`] (8 bytes, big-endian, a counter). A reply whose correlation data is
//!   absent or not 8 bytes matches no call: [`Reply::call`] is `u64::MAX`.
//! - QoS: `--opt qos` / the reliability, as for pub/sub (see [`super::mapping`]), for requests,
//!   replies and both subscriptions; nothing is retained.

use std::collections::HashMap;

use mwperf_core::clock::now_ns;

use super::address::Address;
use super::codec::{QoS, Version};
use super::mapping::{self, TRANSPORT};
use super::properties::PubProps;
use super::session::Session;
use super::{client_id, connect, CLOSE_NS, SUBACK_NS};
use crate::service::{CallId, Client, Reply, Server, Token};
use crate::{spec, Spec, TransportError};

fn request_topic(base: &str) -> String {
    format!("mwperf/{base}/request")
}

/// Subscribe to `topic` and wait for the broker's SUBACK, at most `timeout_ns` (anything
/// published to us meanwhile is dropped: nothing is, before the subscription).
fn subscribe_acked(
    session: &mut Session,
    broker: &str,
    topic: &str,
    qos: QoS,
    timeout_ns: u64,
) -> Result<(), TransportError> {
    let pkid = session.subscribe(&[(topic, qos)])?;
    wait_suback(session, broker, topic, pkid, timeout_ns)
}

fn wait_suback(
    session: &mut Session,
    broker: &str,
    topic: &str,
    pkid: u16,
    timeout_ns: u64,
) -> Result<(), TransportError> {
    let end = now_ns().saturating_add(timeout_ns);
    loop {
        match session.suback(pkid) {
            Some(true) => return Ok(()),
            Some(false) => {
                return Err(TransportError::Middleware {
                    transport: TRANSPORT,
                    detail: format!(
                        "the broker at {broker} refused the subscription to {topic} (check its ACL / max_qos)"
                    ),
                })
            }
            None => {}
        }
        let now = now_ns();
        if now >= end {
            return Err(TransportError::NotMatched {
                transport: TRANSPORT,
                waited_ns: timeout_ns,
                detail: format!(
                    "the broker at {broker} did not acknowledge the subscription to {topic}"
                ),
            });
        }
        session.next((end - now).min(100_000_000))?;
    }
}

/// A response topic we can publish to: UTF-8, not empty, no wildcards.
fn usable_topic(t: &[u8]) -> Option<&str> {
    std::str::from_utf8(t)
        .ok()
        .filter(|t| !t.is_empty() && !t.contains(['+', '#', '\0']))
}

// ---------------------------------------------------------------------------------------------
// Server

/// Where the reply to one request goes.
#[derive(Default)]
struct Pending {
    topic: String,
    correlation: Vec<u8>,
    has_correlation: bool,
}

pub struct MqttServer {
    session: Session,
    request: String,
    qos: QoS,
    local: String,
    pending: HashMap<Token, Pending>,
    /// Answered entries, reused (no allocation per request once warm).
    spare: Vec<Pending>,
    next: Token,
    /// Requests that came without a response topic (or an unusable one), so were not answered:
    /// said once, when the server closes.
    unanswerable: u64,
}

pub fn server(spec: &Spec) -> Result<Box<dyn Server>, TransportError> {
    let delivery = mapping::delivery(spec)?;
    let qos = delivery.qos;
    let addr = Address::parse(&spec.addr)?;
    let base = match addr.base {
        Some(b) if b != "auto" => b,
        _ => spec::auto_base(),
    };
    let request = request_topic(&base);
    let mut session = connect(
        &addr.broker,
        Version::V5,
        &client_id("server"),
        None,
        delivery.tls.as_ref(),
    )?;
    subscribe_acked(&mut session, &addr.broker, &request, qos, SUBACK_NS)?;
    Ok(Box::new(MqttServer {
        session,
        request,
        qos,
        local: format!("{}/{base}", addr.broker),
        pending: HashMap::new(),
        spare: Vec::new(),
        next: 0,
        unanswerable: 0,
    }))
}

impl Server for MqttServer {
    fn local_addr(&self) -> String {
        self.local.clone()
    }

    fn recv_request(
        &mut self,
        buf: &mut Vec<u8>,
        wait_ns: u64,
    ) -> Result<Option<Token>, TransportError> {
        let deadline = now_ns().saturating_add(wait_ns);
        loop {
            let left = deadline.saturating_sub(now_ns());
            if let Some(d) = self.session.next(left)? {
                if d.topic == self.request.as_bytes() {
                    match d.response_topic.and_then(usable_topic) {
                        None => self.unanswerable += 1,
                        Some(topic) => {
                            let mut p = self.spare.pop().unwrap_or_default();
                            p.topic.clear();
                            p.topic.push_str(topic);
                            p.correlation.clear();
                            p.has_correlation = d.correlation.is_some();
                            p.correlation
                                .extend_from_slice(d.correlation.unwrap_or(&[]));
                            buf.clear();
                            buf.extend_from_slice(d.payload);
                            self.next += 1;
                            self.pending.insert(self.next, p);
                            return Ok(Some(self.next));
                        }
                    }
                }
            }
            if wait_ns == 0 || now_ns() >= deadline {
                return Ok(None);
            }
        }
    }

    fn reply(&mut self, token: Token, reply: &[u8]) -> Result<(), TransportError> {
        let p = self
            .pending
            .remove(&token)
            .ok_or_else(|| TransportError::Middleware {
                transport: TRANSPORT,
                detail: format!("no pending request {token} to answer"),
            })?;
        let props = PubProps {
            response_topic: None,
            correlation: p.has_correlation.then_some(&p.correlation[..]),
        };
        let r = self
            .session
            .publish_with(&p.topic, self.qos, false, props, reply);
        self.spare.push(p);
        r
    }
}

impl Drop for MqttServer {
    /// Let the last replies reach the broker (bounded), then DISCONNECT.
    fn drop(&mut self) {
        if self.unanswerable > 0 {
            eprintln!(
                "mwperf mqtt service {}: {} request(s) without a response topic were not answered",
                self.request, self.unanswerable
            );
        }
        self.session
            .settle(CLOSE_NS, |s| s.unacknowledged() == 0 && s.unsent() == 0);
        self.session.disconnect(CLOSE_NS);
    }
}

// ---------------------------------------------------------------------------------------------
// Client

pub struct MqttClient {
    session: Session,
    broker: String,
    request: String,
    reply: String,
    qos: QoS,
    sub_pkid: u16,
    subscribed: bool,
    next: CallId,
}

pub fn client(spec: &Spec) -> Result<Box<dyn Client>, TransportError> {
    let delivery = mapping::delivery(spec)?;
    let qos = delivery.qos;
    let addr = Address::parse(&spec.addr)?;
    let base = match addr.base {
        Some(b) if b != "auto" => b,
        _ => {
            return Err(TransportError::Address(format!(
                "mqtt needs the service's topic base to call it: <broker host>:<port>/<base>, as the server prints it (got '{}')",
                spec.addr
            )))
        }
    };
    let id = client_id("client");
    let mut session = connect(&addr.broker, Version::V5, &id, None, delivery.tls.as_ref())?;
    let reply = format!("mwperf/{base}/reply/{id}");
    let sub_pkid = session.subscribe(&[(&reply, qos)])?;
    Ok(Box::new(MqttClient {
        session,
        broker: addr.broker,
        request: request_topic(&base),
        reply,
        qos,
        sub_pkid,
        subscribed: false,
        next: 0,
    }))
}

impl Client for MqttClient {
    /// Until the broker acknowledged our reply subscription. MQTT cannot tell whether a server
    /// subscribes to the request topic (a broker drops a PUBLISH nobody subscribed to, silently),
    /// so a call to no server is a call that times out.
    fn wait_matched(&mut self, timeout_ns: u64) -> Result<(), TransportError> {
        if !self.subscribed {
            let (broker, reply) = (self.broker.clone(), self.reply.clone());
            wait_suback(
                &mut self.session,
                &broker,
                &reply,
                self.sub_pkid,
                timeout_ns,
            )?;
            self.subscribed = true;
        }
        Ok(())
    }

    fn call(&mut self, request: &[u8]) -> Result<CallId, TransportError> {
        let id = self.next;
        self.next += 1;
        let correlation = id.to_be_bytes();
        let props = PubProps {
            response_topic: Some(self.reply.as_bytes()),
            correlation: Some(&correlation),
        };
        self.session
            .publish_with(&self.request, self.qos, false, props, request)?;
        Ok(id)
    }

    fn recv_reply(
        &mut self,
        buf: &mut Vec<u8>,
        wait_ns: u64,
    ) -> Result<Option<Reply>, TransportError> {
        let deadline = now_ns().saturating_add(wait_ns);
        loop {
            let left = deadline.saturating_sub(now_ns());
            if let Some(d) = self.session.next(left)? {
                if d.topic == self.reply.as_bytes() {
                    let call = d
                        .correlation
                        .and_then(|c| <[u8; 8]>::try_from(c).ok())
                        .map_or(u64::MAX, u64::from_be_bytes);
                    buf.clear();
                    buf.extend_from_slice(d.payload);
                    return Ok(Some(Reply { call, ok: true }));
                }
            }
            if wait_ns == 0 || now_ns() >= deadline {
                return Ok(None);
            }
        }
    }
}

impl Drop for MqttClient {
    fn drop(&mut self) {
        self.session
            .settle(CLOSE_NS, |s| s.unacknowledged() == 0 && s.unsent() == 0);
        self.session.disconnect(CLOSE_NS);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn response_topics_we_can_publish_to() {
        assert_eq!(usable_topic(b"a/b"), Some("a/b"));
        for bad in [&b""[..], b"a/+", b"#", b"a\0", b"\xff\xfe"] {
            assert_eq!(usable_topic(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn a_client_needs_the_base() {
        let e = client(&Spec::new("127.0.0.1:1")).err().expect("refused");
        assert!(e.is_usage() && e.to_string().contains("<base>"), "{e}");
    }
}
