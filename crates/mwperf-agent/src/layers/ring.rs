//! The reader of libmwperf_layers.so's event ring (crates/mwperf-layers): the system calls of
//! this process that carried an mwperf header, as the interposer logged them.
//!
//! The control plane preloads the library (`LD_PRELOAD`, python/mwperf/agent.py
//! `layers_preload`); [`attach`] finds its ring with `dlsym(RTLD_DEFAULT,
//! "mwperf_layers_ring")`, [`drain`] takes what was logged since the last drain (this process
//! is the ring's one consumer; a drain never waits for a producer), [`stats`] says how many
//! events were logged and how many a full ring dropped.
//!
//! The layout below mirrors crates/mwperf-layers/src/ring.rs (checked by its magic and the
//! slot size): change both together.

use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicPtr, AtomicU64, Ordering::*};
use std::sync::Mutex;

/// The library's file name; the control plane finds it next to the agent binary.
pub const LIBRARY: &str = "libmwperf_layers.so";

const MAGIC: u64 = u64::from_le_bytes(*b"MWLAYER2");
const BIT_SEND: u8 = 1;
const BIT_FIRST: u8 = 2;
const BIT_LAST: u8 = 4;
/// A ROS 2 tracepoint's moment, not a system call (crates/mwperf-layers/src/ros2.rs); its kind
/// in bits 4-5.
const BIT_TRACE: u8 = 8;
const TRACE_SHIFT: u8 = 4;

/// One system call's part in one message, on the agent's clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SyscallEvent {
    /// A send's entry, a receive's return (the agent's clock: `clock::from_raw_ns`).
    pub t_ns: u64,
    pub seq: u64,
    pub run_id: u32,
    pub topic: u16,
    /// The header's flags (warm-up, echo, …).
    pub flags: u8,
    /// A send (else a receive).
    pub send: bool,
    /// This call carried the message's header.
    pub first: bool,
    /// This call moved the message's last byte (first and last: the message whole).
    pub last: bool,
    /// The message's bytes in this call.
    pub bytes: u32,
    pub fd: i32,
    /// The header's `peer_rx_ns` low 32 bits: a graph node's message carries its publishing
    /// node's index there (node/publisher.rs); meaningless for the point roles.
    pub source: u32,
    /// A ROS 2 tracepoint's moment instead of a system call (then neither first nor last):
    /// 0 rcl_publish, 1 rmw_publish, 2 rmw_take, 3 rcl_take (rows.rs's column order).
    pub trace: Option<u8>,
}

/// The ring's counters since the process started.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RingStats {
    /// Events logged (drained or not).
    pub events: u64,
    /// Events lost because the ring was full (the agent drained too seldom).
    pub dropped: u64,
    /// System calls that carried at least one header.
    pub header_calls: u64,
}

#[repr(C)]
#[derive(Clone, Copy, Default)]
struct RawEvent {
    t_ns: u64,
    seq: u64,
    run_id: u32,
    bytes: u32,
    fd: i32,
    topic: u16,
    flags: u8,
    bits: u8,
    source: u32,
}

#[repr(C)]
struct Slot {
    commit: AtomicU64,
    event: UnsafeCell<RawEvent>,
}

#[repr(C)]
struct Shared {
    magic: u64,
    slot_size: u64,
    slot_count: u64,
    capacity: AtomicU64,
    /// = events logged since the start
    head: AtomicU64,
    tail: AtomicU64,
    dropped: AtomicU64,
    header_calls: AtomicU64,
    slots: *const Slot,
}

static RING: AtomicPtr<Shared> = AtomicPtr::new(std::ptr::null_mut());
/// One consumer at a time (the ring is single-consumer).
static CONSUMER: Mutex<()> = Mutex::new(());

fn ring() -> Option<(&'static Shared, &'static [Slot])> {
    // SAFETY: set by attach() to the library's static after its layout checks; the library
    // stays loaded as long as the process
    let s = unsafe { RING.load(Acquire).as_ref()? };
    // SAFETY: slot_count slots at `slots` (checked in attach)
    let slots = unsafe { std::slice::from_raw_parts(s.slots, s.slot_count as usize) };
    Some((s, slots))
}

/// Find the preloaded interposer's ring. Err says why not, for people.
pub fn attach() -> Result<(), String> {
    // SAFETY: dlsym with a NUL-terminated name; the result is read as the library's layout only
    // after its magic matched
    let p =
        unsafe { libc::dlsym(libc::RTLD_DEFAULT, c"mwperf_layers_ring".as_ptr()) } as *mut Shared;
    if p.is_null() {
        let preload = std::env::var("LD_PRELOAD").unwrap_or_default();
        return Err(format!(
            "{LIBRARY} is not loaded (a static binary or LD_PRELOAD ignored; LD_PRELOAD={preload:?}): \
             start the agent with LD_PRELOAD={} (built by 'make build' next to mwperf-agent)",
            here()
        ));
    }
    // SAFETY: every library exporting this name has at least the leading u64 magic
    if unsafe { (*p).magic } != MAGIC {
        return Err(format!(
            "the preloaded mwperf_layers_ring is from another version of {LIBRARY}; preload {}",
            here()
        ));
    }
    // SAFETY: the magic matched: the layout is this one
    let s = unsafe { &*p };
    if s.slot_size != std::mem::size_of::<Slot>() as u64
        || !s.slot_count.is_power_of_two()
        || s.slots.is_null()
    {
        return Err(format!(
            "the preloaded {LIBRARY} has a ring this agent cannot read (slot size {}, {} slots); \
             rebuild both with 'make build'",
            s.slot_size, s.slot_count
        ));
    }
    RING.store(p, Release);
    Ok(())
}

