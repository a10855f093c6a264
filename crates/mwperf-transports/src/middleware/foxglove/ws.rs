//! A blocking WebSocket client (RFC 6455) on one TCP connection, or TLS on it (wss, `--opt tls`:
//! crate::tls_client's rustls): the opening handshake with a subprotocol, masked client frames,
//! and whole messages out of (possibly fragmented) server frames. No runtime, no WebSocket crate;
//! buffers are kept and reused, so steady state does not allocate.

use std::io;
use std::net::{TcpStream, ToSocketAddrs};
use std::sync::Arc;
use std::time::Duration;

use mwperf_core::clock::now_ns;
use rustls::ClientConfig;

use crate::tls_client::{TlsConn, Wire, WriteStop};
use crate::{poll, TransportError};

pub const TEXT: u8 = 0x1;
pub const BINARY: u8 = 0x2;
const CONTINUATION: u8 = 0x0;
const CLOSE: u8 = 0x8;
const PING: u8 = 0x9;
const PONG: u8 = 0xA;

/// A message larger than this from the server is refused (the connection is dropped).
const MAX_INCOMING: usize = 256 << 20;
/// How long one frame may take to go out before `send` gives up (the server reads on its own).
const SEND_BOUND_NS: u64 = 10_000_000_000;
/// Room kept free for one read (a large message grows the buffer by doubling).
const READ_CHUNK: usize = 64 * 1024;

pub struct WebSocket {
    wire: Wire,
    /// Bytes read but not yet consumed: `rbuf[start..end]` (the rest is room to read into).
    rbuf: Vec<u8>,
    start: usize,
    end: usize,
    /// The message being assembled from frames, and its opcode.
    msg: Vec<u8>,
    msg_op: u8,
    /// A whole message is in `msg` (returned by the last `next`): cleared on the next call.
    delivered: bool,
    wbuf: Vec<u8>,
    mask_state: u64,
    /// Acknowledge every read at once (TCP_QUICKACK), instead of the kernel's delayed ACK.
    pub quickack: bool,
}

/// What one look at the connection produced.
pub enum Incoming<'a> {
    Message(u8, &'a [u8]),
    Nothing,
}

