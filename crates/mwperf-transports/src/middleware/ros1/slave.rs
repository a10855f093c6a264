//! One ROS 1 node per endpoint: its slave API (XML-RPC) and its TCPROS server, served by a
//! background thread, and the links to publishers, made by short-lived connector threads.
//!
//! Everything slow or foreign happens here, never on the data path: handshakes with subscribers
//! (header in, header out), `requestTopic` calls to publishers and their handshakes. Finished
//! connections are handed to the endpoint through [`Shared`] (a mutex it only takes when the
//! `changed` flag is set, plus an eventfd so a waiting `recv` wakes up for them).
//!
//! Every request is served on its own thread, and connectors run on their own threads, because
//! two nodes may call each other's `requestTopic` at the same moment (a ping and a pong in one
//! process subscribe to each other): a single-threaded slave would deadlock until timeouts.

use std::collections::HashSet;
use std::io;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Duration;

use super::tcpros::{self, MSG_DEFINITION, MSG_MD5, MSG_TYPE};
use super::xmlrpc::{self, ros_err, ros_ok, Value};

/// Bound on every handshake step and slave-API exchange (local, so generous).
pub const STEP_TIMEOUT: Duration = Duration::from_secs(3);
/// The pause before a failed link to a listed publisher is tried again, doubled each time up to
/// LINK_RETRY_MAX.
const LINK_RETRY_FIRST: Duration = Duration::from_millis(100);
const LINK_RETRY_MAX: Duration = Duration::from_secs(2);

/// What a node is: its name, its master, the topics it publishes and subscribes.
pub struct Config {
    pub caller_id: String,
    pub master: String,
    /// The host we advertise for our servers (127.0.0.1 unless ROS_IP says otherwise).
    pub host: String,
    pub publishes: Option<String>,
    pub subscribes: Option<String>,
    pub latching: bool,
}

/// Connections finished in the background, waiting for the endpoint to adopt them.
#[derive(Default)]
pub struct Handoff {
    /// Subscribers connected to our publisher.
    pub subscribers: Vec<TcpStream>,
    /// Our links to publishers: (publisher slave URI, stream).
    pub publishers: Vec<(String, TcpStream)>,
    /// Publisher URIs the master currently lists for our subscription.
    pub listed: HashSet<String>,
    /// Publisher URIs we are linked or linking to.
    pub linked: HashSet<String>,
    /// Set when the master (or anyone) called our `shutdown`.
    pub shutdown: Option<String>,
    /// The last handshake failure, for NotMatched details.
    pub last_error: Option<String>,
}

pub struct Shared {
    pub cfg: Config,
    pub tcpros_port: u16,
    pub changed: AtomicBool,
    stop: AtomicBool,
    handoff: Mutex<Handoff>,
    /// Readable while `changed` news waits (an eventfd).
    wake: OwnedFd,
}

impl Shared {
    pub fn lock(&self) -> MutexGuard<'_, Handoff> {
        self.handoff.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn wake_fd(&self) -> RawFd {
        self.wake.as_raw_fd()
    }

    /// Tell the endpoint that something is waiting in the handoff.
    fn notify(&self) {
        self.changed.store(true, Ordering::Release);
        let one: u64 = 1;
        // SAFETY: writing 8 bytes to an eventfd.
        unsafe {
            libc::write(
                self.wake.as_raw_fd(),
                &one as *const u64 as *const libc::c_void,
                8,
            )
        };
    }

    /// Clear the eventfd after `changed` was taken.
    pub fn clear_wake(&self) {
        let mut v: u64 = 0;
        // SAFETY: reading 8 bytes from a non-blocking eventfd.
        unsafe {
            libc::read(
                self.wake.as_raw_fd(),
                &mut v as *mut u64 as *mut libc::c_void,
                8,
            )
        };
    }

    /// The master lists these publishers for our subscription: link to the new ones, forget
    /// the gone ones (the endpoint closes their links). `additive` for the answer of
    /// registerSubscriber, which may be older than an update that raced it.
    pub fn update_publishers(self: &Arc<Self>, uris: Vec<String>, additive: bool) {
        let Some(topic) = self.cfg.subscribes.clone() else {
            return;
        };
        let mut h = self.lock();
        if !additive {
            h.listed.retain(|u| uris.contains(u));
            let listed = h.listed.clone();
            h.linked.retain(|u| listed.contains(u) || uris.contains(u));
        }
        for uri in uris {
            h.listed.insert(uri.clone());
            if h.linked.insert(uri.clone()) {
                let me = Arc::clone(self);
                let topic = topic.clone();
                let spawned = std::thread::Builder::new()
                    .name("ros1-link".into())
                    .spawn(move || me.link_to_publisher(&uri, &topic));
                if spawned.is_err() {
                    h.last_error = Some("cannot start a thread".into());
                }
            }
        }
        drop(h);
        self.notify();
    }

