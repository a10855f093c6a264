//! Message framing over byte streams (TCP, Unix stream sockets), shared by both.
//!
//! Frames are the mwperf messages themselves: the 56-byte header announces the payload length,
//! so no extra length prefix is added (what is measured is what a middleware would send).
//! Bytes that do not start with a valid header cannot be framed: they are handed to the caller as
//! one message (to be counted as foreign/malformed) and the connection is dropped, since a byte
//! stream cannot be resynchronised reliably.
//!
//! Sending never blocks indefinitely: what the socket does not take is queued (up to
//! [`MAX_BACKLOG`]) and flushed by later `send`/`recv` calls, so a ping and a pong writing large
//! messages at each other at the same time cannot deadlock.

use std::io::{self, ErrorKind, Read, Write};
use std::os::fd::{AsRawFd, RawFd};

use mwperf_core::payload::MAX_PAYLOAD;
use mwperf_core::wire::{Header, HEADER_LEN};

use crate::poll::{self, check, coarse_timeout, RecvTimeout, LONG_WAIT_NS};
use crate::{Endpoint, TransportError};

/// Queued, unsent bytes beyond which `send` waits for the peer to read (back-pressure).
const MAX_BACKLOG: usize = 2 * MAX_PAYLOAD;
/// How long a blocked `send` waits for the peer before giving up.
const SEND_STALL_NS: u64 = 10_000_000_000;
const READ_CHUNK: usize = 256 * 1024;

/// One connected byte stream with framing and a send backlog.
pub struct Conn<S: Read + Write + AsRawFd> {
    stream: S,
    /// Receive buffer: bytes `rx_start..rx_end` are unconsumed; its length only grows, and every
    /// page of it is written when it is made ([`prefaulted`]).
    rx: Vec<u8>,
    rx_start: usize,
    rx_end: usize,
    tx: Vec<u8>,
    tx_start: usize,
    rcvtimeo: RecvTimeout,
}

/// The least spare room a read gets beyond the `end` bytes already held.
pub(crate) const MIN_SPARE: usize = 4096;

/// How long a receive buffer holding `end` bytes must be for the next read: READ_CHUNK, or
/// MIN_SPARE beyond `end` when that is longer. Not `end + READ_CHUNK`: then a partial frame left
/// by a burst grew the buffer by 256 KiB in the steady state, once (issue 29's soak runs, the
/// live heap of ros1 and mqtt agents stepping up mid-run).
pub(crate) fn room(end: usize) -> usize {
    READ_CHUNK.max(end + MIN_SPARE)
}

/// A receive buffer of `len` bytes with every page written now. A zeroed allocation this large
/// comes from mmap untouched, and a receive writes only as far as the bytes queued: its pages
/// were faulted in one by one as ever larger bursts arrived, the resident set creeping up by tens
/// of KiB a minute for minutes (issue 29's soak runs: the tcp, uds, mqtt and ros1 agents, both
/// ends). The contents never matter (only what a receive wrote is read). Also the MQTT session's
/// and TCPROS's receive buffers.
pub(crate) fn prefaulted(len: usize) -> Vec<u8> {
    vec![0xA5; len]
}

/// What a receive on a connection produced.
enum Frame {
    Message,
    /// Unframeable bytes were returned; drop the connection after the caller saw them.
    Garbage,
    None,
}

impl<S: Read + Write + AsRawFd> Conn<S> {
    pub fn new(stream: S) -> Self {
        Conn {
            stream,
            rx: prefaulted(READ_CHUNK),
            rx_start: 0,
            rx_end: 0,
            tx: Vec::new(),
            tx_start: 0,
            rcvtimeo: RecvTimeout::default(),
        }
    }

    fn fd(&self) -> RawFd {
        self.stream.as_raw_fd()
    }

