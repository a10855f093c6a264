//! Eclipse Cyclone DDS (the system libddsc 0.10, as in ROS 2 Humble) with ROS 2 conventions, so
//! a ROS 2 node could be the echo peer: topics `rt/mwperf/<base>/ping|pong`, type
//! `mwperf_msgs::msg::dds_::Bytes_` (ROS 2 `mwperf_msgs/msg/Bytes`) carrying the whole mwperf
//! message in `data` (`time` = header sent_ns, `id` = header seq, informational).
//!
//! One participant per endpoint in the domain of the address, pinned to loopback
//! ([`domain::LOOPBACK_CONFIG`]); with `Spec::shared_session` (a graph node) one per domain and
//! process instead, shared by the endpoints ([`participant`]), each still with its own topic,
//! reader, writer, QoS and waitset. The writer (if the side publishes) is created at open, so the
//! peer's `wait_matched` sees it; the reader (if the side subscribes) sits in a waitset: `recv`
//! takes without blocking first and sleeps in the waitset only when nothing is there (waits
//! capped at [`MAX_WAIT_NS`]: Cyclone resumes its waits after signals, so callers get control
//! back to check their stop flag). Received data is copied once, from the sample Cyclone
//! deserialized into (reused, see `sample.rs`) into the caller's buffer.
//!
//! Options (`--opt`): `max-blocking=<duration>` (how long a reliable write may wait for a full
//! history to drain, default 100ms), `config=<xml or file://...>` (the Cyclone configuration
//! instead of the loopback one, e.g. for two hosts), `ros-node=[<namespace>/]<name>` (announce
//! the endpoint as a ROS 2 node on `ros_discovery_info`, see `graph.rs`), `ros2-type=<pkg>/msg/
//! <Type>` (the topics carry that real ROS 2 type under its ROS 2 DDS name, as CDR written and
//! read by mwperf's ros2 layouts and handed to Cyclone serialized, `cdr_type.rs`: real ROS 2
//! nodes are the peers; without `config` the domain is then the loopback configuration on this
//! host's address instead of 127.0.0.1, where a ROS 2 node announces itself).

#[cfg(mwperf_cyclonedds)]
mod cdr_type;
#[cfg(mwperf_cyclonedds)]
pub(crate) mod domain;
#[cfg(mwperf_cyclonedds)]
mod ffi;
#[cfg(mwperf_cyclonedds)]
mod graph;
#[cfg(mwperf_cyclonedds)]
mod participant;
#[cfg(mwperf_cyclonedds)]
pub mod probe;
#[cfg(mwperf_cyclonedds)]
mod qos;
#[cfg(mwperf_cyclonedds)]
mod sample;
pub mod service;

use crate::{Endpoint, Side, Spec, TransportError};

/// Longest single sleep in `recv`.
#[cfg(mwperf_cyclonedds)]
pub const MAX_WAIT_NS: u64 = 50_000_000;

/// Open `side` at `spec.addr` (`[<domain>/]<base>`).
pub fn open(side: Side, spec: &Spec) -> Result<Box<dyn Endpoint>, TransportError> {
    #[cfg(mwperf_cyclonedds)]
    return Ok(Box::new(CycloneEndpoint::open(side, spec)?));
    #[cfg(not(mwperf_cyclonedds))]
    {
        let _ = (side, spec);
        Err(TransportError::Missing {
            what: "Cyclone DDS (this build found no idlc/libddsc headers)".into(),
            install: "install it: apt-get install cyclonedds-dev cyclonedds-tools, then rebuild"
                .into(),
        })
    }
}

#[cfg(mwperf_cyclonedds)]
use {
    super::dds_address::Address,
    super::ros2_wire::{self, Ros2Wire},
    ffi::{Api, SampleInfo},
    mwperf_core::wire::Header,
    sample::Sample,
    std::ffi::{c_void, CString},
};

#[cfg(mwperf_cyclonedds)]
const T: &str = "cyclonedds";

