//! ROS 1 publish/subscribe written by hand (rosrust is not viable, docs/transport-plan.md §7):
//! the master and slave XML-RPC APIs ([`xmlrpc`], [`slave`]) and TCPROS ([`tcpros`]), so foreign
//! ROS 1 nodes such as Debian's `topic_tools relay` can be the echo.
//!
//! Address `http://<master host>:<port>/[#<base>]`; topics `/mwperf/<base>/ping|pong`, type
//! `mwperf_msgs/Bytes` (`uint8[] data`, `int64 time`, `uint64 id`): the whole mwperf message is
//! `data`, `time` = its sent_ns, `id` = its seq.
//!
//! QoS: reliable only (TCPROS; UDPROS is not implemented). keep-last N = a publisher queue of N
//! messages per subscriber, dropping the oldest (roscpp `queue_size`); keep-all = unbounded up to
//! [`KEEP_ALL_BYTES`], then `send` waits for the subscriber; transient-local = latching, which
//! keeps exactly one message, so only with depth 1.
//!
//! Data path: `send` writes each subscriber link directly (one vectored non-blocking write per
//! link, the rest queued and flushed by later calls); `recv` reads publisher links with one
//! ppoll + recv. Discovery and handshakes run in the node's background threads.

mod master;
pub mod service;
mod service_client;
mod service_link;
mod service_server;
mod slave;
pub(crate) mod tcpros;
pub(crate) mod xmlrpc;

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use mwperf_core::clock::now_ns;

use crate::spec::{Durability, History, Reliability, Spec};
use crate::{poll, Endpoint, Side, TransportError};

use slave::{Config, Node};
use tcpros::{Inbound, Outbound, QueuePolicy, Taken};

const NAME: &str = "ros1";
/// keep-all: queued bytes per subscriber beyond which `send` waits (the plan's backlog bound).
pub const KEEP_ALL_BYTES: usize = 128 << 20;
/// The master used when the address names none (as every ROS tool does).
const DEFAULT_MASTER: &str = "http://localhost:11311/";
/// How long a dropped endpoint lets queued messages leave (a pong's last echo).
const DRAIN_NS: u64 = 1_000_000_000;

/// Where to meet: the master's URI and the topic base.
#[derive(Debug, PartialEq)]
struct Address {
    master: String,
    base: String,
}

