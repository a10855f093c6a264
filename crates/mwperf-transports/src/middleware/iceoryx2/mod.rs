//! iceoryx2: zero-copy shared-memory publish/subscribe between processes of one host, no daemon.
//!
//! Address: a base name (`auto` or empty picks one); a side publishes on the service
//! `mwperf/<base>/<out topic>` and subscribes `mwperf/<base>/<in topic>` (see [`Side`]), each
//! paired with an event service `<name>.ev` that wakes a receiver blocked in `recv`.
//!
//! QoS: reliable = no safe overflow and a publisher that waits (bounded, `--opt send-timeout`,
//! default 1 s) for a full subscriber queue; best effort = safe overflow (the oldest queued sample
//! is overwritten). keep-last N = subscriber queues of N; keep-all is refused (queues are fixed
//! when the service is created); transient-local = a publisher history of N for late joiners.
//!
//! Each endpoint has its own node (with `Spec::shared_session`, a graph node's endpoints share one:
//! [`node`]), created with iceoryx2's signal handling off (the agent owns SIGINT/SIGTERM).
//! Creating a node also removes what dead nodes (killed processes) left behind, so a `kill -9`
//! does not break the next run; dropping an endpoint releases all its shared memory (its node's
//! with the last endpoint of the node).

mod incoming;
mod node;
mod outgoing;
pub mod service;
mod services;
mod settings;

use std::time::Duration;

use iceoryx2::prelude::*;

use crate::spec::auto_base;
use crate::{Endpoint, Side, Spec, TransportError};
use incoming::Incoming;
use outgoing::Outgoing;
use settings::Settings;

pub(crate) const NAME: &str = "iceoryx2";

/// Thread-safe flavour: an endpoint must be `Send` (tests move it to another thread).
type Svc = ipc_threadsafe::Service;

/// How often `wait_matched` looks at the services' port counts.
const MATCH_POLL: Duration = Duration::from_millis(1);

fn middleware(detail: String) -> TransportError {
    TransportError::Middleware {
        transport: NAME,
        detail,
    }
}

/// iceoryx2 logs to stderr; only errors by default (its warnings, e.g. "no config file was
/// loaded", are noise in an agent's output). IOX2_LOG_LEVEL=debug|trace|... shows more.
fn quiet_logs() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| set_log_level_from_env_or(LogLevel::Error));
}

pub struct Iceoryx2Endpoint {
    // Fields drop in order: ports and services before the node that owns them.
    out: Option<Outgoing>,
    inc: Option<Incoming>,
    base: String,
    _node: node::SharedNode,
}

pub fn open(side: Side, spec: &Spec) -> Result<Box<dyn Endpoint>, TransportError> {
    let settings = Settings::from_spec(spec)?;
    quiet_logs();
    let base = match spec.addr.trim() {
        "" | "auto" => auto_base(),
        b => b.to_string(),
    };
    let role = match side {
        Side::Ping => "ping",
        Side::Pong => "pong",
        Side::Pub => "pub",
        Side::Sub => "sub",
    };
    let shared = node::session(role, spec)?;
    let node = shared.lock().unwrap_or_else(|p| p.into_inner());
    let inc = match side.in_topic() {
        None => None,
        Some(topic) => {
            let name = services::service_name(&base, topic);
            let service = services::open_pubsub(&node, &name, &settings.service)?;
            let events = services::open_events(&node, &name)?;
            Some(Incoming::new(
                service,
                events,
                settings.service.depth,
                settings.loans,
                name,
            )?)
        }
    };
    let out = match side.out_topic() {
        None => None,
        Some(topic) => {
            let name = services::service_name(&base, topic);
            let service = services::open_pubsub(&node, &name, &settings.service)?;
            let events = services::open_events(&node, &name)?;
            Some(Outgoing::new(
                service,
                events,
                settings,
                name,
                inc.as_ref().map(Incoming::drain_handle),
            )?)
        }
    };
    drop(node);
    Ok(Box::new(Iceoryx2Endpoint {
        out,
        inc,
        base,
        _node: shared,
    }))
}

impl Iceoryx2Endpoint {
    /// What is still missing for a match, or None when matched.
    fn unmatched(&self) -> Option<String> {
        if let Some(out) = &self.out {
            if out.service.dynamic_config().number_of_subscribers() == 0 {
                return Some(format!("no subscriber on {}", out.service.name()));
            }
        }
        if let Some(inc) = &self.inc {
            if inc.service.dynamic_config().number_of_publishers() == 0 {
                return Some(format!("no publisher on {}", inc.service.name()));
            }
        }
        None
    }
}

impl Endpoint for Iceoryx2Endpoint {
    fn send(&mut self, msg: &[u8]) -> Result<(), TransportError> {
        match self.out.as_mut() {
            Some(out) => out.send(msg),
            None => Err(middleware(
                "this side only subscribes (a sub endpoint cannot send)".into(),
            )),
        }
    }

    fn recv(&mut self, buf: &mut Vec<u8>, wait_ns: u64) -> Result<Option<usize>, TransportError> {
        match self.inc.as_mut() {
            Some(inc) => inc.recv(buf, wait_ns),
            None => {
                // A pub endpoint receives nothing; honour the wait so callers do not spin.
                std::thread::sleep(Duration::from_nanos(wait_ns.min(50_000_000)));
                Ok(None)
            }
        }
    }

    fn recv_view<'a>(
        &'a mut self,
        buf: &'a mut Vec<u8>,
        wait_ns: u64,
    ) -> Result<Option<&'a [u8]>, TransportError> {
        if self.inc.is_none() {
            return self.recv(buf, wait_ns).map(|_| None); // a pub endpoint receives nothing
        }
        self.inc.as_mut().expect("checked").recv_view(buf, wait_ns)
    }

    fn local_addr(&self) -> String {
        self.base.clone()
    }

    fn matched_subscribers(&mut self) -> Option<u64> {
        self.out
            .as_ref()
            .map(|out| out.service.dynamic_config().number_of_subscribers() as u64)
    }

    fn wait_matched(&mut self, timeout_ns: u64) -> Result<(), TransportError> {
        let start = std::time::Instant::now();
        let timeout = Duration::from_nanos(timeout_ns);
        loop {
            let Some(missing) = self.unmatched() else {
                return Ok(());
            };
            if start.elapsed() >= timeout {
                return Err(TransportError::NotMatched {
                    transport: NAME,
                    waited_ns: start.elapsed().as_nanos() as u64,
                    detail: missing,
                });
            }
            std::thread::sleep(MATCH_POLL.min(timeout.saturating_sub(start.elapsed())));
        }
    }
}
