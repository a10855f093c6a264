//! A subscription of a graph node: receives its topic from every publisher, keeps one
//! collector per publisher (an edge), runs the callback (under the node's executor when it is
//! single-threaded: the latency is taken when the callback starts, as a subscriber sees it),
//! and as a chain stage publishes downstream carrying the origin's intended time.
//!
//! An edge's `response` is the data's age: from its origin's due time (a timer publisher's
//! schedule, carried through every stage) to this callback; its `service` is this hop alone
//! (from the send of the message received).

use std::collections::BTreeMap;
use std::sync::Mutex;

use mwperf_core::clock::now_ns;
use mwperf_core::result::{Measurement, Stats};
use mwperf_core::stats::LatencyRecorder;
use mwperf_core::wire::{Header, FLAG_ECHO, FLAG_FIN, FLAG_PROBE, FLAG_WARMUP};
use mwperf_transports::Endpoint;
use serde::Serialize;

use super::echo;
use super::publisher::{send, Sent};
use super::spec::SubscriptionSpec;
use crate::collector::Collector;
use crate::layers::book::{Cause, Side};
use crate::layers::Book;
use crate::signals;

/// One publisher's messages as this subscription received them.
#[derive(Serialize, Debug)]
pub struct EdgeReport {
    pub topic: String,
    pub id: u16,
    /// the publishing node's index
    pub source: u32,
    pub measurement: Measurement,
    /// one-way latency (this hop) above the late limit, not above the too-late one
    pub late: u64,
    pub too_late: u64,
    pub late_ns: u64,
    pub too_late_ns: u64,
    pub offered_per_s: f64,
    /// messages of another topic carried unchanged through a `command:` node (`source` is that
    /// node): the input topic and the node that published it there (spec.rs, Carried)
    #[serde(skip_serializing_if = "Option::is_none")]
    pub carried: Option<CarriedFrom>,
}

/// Where a carried edge's messages were first published.
#[derive(Serialize, Debug)]
pub struct CarriedFrom {
    pub topic: String,
    pub id: u16,
    /// the publishing node's index (the message header's source)
    pub source: u32,
}

#[derive(Serialize, Debug)]
pub struct SubscriptionReport {
    pub topic: String,
    pub id: u16,
    pub edges: Vec<EdgeReport>,
    pub foreign: u64,
    pub malformed: u64,
    pub warmup_received: u64,
    /// a chain stage's outlet
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stage: Option<Sent>,
    /// a chain stage's time from its callback's start to its send (its work and its own
    /// cost), per measured message
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stage_time: Option<Stats>,
    /// an echo outlet's answers (spec.rs `echo`): measured and warm-up messages answered
    /// (first-contact probes are answered, not counted), sends the transport refused
    #[serde(skip_serializing_if = "Option::is_none")]
    pub echo: Option<Sent>,
    /// how many publishers' end-of-stream markers arrived (when the spec expected some:
    /// `end_markers`; all of them ended the subscription before its window)
    #[serde(skip_serializing_if = "Option::is_none")]
    pub end_markers: Option<u32>,
    /// an edge's samples file could not be written (the first such error; that edge has no
    /// `samples_file`)
    #[serde(skip_serializing_if = "Option::is_none")]
    pub samples_error: Option<String>,
}

/// What every subscription of a node shares.
pub struct NodeContext<'a> {
    pub run_id: u32,
    /// this node's index, carried by what its stages publish
    pub source: u32,
    /// the single-threaded executor's turn (None: multi-threaded)
    pub executor: Option<&'a Mutex<()>>,
    pub busy_poll: bool,
}

pub struct Window {
    /// measured messages are those the publishers sent until here
    pub measure_end_ns: u64,
    /// a stage publishes what arrives until here (its downstream still receives it)
    pub stage_end_ns: u64,
    /// receive until here
    pub end_ns: u64,
}

