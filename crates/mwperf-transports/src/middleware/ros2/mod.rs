//! A real ROS 2 node through rcl's C API (the calls micro-ROS's rclc makes on top of rcl), on
//! the RMW `RMW_IMPLEMENTATION` picks (rmw_fastrtps_cpp unset), in the ROS 2 the agent's
//! environment names ([`installation`]): mwperf's managed Kilted or Jazzy, or a sourced one.
//!
//! - rcl is reached through a small C shim ([`compile`]: `shim.c` compiled against the
//!   distribution's own headers on first use, cached per user) loaded at run time ([`ffi`]), so
//!   the agent starts where no ROS 2 is installed and only opening a ros2 endpoint fails there.
//! - Topics are the ROS 2 names the DDS transports use (`/mwperf/<base>/ping|pong`, DDS topics
//!   `rt/...`), the domain is the address's (`rcl_init_options_set_domain_id`), the type a
//!   real one of the installed packages (`--opt type`, default `std_msgs/msg/UInt8MultiArray`;
//!   [`message`]) carrying mwperf's message in its `data`: a real rclpy subscriber of that type
//!   reads what mwperf publishes.
//! - Messages go serialized (`rcl_publish_serialized_message`, `rcl_take_serialized_message`):
//!   [`message`] writes and reads the type's CDR ([`cdr`]), so no ROS message struct is filled
//!   or freed.
//!   Loaned messages are not used: rmw_fastrtps_cpp loans only plain (fixed-size) types, and a
//!   `uint8[]` is not one (`--opt loan=on` asks rcl and says so: [`loan`]).
//! - `recv` takes without waiting first and waits in an rcl wait set only when nothing is there
//!   (waits capped at [`MAX_WAIT_NS`] so callers see their stop flag).
//! - QoS: reliability, durability and history (keep-last depth) map to the `rmw_qos_profile_t`
//!   policies of the same name; the rest stay rmw_qos_profile_default's.
//!
//! One node (rcl context) per endpoint, or one per domain for a graph node's endpoints
//! (`Spec::shared_session`: [`node`]).

pub mod cdr;
pub(crate) mod compile;
mod ffi;
pub mod installation;
mod loan;
pub mod message;
mod node;
pub mod service;
mod service_ffi;
pub mod timer;
pub mod window;

use std::ffi::{c_char, CString};

use super::dds_address::Address;
use crate::spec::{Durability, History, Reliability};
use crate::{Endpoint, Side, Spec, TransportError};

const T: &str = "ros2";

/// Longest single wait in `recv`.
pub const MAX_WAIT_NS: u64 = 50_000_000;

/// How long a send waits for the acknowledgements of its window (`--opt window`) before it is
/// refused as blocked and tried again: Fast DDS's default `max_blocking_time` of a reliable write
/// (rmw_fastrtps_cpp keeps it), the bound the RMW's own write blocks for.
pub const WINDOW_WAIT_NS: u64 = 100_000_000;

/// Graph nodes: keep shared ROS 2 nodes open until [`release_held_nodes`] ([`node`]).
pub fn hold_shared_nodes() {
    node::hold_shared();
}

/// Close the nodes [`hold_shared_nodes`] kept open.
pub fn release_held_nodes() {
    node::release_held();
}

/// Open `side` at `spec.addr` (`[<domain>/]<base>`).
pub fn open(side: Side, spec: &Spec) -> Result<Box<dyn Endpoint>, TransportError> {
    Ok(Box::new(Ros2Endpoint::open(side, spec)?))
}

/// The QoS fields of an [`ffi::Config`].
struct Qos {
    reliable: i32,
    keep_all: i32,
    depth: i32,
    transient_local: i32,
}

