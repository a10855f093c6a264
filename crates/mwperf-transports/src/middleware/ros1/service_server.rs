//! The answering side of a ROS 1 service (see [`super::service`]): one TCP listener registered
//! at the master, and every client connection served on the caller's thread, without blocking:
//! `recv_request` accepts, shakes hands and reads with one `ppoll` over all of them.
//!
//! Per connection, requests are taken one at a time: the next one only after the previous was
//! answered (as rospy and roscpp serve a connection), so the replies of a persistent
//! connection leave in the order its requests came. A non-persistent connection is closed after
//! its reply; a `probe` connection (rosservice's type lookup) after the header exchange.

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::sync::Arc;

use mwperf_core::clock::now_ns;

use super::service::{
    bytes_body, failure_head, response_head, service_name, REQUEST_TYPE, RESPONSE_TYPE, SRV_MD5,
    SRV_TYPE,
};
use super::service_link::Link;
use super::slave::{Config, Node};
use super::tcpros::{self, MAX_FRAME, MAX_HEADER};
use super::{advertised_host, caller_id_for, master, parse_address, NAME};
use crate::service::{Server, Token};
use crate::{Spec, TransportError};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Waiting for the client's connection header.
    Handshake,
    Serving {
        persistent: bool,
    },
    /// Close once the queue is written.
    Closing,
    Dead,
}

struct Conn {
    link: Link,
    state: State,
    /// The request taken and not answered yet.
    awaiting: Option<Token>,
    /// poll said readable (or it was never polled).
    ready: bool,
}

impl Conn {
    fn reads(&self) -> bool {
        self.awaiting.is_none() && matches!(self.state, State::Handshake | State::Serving { .. })
    }

    fn can_read_now(&self) -> bool {
        self.ready && self.reads()
    }
}

pub struct Ros1Server {
    node: Node,
    listener: TcpListener,
    service: String,
    service_api: String,
    local: String,
    conns: Vec<Conn>,
    /// Round-robin start among `conns`.
    next_conn: usize,
    next: Token,
    accepted: u64,
    listener_ready: bool,
    pollfds: Vec<libc::pollfd>,
    registered: bool,
}

impl Ros1Server {
    pub fn open(spec: &Spec) -> Result<Ros1Server, TransportError> {
        super::service::persistent(spec)?; // the option is the client's; checked for typos
        let addr = parse_address(&spec.addr, true)?;
        let host = advertised_host();
        let cfg = Config {
            caller_id: caller_id_for("service"),
            master: addr.master.clone(),
            host: host.clone(),
            publishes: None,
            subscribes: None,
            latching: false,
        };
        let bind: SocketAddr = format!("{host}:0")
            .parse()
            .unwrap_or_else(|_| SocketAddr::from(([127, 0, 0, 1], 0)));
        let started = TcpListener::bind(bind).and_then(|l| {
            l.set_nonblocking(true)?;
            Ok((Node::start(cfg)?, l))
        });
        let (node, listener) = started.map_err(|e| TransportError::Middleware {
            transport: NAME,
            detail: format!("cannot start the service's servers on {host}: {e}"),
        })?;
        let port = listener.local_addr()?.port();
        let service_api = if host.contains(':') {
            format!("rosrpc://[{host}]:{port}")
        } else {
            format!("rosrpc://{host}:{port}")
        };
        let mut s = Ros1Server {
            service: service_name(&addr.base),
            service_api,
            local: format!("{}#{}", addr.master, addr.base),
            node,
            listener,
            conns: Vec::new(),
            next_conn: 0,
            next: 0,
            accepted: 0,
            listener_ready: true,
            pollfds: Vec::new(),
            registered: false,
        };
        let shared = Arc::clone(&s.node.shared);
        master::register_service(&shared.cfg, &s.service, &s.service_api, &s.node.api)?;
        s.registered = true;
        Ok(s)
    }