/// A Cyclone return code < 0 as an error naming what failed; else the value.
/// `what` is formatted only on failure (pass `format_args!`): this runs on every send and take.
#[cfg(mwperf_cyclonedds)]
fn check(api: &Api, rc: i32, what: impl std::fmt::Display) -> Result<i32, TransportError> {
    if rc < 0 {
        return Err(TransportError::Middleware {
            transport: T,
            detail: format!("{what}: {}", ffi::retcode_text(api, rc)),
        });
    }
    Ok(rc)
}

/// `--opt max-blocking` in ns (the default when absent).
#[cfg(mwperf_cyclonedds)]
fn max_blocking(opts: &crate::spec::Options<'_>) -> Result<u64, TransportError> {
    match opts.get("max-blocking") {
        Some(v) => {
            mwperf_core::units::parse_duration_ns(v).map_err(|e| TransportError::Unsupported {
                transport: T,
                what: format!("--opt max-blocking={v} ({e}; e.g. 100ms)"),
            })
        }
        None => Ok(qos::DEFAULT_MAX_BLOCKING_NS),
    }
}

/// Topic `name` of the type `descriptor` in `participant` (the caller deletes it).
#[cfg(mwperf_cyclonedds)]
fn create_topic(
    api: &Api,
    participant: ffi::dds_entity_t,
    descriptor: *const ffi::dds_topic_descriptor_t,
    name: &str,
) -> Result<ffi::dds_entity_t, TransportError> {
    let cname = CString::new(name)
        .map_err(|_| TransportError::Address(format!("topic name {name:?} contains NUL")))?;
    // SAFETY: valid participant and descriptor; Cyclone copies the name.
    let t = unsafe {
        (api.dds_create_topic)(
            participant,
            descriptor,
            cname.as_ptr(),
            std::ptr::null(),
            std::ptr::null(),
        )
    };
    check(api, t, format_args!("creating topic {name}"))
}

/// A writer on `topic` (named `name`) with `qos` (`what` is its mwperf form, for errors).
#[cfg(mwperf_cyclonedds)]
fn create_writer(
    api: &Api,
    participant: ffi::dds_entity_t,
    topic: ffi::dds_entity_t,
    qos: &qos::QosHandle<'_>,
    name: &str,
    what: &crate::Qos,
) -> Result<ffi::dds_entity_t, TransportError> {
    // SAFETY: valid participant, topic and QoS handles.
    let w = unsafe { (api.dds_create_writer)(participant, topic, qos.ptr, std::ptr::null()) };
    check(api, w, format_args!("creating a writer on {name} ({what})"))
}

/// A reader on `topic` and a waitset of `participant` holding it, triggered by DATA_AVAILABLE
/// (see [`Inbox`] for why the status); (reader, waitset).
#[cfg(mwperf_cyclonedds)]
fn reader_with_waitset(
    api: &Api,
    participant: ffi::dds_entity_t,
    topic: ffi::dds_entity_t,
    qos: &qos::QosHandle<'_>,
    name: &str,
    what: &crate::Qos,
) -> Result<(ffi::dds_entity_t, ffi::dds_entity_t), TransportError> {
    // SAFETY: valid participant, topic and QoS handles; the waitset belongs to this participant.
    unsafe {
        let r = check(
            api,
            (api.dds_create_reader)(participant, topic, qos.ptr, std::ptr::null()),
            format_args!("creating a reader on {name} ({what})"),
        )?;
        let ws = check(
            api,
            (api.dds_set_status_mask)(r, ffi::DDS_DATA_AVAILABLE_STATUS),
            "setting the reader's status mask",
        )
        .and_then(|_| {
            check(
                api,
                (api.dds_create_waitset)(participant),
                "creating a waitset",
            )
        });
        let ws = match ws {
            Ok(ws) => ws,
            Err(e) => {
                (api.dds_delete)(r);
                return Err(e);
            }
        };
        if let Err(e) = check(
            api,
            (api.dds_waitset_attach)(ws, r, 0),
            "attaching the reader to a waitset",
        ) {
            (api.dds_delete)(ws);
            (api.dds_delete)(r);
            return Err(e);
        }
        Ok((r, ws))
    }
}

