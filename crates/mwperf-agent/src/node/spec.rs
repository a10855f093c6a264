//! The node spec: what one graph node runs, written by the control plane as JSON
//! (`mwperf-agent node --node-spec FILE`, docs/agent-contract.md "node").

use serde::Deserialize;

use mwperf_transports::{Durability, History, Qos, Reliability};

/// Per-entity QoS; a field left out is the node's (its command line's).
#[derive(Deserialize, Debug, Clone, Default)]
#[serde(deny_unknown_fields)]
pub struct QosOverride {
    pub reliability: Option<String>,
    pub history: Option<String>,
    pub durability: Option<String>,
}

impl QosOverride {
    /// `base` with these fields replaced; Err names the field.
    pub fn apply(&self, base: &Qos) -> Result<Qos, String> {
        let mut q = *base;
        if let Some(r) = &self.reliability {
            q.reliability = Reliability::parse(r).map_err(|e| format!("qos reliability: {e}"))?;
        }
        if let Some(h) = &self.history {
            q.history = History::parse(h, 10).map_err(|e| format!("qos history: {e}"))?;
        }
        if let Some(d) = &self.durability {
            q.durability = Durability::parse(d).map_err(|e| format!("qos durability: {e}"))?;
        }
        Ok(q)
    }
}

/// Where a topic's messages go: every address (plain sockets: each subscriber's, none when
/// nobody subscribes; middleware: the topic's one address).
#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct Outlet {
    pub topic: String,
    pub id: u16,
    /// payload bytes after the header (None for a stage: the received message's)
    pub payload_bytes: Option<u32>,
    pub addresses: Vec<String>,
    #[serde(default)]
    pub qos: QosOverride,
    /// how many subscriptions (of other nodes too) the topic has: a publisher whose middleware
    /// counts its matched readers is READY when it sees them all
    #[serde(default)]
    pub subscribers: u32,
}

/// A timer-driven publisher.
#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct PublisherSpec {
    #[serde(flatten)]
    pub out: Outlet,
    /// 0: saturating, back to back as fast as the middleware accepts (a graph's `rate: max`)
    pub period_ns: u64,
    /// message k's payload is entry k mod len (warm-up included); empty: `payload_bytes`
    #[serde(default)]
    pub payload_sizes: Vec<u32>,
    /// the first message is due this long after the start (< period): publishers of one
    /// graph do not all fire at the same instant unless told to
    #[serde(default)]
    pub phase_ns: u64,
    /// a replayed recording's times (graph file `replay:`): message k is due at
    /// `offsets_ns[k mod n] + (k div n) x (last offset + period_ns)` after the start, the
    /// recording looped; empty: every `period_ns`
    #[serde(default)]
    pub offsets_ns: Vec<u64>,
    /// its one address answers every message (an echo outlet's, a pong's): each measured
    /// message's round trip is measured (collector.rs, as ping's); with `period_ns` 0 a closed
    /// loop: the next message when the reply is back (one in flight), or after
    /// `reply_timeout_ns` without it (that one counted lost)
    #[serde(default)]
    pub round_trip: bool,
    /// after its last message (a round trip's: after its last replies were awaited) it sends
    /// the end-of-stream marker (node/end_of_stream.rs) to every address
    #[serde(default)]
    pub end_marker: bool,
    #[serde(default = "one_second")]
    pub reply_timeout_ns: u64,
}

fn one_second() -> u64 {
    1_000_000_000
}

