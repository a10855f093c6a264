//! TCPROS: connection headers, the `mwperf_msgs/Bytes` message, and the two ends of a topic
//! connection on the data path ([`Inbound`] reads a publisher, [`Outbound`] writes a subscriber).
//!
//! Wire format (roscpp `Header`, `TransportPublisherLink`, `TransportSubscriberLink`): a
//! connection header is `u32 LE total` then fields `u32 LE len` + `key=value`; after the two
//! headers every message is `u32 LE len` + the serialized message. `mwperf_msgs/Bytes` serializes
//! as `u32 n | n bytes data | i64 time | u64 id` (ROS 1 has no padding).

use std::collections::VecDeque;
use std::io::{self, ErrorKind, Read, Write};
use std::net::TcpStream;
use std::os::fd::{AsRawFd, RawFd};

use mwperf_core::payload::MAX_PAYLOAD;
use mwperf_core::wire::{Header, HEADER_LEN};

pub use crate::poll::LONG_WAIT_NS;
use crate::poll::{self, check, coarse_timeout, RecvTimeout};
use crate::TransportError;

pub const MSG_TYPE: &str = "mwperf_msgs/Bytes";
/// genmsg md5 of "uint8[] data\nint64 time\nuint64 id" (checked in the tests below).
pub const MSG_MD5: &str = "e1a733a0a653955956d11097f8512c59";
pub const MSG_DEFINITION: &str = "uint8[] data\nint64 time\nuint64 id\n";

/// Largest connection header accepted (message definitions are a few KiB at most).
pub const MAX_HEADER: usize = 1 << 20;
/// Largest message frame accepted: any mwperf message plus room for foreign senders.
pub const MAX_FRAME: usize = MAX_PAYLOAD + HEADER_LEN + (1 << 20);
/// Bytes of the frame around `data`: u32 frame length + u32 data length before, time + id after.
const PREFIX: usize = 8;
const SUFFIX: usize = 16;
const READ_CHUNK: usize = 256 * 1024;

// ---------------------------------------------------------------------------------------------
// Connection headers

pub type Fields = Vec<(String, String)>;

pub fn encode_header(fields: &[(&str, &str)]) -> Vec<u8> {
    let total: usize = fields.iter().map(|(k, v)| 4 + k.len() + 1 + v.len()).sum();
    let mut out = Vec::with_capacity(4 + total);
    out.extend_from_slice(&(total as u32).to_le_bytes());
    for (k, v) in fields {
        out.extend_from_slice(&((k.len() + 1 + v.len()) as u32).to_le_bytes());
        out.extend_from_slice(k.as_bytes());
        out.push(b'=');
        out.extend_from_slice(v.as_bytes());
    }
    out
}

/// Decode a header body (the bytes after its u32 total length).
pub fn decode_header(mut body: &[u8]) -> Result<Fields, String> {
    let mut fields = Vec::new();
    while !body.is_empty() {
        if body.len() < 4 {
            return Err(format!(
                "{} stray bytes at the end of a connection header",
                body.len()
            ));
        }
        let n = u32::from_le_bytes(body[..4].try_into().expect("4 bytes")) as usize;
        let field = body
            .get(4..4usize.saturating_add(n))
            .ok_or_else(|| format!("header field of {n} bytes overruns the header"))?;
        let text = String::from_utf8_lossy(field);
        let (k, v) = text
            .split_once('=')
            .ok_or_else(|| format!("header field {text:?} has no '='"))?;
        fields.push((k.to_string(), v.to_string()));
        body = &body[4 + n..];
    }
    Ok(fields)
}

pub fn field<'a>(fields: &'a Fields, key: &str) -> Option<&'a str> {
    fields
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
}

/// Read one connection header from a blocking stream (with a read timeout set by the caller).
pub fn read_header(s: &mut impl Read) -> Result<Fields, String> {
    let mut len = [0u8; 4];
    s.read_exact(&mut len)
        .map_err(|e| format!("reading the connection header: {e}"))?;
    let n = u32::from_le_bytes(len) as usize;
    if n > MAX_HEADER {
        return Err(format!(
            "connection header of {n} bytes is too large (not TCPROS?)"
        ));
    }
    let mut body = vec![0u8; n];
    s.read_exact(&mut body)
        .map_err(|e| format!("reading the connection header: {e}"))?;
    decode_header(&body)
}

