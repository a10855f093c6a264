//! The service roles' opening: a server opens its side and prints READY with the address its
//! clients pass to --connect; a client opens its clients itself (roles/client.rs).

use std::io::Write;

use crate::cli::Role;
use crate::open::Stop;
use crate::session::Session;

/// Open the session's service side and run its role.
pub fn open_and_run(session: &Session) -> Result<super::RoleOutcome, Stop> {
    match session.role {
        Role::Client(a) => Ok(super::client::run(a)),
        Role::Server(a) => {
            let common = &a.server.common;
            let spec = common.spec(&a.server.listen).map_err(Stop::Usage)?;
            let server = match mwperf_transports::open_server(common.transport, &spec) {
                Ok(s) => s,
                Err(e) if e.is_usage() => {
                    return Err(Stop::Usage(format!(
                        "--transport {}: {e}",
                        common.transport.name()
                    )))
                }
                Err(e) => return Err(Stop::Failed(format!("cannot open the server: {e}"))),
            };
            println!("READY {} {}", common.transport.name(), server.local_addr());
            let _ = std::io::stdout().flush();
            crate::allocs::setup_done();
            Ok(super::server::run(a, server))
        }
        _ => unreachable!("not a service role"),
    }
}
