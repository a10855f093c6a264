//! TCP: messages framed by their own header on one connection, Nagle disabled.

use std::io;
use std::net::{TcpListener, TcpStream};

use crate::stream::{Acceptor, Client, Server};
use crate::udp::resolve;
use crate::{Descriptor, Endpoint, Fanout, Framing, QosSupport, Side, Spec, TransportError};

/// What TCP is (see [`crate::descriptor`]).
pub const DESCRIPTOR: Descriptor = Descriptor {
    name: "tcp",
    description: "TCP stream, length-framed",
    address: "host:port",
    daemon: None,
    discovery: false,
    framing: Framing::Stream,
    max_message: None,
    local_only: false,
    crosses_hosts: true,
    fanout: Fanout::SenderLoops,
    node_session: false,
    defaults: &[],
    opts: &[],
    qos: QosSupport::NONE,
};

impl Acceptor for TcpListener {
    type Stream = TcpStream;

    fn accept_one(&self) -> io::Result<Option<TcpStream>> {
        match self.accept() {
            Ok((s, _)) => {
                s.set_nodelay(true)?;
                Ok(Some(s))
            }
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
        self.local_addr().map(|a| a.to_string()).unwrap_or_default()
    }
}

/// Open `side` over TCP: the listening side accepts on `spec.addr`, the other connects to it.
pub fn open(side: Side, spec: &Spec) -> Result<Box<dyn Endpoint>, TransportError> {
    Ok(if side.is_listener() {
        Box::new(listen(&spec.addr)?)
    } else {
        Box::new(connect(&spec.addr)?)
    })
}

pub fn listen(addr: &str) -> Result<Server<TcpListener>, TransportError> {
    let at = resolve(addr)?;
    let l = TcpListener::bind(at).map_err(|err| TransportError::Bind {
        addr: addr.to_string(),
        err,
    })?;
    l.set_nonblocking(true)?;
    Ok(Server::new(l))
}

pub fn connect(addr: &str) -> Result<Client<TcpStream>, TransportError> {
    let to = resolve(addr)?;
    let s = TcpStream::connect_timeout(&to, std::time::Duration::from_secs(5)).map_err(|err| {
        TransportError::Unreachable {
            addr: addr.to_string(),
            err,
        }
    })?;
    s.set_nodelay(true)?;
    let local = s.local_addr().map(|a| a.to_string()).unwrap_or_default();
    Ok(Client::new(s, local))
}
