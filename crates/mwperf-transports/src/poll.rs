//! Waiting on file descriptors with nanosecond timeouts (ppoll), shared by the socket transports.

use std::io;
use std::os::fd::RawFd;

/// Wait until `fd` has any of `events` (POLLIN/POLLOUT) or `timeout_ns` passes.
/// Returns Ok(true) when ready, Ok(false) on timeout or signal (EINTR).
pub fn wait(fd: RawFd, events: libc::c_short, timeout_ns: u64) -> io::Result<bool> {
    if timeout_ns == 0 {
        return Ok(true); // non-blocking callers just try the operation
    }
    let mut pfd = libc::pollfd { fd, events, revents: 0 };
    let ts = libc::timespec { tv_sec: (timeout_ns / 1_000_000_000) as libc::time_t, tv_nsec: (timeout_ns % 1_000_000_000) as libc::c_long };
    // SAFETY: one valid pollfd, a valid timespec, no signal mask change.
    let rc = unsafe { libc::ppoll(&mut pfd, 1, &ts, std::ptr::null()) };
    if rc < 0 {
        let e = io::Error::last_os_error();
        return if e.kind() == io::ErrorKind::Interrupted { Ok(false) } else { Err(e) };
    }
    Ok(rc > 0)
}

/// Set a socket buffer size option (best effort: the kernel caps it at its maximum).
pub fn set_buffer(fd: RawFd, opt: libc::c_int, bytes: usize) {
    let v = bytes as libc::c_int;
    // SAFETY: setsockopt with a valid int option value.
    unsafe { libc::setsockopt(fd, libc::SOL_SOCKET, opt, &v as *const _ as *const libc::c_void, std::mem::size_of::<libc::c_int>() as libc::socklen_t) };
}