/// One subscription's state: its endpoint, its stage's outlets, one collector per publishing
/// node. [`Subscription::poll`] receives and handles at most one message; [`run`] loops it on a
/// thread of its own, the node's one-thread loop (event_loop.rs) between its timers.
pub struct Subscription<'a> {
    spec: &'a SubscriptionSpec,
    /// None: a subscription replayed from another program's log (node/collect.rs)
    ep: Option<Box<dyn Endpoint>>,
    stage_eps: Vec<Box<dyn Endpoint>>,
    /// one collector per (header topic, publishing node): a topic carried through a command
    /// node keeps its own numbering
    edges: BTreeMap<(u16, u32), Collector>,
    report: SubscriptionReport,
    buf: Vec<u8>,
    out: Vec<u8>,
    stage_time: LatencyRecorder,
    /// `--layers-out`: each measured message taken (its take and callback start) ...
    book_in: Option<Book>,
    /// ... and, for a chain stage, each it published (from its callback's start to the write)
    book_out: Option<Book>,
    /// the end-of-stream markers seen (spec.rs `end_markers`)
    markers: super::end_of_stream::Markers,
    /// every sample written out as it arrives (a node `--restart` may kill: spec `progress`)
    flush_each: bool,
    /// spec `reopen`: its stage's endpoints opened again when their connection went away
    stage_reopen: Option<super::reopen::Reopen>,
    /// spec `reopen`: its own endpoint opened again when receiving finds it gone
    reopen: Option<super::reopen::ReopenSub>,
}

impl<'a> Subscription<'a> {
    pub fn new(
        spec: &'a SubscriptionSpec,
        ep: Option<Box<dyn Endpoint>>,
        stage_eps: Vec<Box<dyn Endpoint>>,
    ) -> Self {
        Subscription {
            spec,
            ep,
            stage_eps,
            edges: BTreeMap::new(),
            report: SubscriptionReport {
                topic: spec.topic.clone(),
                id: spec.id,
                edges: Vec::new(),
                foreign: 0,
                malformed: 0,
                warmup_received: 0,
                stage: spec.publish.as_ref().map(|o| Sent {
                    topic: o.topic.clone(),
                    id: o.id,
                    ..Default::default()
                }),
                stage_time: None,
                echo: spec.echo.then(|| Sent {
                    topic: spec.topic.clone(),
                    id: spec.id,
                    ..Default::default()
                }),
                samples_error: None,
                end_markers: (spec.end_markers > 0).then_some(0),
            },
            markers: super::end_of_stream::Markers::new(spec.end_markers),
            flush_each: false,
            stage_reopen: None,
            reopen: None,
            buf: Vec::with_capacity(64 * 1024),
            out: Vec::new(),
            stage_time: LatencyRecorder::default(),
            book_in: Book::new(Side::Sub, 1 << 16),
            book_out: spec
                .publish
                .as_ref()
                .and_then(|_| Book::new(Side::Pub, 1 << 16)),
        }
    }

    /// Its endpoint and its stage's opened again when their connection or broker went away
    /// (spec `reopen`).
    pub fn with_reopen(
        mut self,
        stage: Option<super::reopen::Reopen>,
        own: Option<super::reopen::ReopenSub>,
    ) -> Self {
        self.stage_reopen = stage;
        self.reopen = own;
        self
    }

    /// A node `--restart` may kill (`on`, spec `progress`): every sample written out as it
    /// arrives, and its stage's counts kept in `progress` after every send.
    pub fn restartable(mut self, on: bool, progress: Option<super::publisher::Progress>) -> Self {
        self.flush_each = on;
        if !on {
            return self;
        }
        if let Some(stage) = self.report.stage.as_mut() {
            stage.progress = progress.map(|p| p.first_seq(self.spec.stage_first_seq));
        }
        self
    }