    fn accept(&mut self) {
        if !std::mem::take(&mut self.listener_ready) {
            return;
        }
        loop {
            match self.listener.accept() {
                Ok((stream, _)) => {
                    if prepare(&stream).is_ok() {
                        self.accepted += 1;
                        self.conns.push(Conn {
                            link: Link::new(stream),
                            state: State::Handshake,
                            awaiting: None,
                            ready: true,
                        });
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => return, // WouldBlock, or a client gone before we took it
            }
        }
    }

    /// Flush, read and shake hands on every connection that can move; drop finished ones.
    fn progress(&mut self) {
        for c in &mut self.conns {
            if c.link.has_backlog() && c.link.flush().is_err() {
                c.state = State::Dead;
            }
            if c.reads() && std::mem::take(&mut c.ready) {
                let want = frame_want(c.link.buffered(), c.state == State::Handshake);
                if c.link.fill(want).is_err() {
                    c.state = State::Dead;
                }
            }
            if c.state == State::Handshake {
                handshake(c, &self.service, &self.node.shared.cfg.caller_id);
            }
            if c.state == State::Closing && !c.link.has_backlog() {
                c.state = State::Dead;
            }
        }
        self.conns.retain(|c| c.state != State::Dead);
    }

    /// A whole request from any connection that may take one (round robin).
    fn take(&mut self, buf: &mut Vec<u8>) -> Option<Token> {
        let n = self.conns.len();
        for k in 0..n {
            let idx = (self.next_conn + k) % n;
            let c = &mut self.conns[idx];
            let State::Serving { persistent } = c.state else {
                continue;
            };
            if c.awaiting.is_some() {
                continue;
            }
            let have = c.link.buffered();
            if have.len() < 4 {
                continue;
            }
            let len = u32::from_le_bytes([have[0], have[1], have[2], have[3]]) as usize;
            if len > MAX_FRAME {
                c.state = State::Dead; // not a request: nothing to resynchronise on
                continue;
            }
            if have.len() < 4 + len {
                c.ready = true; // read more now, not after a poll
                continue;
            }
            match bytes_body(&have[4..4 + len]) {
                Some(data) => {
                    buf.clear();
                    buf.extend_from_slice(data);
                    c.link.consume(4 + len);
                    self.next += 1;
                    c.awaiting = Some(self.next);
                    c.ready = true;
                    self.next_conn = idx + 1;
                    return Some(self.next);
                }
                None => {
                    c.link.consume(4 + len);
                    let why = format!(
                        "a request of {len} bytes is not a {REQUEST_TYPE} (u32 count + bytes)"
                    );
                    if c.link
                        .send(&failure_head(why.len()), why.as_bytes())
                        .is_err()
                    {
                        c.state = State::Dead;
                    } else if !persistent {
                        c.state = State::Closing;
                    }
                }
            }
        }
        None
    }

    /// Wait for the listener or a connection that can move, at most `wait_ns`.
    fn wait(&mut self, wait_ns: u64) -> Result<(), TransportError> {
        self.pollfds.clear();
        self.pollfds
            .push(pollfd(self.listener.as_raw_fd(), libc::POLLIN));
        for c in &self.conns {
            let mut events = 0;
            if c.awaiting.is_none() && c.state != State::Closing {
                events |= libc::POLLIN;
            }
            if c.link.has_backlog() {
                events |= libc::POLLOUT;
            }
            self.pollfds.push(pollfd(c.link.fd(), events));
        }
        crate::poll::wait_fds(&mut self.pollfds, wait_ns)?; // a signal: nothing ready
        self.listener_ready = self.pollfds[0].revents != 0;
        for (c, p) in self.conns.iter_mut().zip(&self.pollfds[1..]) {
            c.ready = p.revents & !libc::POLLOUT != 0;
        }
        Ok(())
    }
}

fn pollfd(fd: i32, events: libc::c_short) -> libc::pollfd {
    libc::pollfd {
        fd,
        events,
        revents: 0,
    }
}

fn prepare(s: &TcpStream) -> std::io::Result<()> {
    s.set_nonblocking(false)?;
    s.set_nodelay(true)
}

/// Room to ask for when reading: the whole header or frame being assembled.
fn frame_want(have: &[u8], header: bool) -> usize {
    match have.get(..4) {
        Some(b) => {
            let n = u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize;
            4 + n.min(if header { MAX_HEADER } else { MAX_FRAME })
        }
        None => 0,
    }
}

/// The client's connection header, once whole: answer it and start serving (or refuse).
fn handshake(c: &mut Conn, service: &str, caller_id: &str) {
    let have = c.link.buffered();
    if have.len() < 4 {
        return;
    }
    let n = u32::from_le_bytes([have[0], have[1], have[2], have[3]]) as usize;
    if n > MAX_HEADER {
        c.state = State::Dead;
        return;
    }
    if have.len() < 4 + n {
        c.ready = true;
        return;
    }
    let fields = tcpros::decode_header(&have[4..4 + n]);
    c.link.consume(4 + n);
    let refuse = |why: String| (State::Closing, tcpros::encode_header(&[("error", &why)]));
    let (state, answer) = match fields {
        Err(e) => refuse(format!("malformed connection header: {e}")),
        Ok(f) => {
            let md5 = tcpros::field(&f, "md5sum");
            let persistent = matches!(tcpros::field(&f, "persistent"), Some("1" | "true"));
            let ok_header = || {
                tcpros::encode_header(&[
                    ("callerid", caller_id),
                    ("md5sum", SRV_MD5),
                    ("type", SRV_TYPE),
                    ("request_type", REQUEST_TYPE),
                    ("response_type", RESPONSE_TYPE),
                ])
            };
            if tcpros::field(&f, "service") != Some(service) {
                refuse(format!(
                    "this is the provider of {service}, not of {}",
                    tcpros::field(&f, "service").unwrap_or("(no service field)")
                ))
            } else if !matches!(md5, Some("*") | Some(SRV_MD5)) {
                refuse(format!(
                    "md5sums do not match: [{}] vs. [{SRV_MD5}] ({SRV_TYPE})",
                    md5.unwrap_or("")
                ))
            } else if tcpros::field(&f, "probe") == Some("1") {
                (State::Closing, ok_header())
            } else {
                (State::Serving { persistent }, ok_header())
            }
        }
    };
    c.state = match c.link.send(&answer, &[]) {
        Ok(()) => state,
        Err(_) => State::Dead,
    };
    c.ready = true; // a request may have come with the header
}

impl Server for Ros1Server {
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
            self.accept();
            self.progress();
            if let Some(t) = self.take(buf) {
                return Ok(Some(t));
            }
            let now = now_ns();
            if wait_ns == 0 || now >= deadline {
                return Ok(None);
            }
            if self.conns.iter().any(Conn::can_read_now) {
                continue; // more to read or to shake hands on
            }
            self.wait(deadline - now)?;
        }
    }