    /// Write as much of the backlog as the socket takes now.
    fn flush(&mut self) -> Result<(), TransportError> {
        while self.tx_start < self.tx.len() {
            match write_now(self.fd(), &self.tx[self.tx_start..]) {
                Ok(0) => return Err(TransportError::Closed),
                Ok(n) => self.tx_start += n,
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) => return Err(closed_or(e)),
            }
        }
        if self.tx_start == self.tx.len() {
            self.tx.clear();
            self.tx_start = 0;
        }
        Ok(())
    }

    fn backlog(&self) -> usize {
        self.tx.len() - self.tx_start
    }

    pub fn send(&mut self, msg: &[u8]) -> Result<(), TransportError> {
        self.flush()?;
        if self.backlog() == 0 {
            // Fast path: straight to the socket, queue only the remainder.
            let mut off = 0;
            while off < msg.len() {
                match write_now(self.fd(), &msg[off..]) {
                    Ok(0) => return Err(TransportError::Closed),
                    Ok(n) => off += n,
                    Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                    Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                    Err(e) => return Err(closed_or(e)),
                }
            }
            self.tx.extend_from_slice(&msg[off..]);
            return Ok(());
        }
        let mut waited = 0;
        while self.backlog() + msg.len() > MAX_BACKLOG {
            if waited >= SEND_STALL_NS {
                return Err(TransportError::Blocked {
                    transport: "tcp/uds",
                    detail: "the peer took no bytes for 10 s and the send backlog is full".into(),
                });
            }
            poll::wait(self.fd(), libc::POLLOUT, 100_000_000)?;
            waited += 100_000_000;
            self.flush()?;
        }
        self.tx.extend_from_slice(msg);
        self.flush()
    }

    /// Try to cut one frame out of the receive buffer into `out`.
    fn take_frame(&mut self, out: &mut Vec<u8>) -> Frame {
        let have = &self.rx[self.rx_start..self.rx_end];
        if have.len() < HEADER_LEN {
            // Fewer bytes than a header: can only judge the magic so far.
            if have.len() >= 4 && Header::decode_header(have).is_err_and(|r| r.is_foreign()) {
                return self.garbage(out);
            }
            return Frame::None;
        }
        match Header::decode_header(have) {
            Ok(h) if (h.payload_len as usize) <= MAX_PAYLOAD => {
                let len = h.message_len();
                if have.len() < len {
                    return Frame::None;
                }
                out.clear();
                out.extend_from_slice(&have[..len]);
                self.rx_start += len;
                if self.rx_start == self.rx_end {
                    (self.rx_start, self.rx_end) = (0, 0);
                }
                Frame::Message
            }
            _ => self.garbage(out),
        }
    }

    fn garbage(&mut self, out: &mut Vec<u8>) -> Frame {
        out.clear();
        out.extend_from_slice(&self.rx[self.rx_start..self.rx_end]);
        (self.rx_start, self.rx_end) = (0, 0);
        Frame::Garbage
    }

    /// Read what the socket has into the receive buffer. Ok(false) = nothing available.
    fn fill(&mut self, flags: libc::c_int) -> Result<bool, TransportError> {
        if self.rx_start > 0 {
            // Move the unconsumed tail to the front (it is at most one partial frame).
            self.rx.copy_within(self.rx_start..self.rx_end, 0);
            (self.rx_start, self.rx_end) = (0, self.rx_end - self.rx_start);
        }
        // Room for the frame being assembled, so large messages need few reads.
        let want = match Header::decode_header(&self.rx[..self.rx_end]) {
            Ok(h) if (h.payload_len as usize) <= MAX_PAYLOAD => {
                h.message_len().max(room(self.rx_end))
            }
            _ => room(self.rx_end),
        };
        if self.rx.len() < want {
            self.rx.resize(want, 0);
        }
        let spare = &mut self.rx[self.rx_end..];
        // SAFETY: `spare` is valid for its length.
        match check(unsafe {
            libc::recv(
                self.stream.as_raw_fd(),
                spare.as_mut_ptr() as *mut libc::c_void,
                spare.len(),
                flags,
            )
        }) {
            Ok(0) => Err(TransportError::Closed),
            Ok(n) => {
                self.rx_end += n;
                Ok(true)
            }
            Err(e) => match e.kind() {
                ErrorKind::WouldBlock | ErrorKind::Interrupted => Ok(false),
                _ => Err(closed_or(e)),
            },
        }
    }

    /// Receive one message; Err(Closed) when the peer went away or sent garbage (after it was
    /// returned once).
    fn recv(
        &mut self,
        out: &mut Vec<u8>,
        wait_ns: u64,
        dead: &mut bool,
    ) -> Result<Option<usize>, TransportError> {
        if *dead {
            return Err(TransportError::Closed);
        }
        let deadline = mwperf_core::clock::now_ns().saturating_add(wait_ns);
        loop {
            self.flush()?;
            match self.take_frame(out) {
                Frame::Message => return Ok(Some(out.len())),
                Frame::Garbage => {
                    *dead = true;
                    return Ok(Some(out.len()));
                }
                Frame::None => {}
            }
            // Busy pollers read without blocking; long waits block in one recv bounded by
            // SO_RCVTIMEO; short waits (or a backlog to flush) ppoll first.
            let now = mwperf_core::clock::now_ns();
            let left = deadline.saturating_sub(now);
            let flags = if wait_ns == 0 || left == 0 {
                libc::MSG_DONTWAIT
            } else if left >= LONG_WAIT_NS && self.backlog() == 0 {
                self.rcvtimeo.set(self.fd(), coarse_timeout(left))?;
                0
            } else {
                let events = if self.backlog() > 0 {
                    libc::POLLIN | libc::POLLOUT
                } else {
                    libc::POLLIN
                };
                if !poll::wait(self.fd(), events, left)? && mwperf_core::clock::now_ns() < deadline
                {
                    return Ok(None); // interrupted by a signal
                }
                libc::MSG_DONTWAIT
            };
            if self.fill(flags)? {
                continue;
            }
            if wait_ns == 0 || mwperf_core::clock::now_ns() >= deadline {
                return Ok(None);
            }
        }
    }
}