/// What every ros2 entity (topic endpoint, service server or client) opens with: the shim, and
/// the QoS fields; `--opt distro` checked against the distribution of the environment.
fn prepare(spec: &Spec) -> Result<(&'static ffi::Api, Qos), TransportError> {
    let opts = spec.options_of(&super::ros2_descriptor::DESCRIPTOR)?;
    let depth = match spec.qos.history {
        History::KeepLast(n) => i32::try_from(n).map_err(|_| {
            unsupported(format!(
                "--history keep-last:{n} (depth at most {})",
                i32::MAX
            ))
        })?,
        History::KeepAll => 0,
    };
    let api = ffi::api()?;
    if let (Some(asked), Some(have)) = (opts.get("distro"), &api.installation.distro) {
        if asked != have {
            return Err(unsupported(format!(
                "--opt distro={asked} in an agent whose environment is ROS 2 {} (the control plane starts the agent with the environment of the distribution asked for)",
                api.installation.describe()
            )));
        }
    }
    let qos = Qos {
        reliable: i32::from(spec.qos.reliability == Reliability::Reliable),
        keep_all: i32::from(spec.qos.history == History::KeepAll),
        depth,
        transient_local: i32::from(spec.qos.durability == Durability::TransientLocal),
    };
    Ok((api, qos))
}

fn unsupported(what: String) -> TransportError {
    TransportError::Unsupported { transport: T, what }
}

pub struct Ros2Endpoint {
    api: &'static ffi::Api,
    ep: *mut ffi::mwr_endpoint,
    /// The node `ep` lives in: closed after it, with its last endpoint.
    node: crate::session::SessionRef<node::Node>,
    out_topic: Option<String>,
    in_topic: Option<String>,
    addr: Address,
    /// The CDR of the message being published (reused).
    out: Vec<u8>,
    /// The topics' message type.
    ty: message::MessageType,
    /// Taken samples this side could not read as `ty` (a foreign publisher).
    malformed: u64,
    /// `--opt window=N`: at most N published messages not yet acknowledged by every matched
    /// subscription ([`window`]).
    window: Option<window::Window>,
    /// `--opt timer`: what paces this publisher, and its rcl timer once started.
    pacing: timer::Pacing,
    timer: Option<timer::Timer>,
    /// A reliable publisher over rmw_fastrtps: its writer's heartbeat period, what it may hold
    /// every send back for (`Endpoint::paced_ns`); 0 otherwise.
    paced_ns: u64,
}

// SAFETY: the handle is used from one thread at a time (the endpoint is moved, not shared); its
// node's shared parts are behind the node's lock.
unsafe impl Send for Ros2Endpoint {}

impl Ros2Endpoint {
    pub fn open(side: Side, spec: &Spec) -> Result<Ros2Endpoint, TransportError> {
        let addr = Address::parse(T, &spec.addr, side.is_listener())?;
        let opts = spec.options_of(&super::ros2_descriptor::DESCRIPTOR)?;
        let (api, qos) = prepare(spec)?;
        let ty = match opts.get("type") {
            Some(name) => message::MessageType::parse(name)?,
            None => message::TYPES[0],
        };
        let ts = ty.type_support(&api.installation)?;
        let window = window::Window::from_opts(&opts, spec, side.out_topic().is_some())?;
        let pacing = timer::pacing(&opts, side)?;
        let loan = loan::asked(&opts)?;
        let out_topic = side.out_topic().map(|s| addr.ros_topic(s));
        let in_topic = side.in_topic().map(|s| addr.ros_topic(s));
        let c = |s: &str| CString::new(s).expect("topic and path texts have no NUL");
        let (c_out, c_in) = (out_topic.as_deref().map(c), in_topic.as_deref().map(c));
        let c_lib = CString::new(ts.library.as_os_str().as_encoded_bytes())
            .map_err(|_| unsupported(format!("{} (a NUL in the path)", ts.library.display())))?;
        let c_sym = c(&ts.symbol);
        let ptr = |s: &Option<CString>| s.as_ref().map_or(std::ptr::null(), |s| s.as_ptr());
        let config = ffi::Config {
            topic_out: ptr(&c_out),
            topic_in: ptr(&c_in),
            type_library: c_lib.as_ptr(),
            type_symbol: c_sym.as_ptr(),
            reliable: qos.reliable,
            keep_all: qos.keep_all,
            depth: qos.depth,
            transient_local: qos.transient_local,
        };
        let node = node::Node::session(api, addr.domain, spec.shared_session)?;
        let mut err = [0 as c_char; 512];
        let ep = {
            let _entities = node.entities.lock().unwrap_or_else(|p| p.into_inner());
            // SAFETY: the config's strings live until the call returns; err is a writable
            // buffer; the node outlives the endpoint (held by it).
            unsafe { (api.open)(node.ptr, &config, err.as_mut_ptr(), err.len()) }
        };
        if ep.is_null() {
            return Err(TransportError::Middleware {
                transport: T,
                detail: format!(
                    "{} (node {}, domain {}, {}, ROS 2 {})",
                    ffi::text(&err),
                    node.name,
                    addr.domain,
                    spec.qos,
                    api.installation.describe()
                ),
            });
        }
        let out_topic_set = out_topic.is_some();
        let endpoint = Ros2Endpoint {
            api,
            ep,
            node,
            out_topic,
            in_topic,
            addr,
            out: Vec::new(),
            ty,
            malformed: 0,
            window,
            pacing,
            timer: None,
            paced_ns: if qos.reliable != 0 && out_topic_set {
                super::fastdds_descriptor::DEFAULT_HEARTBEAT_NS
            } else {
                0
            },
        };
        if loan && endpoint.out_topic.is_some() {
            // a subscription, given the same options, takes as it always does
            let rmw = std::env::var("RMW_IMPLEMENTATION")
                .unwrap_or_else(|_| "rmw_fastrtps_cpp".to_string());
            return Err(loan::refuse(api, endpoint.ep, ty.name(), &rmw)); // closed as dropped
        }
        Ok(endpoint)
    }