/// The library's path next to this binary (for messages).
fn here() -> String {
    std::env::current_exe()
        .ok()
        .and_then(|e| e.parent().map(|d| d.join(LIBRARY).display().to_string()))
        .unwrap_or_else(|| LIBRARY.to_string())
}

/// True once [`attach`] succeeded.
#[cfg(test)]
pub fn attached() -> bool {
    !RING.load(Relaxed).is_null()
}

/// Append every event logged since the last drain (nothing when not attached). Stops at a
/// position claimed but not yet published by a thread in the middle of a hook: the next drain
/// gets it.
pub fn drain(out: &mut Vec<SyscallEvent>) {
    let Some((s, slots)) = ring() else {
        return;
    };
    let _one = CONSUMER.lock().unwrap_or_else(|e| e.into_inner());
    drain_from(s, slots, out);
}

fn drain_from(s: &Shared, slots: &[Slot], out: &mut Vec<SyscallEvent>) {
    let mask = slots.len() - 1;
    let mut t = s.tail.load(Relaxed);
    loop {
        let slot = &slots[t as usize & mask];
        if slot.commit.load(Acquire) != t + 1 {
            break;
        }
        // SAFETY: published (acquire above); producers do not reuse it before tail moves on
        let e = unsafe { *slot.event.get() };
        out.push(convert(&e));
        t += 1;
        // per event, so producers waiting for room get it at once
        s.tail.store(t, Release);
    }
}

fn convert(e: &RawEvent) -> SyscallEvent {
    SyscallEvent {
        t_ns: mwperf_core::clock::from_raw_ns(e.t_ns),
        seq: e.seq,
        run_id: e.run_id,
        topic: e.topic,
        flags: e.flags,
        send: e.bits & BIT_SEND != 0,
        first: e.bits & BIT_FIRST != 0,
        last: e.bits & BIT_LAST != 0,
        bytes: e.bytes,
        fd: e.fd,
        source: e.source,
        trace: (e.bits & BIT_TRACE != 0).then_some((e.bits >> TRACE_SHIFT) & 3),
    }
}

