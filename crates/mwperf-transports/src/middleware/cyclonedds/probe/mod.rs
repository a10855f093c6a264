//! `mwperf-agent probe-ros2`: listen to a live ROS 2 (or any DDS) system on the wire with Cyclone
//! DDS, changing nothing in it. One participant of its own in the domain: discovery's builtin
//! topics and `ros_discovery_info` say who is there ([`discovery`]); every selected topic that has
//! a writer gets a type-agnostic reader ([`raw`]: serialized samples, best-effort and volatile
//! unless `reliable`), so no type support is needed. It creates no writer.
//!
//! Discovery runs `discovery_ns` first (readers are created as writers appear, so data already
//! flows when the window opens); then the window of `duration_ns` (the `Discovered` event marks
//! its start). Nothing discovered in the discovery time is an error naming the domain and
//! interface, as is a named topic nobody has.

mod config;
mod discovery;
mod endpoint_qos;
mod header_types;
mod node_info;
mod raw;

use std::collections::BTreeSet;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::ffi::{self, Api};
use super::{check, domain};
use crate::ros2probe::{selected_by_default, shown, Event, Options, Sink, MAX_DOMAIN};
use crate::TransportError;
use discovery::Discovery;
use raw::{RawReader, ReaderQos};

/// How often discovery is read and the clock checked.
const TICK: Duration = Duration::from_millis(20);

pub fn run(
    opts: &Options,
    stop: &dyn Fn() -> bool,
    sink: Arc<dyn Sink>,
) -> Result<(), TransportError> {
    if opts.domain > MAX_DOMAIN {
        return Err(TransportError::Address(format!(
            "--domain {}: a DDS domain id is from 0 to {MAX_DOMAIN}",
            opts.domain
        )));
    }
    if opts.depth < 1 {
        return Err(TransportError::Address(format!(
            "--depth {}: must be at least 1",
            opts.depth
        )));
    }
    let config = config::for_probe(opts)?;
    let api = ffi::api()?;
    domain::ensure(api, opts.domain, Some(&config))?;
    // SAFETY: plain constructor call; a negative return is an error code.
    let participant = check(
        api,
        unsafe { (api.dds_create_participant)(opts.domain, std::ptr::null(), std::ptr::null()) },
        format_args!("creating a participant in domain {}", opts.domain),
    )?;
    let mut own = [0u8; 16];
    // SAFETY: valid entity; Cyclone writes 16 bytes.
    unsafe { (api.dds_get_guid)(participant, &mut own) };
    let mut readers = Vec::new();
    let result = listen(api, participant, own, opts, stop, &sink, &mut readers);
    // SAFETY: deleting the participant deletes its readers (waiting for running listeners)
    // before their states and descriptors are freed below.
    unsafe { (api.dds_delete)(participant) };
    drop(readers);
    result
}

fn listen(
    api: &'static Api,
    participant: ffi::dds_entity_t,
    own: [u8; 16],
    opts: &Options,
    stop: &dyn Fn() -> bool,
    sink: &Arc<dyn Sink>,
    readers: &mut Vec<RawReader>,
) -> Result<(), TransportError> {
    let mut disc = Discovery::open(api, participant, own)?;
    let named: BTreeSet<&str> = opts.topics.iter().map(String::as_str).collect();
    let wanted = |topic: &str| {
        if named.is_empty() {
            selected_by_default(topic)
        } else {
            named.contains(topic)
        }
    };
    let mut tried: BTreeSet<(String, String)> = BTreeSet::new();
    let started = Instant::now();
    let mut window_end: Option<Instant> = None;
    loop {
        disc.poll(&**sink);
        // a reader for each (topic, type) written, or named and known from its readers
        let mut todo: Vec<(String, String)> = Vec::new();
        let sources = if named.is_empty() {
            disc.written()
        } else {
            disc.topics()
        };
        for (topic, types) in sources {
            for ty in types {
                let key = (topic.to_string(), ty.to_string());
                if wanted(topic) && !tried.contains(&key) {
                    todo.push(key);
                }
            }
        }
        for (topic, ty) in todo {
            let index = readers.len() as u32;
            let header = header_types::starts_with_header(&ty);
            let qos = ReaderQos {
                keyed: disc.keyed(&topic, &ty),
                reliable: opts.reliable,
                transient_local: false,
                depth: Some(opts.depth),
            };
            match raw::open(
                api,
                participant,
                &topic,
                &ty,
                &qos,
                index,
                header,
                Some(sink.clone()),
            ) {
                Ok(r) => {
                    readers.push(r);
                    sink.event(&Event::Subscribed {
                        index,
                        topic: topic.clone(),
                        type_name: ty.clone(),
                        header,
                    });
                }
                Err(e) => sink.event(&Event::SubscribeFailed {
                    topic: topic.clone(),
                    type_name: ty.clone(),
                    why: e.to_string(),
                }),
            }
            tried.insert((topic, ty));
        }
        let now = Instant::now();
        match window_end {
            None if now.duration_since(started).as_nanos() as u64 >= opts.discovery_ns => {
                check_discovered(opts, &disc)?;
                sink.event(&Event::Discovered);
                window_end = Some(now + Duration::from_nanos(opts.duration_ns));
            }
            Some(end) if now >= end => break,
            _ => {}
        }
        if stop() {
            break;
        }
        std::thread::sleep(TICK);
    }
    let lost = readers
        .iter()
        .map(|r| {
            let mut s = ffi::SampleLostStatus::default();
            // SAFETY: a valid reader and status struct.
            unsafe { (api.dds_get_sample_lost_status)(r.reader, &mut s) };
            u64::from(s.total_count)
        })
        .collect();
    let taken = readers
        .iter()
        .map(|r| r.state.taken.load(Ordering::Relaxed))
        .sum();
    sink.event(&Event::End { taken, lost });
    Ok(())
}

/// After the discovery time: somebody answered, and every named topic exists.
fn check_discovered(opts: &Options, disc: &Discovery) -> Result<(), TransportError> {
    let interface = format!(
        "interface {}, ROS_AUTOMATIC_DISCOVERY_RANGE={}{}",
        opts.interface.as_deref().unwrap_or("Cyclone's default"),
        opts.range.name(),
        if opts.static_peers.is_empty() {
            String::new()
        } else {
            format!(", ROS_STATIC_PEERS={}", opts.static_peers.join(";"))
        }
    );
    if disc.alive.is_empty() {
        return Err(TransportError::Middleware {
            transport: "cyclonedds",
            detail: format!(
                "nothing discovered on DDS domain {} ({interface}) within {:.1} s: no \
                 other participant; is the system on this domain (ROS_DOMAIN_ID) and reachable \
                 through this interface?",
                opts.domain,
                opts.discovery_ns as f64 / 1e9
            ),
        });
    }
    let topics = disc.topics();
    let missing: Vec<String> = opts
        .topics
        .iter()
        .filter(|t| !topics.contains_key(t.as_str()))
        .map(|t| shown(t))
        .collect();
    if !missing.is_empty() {
        let known: Vec<String> = topics
            .keys()
            .filter(|t| selected_by_default(t))
            .map(|t| shown(t))
            .collect();
        return Err(TransportError::Address(format!(
            "unknown topic {} on DDS domain {} ({interface}): no writer or reader has \
             it after {:.1} s of discovery; topics there: {}",
            missing.join(", "),
            opts.domain,
            opts.discovery_ns as f64 / 1e9,
            if known.is_empty() {
                "none".to_string()
            } else {
                known.join(", ")
            }
        )));
    }
    Ok(())
}