/// A subscription; with `publish` a chain stage.
#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct SubscriptionSpec {
    pub topic: String,
    pub id: u16,
    pub address: String,
    #[serde(default)]
    pub busy_loop_ns: u64,
    /// the topic's period (its origin's), for the achieved vs offered rate
    pub period_ns: u64,
    /// late above this one-way latency; too late above `too_late_ns` (iRobot's rule, resolved)
    pub late_ns: u64,
    pub too_late_ns: u64,
    #[serde(default)]
    pub qos: QosOverride,
    pub publish: Option<Outlet>,
    /// topics whose messages arrive here carried unchanged through a program of the user's (a
    /// graph `command:` node copies its input's data to its output, mwperf's header included):
    /// accepted on this subscription besides its own topic, each as an edge from that node
    #[serde(default)]
    pub carried: Vec<Carried>,
    /// raw per-message samples as CSV (collector.rs's columns), one file per edge: this path
    /// with `.from<the publishing node's index>` before its extension (a topic carried through
    /// a command node: `.from<the index of the node that first published it>.topic<that
    /// topic's id>`); its directory must exist
    #[serde(default)]
    pub samples: Option<String>,
    /// an echo outlet: every message of the run that is not itself an echo is answered on the
    /// endpoint it arrived on (a pong's), its header stamped with the callback's start
    /// (`peer_rx_ns`) and `FLAG_ECHO`, the payload as it came (node/echo.rs); not with `publish`
    #[serde(default)]
    pub echo: bool,
    /// how many publishers' end-of-stream markers end it before its window does (0: none; the
    /// window alone)
    #[serde(default)]
    pub end_markers: u32,
    /// a restarted node's chain stage (spec `resume`): the number its first measured message
    /// carries (what the processes before it sent), so its messages keep one numbering
    #[serde(default)]
    pub stage_first_seq: u64,
    /// the publishers of this topic (the user's programs' and mwperf's) this subscription waits
    /// to be matched to before READY, until the discovery deadline and then goes on (0: none).
    /// Set where a program of the user's (a graph `command:` node) publishes the topic: only
    /// the reader's own match shows that its participant found that program's writer
    #[serde(default)]
    pub await_publishers: u64,
}

/// An input topic of a `command:` node whose messages come out on this subscription's topic.
#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct Carried {
    /// the input topic (its header's topic id `id`)
    pub topic: String,
    pub id: u16,
    /// the command node's index: the edge's publisher
    pub via: u32,
}

/// A service this node serves (graph file `servers:`): answered at `address`.
#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct ServerSpec {
    pub service: String,
    /// the service's number in the graph (requests carry it as their header's topic)
    pub id: u16,
    pub address: String,
    /// the reply's payload bytes (None: the request's)
    pub reply_bytes: Option<u32>,
    /// CPU work per call (a spin) before the reply
    #[serde(default)]
    pub work_ns: u64,
}

/// A service this node calls (graph file `clients:`) on its own schedule.
#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct ClientSpec {
    pub service: String,
    pub id: u16,
    /// the server's address
    pub address: String,
    pub period_ns: u64,
    /// the first call is due this long after the start (< period)
    #[serde(default)]
    pub phase_ns: u64,
    pub request_bytes: u32,
    /// the reply's payload bytes the server sends (None: the request's), checked per reply
    pub reply_bytes: Option<u32>,
    /// calls outstanding at most (1..=1024)
    pub in_flight: u32,
    /// a call not answered this long after it was sent is given up (a timeout)
    pub timeout_ns: u64,
}

