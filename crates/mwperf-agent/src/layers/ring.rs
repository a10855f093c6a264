//! PLACEHOLDER until the interposer's reader lands (helper A's ring.rs replaces this file).
#![allow(dead_code)]

#[derive(Debug, Clone, Copy, Default)]
pub struct SyscallEvent {
    pub t_ns: u64,
    pub seq: u64,
    pub run_id: u32,
    pub topic: u16,
    pub flags: u8,
    pub send: bool,
    pub first: bool,
    pub last: bool,
    pub bytes: u32,
    pub fd: i32,
}

#[derive(Debug, Clone, Copy, Default)]
pub struct RingStats {
    pub events: u64,
    pub dropped: u64,
    pub header_calls: u64,
}

pub fn attach() -> Result<(), String> {
    Err("libmwperf_layers.so is not loaded".into())
}

pub fn drain(_out: &mut Vec<SyscallEvent>) {}

pub fn stats() -> RingStats {
    RingStats::default()
}