/// Sleep in `waitset` at most `wait_ns` (capped at [`MAX_WAIT_NS`]); true = triggered.
#[cfg(mwperf_cyclonedds)]
fn wait(api: &Api, waitset: ffi::dds_entity_t, wait_ns: u64) -> Result<bool, TransportError> {
    // SAFETY: valid waitset; no attach array wanted (the reader is the only entry).
    let rc = unsafe {
        (api.dds_waitset_wait)(
            waitset,
            std::ptr::null_mut(),
            0,
            wait_ns.min(MAX_WAIT_NS) as i64,
        )
    };
    check(api, rc, "waiting for data").map(|rc| rc > 0)
}

/// Readers matched to `writer` (on topic `name`).
#[cfg(mwperf_cyclonedds)]
fn writer_matched(api: &Api, writer: ffi::dds_entity_t, name: &str) -> Result<u32, TransportError> {
    let mut st = ffi::MatchedStatus::default();
    // SAFETY: valid writer; the status struct mirrors the C one (layout test).
    let rc = unsafe { (api.dds_get_publication_matched_status)(writer, &mut st) };
    check(
        api,
        rc,
        format_args!("matched status of the writer on {name}"),
    )?;
    Ok(st.current_count)
}

/// Writers matched to `reader` (on topic `name`).
#[cfg(mwperf_cyclonedds)]
fn reader_matched(api: &Api, reader: ffi::dds_entity_t, name: &str) -> Result<u32, TransportError> {
    let mut st = ffi::MatchedStatus::default();
    // SAFETY: valid reader; the status struct mirrors the C one (layout test).
    let rc = unsafe { (api.dds_get_subscription_matched_status)(reader, &mut st) };
    check(
        api,
        rc,
        format_args!("matched status of the reader on {name}"),
    )?;
    Ok(st.current_count)
}

/// The subscribing half: the reader and a waitset holding it, triggered by DATA_AVAILABLE.
///
/// Why the status and not a read condition: Cyclone raises DATA_AVAILABLE after the sample is
/// stored and the reader's history is unlocked, while a read condition wakes the waitset from
/// inside the store, so the woken thread's `take` then blocks on the lock the receive thread still
/// holds (one more sleep and wake-up per message; ddsperf's waitset mode uses the status too).
/// The status is reset by every take, so `recv` always takes before it waits: it never sleeps
/// with samples left behind.
#[cfg(mwperf_cyclonedds)]
struct Inbox {
    reader: ffi::dds_entity_t,
    waitset: ffi::dds_entity_t,
    topic: String,
    /// Samples taken in one `dds_take` (up to [`TAKE_BATCH`]), handed out one per `recv`:
    /// one take (one reader lock) per batch instead of per message.
    samples: Vec<Sample>,
    infos: Vec<SampleInfo>,
    /// Taken so far in the current batch, and the next one to hand out.
    have: usize,
    next: usize,
    /// The size of the last message, to keep a batch's buffers near [`TAKE_BYTES`].
    last_len: usize,
}

/// The most samples one take returns, and the payload bytes a batch aims at (a batch of large
/// messages is smaller: each sample keeps a buffer of its message's size).
const TAKE_BATCH: usize = 32;
const TAKE_BYTES: usize = 1 << 20;

#[cfg(mwperf_cyclonedds)]
pub struct CycloneEndpoint {
    api: &'static Api,
    /// This endpoint's writer, reader, waitset and topics live in it; dropped last.
    participant: crate::session::SessionRef<participant::Participant>,
    writer: Option<(ffi::dds_entity_t, String)>,
    inbox: Option<Inbox>,
    /// The topic entities this endpoint created (deleted after its reader and writer).
    topics: Vec<ffi::dds_entity_t>,
    addr: Address,
    /// `--opt batch=true`: writes are batched; `drain` flushes them.
    batch: bool,
    /// `--opt ros2-type`: the type, the writer's topic's sertype (serialized samples), and the
    /// CDR buffer reused by `send` and `take`.
    ros2: Option<(Ros2Wire, *const ffi::Sertype, Vec<u8>)>,
    /// Samples of the ROS 2 type that held no readable message (a foreign publisher).
    malformed: u64,
}

