//! What the domain's discovery says, as the probe's events: Cyclone's builtin topics
//! (DCPSParticipant, DCPSPublication, DCPSSubscription: every participant, writer and reader it
//! learnt of through SPDP/SEDP, read locally, nothing sent) and `ros_discovery_info` (the ROS 2
//! nodes owning them). The probe's own participant and readers are left out.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::ffi::{c_void, CStr};

use super::super::check;
use super::super::ffi::{self, Api, BuiltinEndpoint, BuiltinParticipant, SampleInfo};
use super::endpoint_qos;
use super::node_info;
use super::raw::{self, RawReader, ReaderQos};
use crate::ros2probe::{Endpoint, Event, Guid, Sink};
use crate::TransportError;

/// The ROS 2 graph topic and its type.
const GRAPH_TOPIC: &str = "ros_discovery_info";
const GRAPH_TYPE: &str = "rmw_dds_common::msg::dds_::ParticipantEntitiesInfo_";
/// Builtin samples taken per call.
const BATCH: usize = 64;
/// Largest ros_discovery_info sample read.
const MAX_GRAPH_SAMPLE: usize = 1 << 20;

/// The domain as discovered so far.
pub struct Discovery {
    api: &'static Api,
    own: Guid,
    participants: ffi::dds_entity_t,
    publications: ffi::dds_entity_t,
    subscriptions: ffi::dds_entity_t,
    graph: RawReader,
    /// other participants alive
    pub alive: BTreeSet<Guid>,
    /// every endpoint seen (the last word on it)
    endpoints: HashMap<Guid, Endpoint>,
}

impl Discovery {
    pub fn open(
        api: &'static Api,
        participant: ffi::dds_entity_t,
        own: Guid,
    ) -> Result<Discovery, TransportError> {
        let builtin = |topic, what| {
            // SAFETY: builtin topic pseudo handles are valid for dds_create_reader.
            let r = unsafe {
                (api.dds_create_reader)(participant, topic, std::ptr::null(), std::ptr::null())
            };
            check(api, r, format_args!("creating the {what} reader"))
        };
        // keep-all: the topic is keyless, so keep-last N holds N samples of ALL participants
        // together, and a launch's burst of announcements (each node's every entity is one,
        // and every writer's transient-local sample arrives at once on matching) could push a
        // participant's last one out before the next poll: its nodes would stay unknown
        let graph_qos = ReaderQos {
            keyed: false,
            reliable: true,
            transient_local: true,
            depth: None,
        };
        Ok(Discovery {
            api,
            own,
            participants: builtin(ffi::DDS_BUILTIN_TOPIC_DCPSPARTICIPANT, "DCPSParticipant")?,
            publications: builtin(ffi::DDS_BUILTIN_TOPIC_DCPSPUBLICATION, "DCPSPublication")?,
            subscriptions: builtin(ffi::DDS_BUILTIN_TOPIC_DCPSSUBSCRIPTION, "DCPSSubscription")?,
            graph: raw::open(
                api,
                participant,
                GRAPH_TOPIC,
                GRAPH_TYPE,
                &graph_qos,
                0,
                false,
                None,
            )?,
            alive: BTreeSet::new(),
            endpoints: HashMap::new(),
        })
    }

    /// Read what arrived since the last call and tell `sink`.
    pub fn poll(&mut self, sink: &dyn Sink) {
        self.poll_participants(sink);
        for writer in [true, false] {
            self.poll_endpoints(writer, sink);
        }
        self.poll_graph(sink);
    }

    /// Topic -> type names of the writers alive on it.
    pub fn written(&self) -> BTreeMap<&str, BTreeSet<&str>> {
        let mut out: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
        for e in self.endpoints.values().filter(|e| e.writer && e.alive) {
            out.entry(&e.topic).or_default().insert(&e.type_name);
        }
        out
    }

    /// Whether `topic`'s `type_name` is keyed: an endpoint of it has an RTPS entity kind "with
    /// key" (writer 0x02, reader 0x07: the GUID's last byte).
    pub fn keyed(&self, topic: &str, type_name: &str) -> bool {
        self.endpoints.values().any(|e| {
            e.topic == topic && e.type_name == type_name && matches!(e.guid[15], 0x02 | 0x07)
        })
    }