    /// Receive at most one message within `wait_ns` and run its callback.
    pub fn poll(&mut self, wait_ns: u64, node: &NodeContext<'_>, w: &Window) {
        let spec = self.spec;
        let Some(ep) = self.ep.as_mut() else {
            return;
        };
        match ep.recv(&mut self.buf, wait_ns) {
            Ok(Some(_)) => {}
            Ok(None) => return,
            Err(_) => {
                // spec reopen: the connection or broker went away (a restart): open it again
                if let Some(fresh) = self.reopen.as_mut().and_then(|r| r.again(wait_ns)) {
                    self.ep = Some(fresh);
                }
                return;
            }
        }
        let mut recv_ns = super::clock::stamp(now_ns()); // the reference's clock
        let take_ns = recv_ns;
        // an echo outlet answers what pong answers (probes too: a peer's first contact)
        let answer = spec
            .echo
            .then(|| Header::decode(&self.buf).ok())
            .flatten()
            .filter(|h| {
                h.topic == spec.id
                    && h.flags & FLAG_FIN == 0 // a marker ends the stream, it is not answered
                    && echo::wanted(h, Some(node.run_id))
            });
        let measured = self.classify(node.run_id);
        if measured.is_none() && answer.is_none() {
            return;
        }
        let _turn = node
            .executor
            .map(|m| m.lock().unwrap_or_else(|p| p.into_inner()));
        if _turn.is_some() {
            recv_ns = super::clock::stamp(now_ns());
        }
        let Some(h) = measured else {
            // a probe: answered at once, nothing measured
            crate::busy::spin_for(spec.busy_loop_ns);
            self.echo(answer, recv_ns);
            return;
        };
        self.arrive(&h, recv_ns);
        let warm = h.flags & FLAG_WARMUP != 0;
        if !warm {
            if let Some(b) = &mut self.book_in {
                b.node_received(
                    h.run_id,
                    h.topic,
                    h.peer_rx_ns as u32,
                    h.seq,
                    take_ns,
                    recv_ns,
                );
            }
        }
        crate::busy::spin_for(spec.busy_loop_ns);
        self.echo(answer, recv_ns);
        let report = &mut self.report;
        if let (Some(outlet), Some(sent)) = (&spec.publish, report.stage.as_mut()) {
            if now_ns() < w.stage_end_ns {
                let next = Header {
                    flags: h.flags & FLAG_WARMUP,
                    run_id: node.run_id,
                    topic: outlet.id,
                    seq: if warm {
                        sent.warmup_sent
                    } else {
                        spec.stage_first_seq + sent.sent
                    },
                    intended_ns: h.intended_ns, // the origin's due time: a chain's age
                    sent_ns: 0,
                    peer_rx_ns: node.source as u64,
                    payload_len: outlet.payload_bytes.unwrap_or(h.payload_len),
                };
                let drain_ns = spec.period_ns.clamp(1_000_000, 1_000_000_000);
                let sent_ns = send(
                    &mut self.stage_eps,
                    &mut self.out,
                    next,
                    sent,
                    drain_ns,
                    self.stage_reopen.as_mut(),
                );
                if !warm {
                    self.stage_time.record(sent_ns.saturating_sub(recv_ns));
                    if let Some(b) = &mut self.book_out {
                        // this hop starts when the callback did: its work is the stage's app_send
                        let cause = Cause {
                            topic: h.topic,
                            source: h.peer_rx_ns as u32,
                            seq: h.seq,
                        };
                        b.node_sent(
                            node.run_id,
                            outlet.id,
                            node.source,
                            next.seq,
                            recv_ns,
                            sent_ns,
                            Some(cause),
                        );
                    }
                }
            }
        }
        if !warm {
            crate::allocs::message(); // its callback (and a stage's send) done
        }
    }

    /// Answer the message in the buffer (header `h`, if it is to be answered) on the endpoint
    /// it came from, stamped with the callback's start `callback_ns` (node/echo.rs).
    fn echo(&mut self, h: Option<Header>, callback_ns: u64) {
        let (Some(h), Some(ep), Some(sent)) = (h, self.ep.as_mut(), self.report.echo.as_mut())
        else {
            return;
        };
        echo::stamped(h, callback_ns).encode(&mut self.buf);
        match ep.send(&self.buf) {
            Err(e) => {
                sent.send_errors += 1;
                sent.first_error.get_or_insert_with(|| e.to_string());
            }
            Ok(()) if h.flags & FLAG_PROBE != 0 => {}
            Ok(()) if h.flags & FLAG_WARMUP != 0 => sent.warmup_sent += 1,
            Ok(()) => sent.sent += 1,
        }
    }