impl<S: Read + Write + AsRawFd> Conn<S> {
    /// Flush the backlog, waiting at most `limit_ns` for the peer to take it.
    fn drain(&mut self, limit_ns: u64) {
        let end = mwperf_core::clock::now_ns() + limit_ns;
        while self.backlog() > 0 && self.flush().is_ok() {
            let now = mwperf_core::clock::now_ns();
            if now >= end || poll::wait(self.fd(), libc::POLLOUT, end - now).is_err() {
                break;
            }
        }
    }
}

impl<S: Read + Write + AsRawFd> Drop for Conn<S> {
    /// Replies still queued (a pong's last echo, a pub's end marker) get one second to leave.
    fn drop(&mut self) {
        self.drain(1_000_000_000);
    }
}

/// One non-blocking send on a (blocking) socket; never raises SIGPIPE.
fn write_now(fd: RawFd, data: &[u8]) -> io::Result<usize> {
    // SAFETY: `data` is valid for its length.
    check(unsafe {
        libc::send(
            fd,
            data.as_ptr() as *const libc::c_void,
            data.len(),
            libc::MSG_DONTWAIT | libc::MSG_NOSIGNAL,
        )
    })
}

fn closed_or(e: io::Error) -> TransportError {
    match e.kind() {
        ErrorKind::ConnectionReset
        | ErrorKind::BrokenPipe
        | ErrorKind::ConnectionAborted
        | ErrorKind::UnexpectedEof => TransportError::Closed,
        _ => TransportError::Io(e),
    }
}

/// The connecting side: one stream to one peer.
pub struct Client<S: Read + Write + AsRawFd> {
    conn: Conn<S>,
    dead: bool,
    local: String,
}

impl<S: Read + Write + AsRawFd> Client<S> {
    pub fn new(stream: S, local: String) -> Self {
        Client {
            conn: Conn::new(stream),
            dead: false,
            local,
        }
    }
}

impl<S: Read + Write + AsRawFd + Send> Endpoint for Client<S> {
    fn send(&mut self, msg: &[u8]) -> Result<(), TransportError> {
        if self.dead {
            return Err(TransportError::Closed);
        }
        self.conn.send(msg)
    }

