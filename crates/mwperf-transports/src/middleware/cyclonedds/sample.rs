//! The one receive sample Cyclone deserializes into, reused for every `take`: its `data` buffer is
//! allocated by Cyclone on the first sample and grown (realloc) only for a larger one, so steady
//! state receiving allocates nothing. Freed with `dds_free` on drop.

use std::ffi::c_void;

use super::ffi::{Api, Bytes, SeqOctet};

pub struct Sample {
    api: &'static Api,
    bytes: Box<Bytes>,
}

// SAFETY: the buffer is owned by this value alone (Cyclone writes it only during our own `take`).
unsafe impl Send for Sample {}

impl Sample {
    pub fn new(api: &'static Api) -> Sample {
        // maximum 0 and release false: Cyclone mallocs the buffer and sets release on first use.
        let data = SeqOctet {
            maximum: 0,
            length: 0,
            buffer: std::ptr::null_mut(),
            release: false,
        };
        Sample {
            api,
            bytes: Box::new(Bytes {
                data,
                time: 0,
                id: 0,
            }),
        }
    }

    /// The pointer `dds_take` fills.
    pub fn as_mut_ptr(&mut self) -> *mut c_void {
        (&mut *self.bytes as *mut Bytes).cast()
    }

    /// The `data` of the last sample taken.
    pub fn data(&self) -> &[u8] {
        let d = &self.bytes.data;
        if d.buffer.is_null() || d.length == 0 {
            return &[];
        }
        // SAFETY: Cyclone set buffer/length for the sample it deserialized; length <= maximum.
        unsafe { std::slice::from_raw_parts(d.buffer, d.length.min(d.maximum) as usize) }
    }
}

impl Drop for Sample {
    fn drop(&mut self) {
        let d = &mut self.bytes.data;
        if d.release && !d.buffer.is_null() {
            // SAFETY: Cyclone allocated this buffer (release = true) and nothing else refers to it.
            unsafe { (self.api.dds_free)(d.buffer.cast()) };
            d.buffer = std::ptr::null_mut();
        }
    }
}