    /// The message in the buffer as one of this run's for this topic (or a topic carried to it
    /// through a command node: `carried`); a foreign or malformed one is counted and None.
    fn classify(&mut self, run_id: u32) -> Option<Header> {
        let report = &mut self.report;
        match Header::decode(&self.buf) {
            Ok(h)
                if h.flags & FLAG_FIN != 0
                    && self.spec.end_markers > 0
                    && h.topic == self.spec.id
                    && h.run_id == run_id =>
            {
                self.markers.arrived(&h);
                report.end_markers = Some(self.markers.count());
                None
            }
            Ok(h)
                if h.flags & (FLAG_ECHO | FLAG_PROBE | FLAG_FIN) == 0
                    && (h.topic == self.spec.id
                        || self.spec.carried.iter().any(|c| c.id == h.topic))
                    && h.run_id == run_id =>
            {
                Some(h)
            }
            Ok(_) => {
                report.foreign += 1;
                None
            }
            Err(r) if r.is_foreign() => {
                report.foreign += 1;
                None
            }
            Err(_) => {
                report.malformed += 1;
                None
            }
        }
    }

    /// A message of ours taken by the callback at `recv_ns`: a warm-up one counted, a measured
    /// one given to its publishing node's collector (the node's index rides in `peer_rx_ns`).
    fn arrive(&mut self, h: &Header, recv_ns: u64) {
        if h.flags & FLAG_WARMUP != 0 {
            self.report.warmup_received += 1;
            return;
        }
        let (spec, report) = (self.spec, &mut self.report);
        let col = self
            .edges
            .entry((h.topic, h.peer_rx_ns as u32))
            .or_insert_with(|| {
                let path = spec.samples.as_deref().map(|base| {
                    crate::topic_names::samples_path(base, &edge_slug(spec, h.topic, h.peer_rx_ns))
                });
                Collector::new(recv_ns, 0, path.as_deref()).unwrap_or_else(|e| {
                    let path = path.unwrap_or_default();
                    report
                        .samples_error
                        .get_or_insert_with(|| format!("samples {path}: {e}"));
                    Collector::new(recv_ns, 0, None).expect("no samples file: cannot fail")
                })
            });
        col.flush_each(self.flush_each);
        col.window_start(recv_ns);
        col.arrive(h, &self.buf, recv_ns);
    }

    /// One message another program's callback took at `recv_ns` (an rclpy node's log,
    /// node/collect.rs), accounted as [`Subscription::poll`] does; `stage_sent_ns`: when its
    /// chain stage sent the next message (a measured one's stage time).
    pub fn replay(&mut self, msg: &[u8], recv_ns: u64, stage_sent_ns: Option<u64>, run_id: u32) {
        self.buf.clear();
        self.buf.extend_from_slice(msg);
        let Some(h) = self.classify(run_id) else {
            return;
        };
        self.arrive(&h, recv_ns);
        if let (Some(sent_ns), 0) = (stage_sent_ns, h.flags & FLAG_WARMUP) {
            self.stage_time.record(sent_ns.saturating_sub(recv_ns));
        }
    }

    /// What the replayed program's chain stage sent (its own count).
    pub fn set_stage_sent(&mut self, sent: Sent) {
        if self.report.stage.is_some() {
            self.report.stage = Some(sent);
        }
    }

