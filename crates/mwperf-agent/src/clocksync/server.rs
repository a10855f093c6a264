//! The pub's probe server (`--clock-serve IP:PORT`): a thread answering each probe request
//! with its receive and send times (t2, t3) on this agent's clock. Requests of another run are
//! counted as foreign and not answered; anything else on the port is counted, never trusted.

use std::net::UdpSocket;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use mwperf_core::clock::{now_ns, sleep_until_ns};
use mwperf_core::result::ClockServe;

use super::probe::{Bad, Datagram, ANSWER, LEN, REQUEST};

/// How long the server keeps answering after the pub's last message (the sub's "after" burst).
pub const AFTER_NS: u64 = 500_000_000;

#[derive(Default)]
struct Counts {
    answered: AtomicU64,
    foreign: AtomicU64,
    malformed: AtomicU64,
}

pub struct Server {
    address: String,
    stop: Arc<AtomicBool>,
    counts: Arc<Counts>,
    thread: Option<JoinHandle<()>>,
}

impl Server {
    /// Bind `addr` and start answering probes of `run_id` (None: of any run); Err = cannot bind
    /// (names the flag).
    pub fn start(addr: std::net::SocketAddr, run_id: Option<u32>) -> Result<Server, String> {
        let sock =
            UdpSocket::bind(addr).map_err(|e| format!("--clock-serve: cannot bind {addr}: {e}"))?;
        sock.set_read_timeout(Some(Duration::from_millis(50)))
            .map_err(|e| format!("--clock-serve: {e}"))?;
        let address = sock
            .local_addr()
            .map_or_else(|_| addr.to_string(), |a| a.to_string());
        let stop = Arc::new(AtomicBool::new(false));
        let counts = Arc::new(Counts::default());
        let (s, c) = (stop.clone(), counts.clone());
        let thread = std::thread::Builder::new()
            .name("clock-serve".into())
            .spawn(move || serve(sock, run_id, &s, &c))
            .map_err(|e| format!("--clock-serve: {e}"))?;
        Ok(Server {
            address,
            stop,
            counts,
            thread: Some(thread),
        })
    }

    /// Where it answers (the bound address: a port of its own when asked for port 0).
    #[cfg(test)]
    pub fn address(&self) -> &str {
        &self.address
    }

    /// Keep answering until `AFTER_NS` after `last_ns` (the pub's last message), then stop.
    pub fn finish(mut self, last_ns: u64) -> ClockServe {
        sleep_until_ns(last_ns + AFTER_NS);
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        let drift = mwperf_core::clock::test_drift_ppm();
        ClockServe {
            address: self.address.clone(),
            answered: self.counts.answered.load(Ordering::Relaxed),
            foreign: self.counts.foreign.load(Ordering::Relaxed),
            malformed: self.counts.malformed.load(Ordering::Relaxed),
            test_own_drift_ppm: (drift != 0.0).then_some(drift),
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn serve(sock: UdpSocket, run_id: Option<u32>, stop: &AtomicBool, counts: &Counts) {
    let mut buf = [0u8; 2048];
    while !stop.load(Ordering::Relaxed) {
        let Ok((n, from)) = sock.recv_from(&mut buf) else {
            continue;
        };
        let t2 = now_ns();
        match Datagram::decode(&buf[..n]) {
            Ok(d)
                if d.kind == REQUEST && run_id.is_none_or(|id| d.run_id == id || d.run_id == 0) =>
            {
                let mut a = Datagram {
                    kind: ANSWER,
                    run_id: run_id.unwrap_or(d.run_id),
                    seq: d.seq,
                    t1: d.t1,
                    t2,
                    t3: 0,
                };
                a.t3 = now_ns();
                if sock.send_to(&a.encode(), from).is_ok() {
                    counts.answered.fetch_add(1, Ordering::Relaxed);
                }
            }
            Ok(_) | Err(Bad::Foreign) => {
                counts.foreign.fetch_add(1, Ordering::Relaxed);
            }
            Err(Bad::Malformed) => {
                counts.malformed.fetch_add(1, Ordering::Relaxed);
            }
        }
        debug_assert!(LEN <= buf.len());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clocksync::client::Client;

    #[test]
    fn answers_its_run_and_counts_the_rest() {
        let server = Server::start("127.0.0.1:0".parse().unwrap(), Some(42)).unwrap();
        let to: std::net::SocketAddr = server.address.parse().unwrap();
        let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
        sock.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
        sock.send_to(b"not a probe at all", to).unwrap();
        let mut bad = Datagram {
            kind: REQUEST,
            run_id: 42,
            seq: 1,
            t1: 5,
            t2: 0,
            t3: 0,
        }
        .encode();
        bad[4] = 99; // our magic, another version
        sock.send_to(&bad, to).unwrap();
        sock.send_to(
            &Datagram {
                kind: REQUEST,
                run_id: 7,
                seq: 2,
                t1: 5,
                t2: 0,
                t3: 0,
            }
            .encode(),
            to,
        )
        .unwrap(); // another run
        sock.send_to(
            &Datagram {
                kind: REQUEST,
                run_id: 42,
                seq: 3,
                t1: 5,
                t2: 0,
                t3: 0,
            }
            .encode(),
            to,
        )
        .unwrap();
        let mut buf = [0u8; 64];
        let n = sock.recv(&mut buf).unwrap();
        let a = Datagram::decode(&buf[..n]).unwrap();
        assert_eq!((a.kind, a.run_id, a.seq, a.t1), (ANSWER, 42, 3, 5));
        assert!(a.t2 <= a.t3 && a.t2 > 0);
        let c = server.finish(0);
        assert_eq!((c.answered, c.foreign, c.malformed), (1, 2, 1)); // garbage and the other run: foreign
    }

    #[test]
    fn a_client_fits_zero_offset_on_one_host() {
        let server = Server::start("127.0.0.1:0".parse().unwrap(), Some(9)).unwrap();
        let client =
            Client::start(server.address.parse().unwrap(), Some(9), 2_000_000_000).unwrap();
        std::thread::sleep(Duration::from_millis(400));
        let g = client.finish();
        assert!(g.bins.answered >= 16, "{} answered", g.bins.answered);
        let f = g.bins.fit(now_ns()).unwrap();
        // one clock: the true offset is 0. On a loaded machine the fit over 0.4 s can see a
        // spurious drift, and offset0 is that line extrapolated to the first probe: allow the
        // bound plus what the fitted drift moves over the span
        let extrapolated = f.drift.abs() * f.span_ns as f64;
        assert!(
            f.offset0_ns.abs() < f.error_bound_ns() as f64 + extrapolated + 1.0,
            "{f:?}"
        );
        drop(server);
    }
}
