//! The address form both DDS transports share: `[<domain>/]<base>`, and the ROS 2 topic names
//! derived from it (`rt/mwperf/<base>/ping|pong`). One parser, so every address that works with
//! cyclonedds works with rustdds and the two derive identical topic names (they interoperate).

use crate::spec::auto_base;
use crate::TransportError;

/// Highest DDS domain id (RTPS port formula: 7400 + 250·domain must stay below 65536).
pub const MAX_DOMAIN: u32 = 232;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Address {
    pub domain: u32,
    pub base: String,
}

impl Address {
    /// Parse `[<domain>/]<base>`; an empty or `auto` base is replaced by a fresh one when
    /// `listening` (the "port 0" of topics), and refused otherwise (a ping needs the real one).
    /// `transport` names the transport in errors.
    pub fn parse(transport: &str, text: &str, listening: bool) -> Result<Address, TransportError> {
        let bad = |why: String| {
            TransportError::Address(format!("'{text}' is not a {transport} address: {why}; expected [<domain>/]<base>, e.g. 0/demo or 0/auto (domain 0..={MAX_DOMAIN})"))
        };
        let (domain, base) = match text.split_once('/') {
            Some((d, rest)) if !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()) => {
                let domain: u32 = d
                    .parse()
                    .map_err(|_| bad(format!("domain {d} is out of range")))?;
                (domain, rest)
            }
            _ => (0, text),
        };
        if domain > MAX_DOMAIN {
            return Err(bad(format!("domain {domain} is above {MAX_DOMAIN}")));
        }
        let base = match base {
            "" | "auto" if listening => auto_base(),
            "" | "auto" => {
                return Err(bad(
                    "a ping/pub needs the base name the pong/sub printed (not 'auto')".into(),
                ))
            }
            b => b.to_string(),
        };
        if let Some(c) = base
            .chars()
            .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '/')))
        {
            return Err(bad(format!(
                "'{c}' is not allowed in a base name (letters, digits, '_', '-', '/')"
            )));
        }
        if base.starts_with('/') || base.ends_with('/') || base.contains("//") {
            return Err(bad(
                "a base name cannot start or end with '/' or contain '//'".into(),
            ));
        }
        Ok(Address { domain, base })
    }

    /// The DDS topic for `suffix` (`ping`/`pong`): `rt/mwperf/<base>/<suffix>`, the ROS 2 topic
    /// `/mwperf/<base>/<suffix>`. DDS and ROS 2 names allow no '-', so it becomes '_' (both peers
    /// derive the name the same way).
    pub fn topic(&self, suffix: &str) -> String {
        format!("rt{}", self.ros_topic(suffix))
    }

    /// The ROS 2 topic for `suffix`: `/mwperf/<base>/<suffix>` (what rcl is given; the RMW
    /// prefixes `rt`, making [`Self::topic`]).
    pub fn ros_topic(&self, suffix: &str) -> String {
        format!("/mwperf/{}/{suffix}", self.base.replace('-', "_"))
    }

    /// The request and reply topics of the ROS 2 service `/mwperf/<base>`:
    /// `rq/mwperf/<base>Request`, `rr/mwperf/<base>Reply` ('-' becomes '_', as in [`Self::topic`]).
    pub fn service_topics(&self) -> (String, String) {
        let name = format!("mwperf/{}", self.base.replace('-', "_"));
        (format!("rq/{name}Request"), format!("rr/{name}Reply"))
    }

    /// What the peer passes to `--connect`.
    pub fn text(&self) -> String {
        self.to_string()
    }
}

impl std::fmt::Display for Address {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.domain, self.base)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms() {
        assert_eq!(
            Address::parse("dds", "7/demo", false).unwrap(),
            Address {
                domain: 7,
                base: "demo".into()
            }
        );
        assert_eq!(
            Address::parse("dds", "demo", false).unwrap(),
            Address {
                domain: 0,
                base: "demo".into()
            }
        );
        assert_eq!(
            Address::parse("dds", "ns/demo", false).unwrap(),
            Address {
                domain: 0,
                base: "ns/demo".into()
            }
        );
        let a = Address::parse("dds", "0/auto", true).unwrap();
        assert!(a.base.starts_with("mwperf-"), "{a}");
        assert_eq!(Address::parse("dds", &a.to_string(), false).unwrap(), a);
        assert_eq!(
            a.topic("ping"),
            format!("rt/mwperf/{}/ping", a.base.replace('-', "_"))
        );
        assert_eq!(
            Address::parse("dds", "0/my-run", false)
                .unwrap()
                .topic("pong"),
            "rt/mwperf/my_run/pong"
        );
        assert_eq!(
            Address::parse("dds", "0/my-run", false)
                .unwrap()
                .ros_topic("pong"),
            "/mwperf/my_run/pong"
        );
        assert_eq!(
            Address::parse("dds", "0/my-run", false)
                .unwrap()
                .service_topics(),
            (
                "rq/mwperf/my_runRequest".to_string(),
                "rr/mwperf/my_runReply".to_string()
            )
        );
    }

    #[test]
    fn refusals_name_the_form() {
        for bad in [
            "0/auto", "233/x", "99999/x", "0/", "/x", "0/a b", "0/a.b", "0//x", "0/x/",
        ] {
            let e = Address::parse("dds", bad, false).unwrap_err().to_string();
            assert!(e.contains("[<domain>/]<base>"), "{bad}: {e}");
        }
    }
}