    /// The next readable message's data into `buf`; samples that are no readable message of
    /// the type are counted and skipped.
    fn take(&mut self, buf: &mut Vec<u8>) -> Result<Option<usize>, TransportError> {
        loop {
            let mut data: *const u8 = std::ptr::null();
            let mut len: usize = 0;
            let mut err = [0 as c_char; 512];
            // SAFETY: valid handle; data/len point into the endpoint's buffer until the next take.
            let rc = unsafe {
                (self.api.take)(self.ep, &mut data, &mut len, err.as_mut_ptr(), err.len())
            };
            match rc {
                1 => {}
                0 => return Ok(None),
                _ => {
                    return Err(TransportError::Middleware {
                        transport: T,
                        detail: format!(
                            "taking from {}: {}",
                            self.in_topic.as_deref().unwrap_or("?"),
                            ffi::text(&err)
                        ),
                    })
                }
            }
            let cdr: &[u8] = if len == 0 || data.is_null() {
                &[]
            } else {
                // SAFETY: the shim's buffer holds len bytes at data until the next take.
                unsafe { std::slice::from_raw_parts(data, len) }
            };
            match self.ty.decode(cdr) {
                Ok(bytes) => {
                    buf.clear();
                    buf.extend_from_slice(bytes);
                    return Ok(Some(bytes.len()));
                }
                Err(_) => self.malformed += 1,
            }
        }
    }

    /// (subscriptions matched to our publisher, publishers matched to our subscription).
    fn matched(&self) -> Result<(Option<u32>, Option<u32>), TransportError> {
        let (mut s, mut p) = (-1, -1);
        // SAFETY: valid handle and two writable ints.
        if unsafe { (self.api.matched)(self.ep, &mut s, &mut p) } < 0 {
            return Err(TransportError::Middleware {
                transport: T,
                detail: "reading the matched counts".into(),
            });
        }
        let some = |n: i32| (n >= 0).then_some(n as u32);
        Ok((some(s), some(p)))
    }
}