    /// The report: one edge per publishing node.
    pub fn finish(self, w: &Window) -> SubscriptionReport {
        let Subscription {
            spec,
            edges,
            mut report,
            stage_time,
            ..
        } = self;
        if report.stage.is_some() {
            report.stage_time = Some(stage_time.summary());
        }
        let offered_per_s = if spec.period_ns > 0 {
            1e9 / spec.period_ns as f64
        } else {
            0.0
        };
        for ((topic_id, from), col) in edges {
            let via = spec
                .carried
                .iter()
                .find(|c| c.id == topic_id && topic_id != spec.id);
            let too_late = col.service.count_above(spec.too_late_ns);
            let late = col
                .service
                .count_above(spec.late_ns)
                .saturating_sub(too_late);
            let payload = col.payload_bytes().unwrap_or(0);
            // sent is the publisher's (the control plane counts lost from its report)
            let measurement = col.finish("oneway", 0, 0, payload, w.measure_end_ns, None);
            report.edges.push(EdgeReport {
                topic: spec.topic.clone(),
                id: spec.id,
                source: via.map_or(from, |c| c.via),
                measurement,
                late,
                too_late,
                late_ns: spec.late_ns,
                too_late_ns: spec.too_late_ns,
                offered_per_s,
                carried: via.map(|c| CarriedFrom {
                    topic: c.topic.clone(),
                    id: c.id,
                    source: from,
                }),
            });
        }
        report
    }
}

/// The part of an edge's samples file name that names the edge: its publishing node
/// (`from<index>`), and for a topic carried to this one through a command node, that topic
/// (`.topic<id>`).
fn edge_slug(spec: &SubscriptionSpec, topic: u16, source: u64) -> String {
    if topic == spec.id {
        format!("from{source}")
    } else {
        format!("from{source}.topic{topic}")
    }
}

impl Subscription<'_> {
    /// Every publisher it expected an end-of-stream marker from sent it.
    pub fn ended(&self) -> bool {
        self.markers.all_in()
    }
}

/// Receive with `sub` until `w.end_ns`, every expected end-of-stream marker or a stop signal,
/// on a thread of its own.
pub fn drive(mut sub: Subscription<'_>, node: &NodeContext<'_>, w: Window) -> SubscriptionReport {
    loop {
        let now = now_ns();
        if now >= w.end_ns || signals::stopped() || sub.ended() {
            break;
        }
        let wait = if node.busy_poll {
            0
        } else {
            (w.end_ns - now).min(50_000_000)
        };
        sub.poll(wait, node, &w);
    }
    sub.finish(&w)
}

#[cfg(test)]
mod tests {
    use std::collections::VecDeque;
    use std::sync::Arc;

    use mwperf_core::wire::build_message;
    use mwperf_transports::TransportError;

    use super::*;
    use crate::node::spec::Carried;

    /// Hands out the messages it was given, one per recv; keeps what is sent on it.
    struct Queue(VecDeque<Vec<u8>>, Arc<Mutex<Vec<Vec<u8>>>>);

    impl Endpoint for Queue {
        fn send(&mut self, msg: &[u8]) -> Result<(), TransportError> {
            self.1.lock().unwrap().push(msg.to_vec());
            Ok(())
        }
        fn recv(
            &mut self,
            buf: &mut Vec<u8>,
            _wait_ns: u64,
        ) -> Result<Option<usize>, TransportError> {
            Ok(self.0.pop_front().map(|m| {
                buf.clear();
                buf.extend_from_slice(&m);
                m.len()
            }))
        }
        fn local_addr(&self) -> String {
            "queue".into()
        }
    }

    fn message(topic: u16, source: u64, seq: u64) -> Vec<u8> {
        flagged(topic, source, seq, 0)
    }

    fn flagged(topic: u16, source: u64, seq: u64, flags: u8) -> Vec<u8> {
        let mut buf = Vec::new();
        let now = now_ns();
        build_message(
            &mut buf,
            &Header {
                flags,
                run_id: 7,
                topic,
                seq,
                intended_ns: now,
                sent_ns: now,
                peer_rx_ns: source,
                payload_len: 32,
            },
        );
        buf
    }

    fn receive(carried: Vec<Carried>) -> SubscriptionReport {
        receive_to(carried, None)
    }

    fn receive_to(carried: Vec<Carried>, samples: Option<String>) -> SubscriptionReport {
        let messages = vec![
            message(0, 0, 0),
            message(0, 0, 1),
            message(1, 2, 0),
            message(5, 0, 0),
        ];
        received(carried, samples, false, messages).0
    }

