//! ROS 2's own moments of a message (`--layers` on `--transport ros2`): the tracepoint functions
//! of ROS 2's tracetools, defined here so that the `LD_PRELOAD` order makes librcl and the RMW
//! call these instead of libtracetools.so's (both import them as undefined symbols, through
//! the PLT: docs/layers.md, "ROS 2's own layers").
//!
//! mwperf's ROS 2 agent publishes and takes serialized messages (its shim calls
//! `rcl_publish_serialized_message` / `rcl_take_serialized_message`). Both are wrapped here: the
//! wrapper notes, for its thread, the serialized message it was given; a tracepoint on that
//! thread whose message pointer is that one stamps CLOCK_MONOTONIC (nothing else: no scan, no
//! log inside the timed path); after the real call returns (a take: with RCL_RET_OK) the
//! wrapper finds the mwperf header in the message's bytes and logs one event per stamped
//! moment into the ring, keyed like a system call's by the header. A tracepoint for any other
//! message (a typed publish: /rosout, the RMW's discovery information; another thread) is
//! ignored, so a typed message is never read as a serialized one.
//!
//! These definitions replace tracetools' for the process: an LTTng session would not see these
//! four tracepoints under `--layers` (the wheels' lttng-ust cannot be traced here anyway).
#![allow(clippy::missing_safety_doc)]

use core::cell::Cell;
use core::ffi::{c_void, CStr};
use core::sync::atomic::{AtomicU64, AtomicUsize, Ordering::Relaxed};

use crate::gather::Gather;
use crate::ring::{self, Event, BIT_TRACE, TRACE_SHIFT};
use crate::scan::{self, Ident};

/// The moments, in a message's path order (the event's kind: bits 4-5).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Kind {
    /// rcl's publish entered (`ros_trace_rcl_publish`, before it calls the RMW).
    RclPublish = 0,
    /// The RMW hands the message to DDS (`ros_trace_rmw_publish`, before the DataWriter's write).
    RmwPublish = 1,
    /// The RMW took the message from DDS (`ros_trace_rmw_take`, taken).
    RmwTake = 2,
    /// rcl's take is about to return it (`ros_trace_rcl_take`).
    RclTake = 3,
}

thread_local! {
    /// The serialized message this thread's wrapped rcl call was given (0: none).
    static CURRENT: Cell<usize> = const { Cell::new(0) };
    /// The stamps of this call's two moments (0: not seen).
    static STAMPS: [Cell<u64>; 2] = const { [Cell::new(0), Cell::new(0)] };
}

/// TEST ONLY (`MWPERF_LAYERS_TEST_ROS2_DELAY_NS=N`, read by the constructor): sleep N ns
/// from right after stamping rcl_publish and rmw_take of a message whose mwperf sequence number is
/// odd, an injected truth that must land in the parts that start there (rcl_publish →
/// rmw_publish, rmw_take → rcl_take) of those messages only: the even ones of the same run are
/// the reference, under the same conditions (two runs differed by more than the delay in a
/// loaded machine's DDS threads). 0: off.
pub static TEST_DELAY_NS: AtomicU64 = AtomicU64::new(0);

/// Stamp moment `slot` (0 or 1 of the wrapped call) if `message` is the one being wrapped;
/// the stamp if it was.
#[inline(always)]
fn stamp(message: *const c_void, slot: usize) -> Option<u64> {
    if !message.is_null() && CURRENT.with(|c| c.get()) == message as usize {
        let t = crate::hooks::now();
        STAMPS.with(|s| s[slot].set(t));
        return Some(t);
    }
    None
}

/// The test delay after stamp `t` of `message` (see [`TEST_DELAY_NS`]).
#[inline(always)]
fn test_delay(t: u64, message: *const c_void) {
    let d = TEST_DELAY_NS.load(Relaxed);
    // SAFETY: `message` is the serialized message of the wrapped call (stamp matched it)
    if d != 0 && unsafe { header_of(message as *const Uint8Array) }.is_some_and(|i| i.seq % 2 == 1)
    {
        // a sleep to an absolute deadline, not a busy-wait: a thread that burnt the delay on
        // the CPU is owed less of it afterwards, so on a loaded machine its later parts grew
        // too (return DDS part 4.2 ms against 0.3 ms beside two busy loops, 2026-11-29)
        let until = t + d;
        let ts = libc::timespec {
            tv_sec: (until / 1_000_000_000) as libc::time_t,
            tv_nsec: (until % 1_000_000_000) as libc::c_long,
        };
        // SAFETY: a valid timespec; no out pointer with TIMER_ABSTIME
        while unsafe {
            libc::clock_nanosleep(
                libc::CLOCK_MONOTONIC,
                libc::TIMER_ABSTIME,
                &ts,
                core::ptr::null_mut(),
            )
        } == libc::EINTR
        {}
    }
}

#[no_mangle]
pub extern "C" fn ros_trace_rcl_publish(_publisher: *const c_void, message: *const c_void) {
    if let Some(t) = stamp(message, 0) {
        test_delay(t, message);
    }
}

#[no_mangle]
pub extern "C" fn ros_trace_rmw_publish(
    _rmw_publisher: *const c_void,
    message: *const c_void,
    _timestamp: i64,
) {
    stamp(message, 1);
}

#[no_mangle]
pub extern "C" fn ros_trace_rmw_take(
    _rmw_subscription: *const c_void,
    message: *const c_void,
    _source_timestamp: i64,
    taken: bool,
) {
    if !taken {
        return;
    }
    if let Some(t) = stamp(message, 0) {
        test_delay(t, message);
    }
}

