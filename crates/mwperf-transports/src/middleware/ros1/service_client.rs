//! The calling side of a ROS 1 service (see [`super::service`]): `lookupService` at the master,
//! then connections to the provider's `rosrpc://` URI.
//!
//! - Persistent (`--opt persistent=true`): one connection for every call; calls are pipelined
//!   and a ROS server answers a connection in order, so replies are matched to calls first in,
//!   first out. A connection that breaks fails its outstanding calls; the next call reconnects.
//! - Non-persistent (default, as rospy's `ServiceProxy`): each call opens its own connection,
//!   which the server closes after the reply; N calls in flight = N connections.
//!
//! The connection header exchange of a new connection is waited for in `call` (rospy's server
//! drops a request that comes before its header answer), bounded by [`STEP_TIMEOUT`]; after it
//! nothing blocks: requests are written without waiting (the rest queued), replies read in
//! `recv_reply` with one `ppoll` over the connections. A call that cannot be made or whose
//! connection breaks comes back as a failed [`Reply`] (`ok: false`) carrying the reason.

use std::collections::VecDeque;
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::sync::atomic::{AtomicU64, Ordering};

use mwperf_core::clock::now_ns;

use super::service::{bytes_body, persistent, request_head, service_name, split_rosrpc};
use super::service::{RESPONSE_TYPE, SRV_MD5, SRV_TYPE};
use super::service_link::Link;
use super::slave::{Config, STEP_TIMEOUT};
use super::tcpros::{self, MAX_FRAME};
use super::{advertised_host, caller_id_for, master, parse_address, NAME};
use crate::service::{CallId, Client, Reply};
use crate::{Spec, TransportError};

/// One connection to the provider and the calls waiting for a reply on it, oldest first.
struct Conn {
    link: Link,
    calls: VecDeque<CallId>,
    dead: bool,
}

pub struct Ros1Client {
    cfg: Config,
    service: String,
    persistent: bool,
    /// The provider, once the master named it.
    provider: Option<(String, SocketAddr)>,
    conns: Vec<Conn>,
    /// Calls that failed before or without a reply: returned first by `recv_reply`.
    failed: VecDeque<(CallId, String)>,
    next: CallId,
    opened: u64,
    pollfds: Vec<libc::pollfd>,
}

/// Calls of all clients of this process get distinct ids (replies never cross clients, but a
/// caller mixing two clients' ids cannot confuse them).
static CALLS: AtomicU64 = AtomicU64::new(1);

impl Ros1Client {
    pub fn open(spec: &Spec) -> Result<Ros1Client, TransportError> {
        let persistent = persistent(spec)?;
        let addr = parse_address(&spec.addr, false)?;
        Ok(Ros1Client {
            cfg: Config {
                caller_id: caller_id_for("client"),
                master: addr.master.clone(),
                host: advertised_host(),
                publishes: None,
                subscribes: None,
                latching: false,
            },
            service: service_name(&addr.base),
            persistent,
            provider: None,
            conns: Vec::new(),
            failed: VecDeque::new(),
            next: CALLS.fetch_add(1 << 32, Ordering::Relaxed),
            opened: 0,
            pollfds: Vec::new(),
        })
    }

    /// Ask the master once; Ok(false) = nobody provides the service (yet).
    fn lookup(&mut self) -> Result<bool, TransportError> {
        let Some(uri) = master::lookup_service(&self.cfg, &self.service)? else {
            return Ok(false);
        };
        let (host, port) = split_rosrpc(&uri).ok_or_else(|| TransportError::Middleware {
            transport: NAME,
            detail: format!(
                "the master gave {uri} for {}, not a rosrpc://host:port URI",
                self.service
            ),
        })?;
        let to = (host, port)
            .to_socket_addrs()
            .ok()
            .and_then(|mut a| a.next())
            .ok_or_else(|| TransportError::Middleware {
                transport: NAME,
                detail: format!("cannot resolve {host} (the provider of {})", self.service),
            })?;
        self.provider = Some((uri, to));
        Ok(true)
    }

