//! TLS under mwperf's own clients (mqtt, foxglove's WebSocket; `--opt tls`,
//! [`crate::tls_files`]): rustls with ring,
//! the very rustls zenoh's `transport_tls` links (one TLS stack, one crypto provider in the
//! binary), on the std `TcpStream` the client already drives with its own non-blocking I/O and
//! `ppoll` — not `rustls::StreamOwned`, which would keep decrypted bytes where a poll on the
//! socket cannot see them and add a copy per write.
//!
//! [`TlsConn::handshake`] runs the handshake blocking (bounded), then the caller goes on with
//! [`TlsConn::send`] / [`TlsConn::flush`] / [`TlsConn::recv`], which keep the invariant a caller's
//! poll relies on: when `recv` returns, rustls holds no decrypted byte the caller was not given.
//! Ciphertext is read with one `recv(2)` into our own buffer and fed to rustls from memory
//! (rustls' `read_tls` takes ~4 KiB per call: on the socket, a system call per 4 KiB); records go
//! out with one `sendmsg` of many (`write_tls` is vectored).

use std::collections::HashMap;
use std::io::{self, ErrorKind, IoSlice, Read, Write};
use std::net::TcpStream;
use std::os::fd::{AsRawFd, RawFd};
use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use rustls::{ClientConfig, ClientConnection, RootCertStore};

use crate::poll::check;
use crate::tls_files::TlsFiles;
use crate::TransportError;

/// Ciphertext read per `recv` (one system call for many records).
const IN_CHUNK: usize = 256 * 1024;
/// Plaintext rustls takes (its encrypted records queued) before `send` returns short: a large
/// message leaves in few `sendmsg` calls (rustls' default, 64 KiB, is one per 4 records).
const SEND_LIMIT: usize = 1 << 20;

fn unusable(transport: &'static str, path: &Path, e: impl std::fmt::Display) -> TransportError {
    TransportError::Middleware {
        transport,
        detail: format!("TLS: {}: {e}", path.display()),
    }
}

/// The client configuration of `files`: trust the CA, present the identity when the server asks
/// (mTLS). Made once per process and set of files (a reopening endpoint reads nothing again).
pub fn client_config(
    transport: &'static str,
    files: &TlsFiles,
) -> Result<Arc<ClientConfig>, TransportError> {
    static MADE: OnceLock<Mutex<HashMap<TlsFiles, Arc<ClientConfig>>>> = OnceLock::new();
    let made = MADE.get_or_init(Default::default);
    if let Some(c) = made.lock().unwrap_or_else(|p| p.into_inner()).get(files) {
        return Ok(c.clone());
    }
    let mut roots = RootCertStore::empty();
    let certs =
        CertificateDer::pem_file_iter(&files.ca).map_err(|e| unusable(transport, &files.ca, e))?;
    for cert in certs {
        let cert = cert.map_err(|e| unusable(transport, &files.ca, e))?;
        roots.add(cert).map_err(|e| {
            unusable(
                transport,
                &files.ca,
                format!("not a usable CA certificate ({e})"),
            )
        })?;
    }
    if roots.is_empty() {
        return Err(unusable(transport, &files.ca, "no certificate in it"));
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| unusable(transport, &files.ca, e))?
        .with_root_certificates(roots);
    let config = match &files.identity {
        Some((cert, key)) => {
            let chain = CertificateDer::pem_file_iter(cert)
                .map_err(|e| unusable(transport, cert, e))?
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| unusable(transport, cert, e))?;
            let key_der =
                PrivateKeyDer::from_pem_file(key).map_err(|e| unusable(transport, key, e))?;
            builder.with_client_auth_cert(chain, key_der).map_err(|e| {
                unusable(
                    transport,
                    key,
                    format!("not the key of {} ({e})", cert.display()),
                )
            })?
        }
        None => builder.with_no_client_auth(),
    };
    let config = Arc::new(config);
    made.lock()
        .unwrap_or_else(|p| p.into_inner())
        .insert(files.clone(), config.clone());
    Ok(config)
}

