//! The socket baseline of request/response over byte streams (TCP, Unix stream sockets): each
//! client holds one connection to the server, requests and replies are framed mwperf messages
//! (crate::stream), and the server answers every request on the connection it came from (the
//! token names that connection; several clients are served at once). Streams have no request ids
//! of their own, so the call id is the mwperf header's `seq`, as over UDP
//! (crate::udp_service). Large messages queue in the connection's send backlog: a client and a
//! server writing 256 KiB at each other cannot deadlock.

use std::io::{Read, Write};
use std::os::fd::AsRawFd;

use crate::service::{CallId, Client, Reply, Server, Token};
use crate::stream::{self, Acceptor, Gather};
use crate::udp_service::header_seq;
use crate::{Endpoint, TransportError};

fn no_header(transport: &'static str) -> TransportError {
    TransportError::Unsupported {
        transport,
        what: "a request without an mwperf header (the socket baseline matches a reply to its \
               call by the header's seq)"
            .into(),
    }
}

/// One connection to the server.
pub(crate) struct StreamClient<S: Read + Write + AsRawFd> {
    conn: stream::Client<S>,
    transport: &'static str,
}

impl<S: Read + Write + AsRawFd + Send> StreamClient<S> {
    pub(crate) fn new(conn: stream::Client<S>, transport: &'static str) -> Self {
        StreamClient { conn, transport }
    }
}

impl<S: Read + Write + AsRawFd + Send> Client for StreamClient<S> {
    fn call(&mut self, request: &[u8]) -> Result<CallId, TransportError> {
        let id = header_seq(request).ok_or_else(|| no_header(self.transport))?;
        self.conn.send(request)?;
        Ok(id)
    }

    fn recv_reply(
        &mut self,
        buf: &mut Vec<u8>,
        wait_ns: u64,
    ) -> Result<Option<Reply>, TransportError> {
        Ok(self.conn.recv(buf, wait_ns)?.map(|_| Reply {
            // unframeable bytes match no call: u64::MAX is never a seq
            call: header_seq(buf).unwrap_or(u64::MAX),
            ok: true,
        }))
    }

    fn connections(&self) -> Option<u64> {
        Some(1)
    }
}

/// Every client's connection at once.
pub(crate) struct StreamServer<A: Acceptor> {
    gather: Gather<A>,
    /// Requests received so far: the low half of a token (the high half is the connection id).
    received: u32,
}

impl<A: Acceptor> StreamServer<A> {
    pub(crate) fn new(acceptor: A) -> Self {
        StreamServer {
            gather: Gather::new(acceptor),
            received: 0,
        }
    }
}

impl<A: Acceptor> Server for StreamServer<A> {
    fn local_addr(&self) -> String {
        self.gather.local_addr()
    }

    fn recv_request(
        &mut self,
        buf: &mut Vec<u8>,
        wait_ns: u64,
    ) -> Result<Option<Token>, TransportError> {
        Ok(self.gather.recv_from(buf, wait_ns)?.map(|conn| {
            self.received = self.received.wrapping_add(1);
            (conn << 32) | Token::from(self.received)
        }))
    }

    fn reply(&mut self, token: Token, reply: &[u8]) -> Result<(), TransportError> {
        match self.gather.send_to(token >> 32, reply) {
            Err(TransportError::Closed) => Ok(()), // the client left: nobody to answer
            r => r,
        }
    }

    fn connections(&self) -> Option<u64> {
        self.gather.connection_count()
    }
}
