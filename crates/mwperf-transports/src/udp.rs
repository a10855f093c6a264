//! UDP: one datagram per message. Connectionless and lossy by nature; the listening side replies
//! to the source of the last datagram it received.

use std::io::{self, ErrorKind};
use std::net::{SocketAddr, ToSocketAddrs, UdpSocket};
use std::os::fd::AsRawFd;

use crate::{poll, Endpoint, TransportError};

/// Largest UDP payload over IPv4 (65535 − 8 UDP − 20 IP).
pub const MAX_DATAGRAM: usize = 65_507;
const SOCKET_BUFFER: usize = 4 << 20;

pub struct UdpEndpoint {
    sock: UdpSocket,
    /// Listening side: whom to answer. Connecting side: None (the socket is connected).
    reply_to: Option<SocketAddr>,
    listening: bool,
    peer: String,
    /// Receive buffer, one byte larger than any datagram (allocated once).
    rx: Vec<u8>,
}

pub(crate) fn resolve(addr: &str) -> Result<SocketAddr, TransportError> {
    addr.to_socket_addrs()
        .map_err(|e| TransportError::Address(format!("cannot use address '{addr}': {e}; expected host:port, e.g. 127.0.0.1:5000")))?
        .next()
        .ok_or_else(|| TransportError::Address(format!("address '{addr}' resolves to nothing; expected host:port")))
}

fn tune(sock: &UdpSocket) -> io::Result<()> {
    sock.set_nonblocking(true)?;
    poll::set_buffer(sock.as_raw_fd(), libc::SO_RCVBUF, SOCKET_BUFFER);
    poll::set_buffer(sock.as_raw_fd(), libc::SO_SNDBUF, SOCKET_BUFFER);
    Ok(())
}

impl UdpEndpoint {
    pub fn listen(addr: &str) -> Result<Self, TransportError> {
        let at = resolve(addr)?;
        let sock = UdpSocket::bind(at).map_err(|err| TransportError::Bind { addr: addr.to_string(), err })?;
        tune(&sock)?;
        Ok(UdpEndpoint { sock, reply_to: None, listening: true, peer: String::new(), rx: vec![0; MAX_DATAGRAM + 1] })
    }

    pub fn connect(addr: &str) -> Result<Self, TransportError> {
        let to = resolve(addr)?;
        let any: SocketAddr = if to.is_ipv4() { "0.0.0.0:0".parse().unwrap() } else { "[::]:0".parse().unwrap() };
        let sock = UdpSocket::bind(any).map_err(|err| TransportError::Bind { addr: any.to_string(), err })?;
        sock.connect(to).map_err(|err| TransportError::Unreachable { addr: addr.to_string(), err })?;
        tune(&sock)?;
        Ok(UdpEndpoint { sock, reply_to: None, listening: false, peer: addr.to_string(), rx: vec![0; MAX_DATAGRAM + 1] })
    }

    fn unreachable(&self, err: io::Error) -> TransportError {
        TransportError::Unreachable { addr: self.peer.clone(), err }
    }
}

impl Endpoint for UdpEndpoint {
    fn send(&mut self, msg: &[u8]) -> Result<(), TransportError> {
        if msg.len() > MAX_DATAGRAM {
            return Err(TransportError::TooLarge { size: msg.len(), max: MAX_DATAGRAM, transport: "udp" });
        }
        let r = if self.listening {
            match self.reply_to {
                Some(to) => self.sock.send_to(msg, to),
                None => return Ok(()), // nobody to answer yet
            }
        } else {
            self.sock.send(msg)
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
        // Blocking callers wait first (ppoll + recv: the same two system calls as epoll-based
        // tools); busy pollers (wait 0) go straight to a non-blocking recv.
        if wait_ns > 0 && !poll::wait(self.sock.as_raw_fd(), libc::POLLIN, wait_ns)? {
            return Ok(None);
        }
        let r = if self.listening {
            self.sock.recv_from(&mut self.rx).map(|(n, from)| {
                self.reply_to = Some(from);
                n
            })
        } else {
            self.sock.recv(&mut self.rx)
        };
        match r {
            Ok(n) => {
                buf.clear();
                buf.extend_from_slice(&self.rx[..n]);
                Ok(Some(n))
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock || e.kind() == ErrorKind::Interrupted => Ok(None),
            Err(e) if e.kind() == ErrorKind::ConnectionRefused => Err(self.unreachable(e)),
            Err(e) => Err(e.into()),
        }
    }

    fn local_addr(&self) -> String {
        self.sock.local_addr().map(|a| a.to_string()).unwrap_or_default()
    }
}
