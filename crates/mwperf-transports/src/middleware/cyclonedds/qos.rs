//! mwperf QoS → a Cyclone `dds_qos_t`, used for the writer and the reader alike (so a peer with
//! the same flags always matches). DDS is the model the QoS flags come from, so every setting
//! maps directly:
//! - reliability reliable → RELIABLE with a bounded max_blocking_time (a writer whose history is
//!   full of unacknowledged samples waits at most that long, then the write fails and is counted
//!   as a send error instead of stalling the schedule); best-effort → BEST_EFFORT.
//! - history keep-last:N → KEEP_LAST N; keep-all → KEEP_ALL with unlimited resource limits.
//! - durability volatile / transient-local → the same kinds (transient-local: the writer keeps
//!   its history for late-joining readers).

use super::ffi::{self, Api};
use crate::spec::{Durability, History, Qos, Reliability};
use crate::TransportError;

/// Cyclone's own default for reliable writers.
pub const DEFAULT_MAX_BLOCKING_NS: u64 = 100_000_000;

/// An owned `dds_qos_t`, deleted on drop.
pub struct QosHandle<'a> {
    api: &'a Api,
    pub ptr: *mut ffi::dds_qos_t,
}

impl Drop for QosHandle<'_> {
    fn drop(&mut self) {
        // SAFETY: ptr came from dds_create_qos and is deleted once.
        unsafe { (self.api.dds_delete_qos)(self.ptr) }
    }
}

/// Build the QoS; `max_blocking_ns` bounds a reliable write (`--opt max-blocking=...`).
pub fn build<'a>(
    api: &'a Api,
    qos: &Qos,
    max_blocking_ns: u64,
) -> Result<QosHandle<'a>, TransportError> {
    // SAFETY: dds_create_qos returns a fresh object (or NULL on allocation failure).
    let ptr = unsafe { (api.dds_create_qos)() };
    if ptr.is_null() {
        return Err(TransportError::Middleware {
            transport: "cyclonedds",
            detail: "cannot allocate a QoS object".into(),
        });
    }
    let handle = QosHandle { api, ptr };
    let blocking = i64::try_from(max_blocking_ns).unwrap_or(i64::MAX);
    let (kind, depth) = match qos.history {
        History::KeepLast(n) => {
            let n = i32::try_from(n).map_err(|_| TransportError::Unsupported {
                transport: "cyclonedds",
                what: format!("--history keep-last:{n} (depth at most {})", i32::MAX),
            })?;
            (ffi::DDS_HISTORY_KEEP_LAST, n)
        }
        History::KeepAll => (ffi::DDS_HISTORY_KEEP_ALL, 0),
    };
    // SAFETY: ptr is a valid QoS object; the setters only store values.
    unsafe {
        match qos.reliability {
            Reliability::Reliable => {
                (api.dds_qset_reliability)(ptr, ffi::DDS_RELIABILITY_RELIABLE, blocking)
            }
            Reliability::BestEffort => {
                (api.dds_qset_reliability)(ptr, ffi::DDS_RELIABILITY_BEST_EFFORT, blocking)
            }
        }
        (api.dds_qset_history)(ptr, kind, depth);
        if qos.history == History::KeepAll {
            let unlimited = ffi::DDS_LENGTH_UNLIMITED;
            (api.dds_qset_resource_limits)(ptr, unlimited, unlimited, unlimited);
        }
        match qos.durability {
            Durability::Volatile => (api.dds_qset_durability)(ptr, ffi::DDS_DURABILITY_VOLATILE),
            Durability::TransientLocal => {
                (api.dds_qset_durability)(ptr, ffi::DDS_DURABILITY_TRANSIENT_LOCAL)
            }
        }
    }
    Ok(handle)
}
