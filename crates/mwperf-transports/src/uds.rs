//! Unix domain stream sockets: the same framing as TCP, addressed by a socket file path.
//! The listener replaces a stale socket file (never any other kind of file) and removes its own
//! file when dropped.

use std::io;
use std::os::unix::fs::FileTypeExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::PathBuf;

use crate::stream::{Acceptor, Client, Gather, Server};
use crate::{Descriptor, Endpoint, Fanout, Framing, QosSupport, Side, Spec, TransportError};

/// What a Unix domain socket is (see [`crate::descriptor`]).
pub const DESCRIPTOR: Descriptor = Descriptor {
    name: "uds",
    description: "Unix domain stream socket",
    address: "a socket file path",
    daemon: None,
    discovery: false,
    framing: Framing::Stream,
    max_message: None,
    local_only: true,
    crosses_hosts: false,
    fanout: Fanout::SenderLoops,
    node_session: false,
    defaults: &[],
    opts: &[],
    qos: QosSupport::NONE,
    services: crate::service::Services::Native(
        "request/reply baseline: framed messages on one connection per client, answered on the connection each came from, matched by the mwperf header's seq",
    ),
};

/// A listener that removes its socket file on drop.
pub struct UdsListener {
    listener: UnixListener,
    path: PathBuf,
}

impl std::os::fd::AsRawFd for UdsListener {
    fn as_raw_fd(&self) -> std::os::fd::RawFd {
        self.listener.as_raw_fd()
    }
}

impl Drop for UdsListener {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

impl Acceptor for UdsListener {
    type Stream = UnixStream;

    fn accept_one(&self) -> io::Result<Option<UnixStream>> {
        match self.listener.accept() {
            Ok((s, _)) => Ok(Some(s)),
            Err(e)
                if e.kind() == io::ErrorKind::WouldBlock
                    || e.kind() == io::ErrorKind::Interrupted =>
            {
                Ok(None)
            }
            Err(e) => Err(e),
        }
    }

    fn local(&self) -> String {
        self.path.display().to_string()
    }
}

fn check_path(addr: &str) -> Result<PathBuf, TransportError> {
    if addr.is_empty() || addr.len() > 107 {
        return Err(TransportError::Address(format!(
            "'{addr}' is not a usable socket path (1..107 bytes)"
        )));
    }
    Ok(PathBuf::from(addr))
}

/// Open `side` over a Unix stream socket: the listening side accepts on `spec.addr` (a pong one
/// peer at a time, a sub every publisher at once).
pub fn open(side: Side, spec: &Spec) -> Result<Box<dyn Endpoint>, TransportError> {
    Ok(match side {
        Side::Sub => Box::new(Gather::new(bind(&spec.addr)?)),
        Side::Pong => Box::new(listen(&spec.addr)?),
        Side::Ping | Side::Pub => Box::new(connect(&spec.addr)?),
    })
}

pub fn listen(addr: &str) -> Result<Server<UdsListener>, TransportError> {
    Ok(Server::new(bind(addr)?))
}

pub(crate) fn bind(addr: &str) -> Result<UdsListener, TransportError> {
    let path = check_path(addr)?;
    if let Ok(meta) = std::fs::symlink_metadata(&path) {
        if !meta.file_type().is_socket() {
            return Err(TransportError::Bind {
                addr: addr.into(),
                err: io::Error::new(
                    io::ErrorKind::AlreadyExists,
                    "a file that is not a socket is in the way",
                ),
            });
        }
        if UnixStream::connect(&path).is_ok() {
            return Err(TransportError::Bind {
                addr: addr.into(),
                err: io::Error::new(
                    io::ErrorKind::AddrInUse,
                    "another process is listening there",
                ),
            });
        }
        let _ = std::fs::remove_file(&path); // stale socket from a crashed run
    }
    let listener = UnixListener::bind(&path).map_err(|err| TransportError::Bind {
        addr: addr.into(),
        err,
    })?;
    listener.set_nonblocking(true)?;
    Ok(UdsListener { listener, path })
}

pub fn connect(addr: &str) -> Result<Client<UnixStream>, TransportError> {
    let path = check_path(addr)?;
    let s = UnixStream::connect(&path).map_err(|err| TransportError::Unreachable {
        addr: addr.into(),
        err,
    })?;
    Ok(Client::new(s, addr.to_string()))
}
