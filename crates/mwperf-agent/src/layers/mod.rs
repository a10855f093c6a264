//! `--layers-out PATH`: where each measured message's time goes (docs/layers.md).
//!
//! The agent stamps around its own calls (book.rs: the intended time, the write call, the
//! moment its receive returned the sample, the callback's start) and reads the send/receive
//! system calls that carried each message's bytes from libmwperf_layers.so's ring (ring.rs,
//! crates/mwperf-layers, preloaded by the control plane). At the end it pairs the two per
//! message (rows.rs) and writes one CSV row per measured message it handled; the control plane
//! joins the rows of both sides (python/mwperf/layers.py).

pub mod book;
pub mod ring;
pub mod rows;

use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Mutex;

pub use book::Book;

static ON: AtomicBool = AtomicBool::new(false);
/// Why the system calls are not seen (the interposer is not loaded), once enabled.
static MISSING: Mutex<Option<String>> = Mutex::new(None);
/// Every role's rows, handed over when the role ends (one role per topic thread).
static ROWS: Mutex<Vec<book::Row>> = Mutex::new(Vec::new());

/// `--layers-out` was given: stamp from now on. The interposer missing is not an error: the
/// run goes on and the report says why no system call was seen.
pub fn enable() {
    ON.store(true, Relaxed);
    if let Err(why) = ring::attach() {
        *MISSING.lock().unwrap_or_else(|e| e.into_inner()) = Some(why);
    }
}

pub fn on() -> bool {
    ON.load(Relaxed)
}

/// A role's rows, at its end.
pub fn hand_over(rows: Vec<book::Row>) {
    ROWS.lock().unwrap_or_else(|e| e.into_inner()).extend(rows);
}

/// Pair every role's rows with the ring's system calls and write them to `path`; the report's
/// `layers` (None when --layers-out was not given).
pub fn finish(path: Option<&str>) -> Option<mwperf_core::result::LayersAgent> {
    finish_as(path, rows::Layout::Point, |t| t)
}

/// [`finish`] for a graph node: its rows' layout, and its system calls' times put on the clock
/// its own stamps are on (`clock`: node/clock.rs's `stamp`, the graph's reference clock) with
/// the correction as it is now.
pub fn finish_node(
    path: Option<&str>,
    clock: fn(u64) -> u64,
) -> Option<mwperf_core::result::LayersAgent> {
    finish_as(path, rows::Layout::Node, clock)
}

fn finish_as(
    path: Option<&str>,
    layout: rows::Layout,
    clock: fn(u64) -> u64,
) -> Option<mwperf_core::result::LayersAgent> {
    let path = path.filter(|_| on())?;
    let rows = std::mem::take(&mut *ROWS.lock().unwrap_or_else(|e| e.into_inner()));
    let missing = MISSING.lock().unwrap_or_else(|e| e.into_inner()).clone();
    let mut events = Vec::new();
    if missing.is_none() {
        ring::drain(&mut events);
    }
    for e in &mut events {
        e.t_ns = clock(e.t_ns);
    }
    let stats = ring::stats();
    let paired = rows::pair(rows, &events);
    let written = rows::write(path, &paired, layout);
    Some(mwperf_core::result::LayersAgent {
        interposer: missing.is_none(),
        why: missing,
        events: stats.events,
        dropped: stats.dropped,
        header_calls: stats.header_calls,
        rows: paired.len() as u64,
        error: written
            .err()
            .map(|e| format!("--layers-out: cannot write '{path}': {e}")),
    })
}