#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct NodeSpec {
    pub name: String,
    /// this node's number in the graph (the source every message it sends carries)
    pub index: u32,
    /// "single": one callback at a time in the node; "multi": each subscription on its own
    pub executor: String,
    pub warmup_ns: u64,
    pub duration_ns: u64,
    /// after the publishers stop, how long to keep receiving
    pub linger_ns: u64,
    /// at least this many measured messages on each of the node's topics (and calls): the
    /// measured phase lasts max(duration, min_count x the longest period among them), as
    /// `--min-count` stretches a rate's (pacer.rs); 0: the duration alone
    #[serde(default)]
    pub min_count: u64,
    #[serde(default)]
    pub publishers: Vec<PublisherSpec>,
    #[serde(default)]
    pub subscriptions: Vec<SubscriptionSpec>,
    #[serde(default)]
    pub servers: Vec<ServerSpec>,
    #[serde(default)]
    pub clients: Vec<ClientSpec>,
    /// topics of programs of the user's (graph `command:` nodes) whose endpoints this node
    /// waits to see in the middleware's graph before READY (node/await_graph.rs)
    #[serde(default)]
    pub await_graph: Vec<GraphAwait>,
    /// a node `--restart` may kill: each outlet's counts kept in `<progress>.p<i>` (publisher
    /// i) and `<progress>.s<j>` (subscription j's stage) after every send, and its samples
    /// written out at every arrival (what the killed process measured survives it)
    #[serde(default)]
    pub progress: Option<String>,
    /// the restarted process of such a node: its publishers join their schedules when it
    /// starts (the go instant has passed), skipping what was due before
    #[serde(default)]
    pub resume: bool,
    /// its publishers' and stages' endpoints opened again when a send finds their connection
    /// or broker gone (a node or daemon at the other end restarted: node/reopen.rs)
    #[serde(default)]
    pub reopen: bool,
}

/// A topic and how many publishers and subscriptions the whole graph has on it (mwperf's and
/// the programs'): READY only once the middleware's graph shows at least that many.
#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct GraphAwait {
    /// the topic's name on the middleware (ROS 2: `/mwperf/<base>/ping`)
    pub topic: String,
    pub publishers: u64,
    pub subscribers: u64,
    /// what to say when they never show up (the graph's topic and the programs on it)
    pub about: String,
    /// false: waited for until the deadline, then the node goes on all the same (a program's
    /// publisher: one may create it only when it has something to publish)
    #[serde(default = "required")]
    pub required: bool,
}

fn required() -> bool {
    true
}

impl NodeSpec {
    /// Read and check the spec file; Err is one line naming the file and the field.
    /// The spec in file `path`, or `path` itself when it is the JSON object (it starts with
    /// `{`: a node on a real host gets its spec on its command line).
    pub fn read(path: &str) -> Result<NodeSpec, String> {
        let text = if path.trim_start().starts_with('{') {
            path.to_string()
        } else {
            std::fs::read_to_string(path).map_err(|e| format!("--node-spec {path}: {e}"))?
        };
        let path = if text.as_str() == path {
            "(inline)"
        } else {
            path
        };
        let spec: NodeSpec =
            serde_json::from_str(&text).map_err(|e| format!("--node-spec {path}: {e}"))?;
        spec.check()
            .map_err(|e| format!("--node-spec {path}: {e}"))?;
        Ok(spec)
    }

    /// Nothing to publish or receive (only a clock reference may be such a node).
    pub fn is_empty(&self) -> bool {
        self.publishers.is_empty()
            && self.subscriptions.is_empty()
            && self.servers.is_empty()
            && self.clients.is_empty()
    }

    /// The measured phase: `duration_ns`, stretched to `min_count` messages of its slowest
    /// topic or call. Every node of a graph computes it from its own topics' periods, so a
    /// topic's publisher and subscribers agree on it.
    pub fn measured_ns(&self) -> u64 {
        let periods = self
            .publishers
            .iter()
            .map(|p| p.period_ns)
            .chain(self.subscriptions.iter().map(|s| s.period_ns))
            .chain(self.clients.iter().map(|c| c.period_ns));
        let longest = periods.max().unwrap_or(0);
        self.duration_ns.max(self.min_count.saturating_mul(longest))
    }

