//! The DDS domain an endpoint joins, pinned to loopback unicast by default.
//!
//! Cyclone's defaults use multicast on the first multicast-capable interface (eth0 here), and `lo`
//! has no MULTICAST flag, so the default domain would either leak test traffic onto the network
//! or not discover at all. Every domain this process joins is therefore created explicitly with
//! [`LOOPBACK_CONFIG`] (or the `--opt config=...` text) before its first participant.

use std::ffi::CString;
use std::sync::Mutex;

use super::ffi::{self, Api};
use crate::TransportError;

pub use super::super::cyclonedds_descriptor::LOOPBACK_CONFIG;

/// Domains created by this process, the configuration each got and its handle (a domain lives
/// until [`close_all`] or exit: creating it is the expensive part, and Cyclone refuses to create
/// one twice; a handle of 0: it existed already, created outside this module).
static CREATED: Mutex<Vec<(u32, String, i32)>> = Mutex::new(Vec::new());

/// Make sure `domain` exists in this process with `config` (`None` = [`LOOPBACK_CONFIG`]).
pub fn ensure(api: &Api, domain: u32, config: Option<&str>) -> Result<(), TransportError> {
    let config = config.unwrap_or(LOOPBACK_CONFIG);
    let mut created = CREATED.lock().unwrap_or_else(|p| p.into_inner());
    if let Some((_, had, _)) = created.iter().find(|(d, _, _)| *d == domain) {
        if had != config {
            return Err(TransportError::Unsupported {
                transport: "cyclonedds",
                what: format!("a second configuration for domain {domain} in one process (--opt config=...; use another domain)"),
            });
        }
        return Ok(());
    }
    let text = CString::new(config).map_err(|_| TransportError::Unsupported {
        transport: "cyclonedds",
        what: "a NUL byte in --opt config=...".into(),
    })?;
    // SAFETY: valid C string; Cyclone copies what it needs.
    let rc = unsafe { (api.dds_create_domain)(domain, text.as_ptr()) };
    if rc < 0 && rc != ffi::DDS_RETCODE_PRECONDITION_NOT_MET {
        let what = if config == LOOPBACK_CONFIG {
            "the loopback configuration".to_string()
        } else {
            format!("--opt config={config}")
        };
        return Err(TransportError::Middleware {
            transport: "cyclonedds",
            detail: format!(
                "cannot create domain {domain} with {what}: {}",
                ffi::retcode_text(api, rc)
            ),
        });
    }
    // PRECONDITION_NOT_MET: the domain already exists (created outside this module); use it.
    created.push((domain, config.to_string(), rc.max(0)));
    Ok(())
}

/// Delete every domain this process created, stopping their threads (receive, lease, garbage
/// collection, the security plugins' handshakes). Called once the agent is done, before it
/// exits: a domain left to the end of the process kept its threads running while exit's
/// handlers tore down the libraries they call (a secured domain's thread encrypting inside
/// OpenSSL after OpenSSL's own exit handler freed its locks: SIGSEGV, one run in ten with
/// --secure encrypt, core dump 2026-11-29).
pub fn close_all() {
    let mut created = CREATED.lock().unwrap_or_else(|p| p.into_inner());
    if created.is_empty() {
        return; // nothing created: the library need not even be loaded
    }
    let Ok(api) = ffi::api() else { return };
    for (_, _, handle) in created.drain(..) {
        if handle > 0 {
            // SAFETY: a domain handle this module created; deleting it deletes what is in it.
            unsafe { (api.dds_delete)(handle) };
        }
    }
}
