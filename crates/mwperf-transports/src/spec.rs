//! What an endpoint is opened with: the address, the QoS settings and transport-specific options.
//! Every transport maps the QoS to its own terms and refuses what it cannot honour with
//! [`TransportError::Unsupported`] (a usage error naming the setting and what is possible).

use std::fmt;

use crate::TransportError;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reliability {
    Reliable,
    BestEffort,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum History {
    /// Keep the newest N messages per reader/writer queue.
    KeepLast(u32),
    /// Keep everything until delivered (bounded only by memory / the middleware's limits).
    KeepAll,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Durability {
    Volatile,
    TransientLocal,
}

/// QoS in DDS terms (the richest model); defaults are ROS 2's default profile.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Qos {
    pub reliability: Reliability,
    pub history: History,
    pub durability: Durability,
}

impl Default for Qos {
    fn default() -> Self {
        Qos {
            reliability: Reliability::Reliable,
            history: History::KeepLast(10),
            durability: Durability::Volatile,
        }
    }
}

impl Qos {
    /// The queue depth to use where a transport needs one number (keep-all → `keep_all_depth`).
    pub fn depth_or(&self, keep_all_depth: u32) -> u32 {
        match self.history {
            History::KeepLast(n) => n,
            History::KeepAll => keep_all_depth,
        }
    }
}

impl Reliability {
    pub fn parse(s: &str) -> Result<Self, String> {
        match s {
            "reliable" => Ok(Reliability::Reliable),
            "best-effort" => Ok(Reliability::BestEffort),
            _ => Err(format!(
                "'{s}' is not a reliability; allowed: reliable, best-effort"
            )),
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Reliability::Reliable => "reliable",
            Reliability::BestEffort => "best-effort",
        }
    }
}

impl History {
    /// `keep-last` (depth given separately), `keep-last:N`, or `keep-all`.
    pub fn parse(s: &str, depth: u32) -> Result<Self, String> {
        match s.split_once(':') {
            None if s == "keep-all" => Ok(History::KeepAll),
            None if s == "keep-last" => Ok(History::KeepLast(depth)),
            Some(("keep-last", n)) => match n.parse::<u32>() {
                Ok(n) if n >= 1 => Ok(History::KeepLast(n)),
                _ => Err(format!("'{n}' is not a depth; keep-last:N needs N >= 1")),
            },
            _ => Err(format!(
                "'{s}' is not a history; allowed: keep-last, keep-last:N, keep-all"
            )),
        }
    }
    pub fn name(self) -> String {
        match self {
            History::KeepLast(n) => format!("keep-last:{n}"),
            History::KeepAll => "keep-all".into(),
        }
    }
}

impl Durability {
    pub fn parse(s: &str) -> Result<Self, String> {
        match s {
            "volatile" => Ok(Durability::Volatile),
            "transient-local" => Ok(Durability::TransientLocal),
            _ => Err(format!(
                "'{s}' is not a durability; allowed: volatile, transient-local"
            )),
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Durability::Volatile => "volatile",
            Durability::TransientLocal => "transient-local",
        }
    }
}

impl fmt::Display for Qos {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}, {}, {}",
            self.reliability.name(),
            self.history.name(),
            self.durability.name()
        )
    }
}

/// Everything `listen`/`connect` get. `options` are transport-specific `key=value` pairs
/// (`--opt` on the agent's command line); each transport checks them with [`Spec::options_for`].
#[derive(Debug, Clone, Default)]
pub struct Spec {
    pub addr: String,
    pub qos: Qos,
    pub options: Vec<(String, String)>,
    /// Take the middleware session (DDS participant, iceoryx2 node, zenoh session, ...) from
    /// this process's shared ones instead of opening one for this endpoint alone: endpoints
    /// whose session settings are equal then share one, as a ROS node's publishers and
    /// subscriptions share its participant (see `session.rs`). Set by the graph node role only;
    /// a transport whose descriptor has `node_session: false` ignores it.
    pub shared_session: bool,
}

impl Spec {
    pub fn new(addr: impl Into<String>) -> Self {
        Spec {
            addr: addr.into(),
            ..Default::default()
        }
    }

    pub fn with_qos(mut self, qos: Qos) -> Self {
        self.qos = qos;
        self
    }

    pub fn with_option(mut self, key: &str, value: &str) -> Self {
        self.options.push((key.into(), value.into()));
        self
    }

    /// Share the middleware session with this process's other endpoints of equal settings.
    pub fn shared(mut self) -> Self {
        self.shared_session = true;
        self
    }

    /// The options, after checking every key against the `--opt` keys `descriptor` declares.
    pub fn options_of(
        &self,
        descriptor: &crate::Descriptor,
    ) -> Result<Options<'_>, TransportError> {
        self.options_for(descriptor.name, &descriptor.opt_keys())
    }

    /// The options, after checking that every key is one `transport` knows (`allowed`).
    pub fn options_for(
        &self,
        transport: &'static str,
        allowed: &[&str],
    ) -> Result<Options<'_>, TransportError> {
        for (k, _) in &self.options {
            if !allowed.contains(&k.as_str()) {
                let what = if allowed.is_empty() {
                    "none".to_string()
                } else {
                    allowed.join(", ")
                };
                return Err(TransportError::Unsupported {
                    transport,
                    what: format!("option '--opt {k}=...' (options {transport} knows: {what})"),
                });
            }
        }
        Ok(Options(&self.options))
    }
}

/// Checked transport options.
pub struct Options<'a>(&'a [(String, String)]);

impl Options<'_> {
    pub fn get(&self, key: &str) -> Option<&str> {
        self.0
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}

/// A topic/service base name used when the listening side is given none (`auto`), unique per
/// process start like port 0.
pub fn auto_base() -> String {
    let t = mwperf_core::clock::now_ns();
    format!(
        "mwperf-{}-{:x}",
        std::process::id(),
        (t ^ (t >> 29)) & 0xffff_ffff
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn history_forms() {
        assert_eq!(History::parse("keep-last", 7), Ok(History::KeepLast(7)));
        assert_eq!(
            History::parse("keep-last:1000", 7),
            Ok(History::KeepLast(1000))
        );
        assert_eq!(History::parse("keep-all", 7), Ok(History::KeepAll));
        assert!(History::parse("keep-last:0", 7)
            .unwrap_err()
            .contains("N >= 1"));
        assert!(History::parse("all", 7)
            .unwrap_err()
            .contains("allowed: keep-last"));
    }

    #[test]
    fn unknown_option_names_the_known_ones() {
        let s = Spec::new("x")
            .with_option("mode", "client")
            .with_option("colour", "red");
        let e = s.options_for("zenoh", &["mode"]).err().unwrap().to_string();
        assert!(
            e.contains("--opt colour") && e.contains("zenoh knows: mode"),
            "{e}"
        );
        let s = Spec::new("x")
            .with_option("mode", "peer")
            .with_option("mode", "client");
        assert_eq!(
            s.options_for("zenoh", &["mode"]).unwrap().get("mode"),
            Some("client")
        );
    }
}