    /// Ask a publisher for a TCPROS port, connect and shake hands; hand the link over. A failed
    /// attempt (a step timed out on a loaded machine, the publisher not serving yet) is tried
    /// again, with a growing pause, while the master still lists the publisher: the master
    /// sends publisherUpdate once, so a link given up after one failure never came (as rospy,
    /// which keeps trying a listed publisher). Each failure is kept for NotMatched's details.
    fn link_to_publisher(&self, uri: &str, topic: &str) {
        let mut pause = LINK_RETRY_FIRST;
        loop {
            match self.try_link(uri, topic) {
                Ok(stream) => {
                    let mut h = self.lock();
                    if h.linked.contains(uri) && !self.stop.load(Ordering::Acquire) {
                        h.publishers.push((uri.to_string(), stream));
                    }
                    break;
                }
                Err(e) => {
                    let mut h = self.lock();
                    h.last_error = Some(format!("publisher {uri} of {topic}: {e}"));
                    let wanted = h.listed.contains(uri) && h.linked.contains(uri);
                    if !wanted || self.stop.load(Ordering::Acquire) {
                        h.linked.remove(uri);
                        break;
                    }
                }
            }
            self.notify();
            if !self.pause(pause) {
                self.lock().linked.remove(uri);
                break;
            }
            pause = (pause * 2).min(LINK_RETRY_MAX);
        }
        self.notify();
    }

    /// Sleep `d` unless the node stops meanwhile (false then).
    fn pause(&self, d: Duration) -> bool {
        let end = std::time::Instant::now() + d;
        while std::time::Instant::now() < end {
            if self.stop.load(Ordering::Acquire) {
                return false;
            }
            std::thread::sleep(Duration::from_millis(20).min(d));
        }
        !self.stop.load(Ordering::Acquire)
    }

    fn try_link(&self, uri: &str, topic: &str) -> Result<TcpStream, String> {
        let protocols = Value::Array(vec![Value::Array(vec![Value::str("TCPROS")])]);
        let answer = xmlrpc::call(
            uri,
            "requestTopic",
            &[
                Value::str(&self.cfg.caller_id),
                Value::str(topic),
                protocols,
            ],
            STEP_TIMEOUT,
        )
        .map_err(|e| format!("requestTopic: {e}"))?;
        let params = xmlrpc::ros_result(answer).map_err(|e| format!("requestTopic: {e}"))?;
        let (host, port) = match params.as_array() {
            Some([Value::Str(proto), Value::Str(host), Value::Int(port)]) if proto == "TCPROS" => {
                (host.clone(), *port)
            }
            _ => {
                return Err(format!(
                    "requestTopic answered {params:?}, not [\"TCPROS\", host, port]"
                ))
            }
        };
        let port = u16::try_from(port).map_err(|_| format!("requestTopic gave port {port}"))?;
        let addr = std::net::ToSocketAddrs::to_socket_addrs(&(host.as_str(), port))
            .ok()
            .and_then(|mut a| a.next())
            .ok_or_else(|| format!("cannot resolve {host}"))?;
        let mut s = TcpStream::connect_timeout(&addr, STEP_TIMEOUT)
            .map_err(|e| format!("connect {addr}: {e}"))?;
        s.set_nodelay(true).map_err(|e| e.to_string())?;
        s.set_read_timeout(Some(STEP_TIMEOUT))
            .map_err(|e| e.to_string())?;
        s.set_write_timeout(Some(STEP_TIMEOUT))
            .map_err(|e| e.to_string())?;
        tcpros::write_header(
            &mut s,
            &[
                ("callerid", &self.cfg.caller_id),
                ("topic", topic),
                ("md5sum", MSG_MD5),
                ("type", MSG_TYPE),
                ("message_definition", MSG_DEFINITION),
                ("tcp_nodelay", "1"),
            ],
        )
        .map_err(|e| format!("sending the connection header: {e}"))?;
        let answer = tcpros::read_header(&mut s)?;
        if let Some(err) = tcpros::field(&answer, "error") {
            return Err(format!("refused: {err}"));
        }
        if !tcpros::md5_matches(tcpros::field(&answer, "md5sum")) {
            return Err(format!(
                "publishes md5sum {:?} (type {:?}), we want {MSG_MD5} ({MSG_TYPE})",
                tcpros::field(&answer, "md5sum"),
                tcpros::field(&answer, "type")
            ));
        }
        s.set_read_timeout(None).map_err(|e| e.to_string())?;
        s.set_write_timeout(None).map_err(|e| e.to_string())?;
        Ok(s)
    }