    /// A new connection to the provider, headers exchanged.
    fn connect(&mut self) -> Result<Conn, String> {
        if self.provider.is_none() {
            match self.lookup() {
                Ok(true) => {}
                Ok(false) => return Err(format!("no provider of {} at the master", self.service)),
                Err(e) => return Err(e.to_string()),
            }
        }
        let (uri, to) = self.provider.clone().expect("looked up");
        let r = handshake(&self.cfg.caller_id, &self.service, self.persistent, to);
        match r {
            Ok(stream) => {
                self.opened += 1;
                Ok(Conn {
                    link: Link::new(stream),
                    calls: VecDeque::new(),
                    dead: false,
                })
            }
            Err(e) => {
                self.provider = None; // it may have moved: ask the master again next time
                Err(format!("{} at {uri}: {e}", self.service))
            }
        }
    }

    /// Fail every call of a broken connection.
    fn fail_conn(failed: &mut VecDeque<(CallId, String)>, c: &mut Conn, why: &str) {
        c.dead = true;
        for id in c.calls.drain(..) {
            failed.push_back((id, why.to_string()));
        }
    }

    /// A whole reply from any connection: (call, ok).
    fn take(&mut self, buf: &mut Vec<u8>) -> Option<Reply> {
        for c in self.conns.iter_mut().filter(|c| !c.dead) {
            let have = c.link.buffered();
            if have.len() < 5 {
                continue;
            }
            let ok = have[0] != 0;
            let len = u32::from_le_bytes([have[1], have[2], have[3], have[4]]) as usize;
            if len > MAX_FRAME {
                Self::fail_conn(
                    &mut self.failed,
                    c,
                    "the server sent a reply too large to be one",
                );
                continue;
            }
            if have.len() < 5 + len {
                continue;
            }
            let body = &have[5..5 + len];
            buf.clear();
            let ok = match (ok, bytes_body(body)) {
                (true, Some(data)) => {
                    buf.extend_from_slice(data);
                    true
                }
                (true, None) => {
                    buf.extend_from_slice(
                        format!("a reply of {len} bytes is not a {RESPONSE_TYPE}").as_bytes(),
                    );
                    false
                }
                (false, _) => {
                    buf.extend_from_slice(body);
                    false
                }
            };
            c.link.consume(5 + len);
            let call = c.calls.pop_front().unwrap_or(u64::MAX);
            if !self.persistent && c.calls.is_empty() {
                c.dead = true; // its one call is answered: close it
            }
            return Some(Reply { call, ok });
        }
        None
    }

    /// Read every connection without blocking; true if any got bytes.
    fn fill_all(&mut self) -> bool {
        let mut got = false;
        for c in &mut self.conns {
            if c.dead {
                continue;
            }
            if c.link.has_backlog() {
                if let Err(e) = c.link.flush() {
                    Self::fail_conn(&mut self.failed, c, &format!("sending the request: {e}"));
                    continue;
                }
            }
            let want = match c.link.buffered().get(1..5) {
                Some(b) => {
                    5 + (u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize).min(MAX_FRAME)
                }
                None => 0,
            };
            match c.link.fill(want) {
                Ok(true) => got = true,
                Ok(false) => {}
                Err(e) => {
                    let why = format!("the connection to {} broke: {e}", self.service);
                    Self::fail_conn(&mut self.failed, c, &why);
                }
            }
        }
        got
    }

    fn wait(&mut self, wait_ns: u64) -> Result<(), TransportError> {
        self.pollfds.clear();
        for c in &self.conns {
            let events = if c.link.has_backlog() {
                libc::POLLIN | libc::POLLOUT
            } else {
                libc::POLLIN
            };
            self.pollfds.push(libc::pollfd {
                fd: c.link.fd(),
                events,
                revents: 0,
            });
        }
        if self.pollfds.is_empty() {
            // nothing to wait on: no call is outstanding
            std::thread::sleep(std::time::Duration::from_nanos(wait_ns.min(10_000_000)));
            return Ok(());
        }
        crate::poll::wait_fds(&mut self.pollfds, wait_ns)?;
        Ok(())
    }
}

