//! zenoh request/response (see crate::service), the way rmw_zenoh does services: the server
//! declares a *complete* queryable on the service key `mwperf/<base>/service` and answers each
//! query with one reply on that key; the client declares a querier on the key (target
//! all-complete, consolidation none, as rmw_zenoh's clients) and makes one `get` per call, its
//! request the query's payload. The call id is the client's own counter: zenoh matches a reply
//! to its query itself (the reply comes back through that get's callback); a zenoh error reply
//! (`ReplyError`, e.g. the querier's 10 s timeout) is `Reply { ok: false }`.
//!
//! The address, modes (peer: the server listens, the client connects; client: both reach a
//! router) and sessions are those of the topics (see the parent module); the server is opened
//! as a listener (like a pong), the client as a connector (like a ping).

mod client;
mod server;
#[cfg(test)]
mod tests;

use super::address::Address;
use super::settings::Settings;
use super::NAME;
use crate::service::{Client, Server};
use crate::{Side, Spec, TransportError};

pub use client::ZenohClient;
pub use server::ZenohServer;

/// The key suffix of a service (after `mwperf/<base>/`).
const SERVICE: &str = "service";

/// The checked settings and the address of one service side.
fn settings(spec: &Spec) -> Result<(Settings, Address), TransportError> {
    let settings = Settings::from_spec(spec)?;
    if settings.cdr {
        return Err(TransportError::Unsupported {
            transport: NAME,
            what: "'--opt cdr=true' with --mode service (requests and replies travel as the \
                   mwperf message itself; allowed: cdr=false)"
                .into(),
        });
    }
    Ok((settings, Address::parse(&spec.addr)?))
}

/// The service key of `base`.
fn key(base: &str) -> String {
    format!("mwperf/{base}/{SERVICE}")
}

pub fn client(spec: &Spec) -> Result<Box<dyn Client>, TransportError> {
    let (settings, address) = settings(spec)?;
    let Some(base) = address.base.clone() else {
        return Err(TransportError::Address(format!(
            "zenoh address '{}' has no #<base>; pass what the server's READY line printed, e.g. {}#demo",
            spec.addr, address.endpoint
        )));
    };
    let opened = super::session::session(Side::Ping, &settings, &address, spec.shared_session)?;
    Ok(Box::new(ZenohClient::open(opened, &settings, &base)?))
}

pub fn server(spec: &Spec) -> Result<Box<dyn Server>, TransportError> {
    let (settings, address) = settings(spec)?;
    let base = address.base_or_auto();
    let opened = super::session::session(Side::Pong, &settings, &address, spec.shared_session)?;
    Ok(Box::new(ZenohServer::open(opened, &settings, &base)?))
}