    /// A subscriber connected to our TCPROS port: check its header, answer, hand it over.
    fn accept_subscriber(&self, mut s: TcpStream) {
        let r = (|| -> Result<(), String> {
            s.set_nodelay(true).map_err(|e| e.to_string())?;
            s.set_read_timeout(Some(STEP_TIMEOUT))
                .map_err(|e| e.to_string())?;
            s.set_write_timeout(Some(STEP_TIMEOUT))
                .map_err(|e| e.to_string())?;
            let their = tcpros::read_header(&mut s)?;
            let ours = self.cfg.publishes.as_deref().unwrap_or("");
            let refuse = match (
                tcpros::field(&their, "topic"),
                tcpros::field(&their, "md5sum"),
            ) {
                (Some(t), _) if t != ours => {
                    Some(format!("this node publishes {ours:?}, not {t:?}"))
                }
                (None, _) => Some(
                    "no topic in the connection header (service calls are not served)".to_string(),
                ),
                (_, md5) if !tcpros::md5_matches(md5) => Some(format!(
                    "md5sum mismatch: subscriber wants {md5:?}, {ours} is {MSG_TYPE} {MSG_MD5}"
                )),
                _ => None,
            };
            if let Some(why) = refuse {
                let _ = tcpros::write_header(&mut s, &[("error", &why)]);
                return Err(why);
            }
            let latching = if self.cfg.latching { "1" } else { "0" };
            tcpros::write_header(
                &mut s,
                &[
                    ("callerid", &self.cfg.caller_id),
                    ("topic", ours),
                    ("md5sum", MSG_MD5),
                    ("type", MSG_TYPE),
                    ("message_definition", MSG_DEFINITION),
                    ("latching", latching),
                ],
            )
            .map_err(|e| e.to_string())?;
            s.set_read_timeout(None).map_err(|e| e.to_string())?;
            s.set_write_timeout(None).map_err(|e| e.to_string())?;
            Ok(())
        })();
        let mut h = self.lock();
        match r {
            Ok(()) if !self.stop.load(Ordering::Acquire) => h.subscribers.push(s),
            Ok(()) => {}
            Err(e) => h.last_error = Some(format!("subscriber handshake: {e}")),
        }
        drop(h);
        self.notify();
    }

    /// Serve one XML-RPC request of the slave API.
    fn serve_request(self: &Arc<Self>, mut s: TcpStream) {
        let _ = s.set_read_timeout(Some(STEP_TIMEOUT));
        let _ = s.set_write_timeout(Some(STEP_TIMEOUT));
        let Ok((_, body)) = xmlrpc::read_http(&mut s) else {
            return;
        };
        let reply = match xmlrpc::parse_call(&body) {
            Ok((method, params)) => match self.slave_api(&method, &params) {
                Some(v) => xmlrpc::method_response(&v),
                None => xmlrpc::fault_response(
                    -1,
                    &format!("method '{method}' is not served by this node"),
                ),
            },
            Err(e) => xmlrpc::fault_response(-1, &format!("cannot parse the call: {e}")),
        };
        let _ = xmlrpc::write_http_response(&mut s, &reply);
    }

