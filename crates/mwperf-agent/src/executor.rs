//! How the callback side (pong, sub) runs its callbacks when it serves several topics.
//!
//! Every topic has its own receive thread (its own endpoint). With the multi-threaded executor
//! the callbacks run on those threads at once (one thread per topic, like ROS 2's
//! MultiThreadedExecutor with one callback group per topic). With the single-threaded executor a
//! callback may start only when it holds the executor: [`Serial`] hands it out one at a time in
//! the order the messages were received (a ticket lock), so callbacks never overlap and a message
//! on topic 3 that arrives while topics 1 and 2 are being handled waits for both, as in ROS 2's
//! SingleThreadedExecutor (seed 001). Design cost: one mutex + condition-variable hand-off per
//! callback (a futex wake, a few µs when another topic is waiting); with `--topics 1` no executor
//! is involved at all.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Condvar, Mutex};

/// The single-threaded executor: callbacks run one at a time, first received first served.
#[derive(Default)]
pub struct Serial {
    next_ticket: AtomicU64,
    serving: Mutex<u64>,
    turn: Condvar,
}

/// Holding the executor; dropping it lets the next callback run.
pub struct Turn<'a>(&'a Serial);

impl Serial {
    /// Wait until every callback requested before this one has finished, then hold the executor.
    pub fn enter(&self) -> Turn<'_> {
        let ticket = self.next_ticket.fetch_add(1, Ordering::SeqCst);
        let mut serving = self.serving.lock().unwrap_or_else(|e| e.into_inner());
        while *serving != ticket {
            serving = self.turn.wait(serving).unwrap_or_else(|e| e.into_inner());
        }
        Turn(self)
    }
}

impl Drop for Turn<'_> {
    fn drop(&mut self) {
        *self.0.serving.lock().unwrap_or_else(|e| e.into_inner()) += 1;
        self.0.turn.notify_all();
    }
}

/// What a callback does besides echoing or recording: the executor it must hold (None = run at
/// once, on the receiving thread) and the CPU work it burns.
#[derive(Clone, Copy)]
pub struct Callback<'a> {
    pub serial: Option<&'a Serial>,
    pub busy_loop_ns: u64,
}

impl Callback<'_> {
    /// Nothing to do: the single-topic fast path.
    pub const PLAIN: Callback<'static> = Callback { serial: None, busy_loop_ns: 0 };
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicBool;
    use std::time::{Duration, Instant};

    #[test]
    fn callbacks_never_overlap() {
        let serial = Serial::default();
        let inside = AtomicBool::new(false);
        let overlaps = AtomicU64::new(0);
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    for _ in 0..200 {
                        let _turn = serial.enter();
                        if inside.swap(true, Ordering::SeqCst) {
                            overlaps.fetch_add(1, Ordering::SeqCst);
                        }
                        std::hint::spin_loop();
                        inside.store(false, Ordering::SeqCst);
                    }
                });
            }
        });
        assert_eq!(overlaps.load(Ordering::SeqCst), 0);
    }

    #[test]
    fn a_later_callback_waits_for_the_running_one() {
        let serial = Serial::default();
        let t0 = Instant::now();
        let started_second = std::thread::scope(|s| {
            let first = serial.enter(); // topic 0's callback is running
            let h = s.spawn(|| {
                let _turn = serial.enter(); // topic 1's message waits for it
                t0.elapsed()
            });
            std::thread::sleep(Duration::from_millis(30));
            drop(first);
            h.join().unwrap()
        });
        assert!(started_second >= Duration::from_millis(30), "{started_second:?}");
    }
}
