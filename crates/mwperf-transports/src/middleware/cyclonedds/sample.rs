//! The one receive sample Cyclone deserializes into, reused for every `take`: its `data` buffer is
//! allocated by Cyclone on the first sample and grown (realloc) only for a larger one, so steady
//! state receiving allocates nothing. Freed with `dds_free` on drop. Generic over the generated
//! type ([`Bytes`] for topics, [`SrvBytes`] for services): both carry the message in `data`.

use std::ffi::c_void;

use super::ffi::{Api, Bytes, SeqOctet, SrvBytes};

/// A generated C type whose `data` field holds the message.
pub trait Message {
    /// A value with an empty `data` (maximum 0, release false: Cyclone mallocs on first use).
    fn empty() -> Self;
    fn data(&self) -> &SeqOctet;
    fn data_mut(&mut self) -> &mut SeqOctet;
}

fn empty_seq() -> SeqOctet {
    SeqOctet {
        maximum: 0,
        length: 0,
        buffer: std::ptr::null_mut(),
        release: false,
    }
}

impl Message for Bytes {
    fn empty() -> Self {
        Bytes {
            data: empty_seq(),
            time: 0,
            id: 0,
        }
    }
    fn data(&self) -> &SeqOctet {
        &self.data
    }
    fn data_mut(&mut self) -> &mut SeqOctet {
        &mut self.data
    }
}

impl Message for SrvBytes {
    fn empty() -> Self {
        SrvBytes {
            guid: 0,
            seq: 0,
            data: empty_seq(),
        }
    }
    fn data(&self) -> &SeqOctet {
        &self.data
    }
    fn data_mut(&mut self) -> &mut SeqOctet {
        &mut self.data
    }
}

pub struct Sample<M: Message = Bytes> {
    api: &'static Api,
    value: Box<M>,
}

// SAFETY: the buffer is owned by this value alone (Cyclone writes it only during our own `take`).
unsafe impl<M: Message> Send for Sample<M> {}

impl<M: Message> Sample<M> {
    pub fn new(api: &'static Api) -> Sample<M> {
        Sample {
            api,
            value: Box::new(M::empty()),
        }
    }

    /// The pointer `dds_take` fills.
    pub fn as_mut_ptr(&mut self) -> *mut c_void {
        (&mut *self.value as *mut M).cast()
    }

    /// The last sample taken (its fields besides `data`).
    pub fn value(&self) -> &M {
        &self.value
    }

    /// The `data` of the last sample taken.
    pub fn data(&self) -> &[u8] {
        let d = self.value.data();
        if d.buffer.is_null() || d.length == 0 {
            return &[];
        }
        // SAFETY: Cyclone set buffer/length for the sample it deserialized; length <= maximum.
        unsafe { std::slice::from_raw_parts(d.buffer, d.length.min(d.maximum) as usize) }
    }
}

impl<M: Message> Drop for Sample<M> {
    fn drop(&mut self) {
        let d = self.value.data_mut();
        if d.release && !d.buffer.is_null() {
            // SAFETY: Cyclone allocated this buffer (release = true) and nothing else refers to it.
            unsafe { (self.api.dds_free)(d.buffer.cast()) };
            d.buffer = std::ptr::null_mut();
        }
    }
}
