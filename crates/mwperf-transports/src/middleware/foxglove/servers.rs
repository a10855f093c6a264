//! A subscription on several servers at once: with the Foxglove SDK each publishing process
//! serves its own channels, so a topic published by several processes is on several servers
//! and a client subscribes on each (address `<host>:<port>,<host>:<port>,.../<base>`). One
//! connection per server; `recv` gives the first message any of them has.

use std::os::fd::RawFd;

use mwperf_core::clock::now_ns;

use super::{open_one, FoxgloveEndpoint, TRANSPORT};
use crate::middleware::pumped::{Got, Pumped};
use crate::{poll, Endpoint, Side, Spec, TransportError};

pub struct Servers {
    parts: Vec<FoxgloveEndpoint>,
    /// the connection looked at first next time (none is starved)
    next: usize,
    local: String,
    fds: Vec<RawFd>,
}

pub fn open(servers: &str, base: &str, spec: &Spec) -> Result<Box<dyn Endpoint>, TransportError> {
    let parts = servers
        .split(',')
        .map(|server| {
            let mut one = spec.clone();
            one.addr = format!("{server}/{base}");
            open_one(Side::Sub, &one)
        })
        .collect::<Result<Vec<_>, _>>()?;
    let fds = parts.iter().map(FoxgloveEndpoint::fd).collect();
    Ok(Box::new(Servers {
        parts,
        next: 0,
        local: spec.addr.clone(),
        fds,
    }))
}

impl Servers {
    /// One message from the first connection that has one, without blocking: each is read
    /// until it has nothing whole (so a wait on the sockets misses nothing).
    fn look(&mut self, buf: &mut Vec<u8>) -> Result<Option<usize>, TransportError> {
        let n = self.parts.len();
        for k in 0..n {
            let i = (self.next + k) % n;
            let part = &mut self.parts[i];
            if let Some(m) = part.early().pop_front() {
                *buf = m;
                self.next = (i + 1) % n;
                return Ok(Some(buf.len()));
            }
            loop {
                match part.pump(Some(&mut *buf), 0)? {
                    Got::Message(len) => {
                        self.next = (i + 1) % n;
                        return Ok(Some(len));
                    }
                    Got::Other => {}
                    Got::Nothing => break,
                    Got::PeerLeft => return Err(TransportError::Closed),
                }
            }
        }
        Ok(None)
    }
}

impl Endpoint for Servers {
    fn send(&mut self, _msg: &[u8]) -> Result<(), TransportError> {
        Err(TransportError::Unsupported {
            transport: TRANSPORT,
            what: "sending from a sub (it only subscribes)".into(),
        })
    }

    fn recv(&mut self, buf: &mut Vec<u8>, wait_ns: u64) -> Result<Option<usize>, TransportError> {
        let deadline = now_ns().saturating_add(wait_ns);
        loop {
            if let Some(len) = self.look(buf)? {
                return Ok(Some(len));
            }
            let now = now_ns();
            if wait_ns == 0 || now >= deadline {
                return Ok(None);
            }
            if !poll::wait_any(&self.fds, libc::POLLIN, deadline - now)? {
                return Ok(None); // the wait ended, or a signal came
            }
        }
    }

    fn local_addr(&self) -> String {
        self.local.clone()
    }
}