    fn recv(&mut self, buf: &mut Vec<u8>, wait_ns: u64) -> Result<Option<usize>, TransportError> {
        self.conn.recv(buf, wait_ns, &mut self.dead)
    }

    fn drain(&mut self, limit_ns: u64) {
        if !self.dead {
            self.conn.drain(limit_ns);
        }
    }

    fn local_addr(&self) -> String {
        self.local.clone()
    }
}

/// A listener that accepts non-blocking streams.
pub trait Acceptor: AsRawFd + Send {
    type Stream: Read + Write + AsRawFd + Send;
    /// Accept one pending connection (non-blocking); Ok(None) when none is waiting.
    fn accept_one(&self) -> io::Result<Option<Self::Stream>>;
    fn local(&self) -> String;
}

/// The listening side: serves one connection at a time; a new peer is accepted when the
/// previous one closed (a second concurrent peer waits in the backlog).
pub struct Server<A: Acceptor> {
    acceptor: A,
    conn: Option<Conn<A::Stream>>,
    dead: bool,
    accepted: u64,
}

impl<A: Acceptor> Server<A> {
    pub fn new(acceptor: A) -> Self {
        Server {
            acceptor,
            conn: None,
            dead: false,
            accepted: 0,
        }
    }
}

impl<A: Acceptor> Endpoint for Server<A> {
    fn send(&mut self, msg: &[u8]) -> Result<(), TransportError> {
        match &mut self.conn {
            Some(c) if !self.dead => match c.send(msg) {
                Err(TransportError::Closed) => {
                    self.conn = None;
                    Ok(()) // the peer left; a server waits for the next one
                }
                r => r,
            },
            _ => Ok(()),
        }
    }

    fn drain(&mut self, limit_ns: u64) {
        if let Some(c) = &mut self.conn {
            if !self.dead {
                c.drain(limit_ns);
            }
        }
    }

    fn recv(&mut self, buf: &mut Vec<u8>, wait_ns: u64) -> Result<Option<usize>, TransportError> {
        let deadline = mwperf_core::clock::now_ns().saturating_add(wait_ns);
        loop {
            if self.conn.is_none() {
                match self.acceptor.accept_one()? {
                    Some(s) => {
                        self.conn = Some(Conn::new(s));
                        self.dead = false;
                        self.accepted += 1;
                    }
                    None => {
                        let now = mwperf_core::clock::now_ns();
                        if wait_ns == 0
                            || now >= deadline
                            || !poll::wait(self.acceptor.as_raw_fd(), libc::POLLIN, deadline - now)?
                        {
                            return Ok(None);
                        }
                        continue;
                    }
                }
            }
            let conn = self.conn.as_mut().expect("connection present");
            let left = deadline.saturating_sub(mwperf_core::clock::now_ns());
            match conn.recv(
                buf,
                if wait_ns == 0 { 0 } else { left.max(1) },
                &mut self.dead,
            ) {
                Err(TransportError::Closed) => {
                    self.conn = None; // peer gone: serve the next one
                    if wait_ns == 0 || mwperf_core::clock::now_ns() >= deadline {
                        return Ok(None);
                    }
                }
                r => return r,
            }
        }
    }

    fn local_addr(&self) -> String {
        self.acceptor.local()
    }

    fn connection_count(&self) -> Option<u64> {
        Some(self.accepted)
    }
}

/// A subscription's listening side: accepts every peer that connects and receives from all of
/// them at once (a graph topic's several publishers, each on its own connection), whichever
/// has a message first; answers (`send`) go to the peer it last heard from. A pong keeps
/// [`Server`]: one peer at a time. A service server answers each request on the connection it
/// came from ([`Gather::recv_from`], [`Gather::send_to`]: connections keep their id for life).
pub struct Gather<A: Acceptor> {
    acceptor: A,
    /// (id, connection, dead): ids are never reused, so a late answer finds no stranger
    conns: Vec<(u64, Conn<A::Stream>, bool)>,
    /// the connection looked at first next time (none is starved), and the last heard from
    next: usize,
    last: Option<u64>,
    accepted: u64,
    /// what the wait polls (kept: no allocation per wait)
    pfds: Vec<libc::pollfd>,
}

