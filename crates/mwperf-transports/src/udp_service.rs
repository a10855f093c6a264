//! The socket baseline of request/response over UDP: a request is one datagram to the server,
//! its reply one datagram back to the sender's address. UDP has no request ids of its own, so
//! the call id is the mwperf header's `seq` at the start of the request, and the reply's (the
//! server answers with its own header carrying the request's `seq`). A lost datagram is a call
//! that times out.

use std::collections::HashMap;
use std::net::{SocketAddr, UdpSocket};
use std::os::fd::AsRawFd;

use mwperf_core::wire::Header;

use crate::poll;
use crate::service::{CallId, Client, Reply, Server, Token};
use crate::udp::{resolve, MAX_DATAGRAM};
use crate::{Spec, TransportError};

const SOCKET_BUFFER: usize = 4 << 20;

/// The call id of a request or reply: its mwperf header's seq.
pub(crate) fn header_seq(msg: &[u8]) -> Option<u64> {
    Header::decode_header(msg).ok().map(|h| h.seq)
}

fn no_header() -> TransportError {
    TransportError::Unsupported {
        transport: "udp",
        what: "a request without an mwperf header (the socket baseline matches a reply to its \
               call by the header's seq)"
            .into(),
    }
}

fn bound(addr: SocketAddr) -> Result<UdpSocket, TransportError> {
    let sock = UdpSocket::bind(addr).map_err(|err| TransportError::Bind {
        addr: addr.to_string(),
        err,
    })?;
    sock.set_nonblocking(true)?;
    poll::set_buffer(sock.as_raw_fd(), libc::SO_RCVBUF, SOCKET_BUFFER);
    poll::set_buffer(sock.as_raw_fd(), libc::SO_SNDBUF, SOCKET_BUFFER);
    Ok(sock)
}

/// Receive one datagram into `buf`, waiting at most `wait_ns`.
fn recv_one(
    sock: &UdpSocket,
    buf: &mut Vec<u8>,
    wait_ns: u64,
) -> Result<Option<SocketAddr>, TransportError> {
    buf.resize(MAX_DATAGRAM + 1, 0);
    loop {
        match sock.recv_from(buf) {
            Ok((n, from)) => {
                buf.truncate(n);
                return Ok(Some(from));
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                if wait_ns == 0 || !poll::wait(sock.as_raw_fd(), libc::POLLIN, wait_ns)? {
                    buf.clear();
                    return Ok(None);
                }
                // readable: take it now, but wait no more (one wait per call)
                return match sock.recv_from(buf) {
                    Ok((n, from)) => {
                        buf.truncate(n);
                        Ok(Some(from))
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                        buf.clear();
                        Ok(None)
                    }
                    // an ICMP port unreachable from an earlier send: nothing listens (yet)
                    Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => {
                        buf.clear();
                        Ok(None)
                    }
                    Err(e) => Err(e.into()),
                };
            }
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => continue,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {
                buf.clear();
                return Ok(None);
            }
            Err(e) => return Err(e.into()),
        }
    }
}

struct UdpClient {
    sock: UdpSocket,
    server: SocketAddr,
}

pub fn client(spec: &Spec) -> Result<Box<dyn Client>, TransportError> {
    let server = resolve(&spec.addr)?;
    let any: SocketAddr = if server.is_ipv4() {
        "0.0.0.0:0".parse().unwrap()
    } else {
        "[::]:0".parse().unwrap()
    };
    Ok(Box::new(UdpClient {
        sock: bound(any)?,
        server,
    }))
}

impl Client for UdpClient {
    fn call(&mut self, request: &[u8]) -> Result<CallId, TransportError> {
        let id = header_seq(request).ok_or_else(no_header)?;
        if request.len() > MAX_DATAGRAM {
            return Err(TransportError::TooLarge {
                size: request.len(),
                max: MAX_DATAGRAM,
                transport: "udp",
            });
        }
        match self.sock.send_to(request, self.server) {
            Ok(_) => Ok(id),
            // the send buffer is full or an earlier ICMP error: the request is lost
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::ConnectionRefused
                ) =>
            {
                Ok(id)
            }
            Err(e) => Err(e.into()),
        }
    }

    fn recv_reply(
        &mut self,
        buf: &mut Vec<u8>,
        wait_ns: u64,
    ) -> Result<Option<Reply>, TransportError> {
        loop {
            match recv_one(&self.sock, buf, wait_ns)? {
                None => return Ok(None),
                Some(from) if from != self.server => continue, // not the server's
                Some(_) => {
                    // a reply without a header matches no call: id u64::MAX is never a seq
                    let call = header_seq(buf).unwrap_or(u64::MAX);
                    return Ok(Some(Reply { call, ok: true }));
                }
            }
        }
    }
}

struct UdpServer {
    sock: UdpSocket,
    /// Whom each pending request came from.
    pending: HashMap<Token, SocketAddr>,
    next: Token,
}

pub fn server(spec: &Spec) -> Result<Box<dyn Server>, TransportError> {
    Ok(Box::new(UdpServer {
        sock: bound(resolve(&spec.addr)?)?,
        pending: HashMap::new(),
        next: 0,
    }))
}

impl Server for UdpServer {
    fn local_addr(&self) -> String {
        self.sock
            .local_addr()
            .map(|a| a.to_string())
            .unwrap_or_default()
    }

    fn recv_request(
        &mut self,
        buf: &mut Vec<u8>,
        wait_ns: u64,
    ) -> Result<Option<Token>, TransportError> {
        Ok(recv_one(&self.sock, buf, wait_ns)?.map(|from| {
            self.next += 1;
            self.pending.insert(self.next, from);
            self.next
        }))
    }

    fn reply(&mut self, token: Token, reply: &[u8]) -> Result<(), TransportError> {
        let to = self
            .pending
            .remove(&token)
            .ok_or_else(|| TransportError::Middleware {
                transport: "udp",
                detail: format!("no pending request {token} to answer"),
            })?;
        if reply.len() > MAX_DATAGRAM {
            return Err(TransportError::TooLarge {
                size: reply.len(),
                max: MAX_DATAGRAM,
                transport: "udp",
            });
        }
        match self.sock.send_to(reply, to) {
            Ok(_) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => Ok(()), // lost, as UDP may
            Err(e) => Err(e.into()),
        }
    }
}