    /// Topic -> type names of every endpoint seen on it (writers or readers).
    pub fn topics(&self) -> BTreeMap<&str, BTreeSet<&str>> {
        let mut out: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
        for e in self.endpoints.values() {
            out.entry(&e.topic).or_default().insert(&e.type_name);
        }
        out
    }

    /// Take up to BATCH loaned samples of a builtin reader, hand each (with its info) to `each`.
    fn take_loaned(
        &self,
        reader: ffi::dds_entity_t,
        each: &mut dyn FnMut(*const c_void, &SampleInfo),
    ) {
        let api = self.api;
        loop {
            let mut buf = [std::ptr::null_mut::<c_void>(); BATCH];
            let mut si = [SampleInfo::default(); BATCH];
            // SAFETY: null buffer entries ask Cyclone to loan the samples; returned below.
            let n = unsafe {
                (api.dds_take)(
                    reader,
                    buf.as_mut_ptr(),
                    si.as_mut_ptr(),
                    BATCH,
                    BATCH as u32,
                )
            };
            if n <= 0 {
                return;
            }
            for i in 0..n as usize {
                each(buf[i], &si[i]);
            }
            // SAFETY: returning exactly the loan taken.
            unsafe { (api.dds_return_loan)(reader, buf.as_mut_ptr(), n) };
            if (n as usize) < BATCH {
                return;
            }
        }
    }

    fn poll_participants(&mut self, sink: &dyn Sink) {
        let mut seen = Vec::new();
        self.take_loaned(self.participants, &mut |p, si| {
            // SAFETY: a loaned DCPSParticipant sample (its key valid even without data).
            let key = unsafe { (*(p as *const BuiltinParticipant)).key };
            seen.push((key, si.instance_state == ffi::DDS_IST_ALIVE));
        });
        for (guid, alive) in seen {
            if guid == self.own {
                continue;
            }
            let changed = if alive {
                self.alive.insert(guid)
            } else {
                self.alive.remove(&guid)
            };
            if changed {
                sink.event(&Event::Participant { guid, alive });
            }
        }
    }

    fn poll_endpoints(&mut self, writer: bool, sink: &dyn Sink) {
        let api = self.api;
        let reader = if writer {
            self.publications
        } else {
            self.subscriptions
        };
        let mut seen = Vec::new();
        self.take_loaned(reader, &mut |p, si| {
            // SAFETY: a loaned DCPSPublication/DCPSSubscription sample; its strings and QoS
            // are valid when valid_data is set.
            let e = unsafe { &*(p as *const BuiltinEndpoint) };
            let alive = si.instance_state == ffi::DDS_IST_ALIVE;
            if !si.valid_data || e.topic_name.is_null() || e.type_name.is_null() {
                seen.push((e.key, None, alive));
                return;
            }
            let text = |s| unsafe { CStr::from_ptr(s) }.to_string_lossy().into_owned();
            seen.push((
                e.key,
                Some(Endpoint {
                    writer,
                    guid: e.key,
                    participant: e.participant_key,
                    topic: text(e.topic_name),
                    type_name: text(e.type_name),
                    // SAFETY: the sample's QoS, valid with its data.
                    qos: unsafe { endpoint_qos::read(api, e.qos, writer, &e.key) },
                    alive,
                }),
                alive,
            ));
        });
        for (guid, endpoint, alive) in seen {
            let known = match endpoint {
                Some(e) if e.participant != self.own => e,
                Some(_) => continue,
                None => match self.endpoints.get(&guid) {
                    Some(e) => e.clone(),
                    None => continue,
                },
            };
            let mut known = known;
            known.alive = alive;
            if self
                .endpoints
                .get(&guid)
                .is_none_or(|old| old.alive != alive || old.qos != known.qos)
            {
                sink.event(&Event::Endpoint(known.clone()));
            }
            self.endpoints.insert(guid, known);
        }
    }

    fn poll_graph(&mut self, sink: &dyn Sink) {
        let mut parsed = Vec::new();
        // SAFETY: the graph reader is a raw reader.
        unsafe {
            raw::take(self.api, self.graph.reader, &mut |size, read| {
                let mut buf = vec![0u8; (size as usize).min(MAX_GRAPH_SAMPLE)];
                let len = read(&mut buf);
                if let Some(p) = node_info::parse(&buf[..len]) {
                    parsed.push(p);
                }
            })
        };
        for p in parsed {
            if p.participant != self.own {
                sink.event(&Event::Nodes {
                    participant: p.participant,
                    nodes: p.nodes,
                });
            }
        }
    }
}
