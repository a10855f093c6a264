//! A zenoh router inside this process: a `mode: "router"` session from the same zenoh build
//! (zenoh's own routing code), for client-mode measurements without building `zenohd`.

use zenoh::{Session, Wait};

use super::address::Address;
use crate::tls_files::TlsFiles;
use crate::{Router, TransportError};

/// A running router; dropping it closes the session and frees its port.
pub struct ZenohRouter {
    session: Session,
    endpoint: String,
}

/// Start a router listening on `listen` (`tcp/HOST:PORT` or, with `tls`'s files,
/// `tls/HOST:PORT` or `quic/HOST:PORT`; port 0 = a free one).
pub fn start_router(listen: &str, tls: Option<&TlsFiles>) -> Result<ZenohRouter, TransportError> {
    let address = Address::parse(listen)?;
    if address.base.is_some() {
        return Err(TransportError::Address(format!("zenoh router address '{listen}': give the endpoint only (tcp/HOST:PORT); the #<base> goes to ping and pong")));
    }
    super::settings::check_link(&address, tls, true, None)?;
    let (session, endpoint) = super::listen_session("router", &address, tls)?;
    Ok(ZenohRouter { session, endpoint })
}

impl Router for ZenohRouter {
    fn local_addr(&self) -> String {
        self.endpoint.clone()
    }
}

impl Drop for ZenohRouter {
    fn drop(&mut self) {
        let _ = self.session.close().wait();
    }
}
