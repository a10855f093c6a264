//! The event ring the agent drains: preallocated, lock-free, many producers (every thread that
//! makes a system call), one consumer (the agent's `layers::ring::drain`, or the dump at exit).
//!
//! Producers claim a position with a compare-and-swap on `head` (refused, and the event counted
//! in `dropped`, when `capacity` events are waiting: a full ring never makes a hook wait), fill
//! the slot, then publish it by storing `position + 1` into the slot's commit word (release).
//! The consumer reads slot `tail` once its commit word says `tail + 1` (acquire), and moves
//! `tail` on (release) so producers may reuse the slot.
//!
//! The agent finds the ring with `dlsym(RTLD_DEFAULT, "mwperf_layers_ring")` and reads it through
//! its own copy of this layout (crates/mwperf-agent/src/layers/ring.rs): change both together
//! and bump [`MAGIC`].

use core::cell::UnsafeCell;
use core::sync::atomic::{AtomicU64, Ordering::*};

/// "MWLAYER2": checked by the agent before it trusts the symbol.
pub const MAGIC: u64 = u64::from_le_bytes(*b"MWLAYER2");
/// Slots (a power of two). 48 MiB of zero pages in .bss: only the pages written are ever
/// resident, and a consumer that drains often keeps writing the same few.
pub const SLOTS: usize = 1 << 20;

pub const BIT_SEND: u8 = 1;
pub const BIT_FIRST: u8 = 2;
pub const BIT_LAST: u8 = 4;
/// A ROS 2 tracepoint, not a system call (ros2.rs); its kind in bits 4-5 ([`TRACE_SHIFT`]).
/// Neither first nor last: a reader that does not know it leaves it out of the calls.
pub const BIT_TRACE: u8 = 8;
/// Where a tracepoint event's kind (ros2.rs `Kind`) sits in `bits`.
pub const TRACE_SHIFT: u8 = 4;

/// One event as it sits in a slot (48 bytes with the commit word).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Event {
    /// Raw CLOCK_MONOTONIC ns: a send's entry, a receive's return.
    pub t_ns: u64,
    pub seq: u64,
    pub run_id: u32,
    /// The message's bytes in this call.
    pub bytes: u32,
    pub fd: i32,
    pub topic: u16,
    /// The header's flags.
    pub flags: u8,
    /// [`BIT_SEND`] | [`BIT_FIRST`] | [`BIT_LAST`].
    pub bits: u8,
    /// The header's `peer_rx_ns` low 32 bits (a graph node's message: its publisher's index).
    pub source: u32,
}

#[repr(C)]
pub struct Slot {
    /// `position + 1` once the slot holds the event of that position.
    pub commit: AtomicU64,
    pub event: UnsafeCell<Event>,
}

impl Slot {
    pub const fn new() -> Self {
        Slot {
            commit: AtomicU64::new(0),
            event: UnsafeCell::new(Event {
                t_ns: 0,
                seq: 0,
                run_id: 0,
                bytes: 0,
                fd: 0,
                topic: 0,
                flags: 0,
                bits: 0,
                source: 0,
            }),
        }
    }
}

impl Default for Slot {
    fn default() -> Self {
        Self::new()
    }
}

/// The exported control block (the slots are elsewhere, in .bss: `slots` points at them).
#[repr(C)]
pub struct Shared {
    pub magic: u64,
    /// `size_of::<Slot>()`: a second layout check for the reader.
    pub slot_size: u64,
    /// Number of slots (a power of two).
    pub slot_count: u64,
    /// Events that may wait at once (≤ slot_count; lowered by MWPERF_LAYERS_CAPACITY in tests).
    pub capacity: AtomicU64,
    /// Next position a producer claims = events logged since the start (drained or not; a
    /// position is claimed only for an event that is then written).
    pub head: AtomicU64,
    /// Next position the consumer reads.
    pub tail: AtomicU64,
    /// Events lost to a full ring.
    pub dropped: AtomicU64,
    /// System calls that carried at least one header.
    pub header_calls: AtomicU64,
    pub slots: *const Slot,
}

// SAFETY: every field is atomic or written once at compile time; the slots are reached only
// through the commit protocol above
unsafe impl Sync for Shared {}

// SAFETY: a slot's event is written only by the producer that claimed its position and read
// only after its commit word was published (see the module doc)
unsafe impl Sync for Slot {}

#[repr(C)]
pub struct Slots(pub [Slot; SLOTS]);

static SLOT_ARRAY: Slots = Slots([const { Slot::new() }; SLOTS]);

#[no_mangle]
#[used]
pub static mwperf_layers_ring: Shared = Shared {
    magic: MAGIC,
    slot_size: core::mem::size_of::<Slot>() as u64,
    slot_count: SLOTS as u64,
    capacity: AtomicU64::new(SLOTS as u64),
    head: AtomicU64::new(0),
    tail: AtomicU64::new(0),
    dropped: AtomicU64::new(0),
    header_calls: AtomicU64::new(0),
    slots: &SLOT_ARRAY as *const Slots as *const Slot,
};

/// The process's ring.
pub fn global() -> (&'static Shared, &'static [Slot]) {
    (&mwperf_layers_ring, &SLOT_ARRAY.0)
}

/// Log one event; false (and `dropped` counted) when the ring is full. Never waits.
pub fn push(shared: &Shared, slots: &[Slot], e: Event) -> bool {
    let cap = shared.capacity.load(Relaxed).min(slots.len() as u64);
    let mut h = shared.head.load(Relaxed);
    loop {
        if h.wrapping_sub(shared.tail.load(Acquire)) >= cap {
            shared.dropped.fetch_add(1, Relaxed);
            return false;
        }
        match shared
            .head
            .compare_exchange_weak(h, h + 1, Relaxed, Relaxed)
        {
            Ok(_) => break,
            Err(now) => h = now,
        }
    }
    let slot = &slots[(h as usize) & (slots.len() - 1)];
    // SAFETY: position h is ours alone until we publish it, and the consumer is done with the
    // slot's previous use (tail > h - cap, acquired above)
    unsafe { *slot.event.get() = e };
    slot.commit.store(h + 1, Release);
    warm_next(&slots[((h + 1) as usize) & (slots.len() - 1)]);
    true
}

