//! eProsima Fast DDS 2.x (Debian libfastrtps 2.9: ROS 2's default middleware) with the same ROS 2
//! conventions as the cyclonedds and rustdds transports — topics `rt/mwperf/<base>/ping|pong`,
//! type `mwperf_msgs::msg::dds_::Bytes_`, XCDR1 — so any of the three can be the other's peer.
//!
//! Fast DDS is C++: `shim.cpp` wraps the few calls used behind a C ABI (participant, writer,
//! reader, take, wait, matched counts), build.rs compiles it against the system library and
//! `ffi.rs` loads it at run time. One participant per endpoint in the address's domain (with
//! `Spec::shared_session`, a graph node's endpoints share one: [`participant`]), on
//! 127.0.0.1 with unicast discovery of the participant ports there (as the cyclonedds transport's
//! loopback configuration), no multicast; `--opt interface/peers` for real or emulated hosts.
//! `recv` takes without blocking first and sleeps in `wait_for_unread_message` only when nothing
//! is there (waits capped at [`MAX_WAIT_NS`] so callers see their stop flag).
//!
//! Options: see the descriptor (`shm`, `publish-mode`, `data-sharing`, `max-blocking`,
//! `interface`, `peers`). Shared memory (on by default, as in Fast DDS) leaves segments in
//! /dev/shm that Fast DDS does not always remove: [`shm`] removes the ones this process made.
//!
//! `--opt ros2-type=<pkg>/msg/<Type>` ([`super::ros2_wire`]): the topics carry that ROS 2 type
//! under its ROS 2 DDS name, as CDR written here (shim.cpp's `RawCdrType` hands it to Fast DDS
//! as it is), so real ROS 2 nodes are the peers; the interface then defaults to this host's
//! address (a ROS 2 node announces no loopback locator).

#[cfg(mwperf_fastdds)]
mod ffi;
#[cfg(mwperf_fastdds)]
mod participant;
#[cfg(mwperf_fastdds)]
mod security;
pub mod service;
#[cfg(all(mwperf_fastdds, feature = "ros2"))]
mod wheel;
#[cfg(mwperf_fastdds)]
pub use super::fastdds_shm as shm;

use crate::{Endpoint, Side, Spec, TransportError};

/// Longest single sleep in `recv`.
#[cfg(mwperf_fastdds)]
pub const MAX_WAIT_NS: u64 = 50_000_000;

/// Default `--opt max-blocking` (Fast DDS's own default for reliable writers is 100 ms too).
#[cfg(mwperf_fastdds)]
const DEFAULT_MAX_BLOCKING_NS: u64 = 100_000_000;

/// Open `side` at `spec.addr` (`[<domain>/]<base>`).
pub fn open(side: Side, spec: &Spec) -> Result<Box<dyn Endpoint>, TransportError> {
    #[cfg(mwperf_fastdds)]
    return Ok(Box::new(FastddsEndpoint::open(side, spec)?));
    #[cfg(not(mwperf_fastdds))]
    {
        let _ = (side, spec);
        Err(TransportError::Missing {
            what: "Fast DDS (this build found no libfastrtps headers)".into(),
            install: "install it: apt-get install libfastrtps-dev libfastcdr-dev, then rebuild"
                .into(),
        })
    }
}

#[cfg(mwperf_fastdds)]
use {
    super::dds_address::Address,
    super::ros2_wire::{self, Ros2Wire},
    crate::spec::{Durability, History, Reliability},
    mwperf_core::wire::Header,
    std::ffi::{c_char, CString},
};

#[cfg(mwperf_fastdds)]
const T: &str = "fastdds";

#[cfg(mwperf_fastdds)]
fn unsupported(what: String) -> TransportError {
    TransportError::Unsupported { transport: T, what }
}

