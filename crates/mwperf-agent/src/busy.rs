//! `--busy-loop D`: CPU work inside a callback, as a loaded robot node does (seed 001 used
//! 0.3–3 ms). It computes (a multiply-add chain the optimiser cannot drop) and checks the monotonic
//! clock every few hundred nanoseconds; it never sleeps, so the core stays busy the whole time.

use mwperf_core::clock::now_ns;

/// Work for `ns` nanoseconds of monotonic time; returns the time actually spent (0 when `ns` is 0).
#[inline]
pub fn spin_for(ns: u64) -> u64 {
    if ns == 0 {
        return 0;
    }
    let start = now_ns();
    let mut x = start;
    loop {
        for _ in 0..32 {
            x = std::hint::black_box(
                x.wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407),
            );
        }
        let spent = now_ns() - start;
        if spent >= ns {
            return spent;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cpu_ns() -> u64 {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
        ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
    }

    /// This thread's voluntary context switches: each time it gave up its CPU by waiting.
    fn voluntary_switches() -> i64 {
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut usage) };
        usage.ru_nvcsw
    }

    #[test]
    fn spins_at_least_the_duration_and_uses_the_cpu() {
        assert_eq!(spin_for(0), 0);
        let (t0, c0, v0) = (now_ns(), cpu_ns(), voluntary_switches());
        let spent = spin_for(3_000_000);
        let (wall, cpu, waits) = (now_ns() - t0, cpu_ns() - c0, voluntary_switches() - v0);
        assert!(
            spent >= 3_000_000 && wall >= 3_000_000,
            "spent {spent} wall {wall}"
        );
        // CPU work, not a sleep: the thread never waited (a sleep or a blocking call is a
        // voluntary context switch) and ran on a CPU. How much of the wall time it ran depends
        // on what else the machine runs (preemption is involuntary), so no share is asserted.
        assert_eq!(
            waits, 0,
            "the spin waited {waits} times (cpu {cpu} ns of wall {wall} ns)"
        );
        assert!(cpu > 0, "cpu {cpu} ns of wall {wall} ns");
    }
}
