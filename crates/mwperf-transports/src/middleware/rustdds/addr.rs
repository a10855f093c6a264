//! The address form shared by both DDS transports: `[<domain>/]<base>`, topics
//! `rt/mwperf/<base>/ping|pong` (the ROS 2 `rt/` prefix, so a ROS 2 node could listen in).

use crate::spec::auto_base;
use crate::TransportError;

/// Largest domain id whose RTPS ports (7400 + 250 * domain + offsets) still fit in 16 bits.
pub const MAX_DOMAIN: u16 = 232;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Address {
    pub domain: u16,
    pub base: String,
}

impl Address {
    /// Parse `[<domain>/]<base>`; a listener given no base (or `auto`) gets a fresh one.
    pub fn parse(text: &str, listening: bool) -> Result<Address, TransportError> {
        let bad = |why: String| TransportError::Address(format!("rustdds address '{text}': {why}; expected [<domain>/]<base>, e.g. 0/demo (domain 0..={MAX_DOMAIN})"));
        let (domain, base) = match text.split_once('/') {
            Some((d, rest)) if !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()) => {
                let domain = d.parse::<u16>().ok().filter(|&d| d <= MAX_DOMAIN).ok_or_else(|| bad(format!("domain {d} is out of range")))?;
                (domain, rest)
            }
            _ => (0, text),
        };
        let base = if base.is_empty() || base == "auto" {
            if !listening {
                return Err(bad("the connecting side needs the base name the listener printed".into()));
            }
            auto_base()
        } else {
            base.to_string()
        };
        // The same rules as the cyclonedds transport, so every base works with both.
        if let Some(c) = base.chars().find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '/'))) {
            return Err(bad(format!("'{c}' is not allowed in a base name (letters, digits, '_', '-', '/')")));
        }
        if base.starts_with('/') || base.ends_with('/') || base.contains("//") {
            return Err(bad("a base name cannot start or end with '/' or contain '//'".into()));
        }
        Ok(Address { domain, base })
    }

    /// The DDS topic name for one direction (`ping` or `pong`). DDS and ROS 2 names allow no
    /// '-', so it becomes '_' (exactly as the cyclonedds transport derives it: they interoperate).
    pub fn topic(&self, suffix: &str) -> String {
        format!("rt/mwperf/{}/{suffix}", self.base.replace('-', "_"))
    }

    /// What the peer passes to `--connect`.
    pub fn text(&self) -> String {
        format!("{}/{}", self.domain, self.base)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms() {
        assert_eq!(Address::parse("3/demo", false).unwrap(), Address { domain: 3, base: "demo".into() });
        assert_eq!(Address::parse("demo", false).unwrap(), Address { domain: 0, base: "demo".into() });
        assert_eq!(Address::parse("0/a/b", false).unwrap().topic("ping"), "rt/mwperf/a/b/ping");
        assert_eq!(Address::parse("x/y", false).unwrap(), Address { domain: 0, base: "x/y".into() });
        let auto = Address::parse("0/auto", true).unwrap();
        assert!(auto.base.starts_with("mwperf-"), "{auto:?}");
        assert_eq!(Address::parse(&auto.text(), false).unwrap(), auto);
        assert!(Address::parse("7", true).unwrap().base == "7");
        assert_eq!(Address::parse("0/my-run", false).unwrap().topic("pong"), "rt/mwperf/my_run/pong");
    }

    #[test]
    fn refusals_name_the_form() {
        for bad in ["233/x", "99999/x", "0/auto", "0/", "0/a b", "/x", "0/a//b", "0/a.b"] {
            let e = Address::parse(bad, false).unwrap_err().to_string();
            assert!(e.contains("[<domain>/]<base>"), "{bad}: {e}");
        }
    }
}