/// ROS graph names: segments of `[A-Za-z][A-Za-z0-9_]*` separated by `/`.
fn valid_base(base: &str) -> bool {
    base.split('/').all(|seg| {
        seg.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
            && seg.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

fn parse_address(addr: &str, listener: bool) -> Result<Address, TransportError> {
    let form = "http://<master host>:<port>/[#<base>], e.g. http://127.0.0.1:11311/#demo";
    let (uri, base) = match addr.split_once('#') {
        Some((u, b)) => (u, b),
        None => (addr, ""),
    };
    let uri = if uri.is_empty() {
        std::env::var("ROS_MASTER_URI").unwrap_or_else(|_| DEFAULT_MASTER.into())
    } else {
        uri.to_string()
    };
    let (host, port, _) = xmlrpc::split_uri(&uri).ok_or_else(|| {
        TransportError::Address(format!(
            "ros1 address '{addr}': '{uri}' is not a master URI; expected {form}"
        ))
    })?;
    let master = if host.contains(':') {
        format!("http://[{host}]:{port}/")
    } else {
        format!("http://{host}:{port}/")
    };
    let base = match base {
        "" | "auto" if listener => spec_auto_base(),
        "" | "auto" => {
            return Err(TransportError::Address(format!("ros1 address '{addr}' names no topic base; the ping/pub needs the pong/sub's: {form} (the pong prints it on its READY line)")));
        }
        b if valid_base(b) => b.to_string(),
        b => return Err(TransportError::Address(format!("ros1 topic base '{b}' is not a ROS name: letters, digits and '_', starting with a letter (segments may be joined by '/')"))),
    };
    Ok(Address { master, base })
}

/// `spec::auto_base()` as a ROS name ('-' is not allowed in ROS names).
fn spec_auto_base() -> String {
    crate::spec::auto_base().replace('-', "_")
}

fn topic(base: &str, suffix: &str) -> String {
    format!("/mwperf/{base}/{suffix}")
}

/// The queue policy for the QoS, or the usage error naming what ROS 1 cannot do.
fn queue_policy(spec: &Spec) -> Result<(QueuePolicy, bool), TransportError> {
    let unsupported = |what: String| TransportError::Unsupported {
        transport: NAME,
        what,
    };
    if spec.qos.reliability == Reliability::BestEffort {
        return Err(unsupported("--reliability best-effort (UDPROS is not implemented; TCPROS is reliable: use --reliability reliable)".into()));
    }
    let policy = match spec.qos.history {
        History::KeepLast(n) => QueuePolicy::KeepLast(n as usize),
        History::KeepAll => QueuePolicy::KeepAll {
            max_bytes: KEEP_ALL_BYTES,
        },
    };
    let latching = spec.qos.durability == Durability::TransientLocal;
    if latching && spec.qos.history != History::KeepLast(1) {
        return Err(unsupported(format!("--durability transient-local with --history {} (ROS 1 latching keeps exactly the last message: use --history keep-last:1)", spec.qos.history.name())));
    }
    Ok((policy, latching))
}

/// A node name unique on the master (a second registration under one name shuts the first down).
fn caller_id(side: Side) -> String {
    caller_id_for(&format!("{side:?}").to_lowercase())
}

/// [`caller_id`] for any role (`[a-z]+`).
fn caller_id_for(role: &str) -> String {
    static N: AtomicU32 = AtomicU32::new(0);
    let t = now_ns();
    format!(
        "/mwperf_{role}_{}_{}_{:x}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed),
        (t ^ (t >> 23)) & 0xffff
    )
}

/// The host our servers advertise: ROS_IP when set (as roscpp does), else loopback.
fn advertised_host() -> String {
    std::env::var("ROS_IP")
        .ok()
        .filter(|h| h.parse::<std::net::IpAddr>().is_ok())
        .unwrap_or_else(|| "127.0.0.1".into())
}

pub fn open(side: Side, spec: &Spec) -> Result<Box<dyn Endpoint>, TransportError> {
    spec.options_of(&super::ros1_descriptor::DESCRIPTOR)?;
    let (policy, latching) = queue_policy(spec)?;
    let addr = parse_address(&spec.addr, side.is_listener())?;
    let cfg = Config {
        caller_id: caller_id(side),
        master: addr.master.clone(),
        host: advertised_host(),
        publishes: side.out_topic().map(|s| topic(&addr.base, s)),
        subscribes: side.in_topic().map(|s| topic(&addr.base, s)),
        latching,
    };
    let node = Node::start(cfg).map_err(|e| TransportError::Middleware {
        transport: NAME,
        detail: format!(
            "cannot start the node's servers on {}: {e}",
            advertised_host()
        ),
    })?;
    let mut ep = Ros1Endpoint {
        local: format!("{}#{}", addr.master, addr.base),
        node,
        policy,
        latched: None,
        outbound: Vec::new(),
        inbound: Vec::new(),
        next_in: 0,
        pollfds: Vec::new(),
        served: 0,
        registered_pub: false,
        registered_sub: false,
        side,
    };
    ep.register()?;
    Ok(Box::new(ep))
}

/// One side of a measurement as one ROS node.
pub struct Ros1Endpoint {
    node: Node,
    local: String,
    policy: QueuePolicy,
    /// Transient-local: the last message, sent to every new subscriber first.
    latched: Option<Vec<u8>>,
    /// Subscribers of our publisher.
    outbound: Vec<Outbound>,
    /// Our links to publishers of our subscription.
    inbound: Vec<Inbound>,
    /// Round-robin start among `inbound`.
    next_in: usize,
    pollfds: Vec<libc::pollfd>,
    /// Links adopted (subscribers for a ping/pub, publishers for a pong/sub).
    served: u64,
    registered_pub: bool,
    registered_sub: bool,
    side: Side,
}

impl Ros1Endpoint {
    fn shared(&self) -> &Arc<slave::Shared> {
        &self.node.shared
    }

    /// Register our publication and subscription with the master.
    fn register(&mut self) -> Result<(), TransportError> {
        let shared = Arc::clone(self.shared());
        let cfg = &shared.cfg;
        if let Some(t) = &cfg.publishes {
            master::register_publisher(cfg, t, &self.node.api)?;
            self.registered_pub = true;
        }
        if let Some(t) = &cfg.subscribes {
            let publishers = master::register_subscriber(cfg, t, &self.node.api)?;
            self.registered_sub = true;
            shared.update_publishers(publishers, true);
        }
        Ok(())
    }

    /// Take over what the background finished (new links), drop links the master unlisted.
    fn adopt(&mut self) -> Result<(), TransportError> {
        let shared = Arc::clone(self.shared());
        if !shared.changed.swap(false, Ordering::AcqRel) {
            return Ok(());
        }
        shared.clear_wake();
        let mut h = shared.lock();
        if let Some(why) = &h.shutdown {
            return Err(TransportError::Middleware {
                transport: NAME,
                detail: why.clone(),
            });
        }
        for s in h.subscribers.drain(..) {
            let mut o = Outbound::new(s);
            if let Some(m) = &self.latched {
                let (p, sfx) = tcpros::frame_parts(m);
                let _ = o.send(&p, m, &sfx, self.policy);
            }
            self.outbound.push(o);
            if !self.side.is_listener() {
                self.served += 1;
            }
        }
        for (uri, s) in h.publishers.drain(..) {
            self.inbound.push(Inbound::new(s, uri));
            if self.side.is_listener() {
                self.served += 1;
            }
        }
        let linked = h.linked.clone();
        drop(h);
        self.inbound.retain(|i| linked.contains(&i.uri));
        Ok(())
    }

    /// Forget a dead link to a publisher (so a later publisherUpdate may link again).
    fn forget_inbound(&mut self, idx: usize) {
        let i = self.inbound.swap_remove(idx);
        self.shared().lock().linked.remove(&i.uri);
    }

    fn flush_outbound(&mut self) {
        for o in self.outbound.iter_mut().filter(|o| o.has_backlog()) {
            if o.flush().is_err() {
                o.dead = true;
            }
        }
        self.outbound.retain(|o| !o.dead);
    }

    /// A buffered message from any publisher link (round robin), dropping dead links.
    fn take_buffered(&mut self, out: &mut Vec<u8>) -> Option<usize> {
        let n = self.inbound.len();
        for k in 0..n {
            let idx = (self.next_in + k) % n;
            let link = &mut self.inbound[idx];
            match link.take(out) {
                Taken::Message | Taken::Garbage => {
                    self.next_in = idx + 1;
                    return Some(out.len());
                }
                Taken::None => {}
            }
        }
        None
    }

    /// Read every link without blocking; true if any got bytes. Dead links are forgotten.
    fn fill_all(&mut self, readable_only: bool) -> bool {
        let mut got = false;
        let mut idx = 0;
        while idx < self.inbound.len() {
            let ready = !readable_only
                || self
                    .pollfds
                    .iter()
                    .any(|p| p.fd == self.inbound[idx].fd() && p.revents != 0);
            if self.inbound[idx].dead {
                self.forget_inbound(idx);
                continue;
            }
            if ready {
                match self.inbound[idx].fill() {
                    Ok(true) => got = true,
                    Ok(false) => {}
                    Err(_) => {
                        self.forget_inbound(idx);
                        continue;
                    }
                }
            }
            idx += 1;
        }
        got
    }

    /// Wait for any link to become readable (or writable, for a backlog), for new links, at
    /// most `wait_ns`. false = timed out or interrupted.
    fn wait(&mut self, wait_ns: u64) -> Result<bool, TransportError> {
        self.pollfds.clear();
        self.pollfds.push(libc::pollfd {
            fd: self.shared().wake_fd(),
            events: libc::POLLIN,
            revents: 0,
        });
        for i in &self.inbound {
            self.pollfds.push(libc::pollfd {
                fd: i.fd(),
                events: libc::POLLIN,
                revents: 0,
            });
        }
        for o in self.outbound.iter().filter(|o| o.has_backlog()) {
            self.pollfds.push(libc::pollfd {
                fd: o.fd(),
                events: libc::POLLOUT,
                revents: 0,
            });
        }
        let ready = crate::poll::wait_fds(&mut self.pollfds, wait_ns)?;
        if self.pollfds[0].revents != 0 {
            // News from the background: reset the eventfd here (the caller adopts next), or a
            // wake-up that raced an earlier adopt would keep ppoll returning at once.
            self.shared().clear_wake();
        }
        Ok(ready)
    }

    fn not_matched(&self, waited_ns: u64, what: &str) -> TransportError {
        let cfg = &self.shared().cfg;
        let last = self
            .shared()
            .lock()
            .last_error
            .clone()
            .map(|e| format!("; last link error: {e}"))
            .unwrap_or_default();
        TransportError::NotMatched {
            transport: NAME,
            waited_ns,
            detail: format!("{what} at master {}{last}", cfg.master),
        }
    }
}

impl Endpoint for Ros1Endpoint {
    fn send(&mut self, msg: &[u8]) -> Result<(), TransportError> {
        self.adopt()?;
        if self.shared().cfg.latching {
            self.latched = Some(msg.to_vec());
        }
        if msg.len() > tcpros::MAX_FRAME {
            return Err(TransportError::TooLarge {
                size: msg.len(),
                max: tcpros::MAX_FRAME,
                transport: NAME,
            });
        }
        let (prefix, suffix) = tcpros::frame_parts(msg);
        let mut err = None;
        for o in &mut self.outbound {
            if let Err(e) = o.send(&prefix, msg, &suffix, self.policy) {
                match tcpros::send_error(e) {
                    Some(e) => err = Some(e),
                    None => o.dead = true, // the subscriber left
                }
            }
        }
        self.outbound.retain(|o| !o.dead);
        err.map_or(Ok(()), Err)
    }

    fn recv(&mut self, buf: &mut Vec<u8>, wait_ns: u64) -> Result<Option<usize>, TransportError> {
        let deadline = now_ns().saturating_add(wait_ns);
        let mut readable_only = false;
        loop {
            self.adopt()?;
            self.flush_outbound();
            if let Some(n) = self.take_buffered(buf) {
                return Ok(Some(n));
            }
            if self.fill_all(readable_only) {
                if let Some(n) = self.take_buffered(buf) {
                    return Ok(Some(n));
                }
            }
            let now = now_ns();
            if wait_ns == 0 || now >= deadline {
                return Ok(None);
            }
            let left = deadline - now;
            if self.inbound.len() == 1
                && left >= tcpros::LONG_WAIT_NS
                && !self.outbound.iter().any(Outbound::has_backlog)
            {
                // The usual case (one publisher, nothing to flush): one blocking recv. New links
                // wait for the next call (at most this wait).
                match self.inbound[0].fill_blocking(left) {
                    Ok(true) => {
                        readable_only = false;
                        continue;
                    }
                    Ok(false) if now_ns() < deadline.saturating_sub(tcpros::LONG_WAIT_NS) => {
                        return Ok(None)
                    } // a signal
                    Ok(false) => {}
                    Err(_) => self.forget_inbound(0),
                }
                readable_only = false;
                continue;
            }
            if !self.wait(left)? && now_ns() < deadline {
                return Ok(None); // interrupted by a signal
            }
            readable_only = true;
        }
    }

    fn local_addr(&self) -> String {
        self.local.clone()
    }

    fn connection_count(&self) -> Option<u64> {
        Some(self.served)
    }

    /// Ping/Pub: until a subscriber is connected to our publisher (the pong's subscription, or
    /// `topic_tools relay`). The way back is not awaited: a relay advertises its output only
    /// after its first input, so the agent's first-contact probes cover it. Pong/Sub: until a
    /// publisher is linked.
    fn matched_subscribers(&mut self) -> Option<u64> {
        self.adopt().ok()?;
        (self.shared().cfg.publishes.is_some() && !self.side.is_listener())
            .then_some(self.outbound.len() as u64)
    }

    fn wait_matched(&mut self, timeout_ns: u64) -> Result<(), TransportError> {
        let start = now_ns();
        let end = start.saturating_add(timeout_ns);
        loop {
            self.adopt()?;
            let matched = if self.shared().cfg.publishes.is_some() && !self.side.is_listener() {
                !self.outbound.is_empty()
            } else {
                !self.inbound.is_empty()
            };
            if matched {
                return Ok(());
            }
            let now = now_ns();
            if now >= end {
                let cfg = &self.shared().cfg;
                let what = match (&cfg.publishes, &cfg.subscribes) {
                    (Some(p), _) if !self.side.is_listener() => format!("no subscriber connected to {p} (is the pong, or `topic_tools relay`, running?)"),
                    (_, Some(s)) => format!("no publisher of {s} linked"),
                    _ => "nothing to match".into(),
                };
                return Err(self.not_matched(now - start, &what));
            }
            // Sleep on the wake eventfd only (links get adopted when it fires).
            let fd = self.shared().wake_fd();
            if poll::wait(fd, libc::POLLIN, (end - now).min(50_000_000)).unwrap_or(false) {
                self.shared().clear_wake();
            }
        }
    }
}

impl Drop for Ros1Endpoint {
    fn drop(&mut self) {
        let end = now_ns() + DRAIN_NS;
        for o in &mut self.outbound {
            o.drain(end.saturating_sub(now_ns()));
        }
        let shared = Arc::clone(self.shared());
        let cfg = &shared.cfg;
        if self.registered_pub {
            master::unregister(
                cfg,
                "unregisterPublisher",
                cfg.publishes.as_deref().unwrap_or(""),
                &self.node.api,
            );
        }
        if self.registered_sub {
            master::unregister(
                cfg,
                "unregisterSubscriber",
                cfg.subscribes.as_deref().unwrap_or(""),
                &self.node.api,
            );
        }
        // Close links before the node goes, so peers see EOF promptly.
        for i in &self.inbound {
            let _ = i.stream.shutdown(std::net::Shutdown::Both);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::Qos;

    #[test]
    fn addresses() {
        let a = parse_address("http://127.0.0.1:11311/#demo", false).unwrap();
        assert_eq!(
            a,
            Address {
                master: "http://127.0.0.1:11311/".into(),
                base: "demo".into()
            }
        );
        let a = parse_address("http://localhost:5/#a/b_2", false).unwrap();
        assert_eq!(a.base, "a/b_2");
        let a = parse_address("http://127.0.0.1:11311/", true).unwrap();
        assert!(valid_base(&a.base), "{}", a.base);
        assert!(parse_address("http://127.0.0.1:11311/#auto", true)
            .unwrap()
            .base
            .starts_with("mwperf_"));
        for (bad, listener) in [
            ("http://127.0.0.1:11311/", false),
            ("127.0.0.1:11311#x", true),
            ("http://h:1/#a-b", true),
            ("http://h:1/#9a", true),
            ("http://h:1/#a//b", true),
            ("http://h/#a", true),
        ] {
            let e = parse_address(bad, listener).unwrap_err();
            assert!(e.is_usage() && e.to_string().contains("ros1"), "{bad}: {e}");
        }
    }

    #[test]
    fn qos_mapping() {
        let q = |r, h, d| {
            queue_policy(&Spec::new("x").with_qos(Qos {
                reliability: r,
                history: h,
                durability: d,
            }))
        };
        use Durability::*;
        use History::*;
        use Reliability::*;
        assert_eq!(
            q(Reliable, KeepLast(10), Volatile).unwrap(),
            (QueuePolicy::KeepLast(10), false)
        );
        assert_eq!(
            q(Reliable, KeepAll, Volatile).unwrap(),
            (
                QueuePolicy::KeepAll {
                    max_bytes: KEEP_ALL_BYTES
                },
                false
            )
        );
        assert_eq!(
            q(Reliable, KeepLast(1), TransientLocal).unwrap(),
            (QueuePolicy::KeepLast(1), true)
        );
        let e = q(BestEffort, KeepLast(1), Volatile)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("UDPROS is not implemented") && e.contains("not supported by ros1"),
            "{e}"
        );
        let e = q(Reliable, KeepAll, TransientLocal)
            .unwrap_err()
            .to_string();
        assert!(e.contains("keep-last:1"), "{e}");
    }

    #[test]
    fn unreachable_master_is_one_line_naming_it() {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let e = open(
            Side::Pong,
            &Spec::new(format!("http://127.0.0.1:{port}/#x")),
        )
        .err()
        .expect("no master there");
        let text = e.to_string();
        assert!(matches!(e, TransportError::Missing { .. }), "{text}");
        assert!(
            text.contains(&format!("http://127.0.0.1:{port}/"))
                && text.contains("rosmaster")
                && !text.contains('\n'),
            "{text}"
        );
    }
}