impl Endpoint for Ros2Endpoint {
    fn send(&mut self, msg: &[u8]) -> Result<(), TransportError> {
        let Some(name) = &self.out_topic else {
            return Err(TransportError::Middleware {
                transport: T,
                detail: "a sub endpoint does not publish".into(),
            });
        };
        if msg.len() > u32::MAX as usize {
            return Err(TransportError::TooLarge {
                size: msg.len(),
                max: u32::MAX as usize,
                transport: T,
            });
        }
        self.ty.encode(&mut self.out, msg).map_err(unsupported)?;
        if let Some(window) = &mut self.window {
            if window.full() {
                // SAFETY: a valid handle of this endpoint.
                let rc = unsafe { (self.api.wait_acked)(self.ep, WINDOW_WAIT_NS as i64) };
                if rc != 0 {
                    return Err(TransportError::Blocked {
                        transport: T,
                        detail: format!(
                            "publishing on {name}: the subscriptions had not acknowledged the last {} messages after {} ms (--opt window, rcl_publisher_wait_for_all_acked)",
                            window.size(),
                            WINDOW_WAIT_NS / 1_000_000
                        ),
                    });
                }
                window.acked();
            }
        }
        let mut err = [0 as c_char; 512];
        // SAFETY: valid handle; the CDR is alive for the call and the RMW copies it before
        // returning.
        let rc = unsafe {
            (self.api.publish)(
                self.ep,
                self.out.as_ptr(),
                self.out.len(),
                err.as_mut_ptr(),
                err.len(),
            )
        };
        if rc != 0 {
            let detail = format!("publishing on {name}: {}", ffi::text(&err));
            // rcl says RCL_RET_ERROR for every failure; the one a write meets in the normal
            // course is Fast DDS's write giving up after max_blocking_time (rmw_fastrtps: "cannot
            // publish data"): a keep-all history full of unacknowledged messages, or, keep-last,
            // the writer's lock held that long while it sends to a slow reader (measured:
            // 1 MiB and 64 KiB keep-last 10). Refused as blocked: a throughput pub tries again,
            // and a persistent error ends its point after --peer-timeout, quoted.
            return Err(TransportError::Blocked {
                transport: T,
                detail: format!(
                    "{detail} (rmw_fastrtps: the write waited max_blocking_time, 100 ms, for room in the writer's history)"
                ),
            });
        }
        if let Some(window) = &mut self.window {
            window.published();
        }
        Ok(())
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
        let mut err = [0 as c_char; 512];
        // SAFETY: valid handle with a subscription and its wait set.
        let rc = unsafe {
            (self.api.wait)(
                self.ep,
                wait_ns.min(MAX_WAIT_NS) as i64,
                err.as_mut_ptr(),
                err.len(),
            )
        };
        if rc < 0 {
            return Err(TransportError::Middleware {
                transport: T,
                detail: format!(
                    "waiting on {}: {}",
                    self.in_topic.as_deref().unwrap_or("?"),
                    ffi::text(&err)
                ),
            });
        }
        if rc == 0 {
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

    fn graph_counts(&mut self, topic: &str) -> Option<(u64, u64)> {
        let name = std::ffi::CString::new(topic).ok()?;
        let (mut pubs, mut subs) = (0, 0);
        // SAFETY: valid handle, a NUL-terminated name and two writable ints.
        let rc = unsafe { (self.api.graph_counts)(self.ep, name.as_ptr(), &mut pubs, &mut subs) };
        (rc == 0).then_some((pubs.max(0) as u64, subs.max(0) as u64))
    }

    fn paced_ns(&self) -> u64 {
        self.paced_ns
    }

    /// A reliable publisher: wait (at most `limit_ns`) until its subscriptions acknowledged
    /// what it sent (`rcl_publisher_wait_for_all_acked`).
    fn finish(&mut self, limit_ns: u64) -> bool {
        // SAFETY: a valid handle of this endpoint.
        unsafe { (self.api.wait_acked)(self.ep, limit_ns.min(i64::MAX as u64) as i64) == 0 }
    }

    /// `--opt timer=rcl`: the rcl timer paces the sends (a rate; as fast as possible has no
    /// timer); a ping's subscription waits in the same wait set (Ok(false) when its echo is
    /// there: the caller takes it without waiting).
    fn wait_tick(&mut self, due_ns: u64, period_ns: u64) -> Option<Result<bool, TransportError>> {
        if self.pacing != timer::Pacing::Rcl || period_ns == 0 {
            return None;
        }
        Some(
            timer::Timer::tick(
                &mut self.timer,
                self.api,
                self.ep,
                due_ns,
                period_ns,
                MAX_WAIT_NS,
            )
            .map(|t| t == timer::Tick::Send),
        )
    }

    fn own_timer(&self) -> bool {
        self.pacing == timer::Pacing::Rcl && self.out_topic.is_some()
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

impl Drop for Ros2Endpoint {
    fn drop(&mut self) {
        let _entities = self.node.entities.lock().unwrap_or_else(|p| p.into_inner());
        // the timer lives in the node's context: closed before the endpoint and the node
        drop(self.timer.take());
        // SAFETY: the handle is closed once; nothing refers to it afterwards. The node follows
        // with its last endpoint.
        unsafe { (self.api.close)(self.ep) };
    }
}