/// Why [`Wire::write_all_by`] stopped short.
#[derive(Debug)]
pub enum WriteStop {
    /// The deadline passed with `written` bytes out (0: the peer took none of it).
    Stalled {
        written: usize,
    },
    /// The connection took nothing more: closed.
    Zero,
    Io(io::Error),
}

/// A client's connection: TCP, or TLS on it.
pub enum Wire {
    Plain(TcpStream),
    Tls(Box<TlsConn>),
}

impl Wire {
    pub fn fd(&self) -> RawFd {
        match self {
            Wire::Plain(s) => s.as_raw_fd(),
            Wire::Tls(t) => t.fd(),
        }
    }

    /// Records encrypted but not yet on the socket.
    pub fn tls_pending(&self) -> bool {
        matches!(self, Wire::Tls(t) if t.pending())
    }

    /// Write what the connection takes of `data` now (TLS: encrypted, its records written as
    /// far as the socket takes them; [`Wire::tls_pending`] says whether some wait):
    /// Err(WouldBlock) when it took nothing.
    pub fn write_some(&mut self, data: &[u8]) -> io::Result<usize> {
        match self {
            Wire::Plain(s) => s.write(data),
            Wire::Tls(t) => match t.send(&[data])? {
                0 if !data.is_empty() => Err(ErrorKind::WouldBlock.into()),
                n => Ok(n),
            },
        }
    }

    /// Write queued TLS records without blocking; Ok(true) when none is left (always, plain).
    pub fn flush(&mut self) -> io::Result<bool> {
        match self {
            Wire::Plain(_) => Ok(true),
            Wire::Tls(t) => t.flush(),
        }
    }

    /// All of `data` out, and (TLS) no record of it left waiting, by `deadline_ns`
    /// (`mwperf_core::clock::now_ns`): writes what the connection takes, polls for room when it
    /// takes nothing. The socket may be blocking or not.
    pub fn write_all_by(&mut self, data: &[u8], deadline_ns: u64) -> Result<(), WriteStop> {
        let mut done = 0;
        while done < data.len() || self.tls_pending() {
            let step = if done < data.len() {
                self.write_some(&data[done..])
            } else {
                self.flush().and_then(|all| {
                    if all {
                        Ok(0)
                    } else {
                        Err(ErrorKind::WouldBlock.into())
                    }
                })
            };
            match step {
                Ok(0) if done < data.len() => return Err(WriteStop::Zero),
                Ok(n) => {
                    done += n;
                    continue;
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => {}
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) => return Err(WriteStop::Io(e)),
            }
            let now = mwperf_core::clock::now_ns();
            if now >= deadline_ns {
                return Err(WriteStop::Stalled { written: done });
            }
            crate::poll::wait(self.fd(), libc::POLLOUT, deadline_ns - now)
                .map_err(WriteStop::Io)?;
        }
        Ok(())
    }

    /// Read once into `buf[*end..]` (plain: the room there, which the caller made; TLS: every
    /// decrypted byte, growing `buf`), advancing `*end`. `block`: wait (under the socket's
    /// SO_RCVTIMEO) rather than return WouldBlock; a plain socket blocks as it was set.
    /// Ok(0) = the peer closed.
    pub fn read_into(
        &mut self,
        buf: &mut Vec<u8>,
        end: &mut usize,
        block: bool,
    ) -> io::Result<usize> {
        match self {
            Wire::Plain(s) => {
                let n = s.read(&mut buf[*end..])?;
                *end += n;
                Ok(n)
            }
            Wire::Tls(t) => match t.recv(buf, end, if block { 0 } else { libc::MSG_DONTWAIT }) {
                Err(e) if e.kind() == ErrorKind::UnexpectedEof => Ok(0),
                other => other,
            },
        }
    }

    pub fn socket(&self) -> &TcpStream {
        match self {
            Wire::Plain(s) => s,
            Wire::Tls(t) => t.socket(),
        }
    }

