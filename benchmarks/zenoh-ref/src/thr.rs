//! What the throughput tools share: the machine's monotonic clock in ns (CLOCK_MONOTONIC, the
//! clock of Python's time.monotonic_ns(), so the benchmark can cut its own window out of the
//! subscriber's running totals) and a flag's value by either of its names.
#![allow(dead_code)]

pub fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: ts is a valid timespec; CLOCK_MONOTONIC always exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

pub fn own<'a>(own: &'a [(String, String)], names: [&str; 2]) -> Option<&'a str> {
    own.iter().rev().find(|(k, _)| names.contains(&k.as_str())).map(|(_, v)| v.as_str())
}