impl WebSocket {
    /// Connect to `host:port` (over TLS with `tls`: wss, the server's certificate checked
    /// against the configuration's CA for `host`) and open `path` with one of `protocols`;
    /// returns the socket and the subprotocol the server chose.
    pub fn connect(
        hostport: &str,
        path: &str,
        protocols: &[&str],
        timeout: Duration,
        tls: Option<Arc<ClientConfig>>,
    ) -> Result<(WebSocket, String), TransportError> {
        let unreachable = |err: io::Error| TransportError::Unreachable {
            addr: hostport.to_string(),
            err,
        };
        let to = hostport
            .to_socket_addrs()
            .map_err(|e| TransportError::Address(format!("cannot resolve '{hostport}': {e}")))?
            .next()
            .ok_or_else(|| TransportError::Address(format!("'{hostport}' resolves to nothing")))?;
        let sock = TcpStream::connect_timeout(&to, timeout).map_err(unreachable)?;
        sock.set_nodelay(true).map_err(TransportError::Io)?;
        let mut wire = match tls {
            None => Wire::Plain(sock),
            Some(config) => {
                let host = hostport.rsplit_once(':').map_or(hostport, |(h, _)| h);
                Wire::Tls(Box::new(TlsConn::handshake(
                    "foxglove", sock, host, config, timeout,
                )?))
            }
        };
        let seed = now_ns() ^ ((std::process::id() as u64) << 32);
        let key = mwperf_core::base64::encode(&seed.to_le_bytes().repeat(2));
        let request = format!(
            "GET {path} HTTP/1.1\r\nHost: {hostport}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
             Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: {}\r\n\r\n",
            protocols.join(", ")
        );
        write_all(&mut wire, request.as_bytes(), timeout).map_err(unreachable)?;
        wire.socket()
            .set_read_timeout(Some(timeout))
            .map_err(TransportError::Io)?;
        let mut head = vec![0u8; 16 * 1024];
        let mut filled = 0;
        let deadline = now_ns() + timeout.as_nanos() as u64;
        let end = loop {
            if head.len() - filled < 1024 {
                head.resize(head.len() + 16 * 1024, 0);
            }
            let n = match wire.read_into(&mut head, &mut filled, true) {
                Ok(n) => n,
                // TLS: records without plaintext (the server's session tickets) and a
                // record's rest not there yet: wait for more, within the handshake's bound
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted
                    ) =>
                {
                    let now = now_ns();
                    if now >= deadline {
                        return Err(unreachable(io::ErrorKind::TimedOut.into()));
                    }
                    poll::wait(wire.fd(), libc::POLLIN, deadline - now).map_err(unreachable)?;
                    continue;
                }
                Err(e) => return Err(unreachable(e)),
            };
            if n == 0 {
                let hint = match wire {
                    // a wss server reads the upgrade as a broken TLS record and hangs up
                    Wire::Plain(_) => " (a wss server? then connect over TLS: --opt tls=ca=PATH)",
                    Wire::Tls(_) => "",
                };
                return Err(unreachable(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    format!("closed during the WebSocket handshake{hint}"),
                )));
            }
            if let Some(i) = head[..filled].windows(4).position(|w| w == b"\r\n\r\n") {
                break i + 4;
            }
            if filled > 16 * 1024 {
                return Err(unreachable(io::Error::other(
                    "no end of the HTTP response header",
                )));
            }
        };
        let text = String::from_utf8_lossy(&head[..end]).to_string();
        let status = text.lines().next().unwrap_or("");
        if !status.starts_with("HTTP/1.1 101") {
            return Err(unreachable(io::Error::other(format!(
                "not a WebSocket server (answered '{status}')"
            ))));
        }
        let chosen = text
            .lines()
            .find_map(|l| {
                let (k, v) = l.split_once(':')?;
                k.trim()
                    .eq_ignore_ascii_case("sec-websocket-protocol")
                    .then(|| v.trim().to_string())
            })
            .unwrap_or_default();
        wire.socket()
            .set_read_timeout(None)
            .map_err(TransportError::Io)?;
        wire.socket()
            .set_nonblocking(true)
            .map_err(TransportError::Io)?;
        let mut rest = head[end..filled].to_vec();
        let filled = rest.len();
        rest.resize(filled.max(READ_CHUNK), 0);
        Ok((
            WebSocket {
                wire,
                rbuf: rest,
                start: 0,
                end: filled,
                msg: Vec::new(),
                msg_op: 0,
                delivered: false,
                wbuf: Vec::new(),
                mask_state: seed | 1,
                quickack: false,
            },
            chosen,
        ))
    }

    /// Send one message made of `parts` as one masked frame with `opcode`.
    pub fn send(&mut self, opcode: u8, parts: &[&[u8]]) -> Result<(), TransportError> {
        let len: usize = parts.iter().map(|p| p.len()).sum();
        self.wbuf.clear();
        // xorshift: masking keys need not be secret here, only vary (RFC 6455 §5.3)
        self.mask_state ^= self.mask_state << 13;
        self.mask_state ^= self.mask_state >> 7;
        self.mask_state ^= self.mask_state << 17;
        let mask = (self.mask_state as u32).to_ne_bytes();
        frame_header(&mut self.wbuf, true, opcode, len, Some(mask));
        let body = self.wbuf.len();
        for p in parts {
            self.wbuf.extend_from_slice(p);
        }
        apply_mask(&mut self.wbuf[body..], mask);
        self.write_out()
    }

    fn write_out(&mut self) -> Result<(), TransportError> {
        // a frame is out when the connection took all of it and (TLS) no record of it waits
        match self.wire.write_all_by(&self.wbuf, now_ns() + SEND_BOUND_NS) {
            Ok(()) => Ok(()),
            Err(WriteStop::Stalled { written: 0 }) => Err(TransportError::Blocked {
                transport: "foxglove",
                detail: "the WebSocket server took no data for 10 s".into(),
            }),
            // part of this frame is out: the stream cannot take another one
            Err(WriteStop::Stalled { .. }) => Err(TransportError::Io(io::Error::new(
                io::ErrorKind::TimedOut,
                "the WebSocket server took no data for 10 s (in the middle of a frame)",
            ))),
            Err(WriteStop::Zero) => Err(TransportError::Closed),
            Err(WriteStop::Io(e)) => Err(closed_or(e)),
        }
    }

    /// The next whole text or binary message, waiting at most `wait_ns` (0: only what has
    /// arrived). Pings are answered; a close frame or EOF is `Closed`.
    pub fn next(&mut self, wait_ns: u64) -> Result<Incoming<'_>, TransportError> {
        if self.delivered {
            self.delivered = false;
            self.msg.clear();
        }
        let deadline = now_ns().saturating_add(wait_ns);
        loop {
            if let Some(op) = self.frame()? {
                self.delivered = true;
                return Ok(Incoming::Message(op, &self.msg));
            }
            // need more bytes: make room for a chunk (compact, else grow), then read
            if self.start == self.end {
                self.start = 0;
                self.end = 0;
            }
            if self.rbuf.len() - self.end < READ_CHUNK {
                if self.start > 0 {
                    self.rbuf.copy_within(self.start..self.end, 0);
                    self.end -= self.start;
                    self.start = 0;
                }
                if self.rbuf.len() - self.end < READ_CHUNK {
                    let grown = (self.rbuf.len() * 2).max(self.end + READ_CHUNK);
                    self.rbuf.resize(grown, 0);
                }
            }
            match self.wire.read_into(&mut self.rbuf, &mut self.end, false) {
                Ok(0) => return Err(TransportError::Closed),
                Ok(_) => {
                    if self.quickack {
                        quickack(self.wire.fd());
                    }
                    continue;
                }
                Err(e) => match e.kind() {
                    io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted => {}
                    _ => return Err(closed_or(e)),
                },
            }
            let now = now_ns();
            if wait_ns == 0 || now >= deadline {
                return Ok(Incoming::Nothing);
            }
            if !poll::wait(self.wire.fd(), libc::POLLIN, deadline - now)
                .map_err(TransportError::Io)?
            {
                return Ok(Incoming::Nothing);
            }
        }
    }

    /// Consume one complete frame from `rbuf` if there is one; Some(opcode) when it completed a
    /// data message (in `msg`).
    fn frame(&mut self) -> Result<Option<u8>, TransportError> {
        loop {
            let Some(f) =
                parse_frame(&self.rbuf[self.start..self.end], self.msg.len()).map_err(protocol)?
            else {
                return Ok(None);
            };
            let body = self.start + f.body.start..self.start + f.body.end;
            self.start += f.body.end;
            match f.op {
                PING => {
                    let payload = self.rbuf[body].to_vec();
                    self.send(PONG, &[&payload])?;
                }
                PONG => {}
                CLOSE => return Err(TransportError::Closed),
                _ => {
                    if let Some(op) =
                        assemble(&mut self.msg, &mut self.msg_op, &f, &self.rbuf[body])
                    {
                        return Ok(Some(op));
                    }
                }
            }
        }
    }

    /// The TCP connection's socket.
    pub fn fd(&self) -> std::os::fd::RawFd {
        self.wire.fd()
    }

    /// Say goodbye (a close frame, best effort; TLS: then close_notify).
    pub fn close(&mut self) {
        let _ = self.send(CLOSE, &[&1000u16.to_be_bytes()]);
        if let Wire::Tls(t) = &mut self.wire {
            t.close();
        }
    }
}

