//! One TCPROS service connection on the data path, for both ends: a receive buffer filled by
//! non-blocking reads, and sends that write what the socket takes at once (one vectored
//! `sendmsg` straight from the caller's buffers) and queue the rest for [`Link::flush`]. Nothing
//! here blocks.

use std::io::{self, ErrorKind};
use std::net::TcpStream;
use std::os::fd::{AsRawFd, RawFd};

use super::tcpros::write_now;
use crate::poll::check;

const READ_CHUNK: usize = 64 * 1024;

pub struct Link {
    pub stream: TcpStream,
    rx: Vec<u8>,
    start: usize,
    end: usize,
    tx: Vec<u8>,
    tx_start: usize,
}

impl Link {
    pub fn new(stream: TcpStream) -> Link {
        Link {
            stream,
            rx: Vec::new(),
            start: 0,
            end: 0,
            tx: Vec::new(),
            tx_start: 0,
        }
    }

    pub fn fd(&self) -> RawFd {
        self.stream.as_raw_fd()
    }

    /// Bytes received and not consumed yet.
    pub fn buffered(&self) -> &[u8] {
        &self.rx[self.start..self.end]
    }

    pub fn consume(&mut self, n: usize) {
        self.start = (self.start + n).min(self.end);
        if self.start == self.end {
            (self.start, self.end) = (0, 0);
        }
    }

    /// Read what the socket has now, with room for at least `want` buffered bytes (the frame
    /// being assembled). Ok(false) = nothing there; Err = closed or failed.
    pub fn fill(&mut self, want: usize) -> io::Result<bool> {
        if self.start > 0 {
            self.rx.copy_within(self.start..self.end, 0);
            (self.start, self.end) = (0, self.end - self.start);
        }
        let size = want.max(self.end + READ_CHUNK);
        if self.rx.len() < size {
            self.rx.resize(size, 0);
        }
        let spare = &mut self.rx[self.end..];
        // SAFETY: `spare` is valid for its length.
        match check(unsafe {
            libc::recv(
                self.stream.as_raw_fd(),
                spare.as_mut_ptr() as *mut libc::c_void,
                spare.len(),
                libc::MSG_DONTWAIT,
            )
        }) {
            Ok(0) => Err(io::Error::new(
                ErrorKind::UnexpectedEof,
                "the peer closed the connection",
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

    pub fn has_backlog(&self) -> bool {
        self.tx_start < self.tx.len()
    }

    /// Write as much of the queue as the socket takes now.
    pub fn flush(&mut self) -> io::Result<()> {
        while self.has_backlog() {
            match write_now(self.fd(), &[&self.tx[self.tx_start..]]) {
                Ok(0) => return Err(ErrorKind::WriteZero.into()),
                Ok(n) => self.tx_start += n,
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        }
        if !self.has_backlog() {
            self.tx.clear();
            self.tx_start = 0;
        }
        Ok(())
    }

    /// Send `head` then `body` after what is queued: written now as far as the socket takes
    /// them, the rest queued (copied).
    pub fn send(&mut self, head: &[u8], body: &[u8]) -> io::Result<()> {
        self.flush()?;
        let mut sent = 0;
        if !self.has_backlog() {
            let total = head.len() + body.len();
            while sent < total {
                let r = if sent < head.len() {
                    write_now(self.fd(), &[&head[sent..], body])
                } else {
                    write_now(self.fd(), &[&body[sent - head.len()..]])
                };
                match r {
                    Ok(0) => return Err(ErrorKind::WriteZero.into()),
                    Ok(n) => sent += n,
                    Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                    Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                    Err(e) => return Err(e),
                }
            }
        }
        if sent < head.len() {
            self.tx.extend_from_slice(&head[sent..]);
            self.tx.extend_from_slice(body);
        } else if sent < head.len() + body.len() {
            self.tx.extend_from_slice(&body[sent - head.len()..]);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    #[test]
    fn large_sends_queue_and_arrive_whole() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let a = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (b, _) = l.accept().unwrap();
        crate::poll::set_buffer(a.as_raw_fd(), libc::SO_SNDBUF, 4096);
        let (mut w, mut r) = (Link::new(a), Link::new(b));
        let body: Vec<u8> = (0..3_000_000u32).map(|i| i as u8).collect();
        w.send(b"head", &body).unwrap();
        w.send(b"tail", b"").unwrap();
        let total = 4 + body.len() + 4;
        let end = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while r.buffered().len() < total && std::time::Instant::now() < end {
            w.flush().unwrap();
            if !r.fill(total).unwrap() {
                crate::poll::wait(r.fd(), libc::POLLIN, 1_000_000).unwrap();
            }
        }
        let got = r.buffered();
        assert_eq!(got.len(), total);
        assert!(
            &got[..4] == b"head" && got[4..4 + body.len()] == body[..] && got.ends_with(b"tail")
        );
        r.consume(total);
        assert!(r.buffered().is_empty());
        drop(w);
        let mut closed = false;
        for _ in 0..1000 {
            if r.fill(0).is_err() {
                closed = true;
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        assert!(closed);
    }
}