pub fn write_header(s: &mut impl Write, fields: &[(&str, &str)]) -> io::Result<()> {
    s.write_all(&encode_header(fields))
}

/// Whether a peer's md5sum is compatible with ours (`*` = any, e.g. topic_tools' ShapeShifter).
pub fn md5_matches(theirs: Option<&str>) -> bool {
    matches!(theirs, Some("*") | Some(MSG_MD5))
}

// ---------------------------------------------------------------------------------------------
// The message

/// The bytes before and after `msg` in its frame: `time` = header sent_ns, `id` = header seq
/// (informational for foreign tools; 0 when `msg` is not an mwperf message).
pub fn frame_parts(msg: &[u8]) -> ([u8; PREFIX], [u8; SUFFIX]) {
    let (time, id) = match Header::decode_header(msg) {
        Ok(h) => (h.sent_ns as i64, h.seq),
        Err(_) => (0, 0),
    };
    let mut prefix = [0u8; PREFIX];
    prefix[..4].copy_from_slice(&((msg.len() + 4 + SUFFIX) as u32).to_le_bytes());
    prefix[4..].copy_from_slice(&(msg.len() as u32).to_le_bytes());
    let mut suffix = [0u8; SUFFIX];
    suffix[..8].copy_from_slice(&time.to_le_bytes());
    suffix[8..].copy_from_slice(&id.to_le_bytes());
    (prefix, suffix)
}

/// A whole frame (tests).
#[cfg(test)]
pub fn frame(msg: &[u8]) -> Vec<u8> {
    let (p, s) = frame_parts(msg);
    [&p[..], msg, &s[..]].concat()
}

/// The `data` of a serialized `mwperf_msgs/Bytes`, or None when the body is not one.
pub fn decode_body(body: &[u8]) -> Option<&[u8]> {
    let n = u32::from_le_bytes(body.get(..4)?.try_into().ok()?) as usize;
    (body.len() == 4usize.checked_add(n)?.checked_add(SUFFIX)?).then(|| &body[4..4 + n])
}

/// What the front of an inbound byte stream holds.
#[derive(Debug, PartialEq, Eq)]
pub enum Cut<'a> {
    /// Not a whole frame yet.
    Need,
    /// A frame length beyond [`MAX_FRAME`]: not TCPROS (the stream cannot be resynchronised).
    Garbage,
    /// A whole frame of `consumed` bytes (length field included); `message` is its `data` when it
    /// is a `mwperf_msgs/Bytes`, else the whole frame body.
    Frame { message: &'a [u8], consumed: usize },
}

/// Cut the frame at the front of `have` (pure: the fuzz target's entry point).
pub fn cut_frame(have: &[u8]) -> Cut<'_> {
    if have.len() < 4 {
        return Cut::Need;
    }
    let n = u32::from_le_bytes(have[..4].try_into().expect("4 bytes")) as usize;
    if n > MAX_FRAME {
        return Cut::Garbage;
    }
    if have.len() < 4 + n {
        return Cut::Need;
    }
    let body = &have[4..4 + n];
    Cut::Frame {
        message: decode_body(body).unwrap_or(body),
        consumed: 4 + n,
    }
}

// ---------------------------------------------------------------------------------------------
// Data path: reading from a publisher

/// What one attempt to cut a message out of an inbound buffer gave.
pub enum Taken {
    /// A message is in `out` (the `data` of a Bytes, or the raw body of anything else).
    Message,
    /// Unframeable bytes are in `out`; the connection is dead after this.
    Garbage,
    None,
}

/// Our subscriber's connection to one publisher (handshake done).
pub struct Inbound {
    pub stream: TcpStream,
    /// The publisher's slave API URI (to drop the link when the master says it is gone).
    pub uri: String,
    rx: Vec<u8>,
    start: usize,
    end: usize,
    pub dead: bool,
    rcvtimeo: RecvTimeout,
}

