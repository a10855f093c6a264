//! Topics of a ROS 2 type carried as serialized samples (`--opt ros2-type`): `cdr_type.c`'s
//! sertype under the type's ROS 2 DDS name; the CDR is mwperf's ros2 layouts'
//! ([`super::super::ros2_wire`]). Writes go through `dds_writecdr`, takes through
//! `dds_takecdr` (the serialized sample read back with `ddsi_serdata_to_ser`).

use std::ffi::{c_void, CString};
use std::sync::Once;

use super::ffi::{self, Api, Serdata, Sertype};
use super::{check, T};
use crate::TransportError;

/// Hand libddsc's functions to cdr_type.c (once per process).
fn setup(api: &Api) {
    static DONE: Once = Once::new();
    DONE.call_once(|| {
        let from = ffi::CdrApi {
            sertype_init: api.ddsi_sertype_init,
            sertype_fini: api.ddsi_sertype_fini,
            serdata_init: api.ddsi_serdata_init,
            sertype_v0: api.ddsi_sertype_v0,
        };
        // SAFETY: the functions are libddsc's (alive for the process); the C side copies them.
        unsafe { ffi::mwperf_cdr_setup(&from) };
    });
}

/// Topic `name` of the serialized type `type_name` in `participant`: (topic, its sertype, valid
/// while the topic exists).
pub fn create_topic(
    api: &Api,
    participant: ffi::dds_entity_t,
    name: &str,
    type_name: &str,
) -> Result<(ffi::dds_entity_t, *const Sertype), TransportError> {
    setup(api);
    let cname = CString::new(name)
        .map_err(|_| TransportError::Address(format!("topic name {name:?} contains NUL")))?;
    let ctype = CString::new(type_name).expect("ROS 2 type names have no NUL");
    // SAFETY: a fresh sertype (or NULL when out of memory), handed to Cyclone below.
    let mut sertype = unsafe { ffi::mwperf_cdr_sertype(ctype.as_ptr()) };
    if sertype.is_null() {
        return Err(TransportError::Middleware {
            transport: T,
            detail: format!("cannot allocate the type {type_name}"),
        });
    }
    // SAFETY: valid participant and sertype; Cyclone takes the sertype over (replacing the
    // pointer by an equal one it already had) and copies the name.
    let t = unsafe {
        (api.dds_create_topic_sertype)(
            participant,
            cname.as_ptr(),
            &mut sertype,
            std::ptr::null(),
            std::ptr::null(),
            std::ptr::null(),
        )
    };
    let t = check(api, t, format_args!("creating topic {name} of {type_name}"))?;
    Ok((t, sertype))
}

/// Write `cdr` (a serialized sample, header included) on `writer`; the return code as
/// `dds_writecdr`'s.
pub fn write(api: &Api, writer: ffi::dds_entity_t, sertype: *const Sertype, cdr: &[u8]) -> i32 {
    // SAFETY: the sertype is the writer's topic's (alive with it); the serdata copies `cdr`,
    // and dds_writecdr takes its one reference.
    unsafe {
        let d = ffi::mwperf_cdr_serdata(sertype, cdr.as_ptr().cast::<c_void>(), cdr.len());
        if d.is_null() {
            return -1;
        }
        (api.dds_writecdr)(writer, d)
    }
}

/// Take one serialized sample with data from `reader` into `out` (replacing what it held):
/// Ok(true) one taken, Ok(false) none there.
pub fn take(
    api: &Api,
    reader: ffi::dds_entity_t,
    topic: &str,
    out: &mut Vec<u8>,
) -> Result<bool, TransportError> {
    loop {
        let mut sd = [std::ptr::null_mut::<Serdata>(); 1];
        let mut si = [ffi::SampleInfo::default(); 1];
        // SAFETY: one serdata slot and one info slot.
        let n = unsafe {
            (api.dds_takecdr)(
                reader,
                sd.as_mut_ptr(),
                1,
                si.as_mut_ptr(),
                ffi::DDS_ANY_STATE,
            )
        };
        check(api, n, format_args!("taking from {topic}"))?;
        if n == 0 {
            return Ok(false);
        }
        let d = sd[0];
        // SAFETY: Cyclone handed us one reference to `d`, released once below.
        unsafe {
            let valid = si[0].valid_data;
            if valid {
                let size = (api.ddsi_serdata_size)(d) as usize;
                out.clear();
                out.resize(size, 0);
                (api.ddsi_serdata_to_ser)(d, 0, size, out.as_mut_ptr().cast());
            }
            (api.ddsi_serdata_unref)(d);
            if valid {
                return Ok(true);
            }
        }
    }
}
