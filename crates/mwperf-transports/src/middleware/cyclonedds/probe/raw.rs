//! A reader of one topic's samples as bytes (`raw_type.c`): Cyclone calls [`on_data`] on its
//! receive thread as samples arrive, which stamps the arrival (CLOCK_REALTIME, comparable with a
//! header's stamp), takes every sample serialized and hands its size (and header stamp) to the
//! sink. Nothing is deserialized or copied but the 12 bytes of a stamp.

use std::ffi::{c_void, CString};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use super::super::check;
use super::super::ffi::{self, Api, SampleInfo, Serdata};
use super::header_types::{stamp_ns, STAMP_BYTES};
use crate::ros2probe::Sink;
use crate::TransportError;

/// Copies a sample's first bytes into the buffer, returning how many it copied.
pub type ReadFirst<'a> = dyn Fn(&mut [u8]) -> usize + 'a;

/// Samples taken per `dds_takecdr` call.
const BATCH: usize = 32;

/// What the listener needs, alive as long as the reader.
pub struct Subscription {
    api: &'static Api,
    index: u32,
    header: bool,
    sink: Arc<dyn Sink>,
    pub taken: AtomicU64,
}

/// A reader and what it owns; its entities go with the participant.
pub struct RawReader {
    pub reader: ffi::dds_entity_t,
    pub state: Box<Subscription>,
    descriptor: *mut ffi::dds_topic_descriptor_t,
}

// SAFETY: the descriptor is only freed on drop; Cyclone entities are thread-safe handles.
unsafe impl Send for RawReader {}

impl Drop for RawReader {
    fn drop(&mut self) {
        // SAFETY: deleting the reader waits for a running listener; the descriptor was made by
        // mwperf_raw_descriptor and is freed once, after its topic's last user is gone (the
        // participant is deleted before the readers are dropped: see probe::run).
        unsafe { ffi::mwperf_raw_descriptor_free(self.descriptor) };
    }
}

/// Reader QoS: the probe's choice of reliability, volatile, keep-last `depth`; or what
/// `ros_discovery_info` needs (reliable, transient-local, keep-all).
pub struct ReaderQos {
    /// the writers' topic is keyed (raw_type.c)
    pub keyed: bool,
    pub reliable: bool,
    pub transient_local: bool,
    /// keep-last this many samples per instance; None: keep all
    pub depth: Option<i32>,
}

/// Create a topic of `type_name` called `topic` in `participant` and a reader of it. With
/// `listen`, samples go to `sink` as subscription `index` from Cyclone's receive thread; without,
/// the caller takes them (ros_discovery_info).
#[allow(clippy::too_many_arguments)]
pub fn open(
    api: &'static Api,
    participant: ffi::dds_entity_t,
    topic: &str,
    type_name: &str,
    qos: &ReaderQos,
    index: u32,
    header: bool,
    sink: Option<Arc<dyn Sink>>,
) -> Result<RawReader, TransportError> {
    let bad = |what: &str| TransportError::Address(format!("a NUL byte in the {what} name"));
    let c_topic = CString::new(topic).map_err(|_| bad("topic"))?;
    let c_type = CString::new(type_name).map_err(|_| bad("type"))?;
    // SAFETY: a valid C string; returns an owned descriptor or NULL.
    let descriptor = unsafe { ffi::mwperf_raw_descriptor(c_type.as_ptr(), qos.keyed) };
    if descriptor.is_null() {
        return Err(TransportError::Middleware {
            transport: "cyclonedds",
            detail: "cannot allocate a topic descriptor".into(),
        });
    }
    let listens = sink.is_some();
    let state = Box::new(Subscription {
        api,
        index,
        header,
        sink: sink.unwrap_or_else(|| Arc::new(Discard)),
        taken: AtomicU64::new(0),
    });
    let mut raw = RawReader {
        reader: 0,
        state,
        descriptor,
    };
    // SAFETY: valid participant, descriptor and names; QoS and listener are copied by Cyclone
    // and deleted here; the listener's argument (the boxed state) outlives the reader.
    unsafe {
        let t = check(
            api,
            (api.dds_create_topic)(
                participant,
                descriptor,
                c_topic.as_ptr(),
                std::ptr::null(),
                std::ptr::null(),
            ),
            format_args!("creating topic {topic} of type {type_name}"),
        )?;
        let q = (api.dds_create_qos)();
        let kind = if qos.reliable {
            ffi::DDS_RELIABILITY_RELIABLE
        } else {
            ffi::DDS_RELIABILITY_BEST_EFFORT
        };
        (api.dds_qset_reliability)(q, kind, 100_000_000);
        (api.dds_qset_durability)(
            q,
            if qos.transient_local {
                ffi::DDS_DURABILITY_TRANSIENT_LOCAL
            } else {
                ffi::DDS_DURABILITY_VOLATILE
            },
        );
        match qos.depth {
            Some(depth) => (api.dds_qset_history)(q, ffi::DDS_HISTORY_KEEP_LAST, depth),
            None => (api.dds_qset_history)(q, ffi::DDS_HISTORY_KEEP_ALL, 0),
        }
        let listener = if listens {
            let l =
                (api.dds_create_listener)((&*raw.state as *const Subscription).cast_mut().cast());
            (api.dds_lset_data_available)(l, Some(on_data));
            l
        } else {
            std::ptr::null_mut()
        };
        let r = (api.dds_create_reader)(participant, t, q, listener.cast_const().cast());
        (api.dds_delete_qos)(q);
        if !listener.is_null() {
            (api.dds_delete_listener)(listener);
        }
        raw.reader = check(api, r, format_args!("creating a reader of {topic}"))?;
    }
    Ok(raw)
}