// SAFETY: the sertype pointer is only read (by Cyclone, when a serdata of it is made); the
// endpoint is used from one thread at a time.
#[cfg(mwperf_cyclonedds)]
unsafe impl Send for CycloneEndpoint {}

#[cfg(mwperf_cyclonedds)]
impl CycloneEndpoint {
    pub fn open(side: Side, spec: &Spec) -> Result<CycloneEndpoint, TransportError> {
        let opts = spec.options_of(&super::cyclonedds_descriptor::DESCRIPTOR)?;
        let max_blocking = max_blocking(&opts)?;
        let batch = match opts.get("batch") {
            None | Some("false") => false,
            Some("true") => true,
            Some(v) => {
                return Err(TransportError::Unsupported {
                    transport: T,
                    what: format!("--opt batch={v} (allowed: true, false)"),
                })
            }
        };
        let addr = Address::parse(T, &spec.addr, side.is_listener())?;
        let api = ffi::api()?;
        if spec.shared_session && opts.get("ros-node").is_some() {
            return Err(TransportError::Unsupported {
                transport: T,
                what: "--opt ros-node in a graph node (its endpoints share one participant; announce it once per node is not implemented)".into(),
            });
        }
        let wire = Ros2Wire::from_opt(T, opts.get(ros2_wire::OPT))?;
        let host_config = match (opts.get("config"), &wire) {
            (None, Some(_)) => Some(domain::LOOPBACK_CONFIG.replace(
                "127.0.0.1",
                &ros2_wire::host_address(T, "--opt config")?.to_string(),
            )),
            _ => None,
        };
        domain::ensure(
            api,
            addr.domain,
            opts.get("config").or(host_config.as_deref()),
        )?;
        let shared = participant::Participant::session(api, addr.domain, spec.shared_session)?;
        let participant = shared.handle;
        // From here on, dropping `ep` deletes what it created (and the participant with its
        // last endpoint).
        let mut ep = CycloneEndpoint {
            api,
            participant: shared,
            writer: None,
            inbox: None,
            topics: Vec::new(),
            addr,
            batch,
            ros2: wire.map(|w| (w, std::ptr::null(), Vec::new())),
            malformed: 0,
        };
        if batch {
            // process-wide in Cyclone: every writer of this agent batches
            // SAFETY: a plain setter of the library's global write-batching flag.
            unsafe { (api.dds_write_set_batch)(true) };
        }
        let qos = qos::build(api, &spec.qos, max_blocking)?;
        if let Some(suffix) = side.out_topic() {
            let name = ep.addr.topic(suffix);
            let topic = ep.topic(&name)?;
            let w = create_writer(api, participant, topic.0, &qos, &name, &spec.qos)?;
            if let Some(r) = ep.ros2.as_mut() {
                r.1 = topic.1;
            }
            ep.writer = Some((w, name));
        }
        if let Some(suffix) = side.in_topic() {
            let name = ep.addr.topic(suffix);
            let topic = ep.topic(&name)?;
            let (reader, waitset) =
                reader_with_waitset(api, participant, topic.0, &qos, &name, &spec.qos)?;
            ep.inbox = Some(Inbox {
                reader,
                waitset,
                topic: name,
                samples: (0..TAKE_BATCH).map(|_| Sample::new(api)).collect(),
                infos: vec![SampleInfo::default(); TAKE_BATCH],
                have: 0,
                next: 0,
                last_len: 0,
            });
        }
        if let Some(node) = opts.get("ros-node") {
            let readers: Vec<_> = ep.inbox.iter().map(|i| i.reader).collect();
            let writers: Vec<_> = ep.writer.iter().map(|(w, _)| *w).collect();
            graph::announce(api, participant, node, &readers, &writers)?;
        }
        Ok(ep)
    }