impl Inbound {
    pub fn new(stream: TcpStream, uri: String) -> Self {
        Inbound {
            stream,
            uri,
            rx: crate::stream::prefaulted(READ_CHUNK),
            start: 0,
            end: 0,
            dead: false,
            rcvtimeo: RecvTimeout::default(),
        }
    }

    pub fn fd(&self) -> RawFd {
        self.stream.as_raw_fd()
    }

    /// Cut one frame out of the buffer, if a whole one is there.
    pub fn take(&mut self, out: &mut Vec<u8>) -> Taken {
        let have = &self.rx[self.start..self.end];
        let n = match cut_frame(have) {
            Cut::Need => return Taken::None,
            Cut::Garbage => {
                out.clear();
                out.extend_from_slice(have);
                (self.start, self.end, self.dead) = (0, 0, true);
                return Taken::Garbage;
            }
            Cut::Frame { message, consumed } => {
                out.clear();
                out.extend_from_slice(message);
                consumed
            }
        };
        self.start += n;
        if self.start == self.end {
            (self.start, self.end) = (0, 0);
        }
        Taken::Message
    }

    /// Read what the socket has without blocking. Ok(false) = nothing there; Err = closed.
    pub fn fill(&mut self) -> io::Result<bool> {
        self.fill_with(libc::MSG_DONTWAIT)
    }

    /// Block in one recv for at most about `wait_ns` (≥ [`LONG_WAIT_NS`], bounded by
    /// SO_RCVTIMEO): one system call per message, as blocking ROS clients do. Ok(false) = timed
    /// out or interrupted.
    pub fn fill_blocking(&mut self, wait_ns: u64) -> io::Result<bool> {
        self.rcvtimeo
            .set(self.stream.as_raw_fd(), coarse_timeout(wait_ns))?;
        self.fill_with(0)
    }

    fn fill_with(&mut self, flags: libc::c_int) -> io::Result<bool> {
        if self.start > 0 {
            self.rx.copy_within(self.start..self.end, 0);
            (self.start, self.end) = (0, self.end - self.start);
        }
        // Room for the whole frame being assembled, so large messages need few reads.
        let want = match self.rx.get(..4).filter(|_| self.end >= 4) {
            Some(b) => (4 + u32::from_le_bytes(b.try_into().expect("4 bytes")) as usize)
                .min(4 + MAX_FRAME)
                .max(crate::stream::room(self.end)),
            None => crate::stream::room(self.end),
        };
        if self.rx.len() < want {
            self.rx.resize(want, 0);
        }
        let spare = &mut self.rx[self.end..];
        // SAFETY: `spare` is valid for its length.
        match check(unsafe {
            libc::recv(
                self.stream.as_raw_fd(),
                spare.as_mut_ptr() as *mut libc::c_void,
                spare.len(),
                flags,
            )
        }) {
            Ok(0) => Err(io::Error::new(
                ErrorKind::UnexpectedEof,
                "publisher closed the connection",
            )),
            Ok(n) => {
                self.end += n;
                Ok(true)
            }
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::Interrupted) => {
                Ok(false)
            }
            Err(e) => Err(e),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Data path: writing to a subscriber

/// How a publisher's per-subscriber queue behaves when the subscriber reads too slowly.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueuePolicy {
    /// Keep the newest N unsent messages, drop older ones (roscpp `queue_size`).
    KeepLast(usize),
    /// Keep everything up to this many bytes, then make `send` wait for the subscriber.
    KeepAll { max_bytes: usize },
}

/// How long a keep-all `send` waits for a subscriber that stopped reading.
const SEND_STALL_NS: u64 = 10_000_000_000;

/// Our publisher's connection to one subscriber (handshake done).
pub struct Outbound {
    pub stream: TcpStream,
    /// Frames not yet (fully) written. The first may be partly written (`head_sent` bytes of
    /// it, or it is the unsent rest of a frame): then `head_started` and it must go out whole.
    queue: VecDeque<Vec<u8>>,
    head_sent: usize,
    head_started: bool,
    queued_bytes: usize,
    pub dropped: u64,
    pub dead: bool,
}

impl Outbound {
    pub fn new(stream: TcpStream) -> Self {
        Outbound {
            stream,
            queue: VecDeque::new(),
            head_sent: 0,
            head_started: false,
            queued_bytes: 0,
            dropped: 0,
            dead: false,
        }
    }