/// The upgrade request, whole, within `timeout` (the socket still blocking; TLS records may
/// wait for room: polled).
fn write_all(wire: &mut Wire, data: &[u8], timeout: Duration) -> io::Result<()> {
    wire.write_all_by(data, now_ns() + timeout.as_nanos() as u64)
        .map_err(|stop| match stop {
            WriteStop::Stalled { .. } => io::ErrorKind::TimedOut.into(),
            WriteStop::Zero => io::ErrorKind::WriteZero.into(),
            WriteStop::Io(e) => e,
        })
}

/// Acknowledge what arrived at once (Linux clears TCP_QUICKACK after a while, so it is set again
/// after every read).
fn quickack(fd: std::os::fd::RawFd) {
    let one: libc::c_int = 1;
    // SAFETY: setsockopt with a valid int option value on our own socket.
    unsafe {
        libc::setsockopt(
            fd,
            libc::IPPROTO_TCP,
            libc::TCP_QUICKACK,
            &one as *const _ as *const libc::c_void,
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
}

/// Append a frame header (RFC 6455 §5.2, the shortest length form) for a payload of `len`
/// bytes; a client masks every frame it sends.
pub fn frame_header(out: &mut Vec<u8>, fin: bool, opcode: u8, len: usize, mask: Option<[u8; 4]>) {
    out.push(if fin { 0x80 } else { 0 } | opcode);
    let m = if mask.is_some() { 0x80 } else { 0 };
    if len < 126 {
        out.push(m | len as u8);
    } else if len <= u16::MAX as usize {
        out.push(m | 126);
        out.extend_from_slice(&(len as u16).to_be_bytes());
    } else {
        out.push(m | 127);
        out.extend_from_slice(&(len as u64).to_be_bytes());
    }
    if let Some(mask) = mask {
        out.extend_from_slice(&mask);
    }
}

/// One frame's header as read from the front of a buffer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    pub fin: bool,
    /// A data opcode (TEXT, BINARY, CONTINUATION) or a control one (CLOSE, PING, PONG).
    pub op: u8,
    pub mask: Option<[u8; 4]>,
    /// Where the payload is in the buffer; the frame ends with it (`body.end` bytes consumed).
    pub body: std::ops::Range<usize>,
}

/// Parse the frame at the front of `b` (RFC 6455 §5.2): Ok(None) = more bytes needed; an error
/// for an unknown opcode or a message that would grow past [`MAX_INCOMING`] (`assembled`: bytes
/// of the message already assembled from earlier frames). Pure: the fuzz target's entry point.
pub fn parse_frame(b: &[u8], assembled: usize) -> Result<Option<Frame>, String> {
    if b.len() < 2 {
        return Ok(None);
    }
    let fin = b[0] & 0x80 != 0;
    let op = b[0] & 0x0F;
    let masked = b[1] & 0x80 != 0;
    let (len, mut at) = match b[1] & 0x7F {
        126 if b.len() >= 4 => (u16::from_be_bytes([b[2], b[3]]) as u64, 4),
        127 if b.len() >= 10 => (u64::from_be_bytes(b[2..10].try_into().unwrap()), 10),
        126 | 127 => return Ok(None),
        n => (n as u64, 2),
    };
    if len > MAX_INCOMING as u64 || assembled as u64 + len > MAX_INCOMING as u64 {
        return Err(format!("a server message larger than {MAX_INCOMING} bytes"));
    }
    if !matches!(op, TEXT | BINARY | CONTINUATION | CLOSE | PING | PONG) {
        return Err(format!("unknown WebSocket opcode {op:#x}"));
    }
    let mask = if masked {
        if b.len() < at + 4 {
            return Ok(None);
        }
        at += 4;
        Some([b[at - 4], b[at - 3], b[at - 2], b[at - 1]])
    } else {
        None
    };
    let len = len as usize;
    if b.len() < at + len {
        return Ok(None);
    }
    Ok(Some(Frame {
        fin,
        op,
        mask,
        body: at..at + len,
    }))
}

/// Add data frame `f` (payload `payload`) to the message being assembled in `msg` (its opcode in
/// `msg_op`): Some(opcode) when the frame completed the message.
pub fn assemble(msg: &mut Vec<u8>, msg_op: &mut u8, f: &Frame, payload: &[u8]) -> Option<u8> {
    if f.op != CONTINUATION {
        msg.clear();
        *msg_op = f.op;
    }
    let from = msg.len();
    msg.extend_from_slice(payload);
    if let Some(m) = f.mask {
        apply_mask(&mut msg[from..], m);
    }
    f.fin.then_some(*msg_op)
}

pub fn apply_mask(data: &mut [u8], mask: [u8; 4]) {
    let word = u64::from_ne_bytes([
        mask[0], mask[1], mask[2], mask[3], mask[0], mask[1], mask[2], mask[3],
    ]);
    let mut chunks = data.chunks_exact_mut(8);
    for c in &mut chunks {
        let v = u64::from_ne_bytes((&*c).try_into().unwrap()) ^ word;
        c.copy_from_slice(&v.to_ne_bytes());
    }
    for (i, b) in chunks.into_remainder().iter_mut().enumerate() {
        *b ^= mask[i % 4];
    }
}

fn protocol(detail: String) -> TransportError {
    TransportError::Middleware {
        transport: "foxglove",
        detail,
    }
}

fn closed_or(e: io::Error) -> TransportError {
    match e.kind() {
        io::ErrorKind::ConnectionReset
        | io::ErrorKind::BrokenPipe
        | io::ErrorKind::ConnectionAborted => TransportError::Closed,
        _ => TransportError::Io(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_parse_back_from_their_header_in_every_length_form() {
        for len in [0usize, 1, 125, 126, 65_535, 65_536] {
            for mask in [None, Some([9, 8, 7, 6])] {
                let mut b = Vec::new();
                frame_header(&mut b, len % 2 == 0, BINARY, len, mask);
                let head = b.len();
                b.resize(head + len, 0xab);
                let f = parse_frame(&b, 0).unwrap().unwrap();
                assert_eq!((f.fin, f.op, f.mask), (len % 2 == 0, BINARY, mask));
                assert_eq!(f.body, head..head + len);
                assert_eq!(
                    parse_frame(&b[..b.len() - 1], 0),
                    Ok(None),
                    "one byte short"
                );
            }
        }
        // an unknown opcode and a message past the limit are errors, not "more bytes"
        assert!(parse_frame(&[0x83, 0], 0)
            .unwrap_err()
            .contains("opcode 0x3"));
        assert!(parse_frame(&[0x82, 127, 0xff, 0, 0, 0, 0, 0, 0, 0], 0).is_err());
        assert!(parse_frame(&[0x80, 10], MAX_INCOMING - 5).is_err());
    }

    #[test]
    fn masking_twice_is_identity_at_any_length() {
        for n in [0, 1, 7, 8, 9, 1000] {
            let orig: Vec<u8> = (0..n).map(|i| i as u8).collect();
            let mut d = orig.clone();
            apply_mask(&mut d, [1, 2, 3, 250]);
            if n > 0 {
                assert_ne!(d, orig);
            }
            assert_eq!(
                d[..n.min(4)],
                orig[..n.min(4)]
                    .iter()
                    .zip([1, 2, 3, 250])
                    .map(|(a, m)| a ^ m)
                    .collect::<Vec<_>>()[..]
            );
            apply_mask(&mut d, [1, 2, 3, 250]);
            assert_eq!(d, orig);
        }
    }
}