    /// The topic `name` of the mwperf type (or of `--opt ros2-type`, with its sertype) in this
    /// participant (an entity of this endpoint's: Cyclone gives each create its own, even for a
    /// name the participant has already).
    fn topic(
        &mut self,
        name: &str,
    ) -> Result<(ffi::dds_entity_t, *const ffi::Sertype), TransportError> {
        let (t, sertype) = match &self.ros2 {
            Some((wire, _, _)) => {
                cdr_type::create_topic(self.api, self.participant.handle, name, &wire.type_name)?
            }
            None => (
                create_topic(
                    self.api,
                    self.participant.handle,
                    ffi::bytes_descriptor(),
                    name,
                )?,
                std::ptr::null(),
            ),
        };
        self.topics.push(t);
        Ok((t, sertype))
    }

    /// Hand out the next sample with data (skipping the data-less ones Cyclone uses for writer
    /// state), taking a new batch when the last one is used up.
    fn take(&mut self, buf: &mut Vec<u8>) -> Result<Option<usize>, TransportError> {
        let api = self.api;
        let Some(inbox) = self.inbox.as_mut() else {
            return Ok(None);
        };
        if let Some((wire, _, cdr)) = self.ros2.as_mut() {
            // samples that are no readable message of the type (a foreign publisher) are
            // counted and skipped
            loop {
                if !cdr_type::take(api, inbox.reader, &inbox.topic, cdr)? {
                    return Ok(None);
                }
                match wire.decode(cdr) {
                    Ok(data) => {
                        buf.clear();
                        buf.extend_from_slice(data);
                        return Ok(Some(data.len()));
                    }
                    Err(_) => self.malformed += 1,
                }
            }
        }
        loop {
            while inbox.next < inbox.have {
                let i = inbox.next;
                inbox.next += 1;
                if inbox.infos[i].valid_data {
                    let data = inbox.samples[i].data();
                    buf.clear();
                    buf.extend_from_slice(data);
                    inbox.last_len = data.len();
                    return Ok(Some(data.len()));
                }
            }
            let batch = (TAKE_BYTES / inbox.last_len.max(1)).clamp(1, TAKE_BATCH);
            let mut ptrs = [std::ptr::null_mut(); TAKE_BATCH];
            for (p, s) in ptrs.iter_mut().zip(inbox.samples.iter_mut()).take(batch) {
                *p = s.as_mut_ptr();
            }
            // SAFETY: `batch` sample slots of the generated type (our own buffers, which Cyclone
            // fills) and as many info slots.
            let n = unsafe {
                (api.dds_take)(
                    inbox.reader,
                    ptrs.as_mut_ptr(),
                    inbox.infos.as_mut_ptr(),
                    batch,
                    batch as u32,
                )
            };
            check(api, n, format_args!("taking from {}", inbox.topic))?;
            (inbox.have, inbox.next) = (n.max(0) as usize, 0);
            if n == 0 {
                return Ok(None);
            }
        }
    }

    /// Matched peers: (readers of our writer, writers of our reader); `None` where we have none.
    fn matched(&self) -> Result<(Option<u32>, Option<u32>), TransportError> {
        let w = match &self.writer {
            Some((w, name)) => Some(writer_matched(self.api, *w, name)?),
            None => None,
        };
        let r = match &self.inbox {
            Some(i) => Some(reader_matched(self.api, i.reader, &i.topic)?),
            None => None,
        };
        Ok((w, r))
    }
}

#[cfg(mwperf_cyclonedds)]
impl Endpoint for CycloneEndpoint {
    /// `--opt batch=true`: send what the writer's batch holds.
    fn drain(&mut self, _limit_ns: u64) {
        if let (true, Some((writer, _))) = (self.batch, &self.writer) {
            // SAFETY: a valid writer entity of this endpoint.
            unsafe { (self.api.dds_write_flush)(*writer) };
        }
    }

