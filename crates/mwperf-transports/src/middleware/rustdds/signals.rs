//! Keep asynchronous signals away from RustDDS's threads.
//!
//! RustDDS 0.15.1 ends its event-loop and discovery threads on *any* `poll` error, EINTR
//! included (`dp_event_loop.rs`: "dp_event_loop poll failed" → break). The agent handles
//! SIGINT/SIGTERM (without SA_RESTART, and epoll_wait is never restarted anyway), so a signal
//! the kernel happens to deliver to one of those threads would silently kill the participant.
//! Threads inherit the signal mask of the thread that spawns them, so building the participant
//! with asynchronous signals blocked routes every such signal to the application's threads.
//! (Stop/continue, e.g. Ctrl-Z or attaching strace, still interrupts epoll_wait and kills
//! RustDDS's threads; that cannot be masked.)

/// Run `f` (which spawns RustDDS's threads) with asynchronous signals blocked in this thread,
/// then restore the previous mask.
pub fn with_async_signals_blocked<T>(f: impl FnOnce() -> T) -> T {
    // SAFETY: sigset_t values are initialised by sigfillset/pthread_sigmask before use; the
    // previous mask is restored before returning.
    unsafe {
        let mut block: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&mut block);
        // Faults must stay deliverable (blocking them would turn a crash into a hang/kill).
        for sync in [
            libc::SIGSEGV,
            libc::SIGBUS,
            libc::SIGFPE,
            libc::SIGILL,
            libc::SIGTRAP,
            libc::SIGABRT,
        ] {
            libc::sigdelset(&mut block, sync);
        }
        let mut old: libc::sigset_t = std::mem::zeroed();
        libc::pthread_sigmask(libc::SIG_BLOCK, &block, &mut old);
        let out = f();
        libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut());
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threads_spawned_inside_inherit_the_mask_and_the_caller_gets_its_own_back() {
        let is_blocked = |sig| unsafe {
            let mut cur: libc::sigset_t = std::mem::zeroed();
            libc::pthread_sigmask(libc::SIG_SETMASK, std::ptr::null(), &mut cur);
            libc::sigismember(&cur, sig) == 1
        };
        let before = is_blocked(libc::SIGINT);
        let child = with_async_signals_blocked(|| {
            std::thread::spawn(move || is_blocked(libc::SIGINT) && !is_blocked(libc::SIGSEGV))
        });
        assert!(child.join().unwrap());
        assert_eq!(is_blocked(libc::SIGINT), before);
    }
}
