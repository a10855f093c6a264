//! A discovered endpoint's QoS (the `dds_qos_t` of a DCPSPublication/DCPSSubscription sample)
//! in the probe's words. A policy the endpoint did not send has its DDS default (Cyclone fills
//! them in), infinite durations are None.

use std::ffi::{c_char, CStr};

use super::super::ffi::{self, Api};
use crate::ros2probe::EndpointQos;

fn duration(d: ffi::dds_duration_t) -> Option<i64> {
    (d != ffi::DDS_INFINITY).then_some(d)
}

/// Read `qos` (owned by the sample it came with).
///
/// # Safety
/// `qos` is null or a valid `dds_qos_t`.
pub unsafe fn read(api: &Api, qos: *const ffi::dds_qos_t, writer: bool) -> EndpointQos {
    let mut out = EndpointQos {
        // DDS defaults: writers reliable, readers best-effort.
        reliability: if writer { "reliable" } else { "best-effort" },
        durability: "volatile",
        history: "keep-last",
        depth: 1,
        liveliness: "automatic",
        ownership: "shared",
        ..EndpointQos::default()
    };
    if qos.is_null() {
        return out;
    }
    let (mut kind, mut depth, mut d) = (0i32, 0i32, 0i64);
    if (api.dds_qget_reliability)(qos, &mut kind, &mut d) {
        out.reliability = if kind == ffi::DDS_RELIABILITY_RELIABLE {
            "reliable"
        } else {
            "best-effort"
        };
    }
    if (api.dds_qget_durability)(qos, &mut kind) {
        out.durability = match kind {
            0 => "volatile",
            1 => "transient-local",
            2 => "transient",
            _ => "persistent",
        };
    }
    if (api.dds_qget_history)(qos, &mut kind, &mut depth) {
        out.history = if kind == ffi::DDS_HISTORY_KEEP_ALL {
            "keep-all"
        } else {
            "keep-last"
        };
        out.depth = depth;
    }
    if (api.dds_qget_deadline)(qos, &mut d) {
        out.deadline_ns = duration(d);
    }
    if (api.dds_qget_lifespan)(qos, &mut d) {
        out.lifespan_ns = duration(d);
    }
    if (api.dds_qget_liveliness)(qos, &mut kind, &mut d) {
        out.liveliness = match kind {
            0 => "automatic",
            1 => "manual-by-participant",
            _ => "manual-by-topic",
        };
        out.lease_ns = duration(d);
    }
    if (api.dds_qget_ownership)(qos, &mut kind) {
        out.ownership = if kind == 1 { "exclusive" } else { "shared" };
    }
    let (mut n, mut names) = (0u32, std::ptr::null_mut::<*mut c_char>());
    if (api.dds_qget_partition)(qos, &mut n, &mut names) && !names.is_null() {
        for i in 0..n as usize {
            let p = *names.add(i);
            if !p.is_null() {
                out.partitions
                    .push(CStr::from_ptr(p).to_string_lossy().into_owned());
                (api.dds_free)(p.cast());
            }
        }
        (api.dds_free)(names.cast());
    }
    out
}