    fn reply(&mut self, token: Token, reply: &[u8]) -> Result<(), TransportError> {
        if reply.len() > MAX_FRAME {
            return Err(TransportError::TooLarge {
                size: reply.len(),
                max: MAX_FRAME,
                transport: NAME,
            });
        }
        let Some(c) = self.conns.iter_mut().find(|c| c.awaiting == Some(token)) else {
            if token >= 1 && token <= self.next {
                return Ok(()); // its client left: nobody to answer
            }
            return Err(TransportError::Middleware {
                transport: NAME,
                detail: format!("no pending request {token} to answer"),
            });
        };
        c.awaiting = None;
        c.ready = true;
        match c.link.send(&response_head(reply.len()), reply) {
            Err(_) => c.state = State::Dead, // the client left
            Ok(()) => {
                if c.state == (State::Serving { persistent: false }) {
                    c.state = if c.link.has_backlog() {
                        State::Closing
                    } else {
                        State::Dead // written whole: close now
                    };
                }
            }
        }
        if c.state == State::Dead {
            self.conns.retain(|c| c.state != State::Dead);
        }
        Ok(())
    }

    fn connections(&self) -> Option<u64> {
        Some(self.accepted)
    }
}

impl Drop for Ros1Server {
    fn drop(&mut self) {
        if self.registered {
            let shared = Arc::clone(&self.node.shared);
            master::unregister(
                &shared.cfg,
                "unregisterService",
                &self.service,
                &self.service_api,
            );
        }
        for c in &mut self.conns {
            let _ = c.link.flush();
            let _ = c.link.stream.shutdown(std::net::Shutdown::Both);
        }
    }
}
