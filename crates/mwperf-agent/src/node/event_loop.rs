//! A single-threaded node with one subscription and its timers on one thread, as rclcpp's
//! single-threaded executor runs them: the thread receives until the spin margin before the next
//! timer is due, fires it, and goes back to receiving. A callback that runs long delays the
//! timers behind it, as it would in the node; a message that arrives is handled by the thread that
//! was waiting for it (one wake-up, as ping's).

use mwperf_core::clock::now_ns;

use super::publisher::{Sent, Timer};
use super::subscription::{NodeContext, Subscription, SubscriptionReport, Window};
use crate::signals;

/// Run `timers` and `sub` on this thread until the window ends.
pub fn run(
    mut timers: Vec<Timer>,
    mut sub: Subscription<'_>,
    node: &NodeContext<'_>,
    w: Window,
) -> (Vec<Sent>, SubscriptionReport) {
    loop {
        let now = now_ns();
        if now >= w.end_ns || signals::stopped() {
            break;
        }
        let mut next = None;
        for (i, t) in timers.iter_mut().enumerate() {
            match t.due() {
                Some(d) => next = Some(next.map_or((d, i), |n: (u64, usize)| n.min((d, i)))),
                None => t.end_of_stream(node.run_id, node.source), // once
            }
        }
        if next.is_none() && sub.ended() {
            break; // every expected publisher ended its stream, and so did these timers
        }
        if let Some((due, i)) = next {
            if now + timers[i].spin_margin_ns() >= due {
                timers[i].fire(node.run_id, node.source);
                continue;
            }
        }
        let until = next.map_or(w.end_ns, |(due, i)| due - timers[i].spin_margin_ns());
        let wait = if node.busy_poll {
            0
        } else {
            until.saturating_sub(now).clamp(1, 50_000_000)
        };
        sub.poll(wait, node, &w);
    }
    (
        timers.into_iter().map(Timer::finish).collect(),
        sub.finish(&w),
    )
}
