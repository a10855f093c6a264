//! SIGINT/SIGTERM set a flag that every loop checks; blocking waits return early (no SA_RESTART).

use std::sync::atomic::{AtomicBool, Ordering};

static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    STOP.store(true, Ordering::SeqCst);
}

pub fn install() {
    for sig in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: a plain handler that only stores an atomic; sigaction struct zero-initialised.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_signal as *const () as usize;
            libc::sigemptyset(&mut sa.sa_mask);
            sa.sa_flags = 0;
            libc::sigaction(sig, &sa, std::ptr::null_mut());
        }
    }
}

/// Stop this process's loops as a signal would (a node of a composed process failed: the
/// process's other nodes stop too, as a component container's do when one component throws).
pub fn request_stop() {
    STOP.store(true, Ordering::SeqCst);
}

pub fn stopped() -> bool {
    STOP.load(Ordering::Relaxed)
}
