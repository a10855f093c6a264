//! `libmwperf_layers.so`: an `LD_PRELOAD` interposer that stamps every system call carrying an
//! mwperf header, for the per-layer latency split (`--layers`, issue 27): a send's entry and
//! a receive's return are the boundaries between the middleware and the kernel.
//!
//! - [`hooks`]: send, sendto, sendmsg, sendmmsg, write, writev, recv, recvfrom, recvmsg,
//!   recvmmsg, read, readv, the fortified `__recv_chk`, `__recvfrom_chk`, `__read_chk`, and
//!   close; each forwards to the real function ([`real`], resolved by the constructor).
//! - [`scan`] (over [`gather`]): which messages a call carries (batching, byte streams, cut
//!   headers), pure and unit-tested; [`fds`]: the per-fd stream state.
//! - [`ring`]: the lock-free event ring the agent drains (`mwperf_layers_ring`, found with
//!   dlsym; reader: crates/mwperf-agent/src/layers/ring.rs).
//! - [`ros2`]: ROS 2's tracepoint functions (`ros_trace_rcl_publish`, `ros_trace_rmw_publish`,
//!   `ros_trace_rmw_take`, `ros_trace_rcl_take`) and the two serialized rcl calls mwperf's ROS 2
//!   agent makes: ROS 2's own moments of each message, in the same ring.
//! - [`dump`]: `MWPERF_LAYERS_DUMP=PATH` writes what was not drained as CSV at exit.
//!
//! TEST ONLY: `MWPERF_LAYERS_CAPACITY=N` lets at most N events wait in the ring (to fill it);
//! `MWPERF_LAYERS_TEST_ROS2_DELAY_NS=N` sleeps until N ns after the rcl_publish and rmw_take
//! stamps of odd-numbered messages (an injected truth for the ROS 2 parts: ros2.rs).

#[cfg_attr(test, allow(dead_code))]
mod fds;
#[cfg_attr(test, allow(dead_code))]
mod gather;
#[cfg_attr(test, allow(dead_code))]
mod ring;
mod scan;

#[cfg(not(test))]
mod dump;
#[cfg(not(test))]
mod hooks;
#[cfg(not(test))]
mod real;
#[cfg(not(test))]
mod ros2;

pub use ring::mwperf_layers_ring;

/// Parse a decimal number from a C string (None if empty or not all digits).
#[cfg_attr(test, allow(dead_code))]
fn parse_u64(s: &[u8]) -> Option<u64> {
    if s.is_empty() {
        return None;
    }
    s.iter().try_fold(0u64, |a, &c| {
        c.is_ascii_digit()
            .then(|| a.saturating_mul(10).saturating_add((c - b'0') as u64))
    })
}

/// The constructor: resolve the real functions before the program's code runs, remember who
/// owns the dump, apply the test capacity.
#[cfg(not(test))]
extern "C" fn init() {
    use core::sync::atomic::Ordering::Relaxed;
    real::resolve_all();
    ring::warm_start();
    // SAFETY: getpid cannot fail
    dump::OWNER.store(unsafe { libc::getpid() }, Relaxed);
    // SAFETY: NUL-terminated name; getenv's result is NUL-terminated when not null
    let cap = unsafe { libc::getenv(c"MWPERF_LAYERS_CAPACITY".as_ptr()) };
    if !cap.is_null() {
        // SAFETY: as above
        let s = unsafe { core::ffi::CStr::from_ptr(cap) }.to_bytes();
        if let Some(n) = parse_u64(s) {
            let (shared, slots) = ring::global();
            shared
                .capacity
                .store(n.clamp(1, slots.len() as u64), Relaxed);
        }
    }
    // SAFETY: as above
    let delay = unsafe { libc::getenv(c"MWPERF_LAYERS_TEST_ROS2_DELAY_NS".as_ptr()) };
    if !delay.is_null() {
        // SAFETY: as above
        let s = unsafe { core::ffi::CStr::from_ptr(delay) }.to_bytes();
        if let Some(n) = parse_u64(s) {
            ros2::TEST_DELAY_NS.store(n, Relaxed);
        }
    }
}

#[cfg(not(test))]
extern "C" fn fini() {
    dump::write_if_asked();
}

#[cfg(not(test))]
#[used]
#[link_section = ".init_array"]
static INIT: extern "C" fn() = init;

#[cfg(not(test))]
#[used]
#[link_section = ".fini_array"]
static FINI: extern "C" fn() = fini;

#[cfg(test)]
mod tests {
    #[test]
    fn capacity_parses() {
        assert_eq!(super::parse_u64(b"4"), Some(4));
        assert_eq!(super::parse_u64(b""), None);
        assert_eq!(super::parse_u64(b"4x"), None);
    }
}