    pub fn fd(&self) -> RawFd {
        self.stream.as_raw_fd()
    }

    pub fn has_backlog(&self) -> bool {
        !self.queue.is_empty()
    }

    /// Write as much of the queue as the socket takes now.
    pub fn flush(&mut self) -> io::Result<()> {
        while let Some(head) = self.queue.front() {
            match write_now(self.fd(), &[&head[self.head_sent..]]) {
                Ok(0) => return Err(ErrorKind::WriteZero.into()),
                Ok(n) => {
                    self.head_sent += n;
                    self.head_started = true;
                    if self.head_sent == head.len() {
                        self.queued_bytes -= head.len();
                        self.queue.pop_front();
                        (self.head_sent, self.head_started) = (0, false);
                    }
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => return Ok(()),
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// Queue or write one message (`prefix`, `msg`, `suffix` form its frame).
    pub fn send(
        &mut self,
        prefix: &[u8],
        msg: &[u8],
        suffix: &[u8],
        policy: QueuePolicy,
    ) -> io::Result<()> {
        self.flush()?;
        if self.queue.is_empty() {
            // Fast path: one vectored write, no copy; queue only what the socket did not take.
            let total = prefix.len() + msg.len() + suffix.len();
            let mut sent = 0;
            while sent < total {
                let parts = remaining(&[prefix, msg, suffix], sent);
                match write_now(self.fd(), &parts) {
                    Ok(0) => return Err(ErrorKind::WriteZero.into()),
                    Ok(n) => sent += n,
                    Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                    Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                    Err(e) => return Err(e),
                }
            }
            if sent < total {
                let rest: Vec<u8> = remaining(&[prefix, msg, suffix], sent).concat();
                self.queued_bytes += rest.len();
                self.queue.push_back(rest);
                self.head_started = sent > 0;
            }
            return Ok(());
        }
        if let QueuePolicy::KeepAll { max_bytes } = policy {
            let mut waited = 0;
            while self.queued_bytes + msg.len() > max_bytes && !self.queue.is_empty() {
                if waited >= SEND_STALL_NS {
                    return Err(io::Error::new(
                        ErrorKind::TimedOut,
                        "subscriber stopped reading for 10 s (keep-all queue full)",
                    ));
                }
                poll::wait(self.fd(), libc::POLLOUT, 100_000_000)?;
                waited += 100_000_000;
                self.flush()?;
            }
        }
        let whole = [prefix, msg, suffix].concat();
        self.queued_bytes += whole.len();
        self.queue.push_back(whole);
        if let QueuePolicy::KeepLast(depth) = policy {
            // Drop the oldest unsent messages; a partly written head must go out whole.
            let first_droppable = usize::from(self.head_started);
            while self.queue.len() - first_droppable > depth.max(1) {
                if let Some(old) = self.queue.remove(first_droppable) {
                    self.queued_bytes -= old.len();
                    self.dropped += 1;
                }
            }
        }
        self.flush()
    }

    /// Flush the queue, waiting at most `limit_ns` for the subscriber to take it.
    pub fn drain(&mut self, limit_ns: u64) {
        let end = mwperf_core::clock::now_ns() + limit_ns;
        while self.has_backlog() && self.flush().is_ok() && self.has_backlog() {
            let now = mwperf_core::clock::now_ns();
            if now >= end || poll::wait(self.fd(), libc::POLLOUT, end - now).is_err() {
                break;
            }
        }
    }
}

/// The parts of `bufs` after the first `skip` bytes.
pub fn remaining<'a>(bufs: &[&'a [u8]], mut skip: usize) -> Vec<&'a [u8]> {
    let mut out = Vec::with_capacity(bufs.len());
    for b in bufs {
        if skip >= b.len() {
            skip -= b.len();
        } else {
            out.push(&b[skip..]);
            skip = 0;
        }
    }
    out
}

/// One non-blocking vectored send of (the first 4 of) `parts` on a (blocking) socket; never
/// raises SIGPIPE.
pub fn write_now(fd: RawFd, parts: &[&[u8]]) -> io::Result<usize> {
    let mut iov = [libc::iovec {
        iov_base: std::ptr::null_mut(),
        iov_len: 0,
    }; 4];
    let n = parts.len().min(4);
    for (v, p) in iov.iter_mut().zip(parts) {
        *v = libc::iovec {
            iov_base: p.as_ptr() as *mut libc::c_void,
            iov_len: p.len(),
        };
    }
    // SAFETY: zeroed msghdr is valid; iov points at live slices for the duration of the call.
    let mut mh: libc::msghdr = unsafe { std::mem::zeroed() };
    mh.msg_iov = iov.as_mut_ptr();
    mh.msg_iovlen = n as _;
    // SAFETY: mh and the buffers it points to are valid.
    check(unsafe { libc::sendmsg(fd, &mh, libc::MSG_DONTWAIT | libc::MSG_NOSIGNAL) })
}

/// A write error on a subscriber link as the endpoint reports it (only keep-all stalls matter).
pub fn send_error(e: io::Error) -> Option<TransportError> {
    (e.kind() == ErrorKind::TimedOut).then(|| TransportError::Blocked {
        transport: "ros1",
        detail: e.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    #[test]
    fn frames_are_cut_whole_from_a_stream() {
        let msg = b"hello".to_vec();
        let mut stream = frame(&msg);
        let one = stream.len();
        stream.extend_from_slice(&[7, 0, 0, 0, 1, 2, 3]); // a foreign frame, not yet whole
        assert_eq!(
            cut_frame(&stream),
            Cut::Frame {
                message: &msg,
                consumed: one
            }
        );
        assert_eq!(cut_frame(&stream[one..]), Cut::Need);
        assert_eq!(cut_frame(&stream[..3]), Cut::Need);
        assert_eq!(cut_frame(&[0xff; 8]), Cut::Garbage);
        // a body that is not a mwperf_msgs/Bytes is handed over whole
        assert_eq!(
            cut_frame(&[2, 0, 0, 0, 9, 9]),
            Cut::Frame {
                message: &[9, 9],
                consumed: 6
            }
        );
    }

    #[test]
    fn md5_follows_the_genmsg_rule() {
        // genmsg: md5 of the definition without comments, fields as "type name", no final newline.
        // (The same rule gives std_msgs/String 992ce8a1687cec8c8bd883ec73ca41d1.)
        let text = MSG_DEFINITION.trim_end();
        assert_eq!(text, "uint8[] data\nint64 time\nuint64 id");
        assert_eq!(MSG_MD5, "e1a733a0a653955956d11097f8512c59");
    }

    #[test]
    fn headers_round_trip_and_reject_garbage() {
        let h = encode_header(&[
            ("topic", "/a"),
            ("md5sum", "*"),
            ("empty", ""),
            ("eq", "a=b"),
        ]);
        assert_eq!(
            u32::from_le_bytes(h[..4].try_into().unwrap()) as usize,
            h.len() - 4
        );
        let f = decode_header(&h[4..]).unwrap();
        assert_eq!(field(&f, "topic"), Some("/a"));
        assert_eq!(field(&f, "empty"), Some(""));
        assert_eq!(field(&f, "eq"), Some("a=b"));
        assert!(md5_matches(field(&f, "md5sum")));
        assert!(!md5_matches(Some("0123")) && !md5_matches(None));
        for bad in [
            &b"\x01"[..],
            b"\xff\xff\xff\xff",
            b"\x05\x00\x00\x00abc",
            b"\x03\x00\x00\x00abc",
            b"\x00\x00\x00\x00\x01",
        ] {
            assert!(decode_header(bad).is_err(), "{bad:?}");
        }
        assert!(read_header(&mut &b"\xff\xff\xff\x7f"[..]).is_err());
        assert!(read_header(&mut &b"\x0a\x00\x00\x00ab"[..]).is_err());
        assert_eq!(read_header(&mut &h[..]).unwrap(), f);
    }

    #[test]
    fn message_body_codec() {
        let mut m = Vec::new();
        mwperf_core::wire::build_message(
            &mut m,
            &Header {
                seq: 42,
                sent_ns: 7,
                payload_len: 10,
                ..Default::default()
            },
        );
        let f = frame(&m);
        assert_eq!(f.len(), 4 + 4 + m.len() + 16);
        assert_eq!(
            u32::from_le_bytes(f[..4].try_into().unwrap()) as usize,
            f.len() - 4
        );
        assert_eq!(decode_body(&f[4..]), Some(&m[..]));
        assert_eq!(
            i64::from_le_bytes(f[f.len() - 16..f.len() - 8].try_into().unwrap()),
            7
        );
        assert_eq!(u64::from_le_bytes(f[f.len() - 8..].try_into().unwrap()), 42);
        // Foreign bodies: too short, length overrunning, length underrunning, huge length.
        for bad in [
            &b""[..],
            b"\x01\x00",
            b"\x09\x00\x00\x00abc",
            &[0u8; 30][..],
            b"\xff\xff\xff\xff0123456789abcdef",
        ] {
            assert_eq!(decode_body(bad), None, "{bad:?}");
        }
        assert_eq!(decode_body(&[0u8; 20]), Some(&b""[..]));
    }

    fn pair() -> (TcpStream, TcpStream) {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let a = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (b, _) = l.accept().unwrap();
        (a, b)
    }

    fn take_within(i: &mut Inbound, out: &mut Vec<u8>) -> Taken {
        for _ in 0..200 {
            match i.take(out) {
                Taken::None => {}
                t => return t,
            }
            if i.fill().is_err() {
                return Taken::None;
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        Taken::None
    }

    #[test]
    fn inbound_frames_messages_and_survives_foreign_bytes() {
        let (mut w, r) = pair();
        let mut i = Inbound::new(r, "http://x:1/".into());
        let mut out = Vec::new();
        w.write_all(&frame(b"hello")).unwrap();
        w.write_all(&[3, 0, 0, 0, b'a', b'b', b'c']).unwrap(); // a frame that is no Bytes message
        assert!(matches!(take_within(&mut i, &mut out), Taken::Message));
        assert_eq!(out, b"hello");
        assert!(matches!(take_within(&mut i, &mut out), Taken::Message));
        assert_eq!(out, b"abc");
        w.write_all(b"GET / HTTP/1.0\r\n\r\n").unwrap(); // "GET " as a length: far too large
        assert!(matches!(take_within(&mut i, &mut out), Taken::Garbage));
        assert!(i.dead);
        drop(w);
        let mut closed = false;
        for _ in 0..100 {
            if i.fill().is_err() {
                closed = true;
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        assert!(closed);
    }

    #[test]
    fn outbound_keep_last_drops_oldest_and_keeps_frames_whole() {
        let (w, r) = pair();
        poll::set_buffer(w.as_raw_fd(), libc::SO_SNDBUF, 4096);
        let mut o = Outbound::new(w);
        let msg = vec![7u8; 100_000];
        let (p, s) = frame_parts(&msg);
        for _ in 0..20 {
            o.send(&p, &msg, &s, QueuePolicy::KeepLast(2)).unwrap();
        }
        assert!(o.dropped > 0);
        assert!(o.queue.len() <= 3);
        // Everything that arrives is whole frames.
        let mut i = Inbound::new(r, String::new());
        let mut out = Vec::new();
        let mut got = 0;
        for _ in 0..2000 {
            o.flush().unwrap();
            let _ = i.fill();
            while let Taken::Message = i.take(&mut out) {
                assert!(out == msg, "a frame arrived damaged ({} bytes)", out.len());
                got += 1;
            }
            if !o.has_backlog() && got > 0 && matches!(i.fill(), Ok(false)) {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        assert_eq!(got as u64 + o.dropped, 20);
    }
}
