//! How the callback side (pong, sub) runs its callbacks when it serves several topics.
//!
//! Every topic has its own receive thread (its own endpoint). With the multi-threaded executor
//! the callbacks run on those threads at once (one thread per topic, like ROS 2's
//! MultiThreadedExecutor with one callback group per topic). With the single-threaded executor a
//! callback may start only when it holds the executor: [`Serial`] hands it out one at a time, so
//! callbacks never overlap and a message on topic 3 that arrives while topics 1 and 2 are being
//! handled waits for both, as in ROS 2's SingleThreadedExecutor (seed 001).
//!
//! Order: first come, first served (a ticket lock) — except that messages of one tick (the same
//! intended send time on every topic, as a multi-topic ping/pub sends them) run in topic order,
//! as ROS 2 runs ready subscriptions in their order: which receive thread the kernel wakes first
//! must not decide it. A topic's message therefore waits until every lower topic's message of
//! that tick has asked for the executor, at most [`TICK_WAIT_NS`] (a lost message must not stall
//! the others). This applies only once the topics are seen to share ticks (rate 0 has none).
//! Cost: one mutex + condition-variable hand-off per callback (a futex wake, a few µs when
//! another topic is waiting); with `--topics 1` no executor is involved at all.

use std::sync::{Condvar, Mutex, MutexGuard};

use mwperf_core::clock::now_ns;

/// How long a message waits for lower topics' messages of its tick to arrive.
pub const TICK_WAIT_NS: u64 = 5_000_000;

struct State {
    next_ticket: u64,
    serving: u64,
    /// Per topic: the latest intended send time that asked for the executor.
    arrived: Vec<u64>,
    /// Topics have been seen to share intended send times (a ticked multi-topic sender).
    ticked: bool,
}

/// The single-threaded executor.
pub struct Serial {
    state: Mutex<State>,
    turn: Condvar,
}

/// Holding the executor; dropping it lets the next callback run.
pub struct Turn<'a>(&'a Serial);

impl Serial {
    pub fn new(topics: usize) -> Self {
        Serial {
            state: Mutex::new(State {
                next_ticket: 0,
                serving: 0,
                arrived: vec![0; topics],
                ticked: false,
            }),
            turn: Condvar::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Wait for the executor for a message of `topic` intended at `intended_ns`, then hold it.
    pub fn enter(&self, topic: usize, intended_ns: u64) -> Turn<'_> {
        let mut st = self.lock();
        let deadline = now_ns() + TICK_WAIT_NS;
        while st.ticked && st.arrived[..topic].iter().any(|&t| t < intended_ns) {
            let now = now_ns();
            if now >= deadline {
                break;
            }
            st = self
                .turn
                .wait_timeout(st, std::time::Duration::from_nanos(deadline - now))
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        let ticket = st.next_ticket;
        st.next_ticket += 1;
        st.arrived[topic] = st.arrived[topic].max(intended_ns);
        if !st.ticked
            && st
                .arrived
                .iter()
                .enumerate()
                .any(|(j, &t)| j != topic && t == intended_ns)
        {
            st.ticked = true;
        }
        self.turn.notify_all(); // higher topics may be waiting for this one to arrive
        while st.serving != ticket {
            st = self.turn.wait(st).unwrap_or_else(|e| e.into_inner());
        }
        Turn(self)
    }
}

impl Drop for Turn<'_> {
    fn drop(&mut self) {
        self.0.lock().serving += 1;
        self.0.turn.notify_all();
    }
}

/// A topic's callback: which topic it serves, the executor it must hold (None = run at once,
/// on the receiving thread) and the CPU work it burns besides echoing or recording.
#[derive(Clone, Copy)]
pub struct Callback<'a> {
    pub topic: usize,
    pub serial: Option<&'a Serial>,
    pub busy_loop_ns: u64,
}

impl Callback<'_> {
    /// Nothing to do: the single-topic fast path.
    pub const PLAIN: Callback<'static> = Callback {
        topic: 0,
        serial: None,
        busy_loop_ns: 0,
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    use std::time::{Duration, Instant};

    #[test]
    fn callbacks_never_overlap() {
        let serial = Serial::new(4);
        let inside = AtomicBool::new(false);
        let overlaps = AtomicU64::new(0);
        std::thread::scope(|s| {
            for topic in 0..4 {
                let (serial, inside, overlaps) = (&serial, &inside, &overlaps);
                s.spawn(move || {
                    for k in 0..200 {
                        let _turn = serial.enter(topic, k);
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
        let serial = Serial::new(2);
        let t0 = Instant::now();
        let started_second = std::thread::scope(|s| {
            let first = serial.enter(0, 1); // topic 0's callback is running
            let h = s.spawn(|| {
                let _turn = serial.enter(1, 1); // topic 1's message waits for it
                t0.elapsed()
            });
            std::thread::sleep(Duration::from_millis(30));
            drop(first);
            h.join().unwrap()
        });
        assert!(
            started_second >= Duration::from_millis(30),
            "{started_second:?}"
        );
    }

    #[test]
    fn a_tick_runs_in_topic_order_whoever_arrives_first() {
        let serial = Serial::new(2);
        drop(serial.enter(0, 1)); // tick 1 on both topics: the topics share ticks from now on
        drop(serial.enter(1, 1));
        let order = Mutex::new(Vec::new());
        std::thread::scope(|s| {
            s.spawn(|| {
                let _turn = serial.enter(1, 2); // topic 1's message of tick 2 is received first
                order.lock().unwrap().push(1);
            });
            std::thread::sleep(Duration::from_millis(2));
            let _turn = serial.enter(0, 2);
            order.lock().unwrap().push(0);
        });
        assert_eq!(order.into_inner().unwrap(), vec![0, 1]);
    }

    #[test]
    fn a_lost_lower_message_delays_a_tick_only_boundedly() {
        let serial = Serial::new(2);
        drop(serial.enter(0, 1));
        drop(serial.enter(1, 1));
        let t0 = Instant::now();
        drop(serial.enter(1, 2)); // topic 0's tick 2 never comes
        let waited = t0.elapsed();
        assert!(
            waited >= Duration::from_nanos(TICK_WAIT_NS) && waited < Duration::from_millis(500),
            "{waited:?}"
        );
    }
}
