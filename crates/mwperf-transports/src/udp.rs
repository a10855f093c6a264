//! UDP: one datagram per message. Connectionless and lossy by nature; the listening side replies
//! to the source of the last datagram it received.

use std::io::{self, ErrorKind};
use std::net::{SocketAddr, ToSocketAddrs, UdpSocket};
use std::os::fd::AsRawFd;

use crate::poll::{self, check, coarse_timeout, RecvTimeout, LONG_WAIT_NS};
use crate::{Descriptor, Endpoint, Fanout, Framing, QosSupport, Side, Spec, TransportError};

/// Largest UDP payload over IPv4 (65535 − 8 UDP − 20 IP).
pub const MAX_DATAGRAM: usize = 65_507;
const SOCKET_BUFFER: usize = 4 << 20;

/// What UDP is (see [`crate::descriptor`]).
pub const DESCRIPTOR: Descriptor = Descriptor {
    name: "udp",
    description: "UDP datagrams (loopback or any IP)",
    address: "host:port",
    daemon: None,
    discovery: false,
    framing: Framing::Datagram,
    max_message: Some(MAX_DATAGRAM),
    local_only: false,
    crosses_hosts: true,
    fanout: Fanout::SenderLoops,
    node_session: false,
    defaults: &[],
    opts: &[],
    qos: QosSupport::NONE,
    services: crate::service::Services::Native("request/reply baseline: one datagram each way, a reply matched to its call by the mwperf header's seq"),
};

pub struct UdpEndpoint {
    sock: UdpSocket,
    /// Listening side: whom to answer (raw socket address of the last sender).
    reply_to: Option<(libc::sockaddr_storage, libc::socklen_t)>,
    listening: bool,
    peer: String,
    /// Receive buffer, one byte larger than any datagram (allocated once).
    rx: Vec<u8>,
    /// SO_RCVTIMEO of the (blocking) socket.
    rcvtimeo: RecvTimeout,
}

pub(crate) fn resolve(addr: &str) -> Result<SocketAddr, TransportError> {
    addr.to_socket_addrs()
        .map_err(|e| {
            TransportError::Address(format!(
                "cannot use address '{addr}': {e}; expected host:port, e.g. 127.0.0.1:5000"
            ))
        })?
        .next()
        .ok_or_else(|| {
            TransportError::Address(format!(
                "address '{addr}' resolves to nothing; expected host:port"
            ))
        })
}

fn tune(sock: &UdpSocket) {
    poll::set_buffer(sock.as_raw_fd(), libc::SO_RCVBUF, SOCKET_BUFFER);
    poll::set_buffer(sock.as_raw_fd(), libc::SO_SNDBUF, SOCKET_BUFFER);
}

/// Open `side` over UDP: the listening side binds `spec.addr`, the other sends to it.
pub fn open(side: Side, spec: &Spec) -> Result<Box<dyn Endpoint>, TransportError> {
    Ok(Box::new(if side.is_listener() {
        UdpEndpoint::listen(&spec.addr)?
    } else {
        UdpEndpoint::connect(&spec.addr)?
    }))
}

impl UdpEndpoint {
    fn new(sock: UdpSocket, listening: bool, peer: String) -> Self {
        tune(&sock);
        UdpEndpoint {
            sock,
            reply_to: None,
            listening,
            peer,
            rx: vec![0; MAX_DATAGRAM + 1],
            rcvtimeo: RecvTimeout::default(),
        }
    }

    pub fn listen(addr: &str) -> Result<Self, TransportError> {
        let at = resolve(addr)?;
        let sock = UdpSocket::bind(at).map_err(|err| TransportError::Bind {
            addr: addr.to_string(),
            err,
        })?;
        Ok(Self::new(sock, true, String::new()))
    }

    pub fn connect(addr: &str) -> Result<Self, TransportError> {
        let to = resolve(addr)?;
        let any: SocketAddr = if to.is_ipv4() {
            "0.0.0.0:0".parse().unwrap()
        } else {
            "[::]:0".parse().unwrap()
        };
        let sock = UdpSocket::bind(any).map_err(|err| TransportError::Bind {
            addr: any.to_string(),
            err,
        })?;
        sock.connect(to)
            .map_err(|err| TransportError::Unreachable {
                addr: addr.to_string(),
                err,
            })?;
        Ok(Self::new(sock, false, addr.to_string()))
    }