    /// Say close_notify (TLS), then shut the socket's sending side.
    pub fn shutdown_write(&mut self) {
        if let Wire::Tls(t) = self {
            t.close();
        }
        let _ = self.socket().shutdown(std::net::Shutdown::Write);
    }
}

/// A TLS client connection on a TCP socket, used without blocking after the handshake.
pub struct TlsConn {
    sock: TcpStream,
    conn: ClientConnection,
    inbuf: Box<[u8]>,
}

impl TlsConn {
    /// The handshake on connected `sock` with the server `host` (its certificate must name it:
    /// an IP address SAN for an address), at most `timeout` per read or write.
    pub fn handshake(
        transport: &'static str,
        mut sock: TcpStream,
        host: &str,
        config: Arc<ClientConfig>,
        timeout: Duration,
    ) -> Result<TlsConn, TransportError> {
        let bare = host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_string();
        let name = ServerName::try_from(bare).map_err(|_| {
            TransportError::Address(format!(
                "TLS: '{host}' is neither an IP address nor a DNS name"
            ))
        })?;
        let mut conn =
            ClientConnection::new(config, name).map_err(|e| TransportError::Middleware {
                transport,
                detail: format!("TLS: {e}"),
            })?;
        conn.set_buffer_limit(Some(SEND_LIMIT));
        sock.set_read_timeout(Some(timeout))?;
        sock.set_write_timeout(Some(timeout))?;
        let failed = |e: io::Error| TransportError::Middleware {
            transport,
            detail: match e.kind() {
                ErrorKind::WouldBlock | ErrorKind::TimedOut => format!(
                    "no TLS handshake with {host} within {} ms",
                    timeout.as_millis()
                ),
                ErrorKind::UnexpectedEof => format!(
                    "{host} closed the connection during the TLS handshake (does it speak TLS?)"
                ),
                _ => format!("TLS handshake with {host}: {e}"),
            },
        };
        while conn.is_handshaking() {
            conn.complete_io(&mut sock).map_err(failed)?;
        }
        while conn.wants_write() {
            conn.write_tls(&mut sock).map_err(failed)?; // TLS 1.3: our Finished
        }
        sock.set_read_timeout(None)?;
        sock.set_write_timeout(None)?;
        Ok(TlsConn {
            sock,
            conn,
            inbuf: vec![0u8; IN_CHUNK].into_boxed_slice(),
        })
    }

    pub fn socket(&self) -> &TcpStream {
        &self.sock
    }

    pub fn fd(&self) -> RawFd {
        self.sock.as_raw_fd()
    }

    /// Records not yet written to the socket.
    pub fn pending(&self) -> bool {
        self.conn.wants_write()
    }

    /// Write queued records without blocking; Ok(true) when none is left.
    pub fn flush(&mut self) -> io::Result<bool> {
        flush(&mut self.conn, self.sock.as_raw_fd())
    }

    /// Encrypt what rustls takes of `parts` (one record per 16 KiB of the parts together: a
    /// header and its payload share a record) and write records without blocking. Ok(n) =
    /// plaintext bytes taken; their records may still be queued ([`TlsConn::pending`]).
    pub fn send(&mut self, parts: &[&[u8]]) -> io::Result<usize> {
        let mut taken = 0;
        loop {
            self.flush()?;
            let mut at = taken;
            let mut iov: Vec<IoSlice<'_>> = Vec::with_capacity(parts.len());
            for p in parts {
                if at >= p.len() {
                    at -= p.len();
                    continue;
                }
                iov.push(IoSlice::new(&p[at..]));
                at = 0;
            }
            if iov.is_empty() {
                break;
            }
            let n = self.conn.writer().write_vectored(&iov)?;
            if n == 0 {
                break; // rustls' buffer is full and the socket takes nothing now
            }
            taken += n;
        }
        self.flush()?;
        Ok(taken)
    }