    /// The slave API (ROS wiki "Slave API"); None for methods we do not serve.
    fn slave_api(self: &Arc<Self>, method: &str, params: &[Value]) -> Option<Value> {
        let topics = |t: &Option<String>| {
            Value::Array(
                t.iter()
                    .map(|t| Value::Array(vec![Value::str(t), Value::str(MSG_TYPE)]))
                    .collect(),
            )
        };
        Some(match method {
            "getPid" => ros_ok(Value::Int(std::process::id() as i64)),
            "getMasterUri" => ros_ok(Value::str(&self.cfg.master)),
            "getBusInfo" => ros_ok(Value::Array(vec![])),
            "getBusStats" => ros_ok(Value::Array(vec![
                Value::Array(vec![]),
                Value::Array(vec![]),
                Value::Array(vec![]),
            ])),
            "getSubscriptions" => ros_ok(topics(&self.cfg.subscribes)),
            "getPublications" => ros_ok(topics(&self.cfg.publishes)),
            "paramUpdate" => ros_ok(Value::Int(0)),
            "shutdown" => {
                let why = params
                    .get(1)
                    .and_then(Value::as_str)
                    .unwrap_or("no reason given")
                    .to_string();
                let who = params
                    .first()
                    .and_then(Value::as_str)
                    .unwrap_or("?")
                    .to_string();
                self.lock().shutdown = Some(format!(
                    "{who} asked node {} to shut down: {why}",
                    self.cfg.caller_id
                ));
                self.notify();
                ros_ok(Value::Int(0))
            }
            "publisherUpdate" => match (
                params.get(1).and_then(Value::as_str),
                params.get(2).and_then(Value::as_array),
            ) {
                (Some(topic), Some(uris)) if self.cfg.subscribes.as_deref() == Some(topic) => {
                    self.update_publishers(
                        uris.iter()
                            .filter_map(|u| u.as_str().map(str::to_string))
                            .collect(),
                        false,
                    );
                    ros_ok(Value::Int(0))
                }
                (Some(topic), Some(_)) => ros_err(0, &format!("not subscribed to {topic}")),
                _ => ros_err(-1, "publisherUpdate(caller_id, topic, publishers) expected"),
            },
            "requestTopic" => {
                let topic = params.get(1).and_then(Value::as_str);
                let tcpros = params.get(2).and_then(Value::as_array).is_some_and(|ps| {
                    ps.iter().any(|p| {
                        p.as_array().and_then(|p| p.first()).and_then(Value::as_str)
                            == Some("TCPROS")
                    })
                });
                match topic {
                    Some(t) if self.cfg.publishes.as_deref() != Some(t) => ros_err(
                        0,
                        &format!("node {} does not publish {t}", self.cfg.caller_id),
                    ),
                    Some(_) if tcpros => ros_ok(Value::Array(vec![
                        Value::str("TCPROS"),
                        Value::str(&self.cfg.host),
                        Value::Int(self.tcpros_port as i64),
                    ])),
                    Some(_) => ros_err(0, "only TCPROS is served (UDPROS is not implemented)"),
                    None => ros_err(-1, "requestTopic(caller_id, topic, protocols) expected"),
                }
            }
            _ => return None,
        })
    }
}

/// The running node: background thread accepting XML-RPC requests and TCPROS subscribers.
pub struct Node {
    pub shared: Arc<Shared>,
    pub api: String,
    stop_fd: OwnedFd,
    thread: Option<JoinHandle<()>>,
}

