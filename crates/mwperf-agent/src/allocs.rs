//! `--count-allocs`: heap allocations of this whole process per phase, read from the counters of
//! libmwperf_alloc.so (crates/mwperf-alloc), which the control plane preloads (`LD_PRELOAD`).
//!
//! Snapshots: process start (all zero) → [`setup_done`] (endpoint open, first contact) → the
//! first measured message ([`message`]) → the last measured message → [`report`]. A role calls
//! [`message`] once after it has handled each measured message; the steady phase runs from the
//! first call to the last, so it holds the whole handling of every message but the first.
//! Without `--count-allocs` each call is one relaxed load and a branch.
//!
//! Several topics (threads) share the counters: the first message of any topic starts the
//! steady phase and the last of any ends it (the counts are process-wide anyway).

use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, Ordering::Relaxed};

use mwperf_core::result::{AllocPhase, Allocations};

/// The layout libmwperf_alloc.so exports as `mwperf_alloc_counters` (crates/mwperf-alloc).
#[repr(C)]
struct Counters {
    magic: u64,
    allocs: AtomicU64,
    bytes: AtomicU64,
    frees: AtomicU64,
    live: AtomicU64,
    peak: AtomicU64,
}

const MAGIC: u64 = u64::from_le_bytes(*b"MWALLOC1");

/// The library's file name; the control plane finds it next to the agent binary.
pub const LIBRARY: &str = "libmwperf_alloc.so";

static ON: AtomicBool = AtomicBool::new(false);
static MARKERS: AtomicBool = AtomicBool::new(false);
static COUNTERS: AtomicPtr<Counters> = AtomicPtr::new(std::ptr::null_mut());
static MESSAGES: AtomicU64 = AtomicU64::new(0);

struct Snap {
    set: AtomicBool,
    allocs: AtomicU64,
    bytes: AtomicU64,
    frees: AtomicU64,
}

impl Snap {
    const fn new() -> Self {
        Snap {
            set: AtomicBool::new(false),
            allocs: AtomicU64::new(0),
            bytes: AtomicU64::new(0),
            frees: AtomicU64::new(0),
        }
    }
    fn store(&self, p: AllocPhase) {
        self.allocs.store(p.count, Relaxed);
        self.bytes.store(p.bytes, Relaxed);
        self.frees.store(p.frees, Relaxed);
        self.set.store(true, Relaxed);
    }
    fn load(&self) -> Option<AllocPhase> {
        self.set.load(Relaxed).then(|| AllocPhase {
            count: self.allocs.load(Relaxed),
            bytes: self.bytes.load(Relaxed),
            frees: self.frees.load(Relaxed),
        })
    }
}

static SETUP: Snap = Snap::new();
static FIRST: Snap = Snap::new();
static LAST: Snap = Snap::new();

fn counters() -> Option<&'static Counters> {
    // SAFETY: set once in enable() to the library's static, which lives as long as the process
    unsafe { COUNTERS.load(Relaxed).as_ref() }
}

fn now() -> AllocPhase {
    counters().map_or_else(AllocPhase::default, |c| AllocPhase {
        count: c.allocs.load(Relaxed),
        bytes: c.bytes.load(Relaxed),
        frees: c.frees.load(Relaxed),
    })
}

/// Find the preloaded counters; Err = a usage message naming the flag.
pub fn enable() -> Result<(), String> {
    // SAFETY: dlsym with a NUL-terminated name; the result is only read as the library's layout
    // after its magic matched
    let p = unsafe { libc::dlsym(libc::RTLD_DEFAULT, c"mwperf_alloc_counters".as_ptr()) }
        as *mut Counters;
    let here = std::env::current_exe()
        .ok()
        .and_then(|e| e.parent().map(|d| d.join(LIBRARY).display().to_string()))
        .unwrap_or_else(|| LIBRARY.to_string());
    if p.is_null() {
        return Err(format!("--count-allocs: the allocation counter is not loaded (LD_PRELOAD={}); start the agent with LD_PRELOAD={here} (built by cargo build --release next to mwperf-agent), or leave out --count-allocs", std::env::var("LD_PRELOAD").unwrap_or_default()));
    }
    // SAFETY: the symbol is at least a u64 in every library that exports it under this name
    if unsafe { (*p).magic } != MAGIC {
        return Err(format!("--count-allocs: the preloaded mwperf_alloc_counters is from another version of {LIBRARY}; preload {here}"));
    }
    COUNTERS.store(p, Relaxed);
    ON.store(true, Relaxed);
    Ok(())
}

