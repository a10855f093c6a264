//! Before READY, wait until the middleware's graph shows the endpoints of the user's programs
//! (graph `command:` nodes) on the topics the spec names (`await_graph`). A program fed by
//! another program has no matched count of mwperf's own that would show it subscribed: a
//! program slow to start (a Python node importing rclpy on a loaded machine) was measured as
//! losing the messages sent before it subscribed.

use mwperf_core::clock::now_ns;
use mwperf_transports::Endpoint;

use super::spec::GraphAwait;

/// How often the graph is looked at again.
const POLL: std::time::Duration = std::time::Duration::from_millis(20);

/// Wait (until `deadline`, CLOCK_MONOTONIC ns) for every entry of `wanted`, asking `ep`;
/// Ok at once where the middleware cannot count (`graph_counts` None); Err names the topic,
/// what was seen and what was wanted.
pub fn wait(ep: &mut dyn Endpoint, wanted: &[GraphAwait], deadline: u64) -> Result<(), String> {
    // the required first: a hoped-for one may wait until the deadline
    let ordered = wanted.iter().filter(|w| w.required);
    for w in ordered.chain(wanted.iter().filter(|w| !w.required)) {
        loop {
            let Some((pubs, subs)) = ep.graph_counts(&w.topic) else {
                return Ok(());
            };
            if pubs >= w.publishers && subs >= w.subscribers {
                break;
            }
            if now_ns() >= deadline && !w.required {
                break; // hoped for, not needed: the run says what it then measured
            }
            if now_ns() >= deadline || crate::signals::stopped() {
                let publishers = if w.publishers > 0 {
                    format!("{pubs} of {} publishers and ", w.publishers)
                } else {
                    String::new()
                };
                return Err(format!(
                    "discovery: the graph shows {publishers}{subs} of {} subscriptions on {} \
                     (--discovery-timeout): {}",
                    w.subscribers, w.topic, w.about
                ));
            }
            std::thread::sleep(POLL);
        }
    }
    Ok(())
}

/// Wait (until `deadline`) until `ep`, a subscription, is matched to `publishers` writers, and
/// go on either way (hoped for: the run then says what it measured); at once where the
/// middleware cannot count (`matched_publishers` None). A program's writer that the watcher
/// node's graph showed was, on a loaded machine, not yet matched to another node's reader of
/// its output: what it published before was lost.
pub fn wait_publishers(ep: &mut dyn Endpoint, publishers: u64, deadline: u64) {
    while let Some(n) = ep.matched_publishers() {
        if n >= publishers || now_ns() >= deadline || crate::signals::stopped() {
            return;
        }
        std::thread::sleep(POLL);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mwperf_transports::TransportError;

    /// A graph whose counts on topic "t" grow by one publisher and one subscription per look,
    /// up to `max`; None: a middleware that cannot count.
    struct Graph {
        looks: u64,
        max: Option<u64>,
    }

    impl Endpoint for Graph {
        fn send(&mut self, _: &[u8]) -> Result<(), TransportError> {
            Ok(())
        }
        fn recv(&mut self, _: &mut Vec<u8>, _: u64) -> Result<Option<usize>, TransportError> {
            Ok(None)
        }
        fn local_addr(&self) -> String {
            "graph".into()
        }
        fn graph_counts(&mut self, topic: &str) -> Option<(u64, u64)> {
            assert_eq!(topic, "t");
            let max = self.max?;
            self.looks += 1;
            Some((self.looks.min(max), self.looks.min(max)))
        }
        fn matched_publishers(&mut self) -> Option<u64> {
            let max = self.max?;
            self.looks += 1;
            Some(self.looks.min(max))
        }
    }

    #[test]
    fn a_subscription_waits_for_its_writers_then_goes_on_at_the_deadline() {
        let mut ep = Graph {
            looks: 0,
            max: Some(9),
        };
        wait_publishers(&mut ep, 3, now_ns() + 5_000_000_000);
        assert_eq!(ep.looks, 3);
        let mut never = Graph {
            looks: 0,
            max: Some(1),
        };
        let deadline = now_ns() + 50_000_000;
        wait_publishers(&mut never, 2, deadline);
        assert!(now_ns() >= deadline && never.looks > 1);
        let mut blind = Graph {
            looks: 0,
            max: None,
        };
        wait_publishers(&mut blind, 2, u64::MAX); // cannot count: at once
    }

    fn wanted(n: u64) -> Vec<GraphAwait> {
        vec![GraphAwait {
            topic: "t".into(),
            publishers: n,
            subscribers: n,
            about: "command node 'x' reads it".into(),
            required: true,
        }]
    }

    #[test]
    fn a_publisher_hoped_for_is_waited_for_until_the_deadline_then_not_needed() {
        let mut ep = Graph {
            looks: 0,
            max: Some(1),
        };
        let hoped = vec![GraphAwait {
            required: false,
            ..wanted(2).remove(0)
        }];
        let deadline = now_ns() + 50_000_000;
        wait(&mut ep, &hoped, deadline).unwrap();
        assert!(now_ns() >= deadline && ep.looks > 1);
    }

    #[test]
    fn waits_until_the_graph_shows_every_endpoint() {
        let mut ep = Graph {
            looks: 0,
            max: Some(9),
        };
        wait(&mut ep, &wanted(3), now_ns() + 5_000_000_000).unwrap();
        assert_eq!(ep.looks, 3);
    }

    #[test]
    fn a_program_never_seen_fails_naming_topic_counts_and_program() {
        let mut ep = Graph {
            looks: 0,
            max: Some(1),
        };
        let err = wait(&mut ep, &wanted(2), now_ns() + 100_000_000).unwrap_err();
        assert!(
            err.contains("1 of 2 publishers and 1 of 2 subscriptions on t"),
            "{err}"
        );
        assert!(err.contains("command node 'x' reads it"), "{err}");
    }

    #[test]
    fn a_middleware_that_cannot_count_does_not_wait() {
        let mut ep = Graph {
            looks: 0,
            max: None,
        };
        wait(&mut ep, &wanted(2), 0).unwrap();
    }
}