    /// Read the socket once (`flags`: `MSG_DONTWAIT`, or 0 to block, e.g. under SO_RCVTIMEO),
    /// decrypt, and append every decrypted byte at `buf[*end..]` (growing `buf`, advancing
    /// `*end`). Ok(n > 0): bytes appended; Err(WouldBlock): nothing yet (a partial record stays
    /// inside rustls); Err(UnexpectedEof): the server closed (TCP or close_notify);
    /// Err(InvalidData): a TLS error, e.g. the server's alert refusing our certificate.
    pub fn recv(
        &mut self,
        buf: &mut Vec<u8>,
        end: &mut usize,
        mut flags: libc::c_int,
    ) -> io::Result<usize> {
        let fd = self.fd();
        let mut got = 0;
        loop {
            // SAFETY: inbuf is valid for its length
            let n = match check(unsafe {
                libc::recv(
                    fd,
                    self.inbuf.as_mut_ptr() as *mut libc::c_void,
                    self.inbuf.len(),
                    flags,
                )
            })? {
                0 => return Err(ErrorKind::UnexpectedEof.into()),
                n => n,
            };
            let mut rd: &[u8] = &self.inbuf[..n];
            while !rd.is_empty() {
                if self.conn.read_tls(&mut rd)? == 0 {
                    break; // after close_notify rustls takes nothing more
                }
                let state = match self.conn.process_new_packets() {
                    Ok(s) => s,
                    Err(e) => {
                        let _ = flush(&mut self.conn, fd); // the alert rustls queued
                        return Err(io::Error::new(ErrorKind::InvalidData, e));
                    }
                };
                got += take(&mut self.conn, buf, end, state.plaintext_bytes_to_read())?;
                if state.peer_has_closed() {
                    return if got > 0 {
                        Ok(got)
                    } else {
                        Err(ErrorKind::UnexpectedEof.into())
                    };
                }
            }
            let _ = flush(&mut self.conn, fd); // what rustls owes the server (a KeyUpdate)
            if got > 0 {
                return Ok(got);
            }
            flags = libc::MSG_DONTWAIT; // part of a record: look again, never block twice
        }
    }

    /// Say close_notify (best effort, without blocking); the caller shuts the socket after.
    pub fn close(&mut self) {
        self.conn.send_close_notify();
        let _ = self.flush();
    }
}

/// Write queued records without blocking; Ok(true) when none is left.
fn flush(conn: &mut ClientConnection, fd: RawFd) -> io::Result<bool> {
    while conn.wants_write() {
        match conn.write_tls(&mut FdWriter(fd)) {
            Ok(_) => {}
            Err(e) if e.kind() == ErrorKind::WouldBlock => return Ok(false),
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(true)
}

/// Move `want` decrypted bytes (what rustls holds) to `buf[*end..]`, growing `buf`.
fn take(
    conn: &mut ClientConnection,
    buf: &mut Vec<u8>,
    end: &mut usize,
    want: usize,
) -> io::Result<usize> {
    if want == 0 {
        return Ok(0);
    }
    if buf.len() < *end + want {
        buf.resize(*end + want, 0);
    }
    let mut done = 0;
    while done < want {
        match conn.reader().read(&mut buf[*end + done..*end + want]) {
            Ok(0) => break,
            Ok(n) => done += n,
            Err(e) if e.kind() == ErrorKind::WouldBlock => break,
            Err(e) => return Err(e),
        }
    }
    *end += done;
    Ok(done)
}

/// rustls' records to a socket without blocking: one `sendmsg` of many records.
struct FdWriter(RawFd);

impl Write for FdWriter {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        self.write_vectored(&[IoSlice::new(b)])
    }
    fn write_vectored(&mut self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
        // SAFETY: an all-zero msghdr is valid; IoSlice is ABI-compatible with iovec
        let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
        msg.msg_iov = bufs.as_ptr() as *mut libc::iovec;
        msg.msg_iovlen = bufs.len().min(1024) as _;
        // SAFETY: msg points at live slices for the duration of the call
        check(unsafe { libc::sendmsg(self.0, &msg, libc::MSG_DONTWAIT | libc::MSG_NOSIGNAL) })
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}