    /// `messages` taken by a subscription of /filtered (topic 1): its report and what it sent
    /// back on its endpoint.
    fn received(
        carried: Vec<Carried>,
        samples: Option<String>,
        echo: bool,
        messages: Vec<Vec<u8>>,
    ) -> (SubscriptionReport, Vec<Vec<u8>>) {
        let spec = SubscriptionSpec {
            topic: "/filtered".into(),
            id: 1,
            address: "x".into(),
            busy_loop_ns: 0,
            period_ns: 0,
            late_ns: u64::MAX,
            too_late_ns: u64::MAX,
            qos: Default::default(),
            publish: None,
            carried,
            samples,
            echo,
            end_markers: 0,
            stage_first_seq: 0,
            await_publishers: 0,
        };
        let n = messages.len();
        let back = Arc::new(Mutex::new(Vec::new()));
        let queue = Queue(messages.into(), back.clone());
        let mut sub = Subscription::new(&spec, Some(Box::new(queue)), Vec::new());
        let node = NodeContext {
            run_id: 7,
            source: 3,
            executor: None,
            busy_poll: false,
        };
        let w = Window {
            measure_end_ns: u64::MAX,
            stage_end_ns: 0,
            end_ns: u64::MAX,
        };
        for _ in 0..n {
            sub.poll(0, &node, &w);
        }
        let back = back.lock().unwrap().clone();
        (sub.finish(&w), back)
    }

    #[test]
    fn a_subscription_ends_on_every_expected_end_marker_without_counting_them_foreign() {
        use crate::node::end_of_stream::marker;
        let fin = |source: u64| {
            let mut buf = vec![0; mwperf_core::wire::HEADER_LEN];
            marker(7, 1, 1, 0, source).encode(&mut buf);
            buf
        };
        let spec = SubscriptionSpec {
            topic: "/t".into(),
            id: 1,
            address: "x".into(),
            busy_loop_ns: 0,
            period_ns: 0,
            late_ns: u64::MAX,
            too_late_ns: u64::MAX,
            qos: Default::default(),
            publish: None,
            carried: Vec::new(),
            samples: None,
            echo: false,
            end_markers: 2,
            stage_first_seq: 0,
            await_publishers: 0,
        };
        // node 2's message and marker (twice), then node 3's marker: the end
        let messages = vec![message(1, 2, 0), fin(2), fin(2), fin(3), message(1, 3, 0)];
        let back = Arc::new(Mutex::new(Vec::new()));
        let queue = Queue(messages.into(), back);
        let sub = Subscription::new(&spec, Some(Box::new(queue)), Vec::new());
        let node = NodeContext {
            run_id: 7,
            source: 4,
            executor: None,
            busy_poll: false,
        };
        let w = Window {
            measure_end_ns: u64::MAX,
            stage_end_ns: 0,
            end_ns: u64::MAX, // only the markers can end it
        };
        let report = drive(sub, &node, w);
        assert_eq!(report.end_markers, Some(2));
        assert_eq!(report.foreign, 0);
        // ended at node 3's marker: its message after it was not taken
        assert_eq!(report.edges.len(), 1);
        assert_eq!(report.edges[0].source, 2);
        // without end_markers a marker is another run's business: foreign, as before
        let (report, _) = received(Vec::new(), None, false, vec![fin(2)]);
        assert_eq!((report.foreign, report.end_markers), (1, None));
    }

