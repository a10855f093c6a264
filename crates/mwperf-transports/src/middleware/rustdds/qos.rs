//! mwperf QoS in RustDDS terms. The same policies go on writer and reader, so a peer opened with
//! the same flags always matches (and one opened with other flags may not: DDS's offered vs
//! requested rules decide, and `wait_matched` then reports NotMatched).

use ::rustdds::policy;
use ::rustdds::{QosPolicies, QosPolicyBuilder};

use crate::{Durability, History, Qos, Reliability};

/// How long a reliable `write` may block while the send window is full before it fails. Short,
/// so a vanished reader cannot stall the sender; the window (8192 unacknowledged samples by
/// default in RustDDS 0.15) is rarely the limit.
pub const MAX_BLOCKING_MS: i64 = 100;

pub fn policies(qos: &Qos) -> QosPolicies {
    let reliability = match qos.reliability {
        Reliability::Reliable => policy::Reliability::Reliable {
            max_blocking_time: ::rustdds::Duration::from_millis(MAX_BLOCKING_MS),
        },
        Reliability::BestEffort => policy::Reliability::BestEffort,
    };
    let history = match qos.history {
        // The spec's depth is a u32 >= 1; RustDDS takes an i32.
        History::KeepLast(n) => policy::History::KeepLast {
            depth: n.min(i32::MAX as u32) as i32,
        },
        History::KeepAll => policy::History::KeepAll,
    };
    let durability = match qos.durability {
        Durability::Volatile => policy::Durability::Volatile,
        Durability::TransientLocal => policy::Durability::TransientLocal,
    };
    QosPolicyBuilder::new()
        .reliability(reliability)
        .history(history)
        .durability(durability)
        .build()
}
