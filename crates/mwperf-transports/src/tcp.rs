//! TCP: messages framed by their own header on one connection, Nagle disabled.

use std::io;
use std::net::{TcpListener, TcpStream};

use crate::stream::{Acceptor, Client, Gather, Server};
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
    services: crate::service::Services::Native(
        "request/reply baseline: framed messages on one connection per client, answered on the connection each came from, matched by the mwperf header's seq",
    ),
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

/// Open `side` over TCP: the listening side accepts on `spec.addr` (a pong one peer at a time, a
/// sub every publisher at once), the other connects to it.
pub fn open(side: Side, spec: &Spec) -> Result<Box<dyn Endpoint>, TransportError> {
    Ok(match side {
        Side::Sub => Box::new(Gather::new(bind(&spec.addr)?)),
        Side::Pong => Box::new(listen(&spec.addr)?),
        Side::Ping | Side::Pub => Box::new(connect(&spec.addr)?),
    })
}

pub fn listen(addr: &str) -> Result<Server<TcpListener>, TransportError> {
    Ok(Server::new(bind(addr)?))
}

pub(crate) fn bind(addr: &str) -> Result<TcpListener, TransportError> {
    let at = resolve(addr)?;
    let l = TcpListener::bind(at).map_err(|err| TransportError::Bind {
        addr: addr.to_string(),
        err,
    })?;
    l.set_nonblocking(true)?;
    Ok(l)
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

#[cfg(test)]
mod tests {
    use super::*;
    use mwperf_core::wire::{build_message, Header};

    fn msg(seq: u64) -> Vec<u8> {
        let mut b = Vec::new();
        let h = Header {
            run_id: 1,
            seq,
            payload_len: 100,
            ..Default::default()
        };
        build_message(&mut b, &h);
        b
    }

    /// A sub hears two publishers connected at once (a graph topic published by two nodes),
    /// whichever sends; a pub that leaves does not stop the other.
    #[test]
    fn a_sub_gathers_every_publisher() {
        let mut sub = open(Side::Sub, &Spec::new("127.0.0.1:0")).unwrap();
        let at = Spec::new(sub.local_addr());
        let mut a = open(Side::Pub, &at).unwrap();
        let mut b = open(Side::Pub, &at).unwrap();
        for i in 0..10 {
            a.send(&msg(i)).unwrap();
            b.send(&msg(100 + i)).unwrap();
        }
        drop(a);
        b.send(&msg(200)).unwrap();
        let mut seqs = Vec::new();
        let mut buf = Vec::new();
        while seqs.len() < 21 {
            let Some(_) = sub.recv(&mut buf, 2_000_000_000).unwrap() else {
                panic!("only {seqs:?} arrived");
            };
            seqs.push(Header::decode(&buf).unwrap().seq);
        }
        seqs.sort();
        let want: Vec<u64> = (0..10).chain(100..110).chain([200]).collect();
        assert_eq!(seqs, want);
        assert_eq!(sub.connection_count(), Some(2));
        assert_eq!(sub.recv(&mut buf, 20_000_000).unwrap(), None);
    }
}
