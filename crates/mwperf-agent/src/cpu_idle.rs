//! Keeping CPUs out of deep idle states through the PM QoS interface: while /dev/cpu_dma_latency
//! is held open with 0 written to it, the kernel avoids idle states with any exit latency
//! (performance_test calls this --prevent-cpu-idle). Released when the guard is dropped.

use std::fs::File;
use std::io::Write;

pub struct IdleGuard {
    _file: Option<File>,
    pub state: &'static str,
}

pub fn prevent(requested: bool) -> IdleGuard {
    if !requested {
        return IdleGuard {
            _file: None,
            state: "off",
        };
    }
    match File::options()
        .write(true)
        .open("/dev/cpu_dma_latency")
        .and_then(|mut f| f.write_all(&0i32.to_ne_bytes()).map(|_| f))
    {
        Ok(f) => IdleGuard {
            _file: Some(f),
            state: "on",
        },
        Err(_) => IdleGuard {
            _file: None,
            state: "unavailable",
        },
    }
}