    fn check(&self) -> Result<(), String> {
        if !matches!(self.executor.as_str(), "single" | "multi") {
            return Err(format!(
                "executor '{}'; allowed: single, multi",
                self.executor
            ));
        }
        for p in &self.publishers {
            if !p.offsets_ns.is_empty()
                && (p.period_ns == 0
                    || p.offsets_ns[0] != 0
                    || p.offsets_ns.windows(2).any(|w| w[1] < w[0]))
            {
                return Err(format!(
                    "publisher of '{}': offsets_ns must start at 0 and never decrease, with a \
                     period_ns > 0",
                    p.out.topic
                ));
            }
            if p.out.payload_bytes.is_none() {
                return Err(format!(
                    "publisher of '{}': payload_bytes missing",
                    p.out.topic
                ));
            }
        }
        if self.resume {
            // a restarted process goes on with the schedule's numbers; a round trip's, a
            // saturating publisher's and a caller's would start again from 0
            if let Some(p) = self
                .publishers
                .iter()
                .find(|p| p.round_trip || p.period_ns == 0)
            {
                return Err(format!(
                    "resume: publisher of '{}' is a round trip's or saturating (rate: max);                      only paced publishers resume",
                    p.out.topic
                ));
            }
            if !self.clients.is_empty() {
                return Err("resume: not with clients (their calls are numbered from 0)".into());
            }
        }
        for p in &self.publishers {
            if p.round_trip && p.out.addresses.len() != 1 {
                return Err(format!(
                    "publisher of '{}': round_trip needs exactly one address (its echo's), \
                     not {}",
                    p.out.topic,
                    p.out.addresses.len()
                ));
            }
            if p.round_trip && p.reply_timeout_ns == 0 {
                return Err(format!(
                    "publisher of '{}': reply_timeout_ns must be > 0",
                    p.out.topic
                ));
            }
        }
        if let Some(s) = self
            .subscriptions
            .iter()
            .find(|s| s.echo && s.publish.is_some())
        {
            return Err(format!(
                "subscription of '{}': echo and publish: a subscription answers its sender or \
                 publishes downstream, not both",
                s.topic
            ));
        }
        if self.min_count > 0 {
            if let Some(p) = self
                .publishers
                .iter()
                .find(|p| p.period_ns == 0 || !p.offsets_ns.is_empty())
            {
                return Err(format!(
                    "min_count {} with the publisher of '{}': allowed only with paced \
                     publishers (period_ns > 0, no offsets_ns): a saturating or replayed \
                     publisher's subscribers could not know when its last message is due",
                    self.min_count, p.out.topic
                ));
            }
        }
        for c in &self.clients {
            let what = format!("client of '{}'", c.service);
            if c.period_ns == 0 {
                return Err(format!("{what}: period_ns must be > 0"));
            }
            if !(1..=crate::cli::MAX_IN_FLIGHT).contains(&c.in_flight) {
                return Err(format!(
                    "{what}: in_flight {}; allowed: 1 to {}",
                    c.in_flight,
                    crate::cli::MAX_IN_FLIGHT
                ));
            }
            if c.timeout_ns == 0 {
                return Err(format!("{what}: timeout_ns must be > 0"));
            }
        }
        Ok(())
    }