/// `on|off` of option `key`, `default` when absent.
#[cfg(mwperf_fastdds)]
fn on_off(value: Option<&str>, key: &str, default: bool) -> Result<bool, TransportError> {
    match value {
        None => Ok(default),
        Some("on") => Ok(true),
        Some("off") => Ok(false),
        Some(v) => Err(unsupported(format!("--opt {key}={v} (allowed: on, off)"))),
    }
}

/// Bytes per second of `--opt max-rate` (`5MB/s`, `800kB/s`, `10Mbit/s`, `1.5MiB/s`; > 0).
#[cfg(any(mwperf_fastdds, test))]
fn parse_rate(text: &str) -> Option<i64> {
    let t = text.trim();
    let units: [(&str, f64); 8] = [
        ("Gbit/s", 1e9 / 8.0),
        ("Mbit/s", 1e6 / 8.0),
        ("kbit/s", 1e3 / 8.0),
        ("MiB/s", 1048576.0),
        ("KiB/s", 1024.0),
        ("MB/s", 1e6),
        ("kB/s", 1e3),
        ("B/s", 1.0),
    ];
    let (number, scale) = units
        .iter()
        .find_map(|(u, s)| t.strip_suffix(u).map(|n| (n.trim(), *s)))?;
    let v: f64 = number.parse().ok()?;
    let bytes = v * scale;
    (1.0..1e15).contains(&bytes).then_some(bytes as i64)
}

#[cfg(mwperf_fastdds)]
pub struct FastddsEndpoint {
    api: &'static ffi::Api,
    ep: *mut ffi::mwfd_endpoint,
    /// The participant `ep` lives in: closed after it, with its last endpoint.
    _participant: crate::session::SessionRef<participant::Participant>,
    out_topic: Option<String>,
    in_topic: Option<String>,
    addr: Address,
    /// `--opt ros2-type`: messages travel as that ROS 2 type's CDR (written and read here).
    ros2: Option<Ros2Wire>,
    /// The CDR of the message being written (reused; with `ros2`).
    out: Vec<u8>,
    /// Samples of the ROS 2 type that held no readable message (a foreign publisher).
    malformed: u64,
    /// A reliable writer's heartbeat period (`--opt heartbeat`, else Fast DDS's 3 s): what it
    /// may hold every send back for (`Endpoint::paced_ns`); 0 for a best-effort one or a reader.
    paced_ns: u64,
}

// SAFETY: the handle is used from one thread at a time (the endpoint is moved, not shared); Fast
// DDS's own objects are thread-safe.
#[cfg(mwperf_fastdds)]
unsafe impl Send for FastddsEndpoint {}

#[cfg(mwperf_fastdds)]
impl FastddsEndpoint {
    pub fn open(side: Side, spec: &Spec) -> Result<FastddsEndpoint, TransportError> {
        let addr = Address::parse(T, &spec.addr, side.is_listener())?;
        let out_topic = side.out_topic().map(|s| (addr.topic(s), None));
        let in_topic = side.in_topic().map(|s| (addr.topic(s), None));
        Self::open_topics(spec, addr, out_topic, in_topic)
    }

