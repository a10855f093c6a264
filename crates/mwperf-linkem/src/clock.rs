//! The emulator's time base: CLOCK_MONOTONIC nanoseconds since the link came up (time 0 is when
//! READY is printed, which is also where scheduled outages count from). The epoch itself is
//! reported (READY line, JSON report): CLOCK_MONOTONIC is not virtualised by network namespaces,
//! so the agents' timestamps and the emulator's times are on one clock.

/// A monotonic clock with its own epoch.
pub struct Clock {
    epoch_ns: u64,
}

impl Clock {
    pub fn start() -> Self {
        Clock {
            epoch_ns: monotonic_ns(),
        }
    }

    /// CLOCK_MONOTONIC at time 0.
    pub fn epoch_ns(&self) -> u64 {
        self.epoch_ns
    }

    /// Nanoseconds since `start`.
    pub fn now_ns(&self) -> u64 {
        monotonic_ns().saturating_sub(self.epoch_ns)
    }
}

fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid timespec to fill.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}