impl<A: Acceptor> Gather<A> {
    pub fn new(acceptor: A) -> Self {
        Gather {
            acceptor,
            conns: Vec::new(),
            next: 0,
            last: None,
            accepted: 0,
            pfds: Vec::new(),
        }
    }

    /// Accept whoever waits, then one message from the first connection that has one (none
    /// blocks); connections that closed are dropped.
    fn look(&mut self, buf: &mut Vec<u8>) -> Result<Option<u64>, TransportError> {
        while let Some(s) = self.acceptor.accept_one()? {
            self.accepted += 1;
            self.conns.push((self.accepted, Conn::new(s), false));
        }
        let n = self.conns.len();
        for k in 0..n {
            let i = (self.next + k) % n;
            let (id, conn, dead) = &mut self.conns[i];
            match conn.recv(buf, 0, dead) {
                Ok(Some(_)) => {
                    self.next = (i + 1) % n;
                    self.last = Some(*id);
                    return Ok(Some(*id));
                }
                Ok(None) => {}
                Err(TransportError::Closed) => {
                    self.conns.remove(i);
                    self.next = 0;
                    return self.look(buf);
                }
                Err(e) => return Err(e),
            }
        }
        Ok(None)
    }

    /// One message from any peer, waiting at most `wait_ns`: the id of the connection it came
    /// from (for [`Gather::send_to`]).
    pub fn recv_from(
        &mut self,
        buf: &mut Vec<u8>,
        wait_ns: u64,
    ) -> Result<Option<u64>, TransportError> {
        let deadline = mwperf_core::clock::now_ns().saturating_add(wait_ns);
        loop {
            if let Some(id) = self.look(buf)? {
                return Ok(Some(id));
            }
            // every connection was read until it had nothing: wait for any of them or a peer
            // (or for room to send what a connection still has queued)
            let now = mwperf_core::clock::now_ns();
            if wait_ns == 0 || now >= deadline {
                return Ok(None);
            }
            self.pfds.clear();
            self.pfds.push(libc::pollfd {
                fd: self.acceptor.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            });
            for (_, c, _) in &self.conns {
                let out = if c.backlog() > 0 { libc::POLLOUT } else { 0 };
                self.pfds.push(libc::pollfd {
                    fd: c.fd(),
                    events: libc::POLLIN | out,
                    revents: 0,
                });
            }
            if !poll::wait_fds(&mut self.pfds, deadline - now)? {
                return Ok(None); // the wait ended, or a signal came
            }
        }
    }

    /// Send `msg` to the connection `id`; Err(Closed) when that peer is gone.
    pub fn send_to(&mut self, id: u64, msg: &[u8]) -> Result<(), TransportError> {
        match self.conns.iter_mut().find(|(i, _, _)| *i == id) {
            Some((_, c, false)) => c.send(msg), // a closed one is dropped at the next receive
            _ => Err(TransportError::Closed),
        }
    }
}

impl<A: Acceptor> Endpoint for Gather<A> {
    fn send(&mut self, msg: &[u8]) -> Result<(), TransportError> {
        match self.last {
            Some(id) => match self.send_to(id, msg) {
                Err(TransportError::Closed) => Ok(()), // dropped at the next receive
                r => r,
            },
            None => Ok(()),
        }
    }

    fn drain(&mut self, limit_ns: u64) {
        for (_, c, dead) in &mut self.conns {
            if !*dead {
                c.drain(limit_ns);
            }
        }
    }

    fn recv(&mut self, buf: &mut Vec<u8>, wait_ns: u64) -> Result<Option<usize>, TransportError> {
        Ok(self.recv_from(buf, wait_ns)?.map(|_| buf.len()))
    }

    fn local_addr(&self) -> String {
        self.acceptor.local()
    }

    fn connection_count(&self) -> Option<u64> {
        Some(self.accepted)
    }
}