/// Bring the next slot's cache line in now: at a message every millisecond it would otherwise
/// be cold when the next event comes, a memory access on the receive path that the interposer
/// adds to every message's latency.
#[inline(always)]
fn warm_next(slot: &Slot) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is only a hint; the address is a valid slot
    unsafe {
        core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(
            slot as *const Slot as *const i8,
        );
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = slot;
}

/// Bytes of the ring made resident at load (MADV_POPULATE_WRITE): the page faults of the first
/// ~43,000 events (about 20 s of a 1 kHz round trip per agent) happen before the run, not on a
/// message's path; beyond them the pages come as the ring fills.
pub const WARM_BYTES: usize = 2 << 20;

/// Make the first [`WARM_BYTES`] of the slots resident (the constructor). Best effort: a kernel
/// older than 5.14 refuses the advice and the pages fault in as they are used.
pub fn warm_start() {
    const MADV_POPULATE_WRITE: libc::c_int = 23;
    let start = SLOT_ARRAY.0.as_ptr() as usize;
    let page = 4096;
    let begin = start.div_ceil(page) * page;
    let end = (start + core::mem::size_of::<Slots>()).min(begin + WARM_BYTES) / page * page;
    if end > begin {
        // SAFETY: a page-aligned range inside this library's own .bss
        unsafe { libc::madvise(begin as *mut libc::c_void, end - begin, MADV_POPULATE_WRITE) };
    }
}

/// Take the oldest published event (the single consumer only).
pub fn pop(shared: &Shared, slots: &[Slot]) -> Option<Event> {
    let t = shared.tail.load(Relaxed);
    let slot = &slots[(t as usize) & (slots.len() - 1)];
    if slot.commit.load(Acquire) != t + 1 {
        return None; // empty, or the next position is claimed but not yet published
    }
    // SAFETY: published (acquire above) and not reused before tail moves on (below)
    let e = unsafe { *slot.event.get() };
    shared.tail.store(t + 1, Release);
    Some(e)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ring(n: usize, cap: u64) -> (Shared, Vec<Slot>) {
        let slots: Vec<Slot> = (0..n).map(|_| Slot::new()).collect();
        let shared = Shared {
            magic: MAGIC,
            slot_size: core::mem::size_of::<Slot>() as u64,
            slot_count: n as u64,
            capacity: AtomicU64::new(cap),
            head: AtomicU64::new(0),
            tail: AtomicU64::new(0),
            dropped: AtomicU64::new(0),
            header_calls: AtomicU64::new(0),
            slots: slots.as_ptr(),
        };
        (shared, slots)
    }

    fn ev(seq: u64) -> Event {
        Event {
            seq,
            ..Event::default()
        }
    }

    #[test]
    fn the_layout_is_the_one_the_agent_reads() {
        assert_eq!(core::mem::size_of::<Slot>(), 48);
        assert_eq!(core::mem::size_of::<Shared>(), 72);
        let (s, slots) = global();
        assert_eq!(s.magic, MAGIC);
        assert_eq!(s.slots, slots.as_ptr());
    }

    #[test]
    fn fifo_wraps_and_a_full_ring_drops() {
        let (s, slots) = ring(4, 3);
        for round in 0..5u64 {
            for i in 0..3 {
                assert!(push(&s, &slots, ev(round * 10 + i)));
            }
            assert!(!push(&s, &slots, ev(99)));
            for i in 0..3 {
                assert_eq!(pop(&s, &slots).map(|e| e.seq), Some(round * 10 + i));
            }
            assert_eq!(pop(&s, &slots), None);
        }
        assert_eq!(s.head.load(Relaxed), 15);
        assert_eq!(s.dropped.load(Relaxed), 5);
    }

    #[test]
    fn many_producers_one_consumer_lose_nothing_that_was_accepted() {
        let (s, slots) = ring(256, 256);
        let done = std::sync::atomic::AtomicBool::new(false);
        let mut got = Vec::new();
        std::thread::scope(|sc| {
            let (s, slots) = (&s, &slots);
            let producers: Vec<_> = (0..4u64)
                .map(|p| {
                    sc.spawn(move || {
                        let mut ok = 0u64;
                        for i in 0..20_000 {
                            ok += push(s, slots, ev(p << 32 | i)) as u64;
                        }
                        ok
                    })
                })
                .collect();
            let consumer = sc.spawn(|| {
                let mut seen = Vec::new();
                loop {
                    let finished = done.load(Acquire);
                    while let Some(e) = pop(s, slots) {
                        seen.push(e.seq);
                    }
                    if finished {
                        return seen;
                    }
                    std::hint::spin_loop();
                }
            });
            let accepted: u64 = producers.into_iter().map(|p| p.join().unwrap()).sum();
            done.store(true, Release);
            got = consumer.join().unwrap();
            assert_eq!(got.len() as u64, accepted);
            assert_eq!(accepted + s.dropped.load(Relaxed), 80_000);
        });
        // each producer's events come out in its order
        for p in 0..4u64 {
            let mine: Vec<u64> = got
                .iter()
                .filter(|&&q| q >> 32 == p)
                .map(|q| q & 0xffff_ffff)
                .collect();
            assert!(mine.windows(2).all(|w| w[0] < w[1]));
        }
    }
}
