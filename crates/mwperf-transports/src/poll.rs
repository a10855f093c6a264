//! Waiting on file descriptors with nanosecond timeouts (ppoll), shared by the socket transports.

use std::io;
use std::os::fd::RawFd;

/// Wait until `fd` has any of `events` (POLLIN/POLLOUT) or `timeout_ns` passes.
/// Returns Ok(true) when ready, Ok(false) on timeout or signal (EINTR).
pub fn wait(fd: RawFd, events: libc::c_short, timeout_ns: u64) -> io::Result<bool> {
    if timeout_ns == 0 {
        return Ok(true); // non-blocking callers just try the operation
    }
    let mut pfd = [libc::pollfd {
        fd,
        events,
        revents: 0,
    }];
    ppoll(&mut pfd, timeout_ns) // on the stack: the measured path allocates nothing
}

/// Wait until any of `fds` has any of `events` or `timeout_ns` passes (> 0). Ok(true) when one
/// is ready, Ok(false) on timeout or signal (EINTR).
pub fn wait_any(fds: &[RawFd], events: libc::c_short, timeout_ns: u64) -> io::Result<bool> {
    let mut pfds: Vec<libc::pollfd> = fds
        .iter()
        .map(|&fd| libc::pollfd {
            fd,
            events,
            revents: 0,
        })
        .collect();
    ppoll(&mut pfds, timeout_ns)
}

/// Wait until any of `pfds` has any of its events or `timeout_ns` passes (> 0): Ok(true) when
/// one is ready, Ok(false) on timeout or signal (EINTR). The caller keeps the array (no
/// allocation per wait).
pub fn wait_fds(pfds: &mut [libc::pollfd], timeout_ns: u64) -> io::Result<bool> {
    ppoll(pfds, timeout_ns)
}

/// ppoll over `pfds` for at most `timeout_ns`: Ok(true) when one is ready, Ok(false) on
/// timeout or signal (EINTR).
fn ppoll(pfds: &mut [libc::pollfd], timeout_ns: u64) -> io::Result<bool> {
    let ts = libc::timespec {
        tv_sec: (timeout_ns / 1_000_000_000) as libc::time_t,
        tv_nsec: (timeout_ns % 1_000_000_000) as libc::c_long,
    };
    // SAFETY: `pfds` holds `pfds.len()` valid pollfds, a valid timespec, no signal mask change.
    let rc = unsafe {
        libc::ppoll(
            pfds.as_mut_ptr(),
            pfds.len() as libc::nfds_t,
            &ts,
            std::ptr::null(),
        )
    };
    if rc < 0 {
        let e = io::Error::last_os_error();
        return if e.kind() == io::ErrorKind::Interrupted {
            Ok(false)
        } else {
            Err(e)
        };
    }
    Ok(rc > 0)
}

/// Set a socket buffer size option (best effort: the kernel caps it at its maximum).
pub fn set_buffer(fd: RawFd, opt: libc::c_int, bytes: usize) {
    let v = bytes as libc::c_int;
    // SAFETY: setsockopt with a valid int option value.
    unsafe {
        libc::setsockopt(
            fd,
            libc::SOL_SOCKET,
            opt,
            &v as *const _ as *const libc::c_void,
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
}

/// Waits at least this long use one blocking receive bounded by SO_RCVTIMEO instead of
/// ppoll + receive (one system call per message, as blocking tools do).
pub const LONG_WAIT_NS: u64 = 10_000_000;
/// SO_RCVTIMEO is rounded up by the kernel to a jiffy (≤ 4 ms): it is set this much below the
/// wanted bound, on a grid this coarse so that it rarely needs changing.
const TIMEO_STEP_NS: u64 = 5_000_000;

/// The receive timeout to set for a wait of `wait_ns` (≥ [`LONG_WAIT_NS`]): never longer than it.
pub fn coarse_timeout(wait_ns: u64) -> u64 {
    (wait_ns - TIMEO_STEP_NS) / TIMEO_STEP_NS * TIMEO_STEP_NS
}

/// Remembers the SO_RCVTIMEO of one blocking socket and sets it only when it changes.
#[derive(Default)]
pub struct RecvTimeout {
    current_ns: u64,
}

impl RecvTimeout {
    pub fn set(&mut self, fd: RawFd, ns: u64) -> io::Result<()> {
        if ns == self.current_ns {
            return Ok(());
        }
        let tv = libc::timeval {
            tv_sec: (ns / 1_000_000_000) as libc::time_t,
            tv_usec: ((ns % 1_000_000_000) / 1_000) as libc::suseconds_t,
        };
        // SAFETY: setsockopt with a valid timeval.
        let rc = unsafe {
            libc::setsockopt(
                fd,
                libc::SOL_SOCKET,
                libc::SO_RCVTIMEO,
                &tv as *const _ as *const libc::c_void,
                std::mem::size_of::<libc::timeval>() as libc::socklen_t,
            )
        };
        if rc < 0 {
            return Err(io::Error::last_os_error());
        }
        self.current_ns = ns;
        Ok(())
    }
}

/// ssize_t result of a libc call as io::Result.
pub fn check(rc: isize) -> io::Result<usize> {
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(rc as usize)
    }
}
