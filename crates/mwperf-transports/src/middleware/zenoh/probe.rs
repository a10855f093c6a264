//! Listening to a live zenoh system without publishing (`mwperf probe --zenoh ENDPOINT`): a peer
//! session that connects to ENDPOINT (a router or a listening peer; multicast scouting off, as
//! everywhere in mwperf), one subscriber per key expression, and each sample's arrival time
//! (taken in zenoh's callback, as it arrives), size and key handed to the caller's thread.

use std::sync::mpsc;
use std::time::Duration;

use zenoh::Wait;

use super::{middleware_error, settings};
use crate::TransportError;

/// How long to wait for the session to meet a router or a peer at the endpoint.
const CONNECT_WAIT: Duration = Duration::from_secs(3);

/// Receive until `stop()` says so; `each(arrival_unix_ns, payload_bytes, key)` per sample.
pub fn listen(
    endpoint: &str,
    keys: &[String],
    stop: &dyn Fn() -> bool,
    each: &mut dyn FnMut(u64, usize, &str),
) -> Result<(), TransportError> {
    let cfg = settings::session_config("peer", None, Some(endpoint), None)?;
    let session = zenoh::open(cfg)
        .wait()
        .map_err(|e| middleware_error(format!("open a session towards {endpoint}"), e))?;
    // zenoh retries a connection that fails: "nobody there" shows as no router or peer met.
    let give_up = std::time::Instant::now() + CONNECT_WAIT;
    loop {
        let info = session.info();
        let met =
            info.routers_zid().wait().next().is_some() || info.peers_zid().wait().next().is_some();
        if met {
            break;
        }
        if std::time::Instant::now() >= give_up || stop() {
            return Err(TransportError::Unreachable {
                addr: endpoint.to_string(),
                err: std::io::Error::new(
                    std::io::ErrorKind::ConnectionRefused,
                    format!(
                        "no zenoh router or peer answered within {} s",
                        CONNECT_WAIT.as_secs()
                    ),
                ),
            });
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let (tx, rx) = mpsc::channel::<(u64, usize, String)>();
    let mut subscribers = Vec::new();
    for key in keys {
        let tx = tx.clone();
        let sub = session
            .declare_subscriber(key.as_str())
            .callback(move |sample| {
                let at = unix_ns();
                let _ = tx.send((at, sample.payload().len(), sample.key_expr().to_string()));
            })
            .wait()
            .map_err(|e| middleware_error(format!("declare subscriber {key}"), e))?;
        subscribers.push(sub);
    }
    drop(tx);
    while !stop() {
        match rx.recv_timeout(Duration::from_millis(50)) {
            Ok((at, len, key)) => each(at, len, &key),
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
    }
    drop(subscribers);
    let _ = session.close().wait();
    while let Ok((at, len, key)) = rx.try_recv() {
        each(at, len, &key);
    }
    Ok(())
}

fn unix_ns() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}