    /// An endpoint at `addr` writing `out` and reading `in_` (topic name, type name; None: the
    /// topic type `Bytes_`), with `spec`'s QoS and options (what `open` and the services share).
    pub(crate) fn open_topics(
        spec: &Spec,
        addr: Address,
        out: Option<(String, Option<&'static str>)>,
        in_: Option<(String, Option<&'static str>)>,
    ) -> Result<FastddsEndpoint, TransportError> {
        let opts = spec.options_of(&super::fastdds_descriptor::DESCRIPTOR)?;
        let shm = on_off(opts.get("shm"), "shm", true)?;
        let async_publish = match opts.get("publish-mode") {
            None | Some("sync") => false,
            Some("async") => true,
            Some(v) => {
                return Err(unsupported(format!(
                    "--opt publish-mode={v} (allowed: sync, async)"
                )))
            }
        };
        if on_off(opts.get("data-sharing"), "data-sharing", false)? {
            return Err(unsupported("--opt data-sharing=on (Fast DDS shares data only for bounded, plain types; mwperf's message is an unbounded sequence<octet>, as a ROS 2 uint8[] is)".into()));
        }
        let ros2 = Ros2Wire::from_opt(T, opts.get(ros2_wire::OPT))?;
        if ros2.is_some()
            && (out.as_ref().is_some_and(|o| o.1.is_some())
                || in_.as_ref().is_some_and(|i| i.1.is_some()))
        {
            return Err(unsupported(format!("--opt {} with services (it carries topics in a ROS 2 message type; services keep mwperf_msgs/srv/Bytes)", ros2_wire::OPT)));
        }
        let max_rate = match opts.get("max-rate") {
            None => 0,
            Some(v) => parse_rate(v).ok_or_else(|| {
                unsupported(format!(
                    "--opt max-rate={v} (a data rate such as 5MB/s, 800kB/s or 10Mbit/s)"
                ))
            })?,
        };
        let max_blocking = match opts.get("max-blocking") {
            Some(v) => mwperf_core::units::parse_duration_ns(v)
                .map_err(|e| unsupported(format!("--opt max-blocking={v} ({e}; e.g. 100ms)")))?,
            None => DEFAULT_MAX_BLOCKING_NS,
        };
        let heartbeat = match opts.get("heartbeat") {
            Some(v) => match mwperf_core::units::parse_duration_ns(v) {
                Ok(ns) if ns > 0 => ns,
                Ok(_) => {
                    return Err(unsupported(format!(
                        "--opt heartbeat={v} (a period above 0, e.g. 100ms)"
                    )))
                }
                Err(e) => {
                    return Err(unsupported(format!(
                        "--opt heartbeat={v} ({e}; e.g. 100ms)"
                    )))
                }
            },
            None => 0,
        };
        let (keep_all, depth) = match spec.qos.history {
            History::KeepLast(n) => (
                false,
                i32::try_from(n).map_err(|_| {
                    unsupported(format!(
                        "--history keep-last:{n} (depth at most {})",
                        i32::MAX
                    ))
                })?,
            ),
            History::KeepAll => (true, 0),
        };
        let api = ffi::api(opts.get("distro"))?;
        if shm {
            shm::watch();
        }
        let ros2_type = ros2.as_ref().map(|w| w.type_name.as_str());
        let (out_topic, type_out) = out.map_or((None, None), |(t, ty)| (Some(t), ty.or(ros2_type)));
        let (in_topic, type_in) = in_.map_or((None, None), |(t, ty)| (Some(t), ty.or(ros2_type)));
        let c = |s: Option<&str>| {
            s.map(|s| CString::new(s).expect("topic, type and option texts have no NUL"))
        };
        let (c_out, c_in) = (c(out_topic.as_deref()), c(in_topic.as_deref()));
        let (c_type_out, c_type_in) = (c(type_out), c(type_in));
        // A ROS 2 node is met on this host's address (see ros2_wire::host_address)
        let interface = match (opts.get("interface"), &ros2) {
            (Some(v), _) => Some(v.to_string()),
            (None, Some(_)) => Some(ros2_wire::host_address(T, "--opt interface")?.to_string()),
            (None, None) => None,
        };
        let c_iface = c(interface.as_deref());
        let c_peers = c(opts.get("peers"));
        let properties = opts
            .get(security::OPT)
            .map(security::properties)
            .transpose()?;
        let c_properties = c(properties.as_deref());
        let ptr = |s: &Option<CString>| s.as_ref().map_or(std::ptr::null(), |s| s.as_ptr());
        let config = ffi::Config {
            domain: addr.domain,
            topic_out: ptr(&c_out),
            topic_in: ptr(&c_in),
            reliable: i32::from(spec.qos.reliability == Reliability::Reliable),
            keep_all: i32::from(keep_all),
            depth,
            transient_local: i32::from(spec.qos.durability == Durability::TransientLocal),
            max_blocking_ns: i64::try_from(max_blocking).unwrap_or(i64::MAX),
            shm: i32::from(shm),
            async_publish: i32::from(async_publish),
            data_sharing: 0,
            interface: ptr(&c_iface),
            peers: ptr(&c_peers),
            max_bytes_per_s: max_rate,
            heartbeat_ns: i64::try_from(heartbeat).unwrap_or(i64::MAX),
            type_out: ptr(&c_type_out),
            type_in: ptr(&c_type_in),
            raw_cdr: i32::from(ros2.is_some()),
            properties: ptr(&c_properties),
        };
        let key = participant::Key {
            domain: addr.domain,
            shm,
            interface,
            peers: opts.get("peers").map(str::to_string),
            max_bytes_per_s: max_rate,
            security: opts.get(security::OPT).map(str::to_string),
        };
        let owner = participant::Participant::session(api, key, &config, spec.shared_session)?;
        let mut err = [0 as c_char; 512];
        // SAFETY: the config's strings live until the call returns; err is a writable buffer;
        // the participant outlives the endpoint (held by it).
        let ep = unsafe { (api.open)(owner.ptr, &config, err.as_mut_ptr(), err.len()) };
        if ep.is_null() {
            return Err(TransportError::Middleware {
                transport: T,
                detail: format!("{} (domain {}, {})", ffi::text(&err), addr.domain, spec.qos),
            });
        }
        Ok(FastddsEndpoint {
            api,
            ep,
            _participant: owner,
            out_topic,
            in_topic,
            addr,
            ros2,
            out: Vec::new(),
            malformed: 0,
            paced_ns: if config.reliable != 0 && !config.topic_out.is_null() {
                if heartbeat > 0 {
                    heartbeat
                } else {
                    super::fastdds_descriptor::DEFAULT_HEARTBEAT_NS
                }
            } else {
                0
            },
        })
    }

    /// The next message into `buf`; with `ros2`, samples that are no readable message of the
    /// type (a foreign publisher) are counted in `malformed` and skipped.
    fn take(&mut self, buf: &mut Vec<u8>) -> Result<Option<usize>, TransportError> {
        loop {
            if let Some(n) = self.take_one(buf)? {
                return Ok(n);
            }
            self.malformed += 1;
        }
    }

    /// One sample: Some(what `take` returns), or None for a sample that is no message.
    fn take_one(&mut self, buf: &mut Vec<u8>) -> Result<Option<Option<usize>>, TransportError> {
        let mut data: *const u8 = std::ptr::null();
        let mut len: u32 = 0;
        // SAFETY: valid handle; data/len point into the shim's sample until the next take.
        let rc = unsafe { (self.api.take)(self.ep, &mut data, &mut len) };
        match rc {
            1 => {
                let bytes: &[u8] = if len == 0 || data.is_null() {
                    &[]
                } else {
                    // SAFETY: the shim's sample holds len bytes at data until the next take.
                    unsafe { std::slice::from_raw_parts(data, len as usize) }
                };
                let bytes = match &self.ros2 {
                    Some(w) => match w.decode(bytes) {
                        Ok(data) => data,
                        Err(_) => return Ok(None),
                    },
                    None => bytes,
                };
                buf.clear();
                buf.extend_from_slice(bytes);
                Ok(Some(Some(bytes.len())))
            }
            0 => Ok(Some(None)),
            _ => Err(TransportError::Middleware {
                transport: T,
                detail: format!("taking from {}", self.in_topic.as_deref().unwrap_or("?")),
            }),
        }
    }

    /// (readers of our writer, writers of our reader); `None` where this side has none.
    fn matched(&self) -> Result<(Option<u32>, Option<u32>), TransportError> {
        let (mut r, mut w) = (-1, -1);
        // SAFETY: valid handle and two writable ints.
        if unsafe { (self.api.matched)(self.ep, &mut r, &mut w) } < 0 {
            return Err(TransportError::Middleware {
                transport: T,
                detail: "reading the matched statuses".into(),
            });
        }
        let some = |n: i32| (n >= 0).then_some(n as u32);
        Ok((some(r), some(w)))
    }
}

#[cfg(mwperf_fastdds)]
impl Endpoint for FastddsEndpoint {
    fn send(&mut self, msg: &[u8]) -> Result<(), TransportError> {
        let Some(name) = &self.out_topic else {
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
        let (time, id) = Header::decode_header(msg).map_or((0, 0), |h| (h.sent_ns as i64, h.seq));
        let (bytes, len) = match &self.ros2 {
            Some(w) => {
                w.encode(&mut self.out, msg).map_err(unsupported)?;
                let len = u32::try_from(self.out.len()).map_err(|_| TransportError::TooLarge {
                    size: msg.len(),
                    max: u32::MAX as usize - 64,
                    transport: T,
                })?;
                (self.out.as_slice(), len)
            }
            None => (msg, len),
        };
        // SAFETY: valid handle; the bytes are alive for the call and Fast DDS serializes them
        // before returning.
        match unsafe { (self.api.write)(self.ep, bytes.as_ptr(), len, time, id) } {
            0 => Ok(()),
            -1 => Err(TransportError::Blocked { transport: T, detail: format!("write on {name}: with reliable QoS the history stayed full of unacknowledged messages for --opt max-blocking (--history)") }),
            _ => Err(TransportError::Middleware { transport: T, detail: format!("write on {name} failed") }),
        }
    }

    fn recv(&mut self, buf: &mut Vec<u8>, wait_ns: u64) -> Result<Option<usize>, TransportError> {
        if self.in_topic.is_none() {
            // A pub receives nothing; still honour the wait so callers do not spin.
            std::thread::sleep(std::time::Duration::from_nanos(wait_ns.min(MAX_WAIT_NS)));
            return Ok(None);
        }
        if let Some(n) = self.take(buf)? {
            return Ok(Some(n));
        }
        if wait_ns == 0 {
            return Ok(None);
        }
        // SAFETY: valid handle with a reader.
        let rc = unsafe { (self.api.wait)(self.ep, wait_ns.min(MAX_WAIT_NS) as i64) };
        if rc <= 0 {
            return Ok(None);
        }
        self.take(buf)
    }

    fn local_addr(&self) -> String {
        self.addr.text()
    }

    fn matched_subscribers(&mut self) -> Option<u64> {
        self.matched().ok()?.0.map(u64::from)
    }

    fn matched_publishers(&mut self) -> Option<u64> {
        self.matched().ok()?.1.map(u64::from)
    }

    /// A reliable writer: wait (at most `limit_ns`) until the readers acknowledged what it
    /// sent; Fast DDS drops the unacknowledged rest with the writer.
    fn paced_ns(&self) -> u64 {
        self.paced_ns
    }

    fn finish(&mut self, limit_ns: u64) -> bool {
        // SAFETY: a valid handle of this endpoint.
        unsafe { (self.api.wait_acked)(self.ep, limit_ns.min(i64::MAX as u64) as i64) == 1 }
    }

    fn wait_matched(&mut self, timeout_ns: u64) -> Result<(), TransportError> {
        let (out, inp) = (self.out_topic.clone(), self.in_topic.clone());
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

#[cfg(mwperf_fastdds)]
impl Drop for FastddsEndpoint {
    fn drop(&mut self) {
        // SAFETY: the handle is closed once; nothing refers to it afterwards. The participant
        // (and the shared-memory sweep) follows with its last endpoint.
        unsafe { (self.api.close)(self.ep) };
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn rates() {
        assert_eq!(super::parse_rate("5MB/s"), Some(5_000_000));
        assert_eq!(super::parse_rate("10Mbit/s"), Some(1_250_000));
        assert_eq!(super::parse_rate("1.5 KiB/s"), Some(1536));
        for bad in ["", "5", "fast", "0MB/s", "-1MB/s", "5 MB"] {
            assert_eq!(super::parse_rate(bad), None, "{bad}");
        }
    }
}
