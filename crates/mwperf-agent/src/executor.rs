//! How the callback side (pong, sub) runs its callbacks when it serves several topics.
//!
//! Every topic has its own receive thread (its own endpoint). With the multi-threaded executor
//! the callbacks run on those threads at once (one thread per topic, like ROS 2's
//! MultiThreadedExecutor with one callback group per topic). With the single-threaded executor a
//! callback may start only when it holds the executor: [`Serial`] hands it out one at a time, so
//! callbacks never overlap and a message on topic 3 that arrives while topics 1 and 2 are being
//! handled waits for both, as in ROS 2's SingleThreadedExecutor (seed 001).
//!
//! Order, as rclcpp's executor does it: a message that finds the executor free runs at once — it
//! never waits for a message that has not arrived (whatever the other topics' rates or ticks).
//! Messages that find it busy wait; when it is free again, everything waiting then is taken as
//! one batch (rclcpp's wait set) and run in topic order (the order subscriptions are registered),
//! and messages that arrive meanwhile wait for the next batch.
//! Cost: one mutex + condition-variable hand-off per callback (a futex wake, a few µs when
//! another topic is waiting); with `--topics 1` no executor is involved at all.

use std::collections::VecDeque;
use std::sync::{Condvar, Mutex, MutexGuard};

#[derive(Default)]
struct State {
    /// A callback holds the executor.
    busy: bool,
    next_ticket: u64,
    /// Waiting and not yet in a batch: (topic, ticket).
    waiting: Vec<(usize, u64)>,
    /// The batch being run, in topic order: the tickets still to run.
    batch: VecDeque<u64>,
    /// The ticket that may take the executor now.
    granted: Option<u64>,
}

/// The single-threaded executor.
pub struct Serial {
    state: Mutex<State>,
    turn: Condvar,
}

/// Holding the executor; dropping it lets the next callback run.
pub struct Turn<'a>(&'a Serial);

impl Serial {
    pub fn new() -> Self {
        Serial {
            state: Mutex::new(State::default()),
            turn: Condvar::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Wait for the executor for a message of `topic` that has arrived, then hold it.
    pub fn enter(&self, topic: usize) -> Turn<'_> {
        let mut st = self.lock();
        if !st.busy && st.granted.is_none() {
            st.busy = true;
            return Turn(self);
        }
        let ticket = st.next_ticket;
        st.next_ticket += 1;
        st.waiting.push((topic, ticket));
        while st.granted != Some(ticket) {
            st = self.turn.wait(st).unwrap_or_else(|e| e.into_inner());
        }
        st.granted = None;
        st.busy = true;
        Turn(self)
    }
}

impl Default for Serial {
    fn default() -> Self {
        Self::new()
    }
}

impl Drop for Turn<'_> {
    fn drop(&mut self) {
        let mut st = self.0.lock();
        st.busy = false;
        if st.batch.is_empty() {
            let mut ready = std::mem::take(&mut st.waiting);
            ready.sort_unstable(); // topic order; a topic's own messages in arrival order
            st.batch = ready.into_iter().map(|(_, ticket)| ticket).collect();
        }
        st.granted = st.batch.pop_front();
        if st.granted.is_some() {
            drop(st);
            self.0.turn.notify_all();
        }
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
        let serial = Serial::new();
        let inside = AtomicBool::new(false);
        let overlaps = AtomicU64::new(0);
        let ran = AtomicU64::new(0);
        std::thread::scope(|s| {
            for topic in 0..4 {
                let (serial, inside, overlaps, ran) = (&serial, &inside, &overlaps, &ran);
                s.spawn(move || {
                    for _ in 0..500 {
                        let _turn = serial.enter(topic);
                        if inside.swap(true, Ordering::SeqCst) {
                            overlaps.fetch_add(1, Ordering::SeqCst);
                        }
                        std::hint::spin_loop();
                        ran.fetch_add(1, Ordering::SeqCst);
                        inside.store(false, Ordering::SeqCst);
                    }
                });
            }
        });
        assert_eq!(overlaps.load(Ordering::SeqCst), 0);
        assert_eq!(ran.load(Ordering::SeqCst), 2000);
    }

    #[test]
    fn a_later_callback_waits_for_the_running_one() {
        let serial = Serial::new();
        let t0 = Instant::now();
        let started_second = std::thread::scope(|s| {
            let first = serial.enter(0); // topic 0's callback is running
            let h = s.spawn(|| {
                let _turn = serial.enter(1); // topic 1's message waits for it
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

    /// The replay defect (issue 22): a higher topic's message must never wait for a lower
    /// topic's message that is not coming, whatever the topics did before.
    #[test]
    fn a_free_executor_runs_a_message_at_once() {
        let serial = Serial::new();
        for k in 0..50 {
            drop(serial.enter(0)); // both topics at the same instants: a "ticked" history
            drop(serial.enter(1));
            if k % 4 == 0 {
                drop(serial.enter(0));
            }
        }
        let t0 = Instant::now();
        for _ in 0..100 {
            drop(serial.enter(1)); // topic 0 sends nothing now
        }
        let waited = t0.elapsed();
        assert!(waited < Duration::from_millis(50), "{waited:?}");
    }

    /// Messages waiting when the executor frees up run in topic order, whoever arrived first.
    #[test]
    fn waiting_messages_run_in_topic_order() {
        let serial = Serial::new();
        let order = Mutex::new(Vec::new());
        std::thread::scope(|s| {
            let running = serial.enter(0); // a callback is running
            for topic in [3usize, 1, 2] {
                let (serial, order) = (&serial, &order);
                s.spawn(move || {
                    let _turn = serial.enter(topic);
                    order.lock().unwrap().push(topic);
                });
                std::thread::sleep(Duration::from_millis(5)); // arrive in the order 3, 1, 2
            }
            std::thread::sleep(Duration::from_millis(20));
            drop(running);
        });
        assert_eq!(order.into_inner().unwrap(), vec![1, 2, 3]);
    }

    /// A message that arrives while a batch runs waits for the next batch, even if its topic
    /// sorts first (rclcpp collects ready work, runs it, then waits again).
    #[test]
    fn a_message_arriving_during_a_batch_waits_for_the_next() {
        let serial = Serial::new();
        let order = Mutex::new(Vec::new());
        std::thread::scope(|s| {
            let running = serial.enter(0);
            let (sr, or) = (&serial, &order);
            s.spawn(move || {
                let _turn = sr.enter(2);
                or.lock().unwrap().push(2);
                std::thread::sleep(Duration::from_millis(30)); // topic 0 arrives meanwhile
            });
            s.spawn(move || {
                let _turn = sr.enter(3);
                or.lock().unwrap().push(3);
            });
            std::thread::sleep(Duration::from_millis(10));
            drop(running); // batch: [2, 3]
            std::thread::sleep(Duration::from_millis(10));
            let _turn = serial.enter(0);
            order.lock().unwrap().push(0);
        });
        assert_eq!(order.into_inner().unwrap(), vec![2, 3, 0]);
    }
}
