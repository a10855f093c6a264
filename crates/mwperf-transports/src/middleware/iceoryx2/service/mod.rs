//! iceoryx2 request/response (see crate::service) over its own request-response messaging
//! pattern: the service `mwperf/<base>/service` carries byte-slice requests and responses; the
//! server answers each `ActiveRequest` with one response loaned from its own data segment, the
//! client gets a `PendingResponse` per request (the call id is the client's counter mapped to
//! it). Requests and responses never overwrite one another (no safe overflow); a full queue
//! holds the sender back, bounded by `--opt send-timeout`.
//!
//! Sizes: every port starts with small slices and grows them (power-of-two allocation) when a
//! larger message comes; its chunk count is iceoryx2's worst case, capped so that chunks of
//! [`BUDGET_SLICE`] bytes fit the `--opt max-shm` budget (larger messages grow past it in
//! sparse shared memory).
//!
//! Waiting: there are no wake-up events yet: a blocking `recv_*` polls (yielding first, then
//! sleeping [`POLL_SLEEP`] between looks).

mod client;
mod server;
#[cfg(test)]
mod tests;

use std::time::Duration;

use iceoryx2::prelude::*;
use iceoryx2::service::port_factory::request_response;

use super::settings::Settings;
use super::{middleware, node, quiet_logs, Svc};
use crate::service::{Client, Server};
use crate::spec::auto_base;
use crate::{Spec, TransportError};

pub use client::Iceoryx2Client;
pub use server::Iceoryx2Server;

pub type ReqRes = request_response::PortFactory<Svc, [u8], (), [u8], ()>;

/// Calls one client may have outstanding (the service's active requests per client).
pub const MAX_IN_FLIGHT: usize = 64;
/// Clients a service admits: 16 plus one being replaced.
const MAX_CLIENTS: usize = 17;
/// Servers a service admits: one plus one being replaced.
const MAX_SERVERS: usize = 2;
/// Responses a pending response may buffer (one is expected; one of slack).
const RESPONSE_BUFFER: usize = 2;
/// Slice length a new port starts with (latency runs' messages fit).
const INITIAL_SLICE: usize = 2048;
/// The slice size the chunk count is budgeted for (see the module docs).
const BUDGET_SLICE: usize = 256 * 1024;
/// Bytes per chunk beyond the payload (iceoryx2's headers and alignment), for the budget.
const CHUNK_OVERHEAD: usize = 128;
/// Looks that only yield before a blocking wait starts sleeping.
const SPIN_LOOKS: u32 = 64;
const POLL_SLEEP: Duration = Duration::from_micros(20);

/// The service name of `base`.
fn service_name(base: &str) -> String {
    format!("mwperf/{base}/service")
}

/// Chunks a port gets: iceoryx2's `worst` case, capped by the shared-memory budget.
fn chunks(settings: &Settings, worst: usize) -> usize {
    worst.min((settings.max_shm / (BUDGET_SLICE + CHUNK_OVERHEAD)).max(MAX_IN_FLIGHT + 2))
}

/// Open or create the request-response service of `base` (both sides ask for the same
/// settings, so either may come first).
fn open_service(node: &Node<Svc>, name: &str) -> Result<ReqRes, TransportError> {
    let sname = ServiceName::new(name).map_err(|e| {
        TransportError::Address(format!(
            "cannot use '{name}' as an iceoryx2 service name ({e:?}); the address is a base name of at most {} characters",
            ServiceName::max_len().saturating_sub(15)
        ))
    })?;
    node.service_builder(&sname)
        .request_response::<[u8], [u8]>()
        .enable_safe_overflow_for_requests(false)
        .enable_safe_overflow_for_responses(false)
        .max_active_requests_per_client(MAX_IN_FLIGHT)
        .max_response_buffer_size(RESPONSE_BUFFER)
        .max_servers(MAX_SERVERS)
        .max_clients(MAX_CLIENTS)
        .max_borrowed_responses_per_pending_response(1)
        .max_loaned_requests(1)
        .open_or_create()
        .map_err(|e| {
            middleware(format!(
                "cannot open or create the request-response service {name}: {e:?} (a peer of another mwperf version may have created it with other limits)"
            ))
        })
}

pub fn client(spec: &Spec) -> Result<Box<dyn Client>, TransportError> {
    let settings = Settings::from_spec(spec)?;
    quiet_logs();
    let base = match spec.addr.trim() {
        "" | "auto" => {
            return Err(TransportError::Address(
                "an iceoryx2 client needs the server's base name (what its READY line printed), not 'auto'".into(),
            ))
        }
        b => b.to_string(),
    };
    let shared = node::session("client", spec)?;
    let node = shared.lock().unwrap_or_else(|p| p.into_inner());
    let service = open_service(&node, &service_name(&base))?;
    drop(node);
    Ok(Box::new(Iceoryx2Client::new(service, &settings, shared)?))
}

pub fn server(spec: &Spec) -> Result<Box<dyn Server>, TransportError> {
    let settings = Settings::from_spec(spec)?;
    quiet_logs();
    let base = match spec.addr.trim() {
        "" | "auto" => auto_base(),
        b => b.to_string(),
    };
    let shared = node::session("server", spec)?;
    let node = shared.lock().unwrap_or_else(|p| p.into_inner());
    let service = open_service(&node, &service_name(&base))?;
    drop(node);
    Ok(Box::new(Iceoryx2Server::new(
        service, &settings, base, shared,
    )?))
}

/// Look with `look` until it has something or `wait_ns` passed (see the module docs).
fn poll_until<T>(
    wait_ns: u64,
    mut look: impl FnMut() -> Result<Option<T>, TransportError>,
) -> Result<Option<T>, TransportError> {
    let end = mwperf_core::clock::now_ns().saturating_add(wait_ns);
    let mut looks = 0u32;
    loop {
        if let Some(t) = look()? {
            return Ok(Some(t));
        }
        let now = mwperf_core::clock::now_ns();
        if wait_ns == 0 || now >= end {
            return Ok(None);
        }
        looks += 1;
        if looks < SPIN_LOOKS {
            std::thread::yield_now();
        } else {
            std::thread::sleep(POLL_SLEEP.min(Duration::from_nanos(end - now)));
        }
    }
}
