//! A pub's fan-out over plain sockets (`--subscribers N` on udp, tcp, uds): one endpoint per
//! subscriber behind one [`Endpoint`], each message sent to every subscriber in turn — what a
//! TCPROS publisher does with its subscriber links, so the last subscriber's latency includes
//! the sends to the ones before it. (Middleware transports fan out natively and need none.)
//!
//! A subscriber that goes away (closed connection) is dropped and the others keep receiving;
//! only when all are gone does `send` report `Closed`. A datagram nobody listens to is
//! `Unreachable`, as for one subscriber.

use mwperf_transports::{Endpoint, TransportError};

/// Every subscriber's endpoint (None once it closed), in the order messages go out.
pub struct FanOut {
    subscribers: Vec<Option<Box<dyn Endpoint>>>,
    /// The next subscriber `recv` polls first, so none starves.
    next: usize,
}

impl FanOut {
    pub fn new(subscribers: Vec<Box<dyn Endpoint>>) -> Self {
        FanOut {
            subscribers: subscribers.into_iter().map(Some).collect(),
            next: 0,
        }
    }

    fn live(&self) -> usize {
        self.subscribers.iter().flatten().count()
    }
}

impl Endpoint for FanOut {
    fn send(&mut self, msg: &[u8]) -> Result<(), TransportError> {
        let mut unreachable = None;
        for slot in &mut self.subscribers {
            let Some(ep) = slot else { continue };
            match ep.send(msg) {
                Ok(()) => {}
                Err(TransportError::Closed) => *slot = None,
                Err(e @ TransportError::Unreachable { .. }) => unreachable = Some(e),
                Err(e) => return Err(e),
            }
        }
        match unreachable {
            _ if self.live() == 0 => Err(TransportError::Closed),
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// Polls every subscriber (a pub receives nothing, but stream endpoints flush their backlog
    /// and notice a close while receiving), the wait shared among them.
    fn recv(&mut self, buf: &mut Vec<u8>, wait_ns: u64) -> Result<Option<usize>, TransportError> {
        let n = self.subscribers.len();
        let share = wait_ns / self.live().max(1) as u64;
        for k in 0..n {
            let i = (self.next + k) % n;
            let Some(ep) = &mut self.subscribers[i] else {
                continue;
            };
            match ep.recv(buf, share) {
                Ok(Some(len)) => {
                    self.next = (i + 1) % n;
                    return Ok(Some(len));
                }
                Ok(None) | Err(TransportError::Unreachable { .. }) => {}
                Err(TransportError::Closed) => self.subscribers[i] = None,
                Err(e) => return Err(e),
            }
        }
        if self.live() == 0 {
            return Err(TransportError::Closed);
        }
        Ok(None)
    }

    fn local_addr(&self) -> String {
        let names: Vec<String> = self
            .subscribers
            .iter()
            .flatten()
            .map(|ep| ep.local_addr())
            .collect();
        names.join(";")
    }

    fn matched_subscribers(&mut self) -> Option<u64> {
        Some(self.live() as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    /// What a probe subscriber was sent.
    type Sent = Arc<Mutex<Vec<Vec<u8>>>>;

    /// A subscriber that records what it was sent, or fails every send with `fail`.
    struct Probe {
        got: Sent,
        fail: Option<fn() -> TransportError>,
    }

    impl Endpoint for Probe {
        fn send(&mut self, msg: &[u8]) -> Result<(), TransportError> {
            if let Some(f) = self.fail {
                return Err(f());
            }
            self.got.lock().unwrap().push(msg.to_vec());
            Ok(())
        }
        fn recv(&mut self, _: &mut Vec<u8>, _: u64) -> Result<Option<usize>, TransportError> {
            match self.fail {
                Some(f) => Err(f()),
                None => Ok(None),
            }
        }
        fn local_addr(&self) -> String {
            "probe".into()
        }
    }

    fn probe(fail: Option<fn() -> TransportError>) -> (Box<dyn Endpoint>, Sent) {
        let got = Arc::new(Mutex::new(Vec::new()));
        (
            Box::new(Probe {
                got: Arc::clone(&got),
                fail,
            }),
            got,
        )
    }

    #[test]
    fn every_subscriber_gets_every_message() {
        let (a, got_a) = probe(None);
        let (b, got_b) = probe(None);
        let mut fan = FanOut::new(vec![a, b]);
        fan.send(b"one").unwrap();
        fan.send(b"two").unwrap();
        assert_eq!(
            *got_a.lock().unwrap(),
            vec![b"one".to_vec(), b"two".to_vec()]
        );
        assert_eq!(*got_b.lock().unwrap(), *got_a.lock().unwrap());
        assert_eq!(fan.matched_subscribers(), Some(2));
    }

    #[test]
    fn a_closed_subscriber_is_dropped_and_the_others_keep_receiving() {
        let (a, _) = probe(Some(|| TransportError::Closed));
        let (b, got_b) = probe(None);
        let mut fan = FanOut::new(vec![a, b]);
        fan.send(b"x").unwrap();
        fan.send(b"y").unwrap();
        assert_eq!(got_b.lock().unwrap().len(), 2);
        assert_eq!(fan.matched_subscribers(), Some(1));
        assert!(matches!(fan.recv(&mut Vec::new(), 0), Ok(None)));
    }

    #[test]
    fn closed_only_when_every_subscriber_is_gone() {
        let (a, _) = probe(Some(|| TransportError::Closed));
        let (b, _) = probe(Some(|| TransportError::Closed));
        let mut fan = FanOut::new(vec![a, b]);
        assert!(matches!(fan.send(b"x"), Err(TransportError::Closed)));
        assert!(matches!(
            fan.recv(&mut Vec::new(), 0),
            Err(TransportError::Closed)
        ));
    }

    #[test]
    fn unreachable_is_reported_but_the_rest_still_get_it() {
        let (a, _) = probe(Some(|| TransportError::Unreachable {
            addr: "a".into(),
            err: std::io::ErrorKind::ConnectionRefused.into(),
        }));
        let (b, got_b) = probe(None);
        let mut fan = FanOut::new(vec![a, b]);
        assert!(matches!(
            fan.send(b"x"),
            Err(TransportError::Unreachable { .. })
        ));
        assert_eq!(got_b.lock().unwrap().len(), 1);
    }
}