fn eventfd() -> io::Result<OwnedFd> {
    // SAFETY: eventfd returns a new descriptor or -1.
    let fd = unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: fd is a fresh descriptor we own.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

impl Node {
    /// Bind the slave API and (if publishing) the TCPROS server, and start serving.
    pub fn start(cfg: Config) -> io::Result<Node> {
        let bind: SocketAddr = format!("{}:0", cfg.host)
            .parse()
            .unwrap_or_else(|_| SocketAddr::from(([127, 0, 0, 1], 0)));
        let api_listener = TcpListener::bind(bind)?;
        let tcpros_listener = TcpListener::bind(bind)?;
        api_listener.set_nonblocking(true)?;
        tcpros_listener.set_nonblocking(true)?;
        let api = format!("http://{}:{}/", cfg.host, api_listener.local_addr()?.port());
        let tcpros_port = tcpros_listener.local_addr()?.port();
        let shared = Arc::new(Shared {
            cfg,
            tcpros_port,
            changed: AtomicBool::new(false),
            stop: AtomicBool::new(false),
            handoff: Mutex::default(),
            wake: eventfd()?,
        });
        let stop_fd = eventfd()?;
        let stop_raw = stop_fd.as_raw_fd();
        let me = Arc::clone(&shared);
        let thread = std::thread::Builder::new()
            .name("ros1-node".into())
            .spawn(move || serve(me, api_listener, tcpros_listener, stop_raw))?;
        Ok(Node {
            shared,
            api,
            stop_fd,
            thread: Some(thread),
        })
    }
}

/// Accept loop: slave API requests and TCPROS subscribers, each handled on its own thread.
fn serve(shared: Arc<Shared>, api: TcpListener, tcpros: TcpListener, stop_fd: RawFd) {
    let mut fds = [
        libc::pollfd {
            fd: api.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        },
        libc::pollfd {
            fd: tcpros.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        },
        libc::pollfd {
            fd: stop_fd,
            events: libc::POLLIN,
            revents: 0,
        },
    ];
    while !shared.stop.load(Ordering::Acquire) {
        // SAFETY: three valid pollfds; no timeout (the stop eventfd wakes us).
        let rc = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, 1000) };
        if rc <= 0 {
            continue;
        }
        while let Ok((s, _)) = api.accept() {
            let _ = s.set_nonblocking(false);
            let me = Arc::clone(&shared);
            let _ = std::thread::Builder::new()
                .name("ros1-xmlrpc".into())
                .spawn(move || me.serve_request(s));
        }
        while let Ok((s, _)) = tcpros.accept() {
            let _ = s.set_nonblocking(false);
            if shared.cfg.publishes.is_none() {
                continue; // nothing to serve: drop it
            }
            let me = Arc::clone(&shared);
            let _ = std::thread::Builder::new()
                .name("ros1-accept".into())
                .spawn(move || me.accept_subscriber(s));
        }
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Release);
        let one: u64 = 1;
        // SAFETY: writing 8 bytes to our eventfd.
        unsafe {
            libc::write(
                self.stop_fd.as_raw_fd(),
                &one as *const u64 as *const libc::c_void,
                8,
            )
        };
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};

    fn node() -> Node {
        Node::start(Config {
            caller_id: "/test_node".into(),
            master: "http://127.0.0.1:1/".into(),
            host: "127.0.0.1".into(),
            publishes: Some("/mwperf/t/ping".into()),
            subscribes: Some("/mwperf/t/pong".into()),
            latching: false,
        })
        .unwrap()
    }

    fn subscribe(port: u16, fields: &[(&str, &str)]) -> tcpros::Fields {
        let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        tcpros::write_header(&mut s, fields).unwrap();
        tcpros::read_header(&mut s).unwrap()
    }

    fn wait_for(n: &Node, what: impl Fn(&Handoff) -> bool) -> bool {
        for _ in 0..500 {
            if what(&n.shared.lock()) {
                return true;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        false
    }

    #[test]
    fn tcpros_handshakes_accept_matching_and_wildcard_subscribers_and_refuse_others() {
        let n = node();
        let port = n.shared.tcpros_port;
        // Garbage first: the node must go on serving.
        for junk in [
            &b"GET / HTTP/1.0\r\n\r\n"[..],
            b"\xff\xff\xff\xff",
            b"\x08\x00\x00\x00\x04\x00\x00\x00abcd",
            b"",
        ] {
            let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
            s.write_all(junk).unwrap();
            let _ = s.shutdown(std::net::Shutdown::Write);
            let mut out = Vec::new();
            s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
            let _ = s.read_to_end(&mut out);
        }
        let ok = subscribe(
            port,
            &[
                ("topic", "/mwperf/t/ping"),
                ("md5sum", MSG_MD5),
                ("callerid", "/a"),
                ("type", MSG_TYPE),
            ],
        );
        assert_eq!(tcpros::field(&ok, "md5sum"), Some(MSG_MD5));
        assert_eq!(tcpros::field(&ok, "type"), Some(MSG_TYPE));
        assert_eq!(tcpros::field(&ok, "latching"), Some("0"));
        let relay = subscribe(
            port,
            &[
                ("topic", "/mwperf/t/ping"),
                ("md5sum", "*"),
                ("callerid", "/relay"),
                ("type", "*"),
            ],
        );
        assert_eq!(tcpros::field(&relay, "error"), None);
        assert!(
            wait_for(&n, |h| h.subscribers.len() == 2),
            "both subscribers handed over"
        );
        let wrong_md5 = subscribe(
            port,
            &[
                ("topic", "/mwperf/t/ping"),
                ("md5sum", "992ce8a1687cec8c8bd883ec73ca41d1"),
                ("type", "std_msgs/String"),
            ],
        );
        assert!(tcpros::field(&wrong_md5, "error").is_some_and(|e| e.contains("md5sum")));
        let wrong_topic = subscribe(port, &[("topic", "/other"), ("md5sum", "*")]);
        assert!(tcpros::field(&wrong_topic, "error").is_some());
        assert_eq!(n.shared.lock().subscribers.len(), 2);
    }

    #[test]
    fn a_failed_link_to_a_listed_publisher_is_tried_again() {
        let publisher = Node::start(Config {
            caller_id: "/publisher".into(),
            master: "http://127.0.0.1:1/".into(),
            host: "127.0.0.1".into(),
            publishes: Some("/mwperf/t/pong".into()),
            subscribes: None,
            latching: false,
        })
        .unwrap();
        // the publisher's slave API as the subscriber sees it: the first requestTopic is cut
        // off (as a step timing out), the next answered with the real publisher's port
        let api = TcpListener::bind("127.0.0.1:0").unwrap();
        let uri = format!("http://127.0.0.1:{}/", api.local_addr().unwrap().port());
        let port = publisher.shared.tcpros_port;
        let fake = std::thread::spawn(move || {
            drop(api.accept().unwrap().0);
            let (mut s, _) = api.accept().unwrap();
            xmlrpc::read_http(&mut s).unwrap();
            let answer = ros_ok(Value::Array(vec![
                Value::str("TCPROS"),
                Value::str("127.0.0.1"),
                Value::Int(port as i64),
            ]));
            xmlrpc::write_http_response(&mut s, &xmlrpc::method_response(&answer)).unwrap();
        });
        let n = node(); // subscribes /mwperf/t/pong
        n.shared.update_publishers(vec![uri.clone()], false);
        let end = std::time::Instant::now() + Duration::from_secs(20);
        while n.shared.lock().publishers.is_empty() && std::time::Instant::now() < end {
            std::thread::sleep(Duration::from_millis(10));
        }
        let h = n.shared.lock();
        assert_eq!(
            h.publishers.len(),
            1,
            "linked after a failure: {:?}",
            h.last_error
        );
        assert_eq!(h.publishers[0].0, uri);
        assert!(h
            .last_error
            .as_deref()
            .is_some_and(|e| e.contains("requestTopic")));
        drop(h);
        fake.join().unwrap();
    }

    #[test]
    fn slave_api_over_http() {
        let n = node();
        let v = xmlrpc::call(&n.api, "getPid", &[Value::str("/x")], STEP_TIMEOUT).unwrap();
        assert_eq!(
            xmlrpc::ros_result(v).unwrap(),
            Value::Int(std::process::id() as i64)
        );
        let tcpros = Value::Array(vec![Value::Array(vec![Value::str("TCPROS")])]);
        let v = xmlrpc::call(
            &n.api,
            "requestTopic",
            &[
                Value::str("/x"),
                Value::str("/mwperf/t/ping"),
                tcpros.clone(),
            ],
            STEP_TIMEOUT,
        )
        .unwrap();
        assert_eq!(
            xmlrpc::ros_result(v).unwrap(),
            Value::Array(vec![
                Value::str("TCPROS"),
                Value::str("127.0.0.1"),
                Value::Int(n.shared.tcpros_port as i64)
            ])
        );
        let udpros = Value::Array(vec![Value::Array(vec![
            Value::str("UDPROS"),
            Value::Base64("AAAA".into()),
        ])]);
        let v = xmlrpc::call(
            &n.api,
            "requestTopic",
            &[Value::str("/x"), Value::str("/mwperf/t/ping"), udpros],
            STEP_TIMEOUT,
        )
        .unwrap();
        assert!(xmlrpc::ros_result(v).unwrap_err().contains("UDPROS"));
        // A publisherUpdate naming a dead publisher: the link fails and is tried again while
        // the master lists it, and forgotten once it does not
        let update = |uris: Vec<Value>| {
            let v = xmlrpc::call(
                &n.api,
                "publisherUpdate",
                &[
                    Value::str("/master"),
                    Value::str("/mwperf/t/pong"),
                    Value::Array(uris),
                ],
                STEP_TIMEOUT,
            )
            .unwrap();
            assert!(xmlrpc::ros_result(v).is_ok());
        };
        update(vec![Value::str("http://127.0.0.1:1/")]);
        assert!(
            wait_for(&n, |h| h.linked.len() == 1 && h.last_error.is_some()),
            "failed link kept while listed"
        );
        update(vec![]);
        assert!(
            wait_for(&n, |h| h.linked.is_empty() && h.listed.is_empty()),
            "a publisher no longer listed is forgotten"
        );
        let v = xmlrpc::call(
            &n.api,
            "shutdown",
            &[Value::str("/master"), Value::str("new node")],
            STEP_TIMEOUT,
        )
        .unwrap();
        assert!(xmlrpc::ros_result(v).is_ok());
        assert!(n
            .shared
            .lock()
            .shutdown
            .as_deref()
            .is_some_and(|s| s.contains("new node")));
    }
}