    #[test]
    fn an_echo_outlet_answers_what_pong_answers_on_its_endpoint_and_still_measures() {
        use mwperf_core::wire::HEADER_LEN;
        let sent = vec![
            flagged(1, 2, 0, FLAG_WARMUP),
            flagged(1, 2, 0, 0),
            flagged(1, 2, 0, FLAG_PROBE), // a peer's first contact
            flagged(1, 2, 1, FLAG_ECHO),  // an echo: never answered
            flagged(5, 2, 1, 0),          // another topic's
        ];
        let (report, back) = received(Vec::new(), None, true, sent.clone());
        let echo = report.echo.as_ref().expect("the echo's counts");
        assert_eq!((echo.sent, echo.warmup_sent, echo.send_errors), (1, 1, 0));
        // warm-up, measured and probe answered, in order, each stamped and flagged
        assert_eq!(back.len(), 3);
        for (answer, asked) in back.iter().zip(&sent) {
            let (a, q) = (
                Header::decode(answer).unwrap(),
                Header::decode(asked).unwrap(),
            );
            assert_eq!(a.flags, q.flags | FLAG_ECHO);
            assert_eq!(
                (a.seq, a.intended_ns, a.sent_ns),
                (q.seq, q.intended_ns, q.sent_ns)
            );
            assert!(a.peer_rx_ns >= q.sent_ns); // the callback's start, not the source
            assert_eq!(answer[HEADER_LEN..], asked[HEADER_LEN..]);
        }
        // the measured one is still an edge from node 2
        assert_eq!(report.edges.len(), 1);
        assert_eq!(report.edges[0].measurement.accounting.received, 1);
        assert_eq!(report.warmup_received, 1);
        // without echo: nothing goes back
        let (report, back) = received(Vec::new(), None, false, sent);
        assert!(back.is_empty() && report.echo.is_none());
    }

    #[test]
    fn a_topic_carried_through_a_command_node_is_an_edge_from_that_node_only_where_told() {
        let via = Carried {
            topic: "/image".into(),
            id: 0,
            via: 1,
        };
        let report = receive(vec![via]);
        assert_eq!(report.foreign, 1); // topic 5
        let from: Vec<_> = report
            .edges
            .iter()
            .map(|e| {
                let c = e
                    .carried
                    .as_ref()
                    .map(|c| (c.topic.as_str(), c.id, c.source));
                (e.source, c, e.measurement.accounting.received)
            })
            .collect();
        assert_eq!(from, [(1, Some(("/image", 0, 0)), 2), (2, None, 1)]);
        // without it, another topic's messages are foreign as before
        let report = receive(Vec::new());
        assert_eq!(report.foreign, 3);
        assert_eq!(report.edges.len(), 1);
        assert_eq!(report.edges[0].source, 2);
    }

    #[test]
    fn each_edge_writes_its_own_samples_file_one_row_per_arrival() {
        let dir = std::env::temp_dir().join(format!("mwperf-node-samples-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let base = dir.join("filtered.csv").to_str().unwrap().to_string();
        let via = Carried {
            topic: "/image".into(),
            id: 0,
            via: 1,
        };
        let report = receive_to(vec![via], Some(base.clone()));
        assert!(report.samples_error.is_none(), "{report:?}");
        let mut rows = Vec::new();
        for e in &report.edges {
            let file = e.measurement.samples_file.clone().expect("a samples file");
            let text = std::fs::read_to_string(&file).unwrap();
            let seqs: Vec<_> = text
                .lines()
                .skip(1)
                .map(|l| l.split(',').next().unwrap().to_string())
                .collect();
            assert_eq!(seqs.len() as u64, e.measurement.accounting.received);
            rows.push((
                file.strip_prefix(dir.to_str().unwrap())
                    .unwrap()
                    .to_string(),
                seqs,
            ));
        }
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(
            rows,
            [
                (
                    "/filtered.from0.topic0.csv".to_string(),
                    vec!["0".to_string(), "1".to_string()]
                ),
                ("/filtered.from2.csv".to_string(), vec!["0".to_string()])
            ]
        );
        // a file that cannot be written: the edge is still measured, the error said
        let report = receive_to(Vec::new(), Some("/no/such/dir/s.csv".into()));
        assert_eq!(report.edges.len(), 1);
        assert!(report.edges[0].measurement.samples_file.is_none());
        let err = report.samples_error.unwrap();
        assert!(
            err.starts_with("samples /no/such/dir/s.from2.csv: "),
            "{err}"
        );
    }
}
