//! When a sender's phases began and ended, on CLOCK_MONOTONIC (the report's `phases`), so the
//! control plane can split what it counted elsewhere (bytes on the wire from the link's packet
//! log) by phase: setup (process start → first message, discovery and first contact included),
//! warm-up, steady state (first measured message → its last reply), idle (`--idle`: endpoints
//! open, nothing sent), teardown.
//!
//! Process-wide like the allocation counters (allocs.rs): with several topics the first of any
//! starts a phase and the last of any ends it. Each call is one or two relaxed atomics.

use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};

use mwperf_core::clock::now_ns;
use mwperf_core::result::Phases;

use crate::signals;

static SETUP_DONE: AtomicU64 = AtomicU64::new(0);
static OPEN_NS: AtomicU64 = AtomicU64::new(u64::MAX);
static FIRST_SEND: AtomicU64 = AtomicU64::new(u64::MAX);
static MEASURE_START: AtomicU64 = AtomicU64::new(u64::MAX);
static LAST_SEND: AtomicU64 = AtomicU64::new(0);
static DRAINED: AtomicU64 = AtomicU64::new(0);
static IDLE_END: AtomicU64 = AtomicU64::new(0);
static ANNOUNCE: AtomicBool = AtomicBool::new(false);

/// Print `MEASURING <intended ns>` on stdout when the first measured message goes out (the
/// control plane schedules restarts from it; a watcher knows the measured phase began). Off
/// when stdout carries the report (`--json -`).
pub fn announce_measuring(on: bool) {
    ANNOUNCE.store(on, Relaxed);
}

/// Opening the role's endpoints took `ns` (all of them: several topics, subscribers or
/// clients): the report's `discovery.open_ns`.
pub fn opened(ns: u64) {
    OPEN_NS.store(ns, Relaxed);
}

/// What [`opened`] recorded (None: nothing was opened, or not yet).
pub fn open_ns() -> Option<u64> {
    Some(OPEN_NS.load(Relaxed)).filter(|&v| v != u64::MAX)
}

/// The endpoint is open and the peer answered (or matched): the setup phase is over.
pub fn setup_done() {
    SETUP_DONE.fetch_max(now_ns(), Relaxed);
}

/// A message went out at `sent_ns` (`measured`: not warm-up), scheduled for `intended_ns`.
#[inline]
pub fn sent(intended_ns: u64, sent_ns: u64, measured: bool) {
    FIRST_SEND.fetch_min(sent_ns, Relaxed);
    if measured {
        let before = MEASURE_START.fetch_min(intended_ns, Relaxed);
        if before == u64::MAX && ANNOUNCE.load(Relaxed) {
            let mut out = std::io::stdout().lock();
            let _ = writeln!(out, "MEASURING {intended_ns}");
            let _ = out.flush();
        }
        LAST_SEND.fetch_max(sent_ns, Relaxed);
    }
}

/// The last replies are in (or given up on): then stay connected `idle_ns` without sending.
pub fn drained_then_idle(idle_ns: u64) {
    let start = now_ns();
    DRAINED.fetch_max(start, Relaxed);
    let end = start + idle_ns;
    while idle_ns > 0 && !signals::stopped() && now_ns() < end {
        mwperf_core::clock::sleep_until_ns(end.min(now_ns() + 10_000_000));
    }
    if idle_ns > 0 {
        IDLE_END.fetch_max(now_ns(), Relaxed);
    }
}

/// The phases seen so far; None when setup never finished.
pub fn report() -> Option<Phases> {
    let some = |v: u64| (v != 0 && v != u64::MAX).then_some(v);
    Some(Phases {
        setup_done_ns: some(SETUP_DONE.load(Relaxed))?,
        first_send_ns: some(FIRST_SEND.load(Relaxed)),
        measure_start_ns: some(MEASURE_START.load(Relaxed)),
        last_send_ns: some(LAST_SEND.load(Relaxed)),
        drained_ns: some(DRAINED.load(Relaxed)),
        idle_end_ns: some(IDLE_END.load(Relaxed)),
    })
}