    fn unreachable(&self, err: io::Error) -> TransportError {
        TransportError::Unreachable {
            addr: self.peer.clone(),
            err,
        }
    }

    /// One recv/recvfrom with `flags` into the internal buffer (the socket itself is blocking;
    /// MSG_DONTWAIT makes single calls non-blocking).
    fn raw_recv(&mut self, flags: libc::c_int) -> io::Result<usize> {
        let fd = self.sock.as_raw_fd();
        let (ptr, len) = (self.rx.as_mut_ptr() as *mut libc::c_void, self.rx.len());
        if !self.listening {
            // SAFETY: the buffer is valid for `len` bytes.
            return check(unsafe { libc::recv(fd, ptr, len, flags) });
        }
        // SAFETY: zeroed sockaddr_storage is valid; the kernel writes at most `alen` bytes.
        let mut from: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
        let mut alen = std::mem::size_of::<libc::sockaddr_storage>() as libc::socklen_t;
        let n = check(unsafe {
            libc::recvfrom(
                fd,
                ptr,
                len,
                flags,
                &mut from as *mut _ as *mut libc::sockaddr,
                &mut alen,
            )
        })?;
        self.reply_to = Some((from, alen));
        Ok(n)
    }
}

impl Endpoint for UdpEndpoint {
    fn send(&mut self, msg: &[u8]) -> Result<(), TransportError> {
        if msg.len() > MAX_DATAGRAM {
            return Err(TransportError::TooLarge {
                size: msg.len(),
                max: MAX_DATAGRAM,
                transport: "udp",
            });
        }
        let fd = self.sock.as_raw_fd();
        let (ptr, len) = (msg.as_ptr() as *const libc::c_void, msg.len());
        // SAFETY: `msg` is valid for `len` bytes; the stored address came from recvfrom.
        let r = if self.listening {
            match &self.reply_to {
                Some((to, alen)) => check(unsafe {
                    libc::sendto(
                        fd,
                        ptr,
                        len,
                        libc::MSG_DONTWAIT,
                        to as *const _ as *const libc::sockaddr,
                        *alen,
                    )
                }),
                None => return Ok(()), // nobody to answer yet
            }
        } else {
            check(unsafe { libc::send(fd, ptr, len, libc::MSG_DONTWAIT) })
        };
        match r {
            Ok(_) => Ok(()),
            // A full socket buffer drops the datagram, as the network would: it shows up as loss.
            Err(e) if e.kind() == ErrorKind::WouldBlock => Ok(()),
            Err(e) if e.kind() == ErrorKind::ConnectionRefused => Err(self.unreachable(e)),
            Err(e) => Err(e.into()),
        }
    }

    fn recv(&mut self, buf: &mut Vec<u8>, wait_ns: u64) -> Result<Option<usize>, TransportError> {
        // Busy pollers: one non-blocking recv. Long waits (closed-loop ping, idle pong): one
        // blocking recv bounded by SO_RCVTIMEO — a single system call per message, as blocking
        // tools do. Short waits (between scheduled sends): ppoll with ns precision, then recv.
        let r = if wait_ns == 0 {
            self.raw_recv(libc::MSG_DONTWAIT)
        } else if wait_ns >= LONG_WAIT_NS {
            self.rcvtimeo
                .set(self.sock.as_raw_fd(), coarse_timeout(wait_ns))?;
            self.raw_recv(0)
        } else {
            if !poll::wait(self.sock.as_raw_fd(), libc::POLLIN, wait_ns)? {
                return Ok(None);
            }
            self.raw_recv(libc::MSG_DONTWAIT)
        };
        match r {
            Ok(n) => {
                buf.clear();
                buf.extend_from_slice(&self.rx[..n]);
                Ok(Some(n))
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock || e.kind() == ErrorKind::Interrupted => {
                Ok(None)
            }
            Err(e) if e.kind() == ErrorKind::ConnectionRefused => Err(self.unreachable(e)),
            Err(e) => Err(e.into()),
        }
    }

    fn local_addr(&self) -> String {
        self.sock
            .local_addr()
            .map(|a| a.to_string())
            .unwrap_or_default()
    }
}
