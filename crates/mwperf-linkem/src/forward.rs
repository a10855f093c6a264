//! One direction's thread: read packets from one TUN device, let the model decide, and write
//! each to the other device at its absolute deadline.
//!
//! Waiting is two-stage for accuracy (target ±50 µs): sleep in ppoll (woken early by a new packet)
//! until `spin_ns` before the next deadline, then spin on the clock, still reading new packets
//! without blocking. Pending packets sit in a min-heap by deadline (ties keep arrival order).

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;

use crate::clock::Clock;
use crate::counters::Counters;
use crate::layerlog::LayerLog;
use crate::model::Model;
use crate::packetlog::PacketLog;
use crate::tun::Tun;

/// Sleep at most this long, so a stop request is seen promptly.
const MAX_SLEEP_NS: u64 = 20_000_000;
/// Read at most this many packets before releasing due ones again.
const READ_BURST: usize = 64;
/// Larger than any packet a TUN device delivers (64 KiB IP packet limit).
const BUF_BYTES: usize = 65_536;

struct Pending {
    at_ns: u64,
    seq: u64,
    /// when it was read from the sending side (ns since the epoch; for `--layer-log`)
    read_ns: u64,
    packet: Vec<u8>,
}

impl PartialEq for Pending {
    fn eq(&self, other: &Self) -> bool {
        (self.at_ns, self.seq) == (other.at_ns, other.seq)
    }
}
impl Eq for Pending {}
impl PartialOrd for Pending {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Pending {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (self.at_ns, self.seq).cmp(&(other.at_ns, other.seq))
    }
}

/// How a forwarding thread waits for its deadlines.
#[derive(Clone, Copy, Debug)]
pub struct Waiting {
    /// how long before a deadline the thread stops sleeping and spins on the clock
    pub spin_ns: u64,
    /// a SCHED_FIFO priority for the thread (0 = stay a normal thread)
    pub realtime: i32,
}

/// What a forwarding thread logs (each only when asked), handed back when it ends.
#[derive(Default)]
pub struct Logs {
    /// `--packet-log`: every released packet's time and size
    pub packets: Option<PacketLog>,
    /// `--layer-log`: every released mwperf message's read and release times
    pub layers: Option<LayerLog>,
}

/// Forward from `from` to `to` through `model` until `stop` is set; what `logs` asks for is
/// logged as packets are released, and returned at the end.
#[allow(clippy::too_many_arguments)] // the forwarding thread's whole context, passed once
pub fn run(
    from: &Tun,
    to: &Tun,
    mut model: Model,
    clock: &Clock,
    counters: &Arc<Counters>,
    stop: &AtomicBool,
    waiting: Waiting,
    mut logs: Logs,
) -> Logs {
    let Waiting { spin_ns, realtime } = waiting;
    if realtime > 0 {
        let param = libc::sched_param {
            sched_priority: realtime,
        };
        // SAFETY: a valid sched_param for the calling thread (pid 0)
        if unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) } != 0 {
            eprintln!("mwperf-linkem: warning: SCHED_FIFO {realtime} refused ({}); running as a normal thread", std::io::Error::last_os_error());
        }
    }
    // SAFETY: PR_SET_TIMERSLACK on the calling thread; 1 ns = wake as close to the timeout as
    // the kernel can (the default slack of 50 µs would eat the accuracy target alone)
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong) };
    let mut queue: BinaryHeap<Reverse<Pending>> = BinaryHeap::new();
    let mut buf = vec![0u8; BUF_BYTES];
    let mut seq = 0u64;
    while !stop.load(Relaxed) {
        let now = clock.now_ns();
        while queue.peek().is_some_and(|p| p.0.at_ns <= now) {
            let Reverse(p) = queue.pop().unwrap();
            // lateness is the wait's accuracy: taken before the write, which itself runs the
            // receiving side's network stack (tens of µs for TCP) in this thread. The same
            // instant is the layer log's release time: the receiver may have the message before
            // the write returns.
            let release_ns = clock.now_ns();
            let late_ns = release_ns.saturating_sub(p.at_ns);
            match to.write(&p.packet) {
                Ok(()) => {
                    counters.released(p.packet.len(), late_ns);
                    // the release instant (before the write), as the layer log: stamped after
                    // it, the receiver, woken by the write, could end its phase first
                    if let Some(log) = logs.packets.as_mut() {
                        log.push(release_ns, p.packet.len());
                    }
                    // scanned after the write: the packet is out before its bytes are searched
                    if let Some(log) = logs.layers.as_mut() {
                        log.released(&p.packet, p.read_ns, release_ns);
                    }
                }
                Err(_) => {
                    counters.dropped_write.fetch_add(1, Relaxed);
                }
            }
        }
        let wait_ns = queue
            .peek()
            .map_or(MAX_SLEEP_NS, |p| p.0.at_ns.saturating_sub(clock.now_ns()));
        if wait_ns > spin_ns && !sleep_until_readable(from, (wait_ns - spin_ns).min(MAX_SLEEP_NS)) {
            continue;
        }
        for _ in 0..READ_BURST {
            let n = match from.read(&mut buf) {
                Ok(Some(n)) => n,
                Ok(None) => break,
                Err(err) => {
                    eprintln!("mwperf-linkem: reading {}: {err}", from.name);
                    stop.store(true, Relaxed);
                    break;
                }
            };
            // the read time, before the copy: what `--layer-log` reports as "read"
            let arrived_ns = clock.now_ns();
            counters.received.fetch_add(1, Relaxed);
            let mut packet = buf[..n].to_vec();
            match model.admit(arrived_ns, &mut packet) {
                Err(why) => counters.dropped(why, arrived_ns),
                Ok(a) => {
                    counters.reordered.fetch_add(a.reordered as u64, Relaxed);
                    counters.corrupted.fetch_add(a.corrupted as u64, Relaxed);
                    if a.copies > 1 {
                        counters.duplicated.fetch_add(1, Relaxed);
                        queue.push(Reverse(Pending {
                            at_ns: a.at_ns,
                            seq,
                            read_ns: arrived_ns,
                            packet: packet.clone(),
                        }));
                        seq += 1;
                    }
                    queue.push(Reverse(Pending {
                        at_ns: a.at_ns,
                        seq,
                        read_ns: arrived_ns,
                        packet,
                    }));
                    seq += 1;
                }
            }
        }
    }
    counters
        .dropped_pending
        .fetch_add(queue.len() as u64, Relaxed);
    logs
}

/// Sleep up to `timeout_ns` or until `tun` has a packet; false on timeout.
fn sleep_until_readable(tun: &Tun, timeout_ns: u64) -> bool {
    let mut pfd = libc::pollfd {
        fd: tun.raw(),
        events: libc::POLLIN,
        revents: 0,
    };
    let ts = libc::timespec {
        tv_sec: (timeout_ns / 1_000_000_000) as _,
        tv_nsec: (timeout_ns % 1_000_000_000) as _,
    };
    // SAFETY: one valid pollfd, a valid timespec, no signal mask change.
    let n = unsafe { libc::ppoll(&mut pfd, 1, &ts, std::ptr::null()) };
    n > 0
}