    /// Every size of the node (what its publishers, stages, servers and clients send) fits one
    /// message of `kind` (its `max_payload`), else a usage error naming the topic or service.
    pub fn check_sizes(&self, kind: mwperf_transports::Kind) -> Result<(), String> {
        let outlets = self
            .publishers
            .iter()
            .map(|p| &p.out)
            .chain(self.subscriptions.iter().filter_map(|s| s.publish.as_ref()));
        let mut sizes: Vec<(String, u32)> = Vec::new();
        for out in outlets {
            sizes.extend(out.payload_bytes.map(|b| (format!("'{}'", out.topic), b)));
        }
        for p in &self.publishers {
            let most = p.payload_sizes.iter().max();
            sizes.extend(most.map(|b| (format!("'{}'", p.out.topic), *b)));
        }
        for s in &self.servers {
            sizes.extend(
                s.reply_bytes
                    .map(|b| (format!("service '{}'", s.service), b)),
            );
        }
        for c in &self.clients {
            let what = format!("service '{}'", c.service);
            sizes.push((what.clone(), c.request_bytes));
            sizes.extend(c.reply_bytes.map(|b| (what.clone(), b)));
        }
        for (what, bytes) in sizes {
            crate::roles::check_size(
                kind,
                &format!("node '{}': {what}", self.name),
                bytes as usize,
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_size_over_the_transports_limit_is_refused_naming_node_and_topic() {
        let spec = |bytes: usize| {
            let text = format!(
                r#"{{"name":"n","index":1,"executor":"single","warmup_ns":0,"duration_ns":1,
                "linger_ns":1,"publishers":[{{"topic":"/a","id":0,"payload_bytes":{bytes},
                "addresses":["x"],"period_ns":1000}}],"subscriptions":[]}}"#
            );
            serde_json::from_str::<NodeSpec>(&text).unwrap()
        };
        let most = mwperf_transports::Kind::Udp.max_payload();
        spec(most)
            .check_sizes(mwperf_transports::Kind::Udp)
            .unwrap();
        let err = spec(most + 1)
            .check_sizes(mwperf_transports::Kind::Udp)
            .unwrap_err();
        assert!(err.starts_with("node 'n': '/a': a payload of"), "{err}");
        assert!(err.contains(&format!("at most {most} bytes")), "{err}");
        spec(most + 1)
            .check_sizes(mwperf_transports::Kind::Tcp)
            .unwrap();
    }

    #[test]
    fn a_replay_s_times_start_at_zero_and_never_go_back() {
        let spec = |offsets: &str| {
            let text = format!(
                r#"{{"name":"n","index":1,"executor":"single","warmup_ns":0,"duration_ns":1,
                "linger_ns":1,"publishers":[{{"topic":"/a","id":0,"payload_bytes":8,
                "addresses":["x"],"period_ns":1000,"offsets_ns":{offsets}}}]}}"#
            );
            serde_json::from_str::<NodeSpec>(&text).unwrap().check()
        };
        spec("[0, 10, 10, 30]").unwrap();
        for bad in ["[5, 10]", "[0, 10, 5]"] {
            let err = spec(bad).unwrap_err();
            assert!(
                err.contains("offsets_ns must start at 0 and never decrease"),
                "{err}"
            );
        }
    }

    fn node(extra: &str, period_ns: u64, offsets: &str) -> Result<NodeSpec, String> {
        let text = format!(
            r#"{{"name":"n","index":1,"executor":"single","warmup_ns":0,"duration_ns":1000000000,
            "linger_ns":1{extra},"publishers":[{{"topic":"/a","id":0,"payload_bytes":8,
            "addresses":["x"],"period_ns":{period_ns},"offsets_ns":{offsets}}}],
            "subscriptions":[{{"topic":"/b","id":1,"address":"y","period_ns":100000000,
            "late_ns":1,"too_late_ns":2}}]}}"#
        );
        let spec = serde_json::from_str::<NodeSpec>(&text).map_err(|e| e.to_string())?;
        spec.check().map(|_| spec)
    }

    #[test]
    fn min_count_stretches_the_measured_phase_to_the_slowest_topic() {
        // 1 s; /a every 1 ms, /b (subscribed) every 100 ms
        assert_eq!(
            node("", 1_000_000, "[]").unwrap().measured_ns(),
            1_000_000_000
        );
        // 50 of /b need 5 s; 1000 of /a 1 s, but /b's 1000 take 100 s
        let stretched = |n: u64| {
            node(&format!(r#","min_count":{n}"#), 1_000_000, "[]")
                .unwrap()
                .measured_ns()
        };
        assert_eq!(stretched(5), 1_000_000_000); // the duration already gives more
        assert_eq!(stretched(50), 5_000_000_000);
        assert_eq!(stretched(1000), 100_000_000_000);
        // a saturating or replayed publisher's end is not known to its subscribers
        for (period, offsets) in [(0, "[]"), (1_000_000, "[0, 500]")] {
            let err = node(r#","min_count":5"#, period, offsets).unwrap_err();
            assert!(
                err.starts_with("min_count 5 with the publisher of '/a': allowed only with paced"),
                "{err}"
            );
            node("", period, offsets).unwrap(); // without min_count they run
        }
    }

    #[test]
    fn only_paced_publishers_resume() {
        node(r#","resume":true,"progress":"/tmp/p""#, 1_000_000, "[]").unwrap();
        node(r#","resume":true"#, 1_000_000, "[0, 500]").unwrap(); // a replay's looped times
        let err = node(r#","resume":true"#, 0, "[]").unwrap_err();
        assert!(
            err.starts_with("resume: publisher of '/a' is a round trip's or saturating"),
            "{err}"
        );
        node("", 0, "[]").unwrap(); // saturating, not resumed: runs
    }

    #[test]
    fn a_round_trip_has_one_address_and_an_echo_no_stage() {
        let spec = |publisher: &str, subscription: &str| {
            let text = format!(
                r#"{{"name":"n","index":1,"executor":"single","warmup_ns":0,"duration_ns":1,
                "linger_ns":1,"publishers":[{{"topic":"/a","id":0,"payload_bytes":8,
                "period_ns":0{publisher}}}],"subscriptions":[{{"topic":"/b","id":1,
                "address":"y","period_ns":1,"late_ns":1,"too_late_ns":2{subscription}}}]}}"#
            );
            serde_json::from_str::<NodeSpec>(&text).unwrap().check()
        };
        spec(r#","addresses":["x"],"round_trip":true"#, r#","echo":true"#).unwrap();
        let err = spec(r#","addresses":["x","z"],"round_trip":true"#, "").unwrap_err();
        assert!(
            err.contains("'/a': round_trip needs exactly one address"),
            "{err}"
        );
        let err = spec(
            r#","addresses":["x"],"round_trip":true,"reply_timeout_ns":0"#,
            "",
        )
        .unwrap_err();
        assert!(err.contains("reply_timeout_ns must be > 0"), "{err}");
        let stage = r#","echo":true,"publish":{"topic":"/c","id":2,"payload_bytes":null,"addresses":["z"]}"#;
        let err = spec(r#","addresses":["x"]"#, stage).unwrap_err();
        assert!(
            err.contains("subscription of '/b': echo and publish"),
            "{err}"
        );
    }

    #[test]
    fn reads_a_spec_and_names_what_is_wrong() {
        let good = r#"{"name":"n","index":1,"executor":"single","warmup_ns":0,"duration_ns":1,
            "linger_ns":1,"publishers":[{"topic":"/a","id":0,"payload_bytes":8,
            "addresses":["x"],"period_ns":1000}],
            "subscriptions":[{"topic":"/b","id":1,"address":"y","period_ns":1,"late_ns":1,
            "too_late_ns":2,"publish":{"topic":"/c","id":2,"payload_bytes":null,"addresses":["z"]}}]}"#;
        let s: NodeSpec = serde_json::from_str(good).unwrap();
        s.check().unwrap();
        let bad = good.replace("\"single\"", "\"fast\"");
        let s: NodeSpec = serde_json::from_str(&bad).unwrap();
        assert!(s.check().unwrap_err().contains("executor 'fast'"));
        assert!(serde_json::from_str::<NodeSpec>(
            &good.replace("\"index\"", "\"colour\":1,\"index\"")
        )
        .unwrap_err()
        .to_string()
        .contains("colour"));
        // period 0: a saturating publisher (rate: max)
        let s: NodeSpec =
            serde_json::from_str(&good.replace("\"period_ns\":1000", "\"period_ns\":0")).unwrap();
        s.check().unwrap();
        assert_eq!(s.publishers[0].period_ns, 0);
        // inline: the object itself in place of a file (a node on a real host)
        assert_eq!(NodeSpec::read(good).unwrap().name, "n");
        let err = NodeSpec::read(&bad).unwrap_err();
        assert!(
            err.starts_with("--node-spec (inline): executor 'fast'"),
            "{err}"
        );
        assert!(NodeSpec::read("/no/such/spec.json")
            .unwrap_err()
            .starts_with("--node-spec /no/such/spec.json: "));
    }
}
