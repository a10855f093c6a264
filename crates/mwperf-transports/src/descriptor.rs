//! What a transport is, declared once by its own module (`pub const DESCRIPTOR` next to its
//! code: `udp.rs`, `middleware/<name>/descriptor.rs`). [`crate::Kind`]'s methods read from it,
//! `mwperf-agent transports --json` prints it, and the control plane builds its transport
//! profiles from that output (python/mwperf/transports/profiles.py): a fact about a transport
//! lives here and nowhere else.

/// How one message travels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    /// One datagram per message: the transport itself may drop or reorder.
    Datagram,
    /// Messages framed by their own header on a byte stream: reliable and ordered.
    Stream,
    /// Whole messages through the middleware's own protocol (its QoS decides what may be lost).
    Middleware,
}

impl Framing {
    pub fn name(self) -> &'static str {
        match self {
            Framing::Datagram => "datagram",
            Framing::Stream => "stream",
            Framing::Middleware => "middleware",
        }
    }
}

/// How one publisher reaches several subscribers (`pub --subscribers N`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fanout {
    /// No fan-out: the pub sends each message to each subscriber's own address in turn.
    SenderLoops,
    /// Native, and discovery counts the matched subscribers (the pub waits for N).
    Counted,
    /// Native, but nothing counts subscribers: the pub starts once every sub printed READY.
    Uncounted,
}

impl Fanout {
    pub fn name(self) -> &'static str {
        match self {
            Fanout::SenderLoops => "sender-loops",
            Fanout::Counted => "counted",
            Fanout::Uncounted => "uncounted",
        }
    }
}

/// One `--opt KEY=VALUE` a transport accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Opt {
    pub key: &'static str,
    /// One line: the values allowed and the default.
    pub help: &'static str,
}

/// The QoS values a transport honours (mapped to its own terms); anything else is refused as a
/// usage error. Empty lists: QoS does not apply (plain sockets keep their own semantics).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QosSupport {
    pub reliability: &'static [&'static str],
    pub history: &'static [&'static str],
    pub durability: &'static [&'static str],
    /// One line: restrictions on combinations and how the values map.
    pub note: &'static str,
}

impl QosSupport {
    /// QoS does not apply (plain sockets): the flags are accepted and change nothing.
    pub const NONE: QosSupport = QosSupport {
        reliability: &[],
        history: &[],
        durability: &[],
        note: "QoS does not apply: the socket's own semantics hold",
    };
    /// Every value of each policy (DDS, where the QoS flags come from).
    pub const RELIABILITY: &'static [&'static str] = &["reliable", "best-effort"];
    pub const HISTORY: &'static [&'static str] = &["keep-last", "keep-all"];
    pub const DURABILITY: &'static [&'static str] = &["volatile", "transient-local"];
}

/// Everything mwperf needs to know about one transport besides how to open it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Descriptor {
    /// `--transport` name.
    pub name: &'static str,
    /// One line for `transports` listings.
    pub description: &'static str,
    /// What an ADDR looks like (`--listen`/`--connect`).
    pub address: &'static str,
    /// The daemon the control plane must start first, if any (what a run always needs; optional
    /// ones, like zenoh's router for `--opt mode=client`, are the control plane's business).
    pub daemon: Option<&'static str>,
    /// Whether peers find each other through discovery (`wait_matched` may wait).
    pub discovery: bool,
    pub framing: Framing,
    /// Largest message (header + payload) one send can carry, if limited.
    pub max_message: Option<usize>,
    /// Host-local IPC (nothing crosses a network; no link to emulate).
    pub local_only: bool,
    /// Whether two agents on different hosts (emulated or real) can meet over it.
    pub crosses_hosts: bool,
    pub fanout: Fanout,
    /// With [`crate::Spec::shared_session`] (a graph node), this process's endpoints of equal
    /// session settings share one middleware session (participant, node, connection); false:
    /// every endpoint opens its own (plain sockets have no session to share).
    pub node_session: bool,
    /// The `--opt` keys it accepts; any other key is refused naming these.
    pub opts: &'static [Opt],
    /// The value an `--opt` key takes when not given, where the control plane needs the same
    /// text (Cyclone DDS's loopback `config`: a bridge or ddsperf joins the agents' domain the
    /// same way); `mwperf-agent transports --json` prints it, so it is defined only here.
    pub defaults: &'static [(&'static str, &'static str)],
    pub qos: QosSupport,
    /// Request/response (`--mode service`): the mechanism, or why there is none.
    pub services: crate::service::Services,
}

impl Descriptor {
    /// The `--opt` keys, for [`crate::Spec::options_for`].
    pub fn opt_keys(&self) -> Vec<&'static str> {
        self.opts.iter().map(|o| o.key).collect()
    }

    /// Whether the transport itself may drop or reorder messages.
    pub fn datagram(&self) -> bool {
        self.framing == Framing::Datagram
    }

    /// Whether a message that is late may still come: a byte stream always retransmits, a
    /// middleware does when it honours the reliability asked for and it is `reliable`.
    pub fn retransmits(&self, asked: crate::Reliability) -> bool {
        match self.framing {
            Framing::Datagram => false,
            Framing::Stream => true,
            Framing::Middleware => {
                asked == crate::Reliability::Reliable && self.qos.reliability.contains(&"reliable")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::{Kind, Reliability};

    #[test]
    fn streams_and_reliable_middleware_retransmit_datagrams_do_not() {
        let d = |name: &str| Kind::parse(name).unwrap().descriptor();
        assert!(d("tcp").retransmits(Reliability::BestEffort));
        assert!(!d("udp").retransmits(Reliability::Reliable));
    }
}