/// The ring's counters (zero when not attached).
pub fn stats() -> RingStats {
    ring().map_or_else(RingStats::default, |(s, _)| RingStats {
        events: s.head.load(Relaxed),
        dropped: s.dropped.load(Relaxed),
        header_calls: s.header_calls.load(Relaxed),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A ring as the library lays it out, filled the way its producers fill it.
    fn ring_with(n: usize, events: &[RawEvent]) -> (Shared, Vec<Slot>) {
        let slots: Vec<Slot> = (0..n)
            .map(|_| Slot {
                commit: AtomicU64::new(0),
                event: UnsafeCell::new(RawEvent::default()),
            })
            .collect();
        for (i, e) in events.iter().enumerate() {
            unsafe { *slots[i % n].event.get() = *e };
            slots[i % n].commit.store(i as u64 + 1, Release);
        }
        let shared = Shared {
            magic: MAGIC,
            slot_size: std::mem::size_of::<Slot>() as u64,
            slot_count: n as u64,
            capacity: AtomicU64::new(n as u64),
            head: AtomicU64::new(events.len() as u64),
            tail: AtomicU64::new(0),
            dropped: AtomicU64::new(0),
            header_calls: AtomicU64::new(0),
            slots: slots.as_ptr(),
        };
        (shared, slots)
    }

    #[test]
    fn a_ros2_tracepoint_event_keeps_its_kind_and_is_no_system_call() {
        let e = RawEvent {
            t_ns: 5,
            seq: 2,
            bits: BIT_TRACE | 3 << TRACE_SHIFT,
            ..RawEvent::default()
        };
        let out = convert(&e);
        assert_eq!(out.trace, Some(3));
        assert!(!out.first && !out.last && !out.send);
        assert_eq!(convert(&RawEvent::default()).trace, None);
    }

    #[test]
    fn the_layout_is_the_librarys() {
        assert_eq!(std::mem::size_of::<Slot>(), 48);
        assert_eq!(std::mem::size_of::<Shared>(), 72);
    }

    #[test]
    fn drain_takes_what_was_published_in_order_and_converts_it() {
        let raw = |seq, bits| RawEvent {
            t_ns: 1000 + seq,
            seq,
            run_id: 7,
            bytes: 120,
            fd: 5,
            topic: 2,
            flags: 4,
            bits,
            source: 3,
        };
        let (s, slots) = ring_with(
            4,
            &[
                raw(0, BIT_SEND | BIT_FIRST | BIT_LAST),
                raw(1, BIT_FIRST),
                raw(1, BIT_LAST),
            ],
        );
        let mut out = Vec::new();
        drain_from(&s, &slots, &mut out);
        assert_eq!(out.len(), 3);
        assert_eq!(
            out[0],
            SyscallEvent {
                t_ns: 1000,
                seq: 0,
                run_id: 7,
                topic: 2,
                flags: 4,
                send: true,
                first: true,
                last: true,
                bytes: 120,
                fd: 5,
                source: 3,
                trace: None,
            }
        );
        assert!(!out[1].send && out[1].first && !out[1].last);
        assert!(!out[2].first && out[2].last);
        assert_eq!(s.tail.load(Relaxed), 3);
        // nothing new: nothing more
        drain_from(&s, &slots, &mut out);
        assert_eq!(out.len(), 3);
        // a position claimed but not yet published stops the drain
        s.head.store(5, Relaxed);
        unsafe { *slots[0].event.get() = raw(9, 0) };
        slots[0].commit.store(5, Release); // position 4 published, position 3 not yet
        drain_from(&s, &slots, &mut out);
        assert_eq!(out.len(), 3);
        unsafe { *slots[3].event.get() = raw(3, 0) };
        slots[3].commit.store(4, Release);
        drain_from(&s, &slots, &mut out);
        assert_eq!(
            out.iter().map(|e| e.seq).collect::<Vec<_>>(),
            [0, 1, 1, 3, 9]
        );
    }

    /// The library built beside this test binary (target/<profile>/deps/…), else the release one.
    fn built_library() -> Option<std::path::PathBuf> {
        let exe = std::env::current_exe().ok()?;
        let profile = exe.parent()?.parent()?;
        [
            profile.join(LIBRARY),
            profile.parent()?.join("release").join(LIBRARY),
        ]
        .into_iter()
        .find(|p| p.is_file())
    }

    #[test]
    fn the_reader_sees_real_system_calls_with_the_library_preloaded() {
        let Some(lib) = built_library() else {
            eprintln!("skipped: {LIBRARY} not built (cargo build --release -p mwperf-layers)");
            return;
        };
        let exe = std::env::current_exe().unwrap();
        let out = std::process::Command::new(exe)
            .args([
                "--exact",
                "layers::ring::tests::preloaded_child",
                "--ignored",
                "--nocapture",
            ])
            .env("LD_PRELOAD", &lib)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).to_string()
            + &String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success() && text.contains("1 passed"), "{text}");
    }

    /// Run by the test above in a process of its own, with the library preloaded.
    #[test]
    #[ignore = "run with LD_PRELOAD=libmwperf_layers.so by the_reader_sees_real_system_calls_with_the_library_preloaded"]
    fn preloaded_child() {
        use mwperf_core::wire::{build_message, Header};
        attach().unwrap();
        let rx = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        let tx = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        tx.connect(rx.local_addr().unwrap()).unwrap();
        let mut buf = Vec::new();
        let mut got = [0u8; 2048];
        let before = mwperf_core::clock::now_ns();
        for seq in 0..3 {
            let h = Header {
                run_id: 4242,
                topic: 1,
                seq,
                payload_len: 100,
                ..Header::default()
            };
            build_message(&mut buf, &h);
            tx.send(&buf).unwrap();
            assert_eq!(rx.recv(&mut got).unwrap(), 156);
        }
        let after = mwperf_core::clock::now_ns();
        let mut ev = Vec::new();
        drain(&mut ev);
        ev.retain(|e| e.run_id == 4242);
        assert_eq!(ev.len(), 6, "{ev:?}");
        for (i, pair) in ev.chunks(2).enumerate() {
            let (s, r) = (pair[0], pair[1]);
            assert!(s.send && !r.send && s.first && s.last && r.first && r.last);
            assert_eq!(
                (s.seq, r.seq, s.bytes, r.topic),
                (i as u64, i as u64, 156, 1)
            );
            assert!(before <= s.t_ns && s.t_ns <= r.t_ns && r.t_ns <= after);
        }
        let st = stats();
        assert!(
            st.events >= 6 && st.header_calls >= 6 && st.dropped == 0,
            "{st:?}"
        );
        let mut again = Vec::new();
        drain(&mut again);
        assert!(again.iter().all(|e| e.run_id != 4242));
    }

    #[test]
    fn without_the_library_attach_says_why() {
        // the test binary is not run with the library preloaded
        let e = attach().unwrap_err();
        assert!(e.contains("libmwperf_layers.so is not loaded"), "{e}");
        assert!(!attached());
        assert_eq!(stats(), RingStats::default());
        let mut out = Vec::new();
        drain(&mut out);
        assert!(out.is_empty());
    }
}