/// Setup is done (endpoint open; a sender's first contact made). The last call counts.
pub fn setup_done() {
    if ON.load(Relaxed) {
        SETUP.store(now());
    }
}

/// `--alloc-site-markers`: from now on every measured message calls [`mwperf_alloc_sites_marker`].
pub fn enable_markers() {
    MARKERS.store(true, Relaxed);
}

/// One measured message has been handled completely.
#[inline]
pub fn message() {
    if ON.load(Relaxed) {
        message_counted();
    }
    if MARKERS.load(Relaxed) {
        mwperf_alloc_sites_marker();
    }
}

/// The size of the marker's block: an odd size no middleware asks for, a second check beside
/// the function's name (python/mwperf/allocsites/sites.py looks for both).
pub const MARKER_BYTES: usize = 4093;

/// `--alloc-site-markers`: one allocation (and its free) per measured message, from a function
/// whose unmangled name a heap profiler's backtraces show, so the steady state can be cut out of
/// its record: from the first marker to the last, `markers - 1` messages (as --count-allocs).
#[no_mangle]
#[inline(never)]
pub extern "C" fn mwperf_alloc_sites_marker() {
    // black_box: the optimiser would remove an unused allocation
    let v: Vec<u8> = std::hint::black_box(Vec::with_capacity(MARKER_BYTES));
    drop(std::hint::black_box(v));
}

#[inline(never)]
fn message_counted() {
    let s = now();
    if MESSAGES.fetch_add(1, Relaxed) == 0 {
        FIRST.store(s);
    }
    LAST.store(s);
}

fn delta(a: AllocPhase, b: AllocPhase) -> AllocPhase {
    AllocPhase {
        count: b.count.saturating_sub(a.count),
        bytes: b.bytes.saturating_sub(a.bytes),
        frees: b.frees.saturating_sub(a.frees),
    }
}

/// The report section (None without --count-allocs); the final snapshot is taken now.
pub fn report() -> Option<Allocations> {
    let c = counters().filter(|_| ON.load(Relaxed))?;
    let end = now();
    let zero = AllocPhase::default();
    let setup = SETUP.load().unwrap_or(zero);
    // no measured message: everything after setup is warm-up, steady and teardown are empty
    let first = FIRST.load().unwrap_or(end);
    let last = LAST.load().unwrap_or(end);
    let steady = delta(first, last);
    let n = MESSAGES.load(Relaxed).saturating_sub(1);
    let per = |x: u64| (n > 0).then(|| x as f64 / n as f64);
    Some(Allocations {
        method: "ld-preload",
        setup: delta(zero, setup),
        warmup: delta(setup, first),
        steady,
        teardown: delta(last, end),
        total: end,
        steady_messages: n,
        allocs_per_msg: per(steady.count),
        bytes_per_msg: per(steady.bytes),
        peak_live_bytes: c.peak.load(Relaxed),
        live_bytes_at_end: c.live.load(Relaxed),
    })
}

/// TEST ONLY (`--test-allocs-per-msg N`): allocate and free `n` heap blocks, the known pattern
/// the counter must find exactly N times per message. Unmangled and exported like the marker:
/// a heap profiler names it from the dynamic symbol table whatever the build's layout (a local
/// symbol came out unnamed in some builds' backtraces).
#[no_mangle]
#[inline(never)]
pub extern "C" fn mwperf_alloc_sites_test_pattern(n: u32) {
    for i in 0..n {
        // black_box: the optimiser would remove an unused allocation
        let v: Vec<u8> = std::hint::black_box(Vec::with_capacity(64 + i as usize));
        drop(std::hint::black_box(v));
    }
}