/// Connect to `to`, send our connection header, read and check the server's.
fn handshake(
    caller_id: &str,
    service: &str,
    persistent: bool,
    to: SocketAddr,
) -> Result<TcpStream, String> {
    let mut s = TcpStream::connect_timeout(&to, STEP_TIMEOUT).map_err(|e| e.to_string())?;
    let setup = s
        .set_nodelay(true)
        .and_then(|_| s.set_read_timeout(Some(STEP_TIMEOUT)))
        .and_then(|_| s.set_write_timeout(Some(STEP_TIMEOUT)));
    setup.map_err(|e| e.to_string())?;
    let mut fields = vec![
        ("callerid", caller_id),
        ("service", service),
        ("md5sum", SRV_MD5),
        ("type", SRV_TYPE),
    ];
    if persistent {
        fields.push(("persistent", "1"));
    }
    tcpros::write_header(&mut s, &fields)
        .map_err(|e| format!("sending the connection header: {e}"))?;
    let answer = tcpros::read_header(&mut s)?;
    if let Some(err) = tcpros::field(&answer, "error") {
        return Err(format!("refused: {err}"));
    }
    match tcpros::field(&answer, "md5sum") {
        Some("*") | Some(SRV_MD5) => Ok(s),
        other => Err(format!(
            "the server's md5sum {} is not {SRV_TYPE}'s {SRV_MD5}",
            other.unwrap_or("(none)")
        )),
    }
}

impl Client for Ros1Client {
    /// Until the master names a provider of the service (asked every 50 ms).
    fn wait_matched(&mut self, timeout_ns: u64) -> Result<(), TransportError> {
        let start = now_ns();
        let end = start.saturating_add(timeout_ns);
        while self.provider.is_none() {
            if self.lookup()? {
                break;
            }
            let now = now_ns();
            if now >= end {
                return Err(TransportError::NotMatched {
                    transport: NAME,
                    waited_ns: now - start,
                    detail: format!(
                        "no provider of the service {} registered at master {}",
                        self.service, self.cfg.master
                    ),
                });
            }
            std::thread::sleep(std::time::Duration::from_nanos((end - now).min(50_000_000)));
        }
        Ok(())
    }

    fn call(&mut self, request: &[u8]) -> Result<CallId, TransportError> {
        if request.len() > MAX_FRAME {
            return Err(TransportError::TooLarge {
                size: request.len(),
                max: MAX_FRAME,
                transport: NAME,
            });
        }
        let id = self.next;
        self.next += 1;
        self.conns.retain(|c| !c.dead);
        let idx = match self.conns.iter().position(|_| self.persistent) {
            Some(i) => i,
            None => match self.connect() {
                Ok(c) => {
                    self.conns.push(c);
                    self.conns.len() - 1
                }
                Err(why) => {
                    self.failed.push_back((id, why));
                    return Ok(id);
                }
            },
        };
        let c = &mut self.conns[idx];
        c.calls.push_back(id);
        if let Err(e) = c.link.send(&request_head(request.len()), request) {
            let why = format!("sending the request to {}: {e}", self.service);
            Self::fail_conn(&mut self.failed, c, &why);
        }
        Ok(id)
    }

    fn recv_reply(
        &mut self,
        buf: &mut Vec<u8>,
        wait_ns: u64,
    ) -> Result<Option<Reply>, TransportError> {
        let deadline = now_ns().saturating_add(wait_ns);
        loop {
            if let Some(r) = self.take(buf) {
                self.conns.retain(|c| !c.dead);
                return Ok(Some(r));
            }
            if let Some((call, why)) = self.failed.pop_front() {
                buf.clear();
                buf.extend_from_slice(why.as_bytes());
                return Ok(Some(Reply { call, ok: false }));
            }
            self.conns.retain(|c| !c.dead);
            if self.fill_all() {
                continue;
            }
            let now = now_ns();
            if wait_ns == 0 || now >= deadline {
                return Ok(None);
            }
            self.wait(deadline - now)?;
        }
    }

    /// Non-persistent: close the call's connection. Persistent: the reply still comes, in
    /// order, and is returned (late) like any other.
    fn abandon(&mut self, call: CallId) {
        self.failed.retain(|(id, _)| *id != call);
        if !self.persistent {
            self.conns.retain(|c| !c.calls.contains(&call));
        }
    }

    fn connections(&self) -> Option<u64> {
        Some(self.opened)
    }
}