#[no_mangle]
pub extern "C" fn ros_trace_rcl_take(message: *const c_void) {
    stamp(message, 1);
}

/// rcutils_uint8_array_t's first fields (rcl_serialized_message_t).
#[repr(C)]
struct Uint8Array {
    buffer: *mut u8,
    buffer_length: usize,
}

/// One real rcl function: `RTLD_NEXT` (librcl in the global scope), else the loaded
/// `librcl.so` itself (mwperf's shim is dlopened RTLD_LOCAL with it).
struct RclFn {
    name: &'static CStr,
    addr: AtomicUsize,
}

impl RclFn {
    const fn new(name: &'static CStr) -> Self {
        RclFn {
            name,
            addr: AtomicUsize::new(0),
        }
    }

    fn addr(&self) -> usize {
        let a = self.addr.load(Relaxed);
        if a != 0 {
            return a;
        }
        // SAFETY: NUL-terminated names; RTLD_NOLOAD never loads anything, only finds the
        // librcl.so the caller (which called us from it) already has loaded
        let a = unsafe {
            let mut a = libc::dlsym(libc::RTLD_NEXT, self.name.as_ptr());
            if a.is_null() {
                let h = libc::dlopen(c"librcl.so".as_ptr(), libc::RTLD_NOLOAD | libc::RTLD_LAZY);
                if !h.is_null() {
                    a = libc::dlsym(h, self.name.as_ptr());
                }
            }
            a as usize
        };
        self.addr.store(a, Relaxed);
        a
    }
}

static PUBLISH_SERIALIZED: RclFn = RclFn::new(c"rcl_publish_serialized_message");
static TAKE_SERIALIZED: RclFn = RclFn::new(c"rcl_take_serialized_message");

/// RCL_RET_OK and RCL_RET_ERROR (rcl/types.h).
const RCL_RET_OK: i32 = 0;
const RCL_RET_ERROR: i32 = 1;

type PublishFn = unsafe extern "C" fn(*const c_void, *const c_void, *mut c_void) -> i32;
type TakeFn = unsafe extern "C" fn(*const c_void, *mut c_void, *mut c_void, *mut c_void) -> i32;

/// Run `call` with `message` noted for this thread, then log the moments it stamped (`kinds`:
/// what stamp 0 and 1 are) if `keep(result)`.
#[inline(always)]
unsafe fn around(
    message: *const c_void,
    kinds: [Kind; 2],
    call: impl FnOnce() -> i32,
    keep: impl FnOnce(i32) -> bool,
) -> i32 {
    CURRENT.with(|c| c.set(message as usize));
    STAMPS.with(|s| s.iter().for_each(|c| c.set(0)));
    let rc = call();
    CURRENT.with(|c| c.set(0));
    let stamps = STAMPS.with(|s| [s[0].get(), s[1].get()]);
    if keep(rc) && stamps.iter().any(|&t| t != 0) {
        if let Some(ident) = header_of(message as *const Uint8Array) {
            for (kind, t) in kinds.into_iter().zip(stamps) {
                if t != 0 {
                    log(ident, kind, t);
                }
            }
        }
    }
    rc
}

/// The mwperf header in a serialized message's bytes (the first one, in its first 16 KiB or
/// the first 2 KiB of a bigger message), if any.
unsafe fn header_of(m: *const Uint8Array) -> Option<Ident> {
    if m.is_null() || (*m).buffer.is_null() {
        return None;
    }
    let iov = [libc::iovec {
        iov_base: (*m).buffer as *mut c_void,
        iov_len: (*m).buffer_length,
    }];
    let g = Gather::new(&iov, (*m).buffer_length);
    // stops at the first header (near the start: after the message's CDR fields)
    match scan::worth_stamping(&g, false) {
        Some(Some((_, h))) => Some(Ident::of(&h)),
        _ => None,
    }
}

fn log(ident: Ident, kind: Kind, t: u64) {
    let (shared, slots) = ring::global();
    ring::push(
        shared,
        slots,
        Event {
            t_ns: t,
            seq: ident.seq,
            run_id: ident.run_id,
            bytes: 0,
            fd: -1,
            topic: ident.topic,
            flags: ident.flags,
            source: ident.source,
            bits: BIT_TRACE | (kind as u8) << TRACE_SHIFT,
        },
    );
}

#[no_mangle]
pub unsafe extern "C" fn rcl_publish_serialized_message(
    publisher: *const c_void,
    message: *const c_void,
    allocation: *mut c_void,
) -> i32 {
    let a = PUBLISH_SERIALIZED.addr();
    if a == 0 {
        return RCL_RET_ERROR;
    }
    // SAFETY: the address of rcl's function of that name, of this C type (rcl/publisher.h)
    let real: PublishFn = core::mem::transmute::<usize, PublishFn>(a);
    around(
        message,
        [Kind::RclPublish, Kind::RmwPublish],
        || real(publisher, message, allocation),
        |rc| rc == RCL_RET_OK,
    )
}

#[no_mangle]
pub unsafe extern "C" fn rcl_take_serialized_message(
    subscription: *const c_void,
    message: *mut c_void,
    info: *mut c_void,
    allocation: *mut c_void,
) -> i32 {
    let a = TAKE_SERIALIZED.addr();
    if a == 0 {
        return RCL_RET_ERROR;
    }
    // SAFETY: the address of rcl's function of that name, of this C type (rcl/subscription.h)
    let real: TakeFn = core::mem::transmute::<usize, TakeFn>(a);
    around(
        message,
        [Kind::RmwTake, Kind::RclTake],
        || real(subscription, message, info, allocation),
        |rc| rc == RCL_RET_OK,
    )
}