/// Take every sample waiting in `reader`, calling `each` with its serialized length and a
/// function copying its first bytes into a buffer (returning how many it copied).
///
/// # Safety
/// `reader` is a reader of a raw topic.
pub unsafe fn take(
    api: &Api,
    reader: ffi::dds_entity_t,
    each: &mut dyn FnMut(u32, &ReadFirst),
) -> u64 {
    let mut sd = [std::ptr::null_mut::<Serdata>(); BATCH];
    let mut si = [SampleInfo::default(); BATCH];
    let mut taken = 0;
    loop {
        let n = (api.dds_takecdr)(
            reader,
            sd.as_mut_ptr(),
            BATCH as u32,
            si.as_mut_ptr(),
            ffi::DDS_ANY_STATE,
        );
        if n <= 0 {
            break;
        }
        for i in 0..n as usize {
            let d = sd[i];
            if si[i].valid_data {
                let size = (api.ddsi_serdata_size)(d);
                let read = |buf: &mut [u8]| {
                    let len = buf.len().min(size as usize);
                    (api.ddsi_serdata_to_ser)(d, 0, len, buf.as_mut_ptr().cast());
                    len
                };
                each(size, &read);
                taken += 1;
            }
            (api.ddsi_serdata_unref)(d);
        }
        if (n as usize) < BATCH {
            break;
        }
    }
    taken
}

/// Cyclone's data-available listener: stamp, take, report.
unsafe extern "C" fn on_data(reader: ffi::dds_entity_t, arg: *mut c_void) {
    // SAFETY: arg is the reader's boxed Subscription (RawReader keeps it alive).
    let sub = &*(arg as *const Subscription);
    let at = mwperf_core::clock::unix_now_ns();
    let header = sub.header;
    let n = take(sub.api, reader, &mut |size, read| {
        let stamp = if header {
            let mut b = [0u8; STAMP_BYTES];
            let len = read(&mut b);
            stamp_ns(&b[..len]).unwrap_or(-1)
        } else {
            -1
        };
        sub.sink.sample(at, sub.index, size, stamp);
    });
    sub.taken.fetch_add(n, Ordering::Relaxed);
}

/// The sink of a reader nobody listens to (never called).
struct Discard;

impl Sink for Discard {
    fn event(&self, _: &crate::ros2probe::Event) {}
    fn sample(&self, _: u64, _: u32, _: u32, _: i64) {}
}