    fn send(&mut self, msg: &[u8]) -> Result<(), TransportError> {
        let Some((writer, name)) = &self.writer else {
            return Err(TransportError::Middleware {
                transport: T,
                detail: "a sub endpoint does not publish".into(),
            });
        };
        let len = u32::try_from(msg.len()).map_err(|_| TransportError::TooLarge {
            size: msg.len(),
            max: u32::MAX as usize,
            transport: T,
        })?;
        if let Some((wire, sertype, cdr)) = self.ros2.as_mut() {
            wire.encode(cdr, msg)
                .map_err(|e| TransportError::Unsupported {
                    transport: T,
                    what: e,
                })?;
            let rc = cdr_type::write(self.api, *writer, *sertype, cdr);
            if rc == ffi::DDS_RETCODE_TIMEOUT {
                return Err(TransportError::Blocked { transport: T, detail: format!("write on {name} timed out after --opt max-blocking: the reliable history is full of unacknowledged messages (--history)") });
            }
            return check(self.api, rc, format_args!("writing on {name}")).map(|_| ());
        }
        let (time, id) = Header::decode_header(msg).map_or((0, 0), |h| (h.sent_ns as i64, h.seq));
        // Cyclone only reads the sample (release = false: the buffer stays ours).
        let sample = ffi::Bytes {
            data: ffi::SeqOctet {
                maximum: len,
                length: len,
                buffer: msg.as_ptr() as *mut u8,
                release: false,
            },
            time,
            id,
        };
        // SAFETY: valid writer; the sample points into `msg`, alive for the call; Cyclone serializes it before returning.
        let rc = unsafe {
            (self.api.dds_write)(*writer, (&sample as *const ffi::Bytes).cast::<c_void>())
        };
        if rc == ffi::DDS_RETCODE_TIMEOUT {
            return Err(TransportError::Blocked { transport: T, detail: format!("write on {name} timed out after --opt max-blocking: the reliable history is full of unacknowledged messages (--history)") });
        }
        check(self.api, rc, format_args!("writing on {name}")).map(|_| ())
    }

    fn recv(&mut self, buf: &mut Vec<u8>, wait_ns: u64) -> Result<Option<usize>, TransportError> {
        let Some(waitset) = self.inbox.as_ref().map(|i| i.waitset) else {
            // A pub receives nothing; still honour the wait so callers do not spin.
            std::thread::sleep(std::time::Duration::from_nanos(wait_ns.min(MAX_WAIT_NS)));
            return Ok(None);
        };
        if let Some(n) = self.take(buf)? {
            return Ok(Some(n));
        }
        if wait_ns == 0 {
            return Ok(None);
        }
        if !wait(self.api, waitset, wait_ns)? {
            return Ok(None);
        }
        self.take(buf)
    }

    fn local_addr(&self) -> String {
        self.addr.text()
    }

    /// Polls the matched statuses every millisecond (a waitset on them would share the reader's
    /// status mask with `recv`'s DATA_AVAILABLE waitset and wake both for either).
    fn matched_subscribers(&mut self) -> Option<u64> {
        self.matched().ok()?.0.map(u64::from)
    }

    fn matched_publishers(&mut self) -> Option<u64> {
        self.matched().ok()?.1.map(u64::from)
    }

    fn wait_matched(&mut self, timeout_ns: u64) -> Result<(), TransportError> {
        let out = self.writer.as_ref().map(|(_, name)| name.clone());
        let inp = self.inbox.as_ref().map(|i| i.topic.clone());
        super::dds_match::wait_matched(
            T,
            self.addr.domain,
            out.as_deref(),
            inp.as_deref(),
            timeout_ns,
            || self.matched(),
        )
    }
}

#[cfg(mwperf_cyclonedds)]
impl Drop for CycloneEndpoint {
    /// Deletes this endpoint's entities (a topic after its reader and writer); the participant
    /// goes when its last endpoint does (`participant.rs`).
    fn drop(&mut self) {
        let writer = self.writer.as_ref().map(|(w, _)| *w);
        let inbox = self.inbox.as_ref().map(|i| [i.waitset, i.reader]);
        let entities = writer
            .into_iter()
            .chain(inbox.into_iter().flatten())
            .chain(self.topics.iter().copied());
        for e in entities {
            // SAFETY: each entity is ours and deleted once; nothing refers to it afterwards (the
            // sample buffer is ours and freed by `Sample`).
            unsafe { (self.api.dds_delete)(e) };
        }
    }
}
