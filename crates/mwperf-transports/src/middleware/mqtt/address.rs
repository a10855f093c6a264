//! The MQTT address `<broker host>:<port>[/<base>]` and the topic names derived from the base.

use crate::{Side, TransportError};

const FORM: &str = "<broker host>:<port>[/<base>], e.g. 127.0.0.1:1883/demo";

/// A parsed address: the broker and the topic base (None = not given).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Address {
    pub broker: String,
    pub base: Option<String>,
}

impl Address {
    pub fn parse(text: &str) -> Result<Address, TransportError> {
        let (broker, base) = match text.split_once('/') {
            Some((b, base)) => (b, Some(base)),
            None => (text, None),
        };
        let port_ok = broker
            .rsplit_once(':')
            .is_some_and(|(host, port)| !host.is_empty() && port.parse::<u16>().is_ok());
        if !port_ok {
            return Err(TransportError::Address(format!(
                "mqtt address '{text}' does not start with the broker's host:port; expected {FORM}"
            )));
        }
        let base = match base {
            None | Some("") => None,
            Some(b) => {
                if b.contains(['+', '#', '\0'])
                    || b.starts_with('/')
                    || b.ends_with('/')
                    || b.contains("//")
                    || b.len() > 1000
                {
                    return Err(TransportError::Address(format!(
                        "mqtt topic base '{b}' cannot be used: it must be a plain topic path (no '+', '#', empty levels; at most 1000 bytes); expected {FORM}"
                    )));
                }
                Some(b.to_string())
            }
        };
        Ok(Address {
            broker: broker.to_string(),
            base,
        })
    }
}

/// The topics one endpoint uses under `mwperf/<base>/`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Topics {
    /// Where this side publishes (None for a sub).
    pub out: Option<String>,
    /// What this side subscribes to (None for a pub).
    pub input: Option<String>,
    /// Retained "a pong/sub is subscribed" announcement.
    pub ready: String,
}

impl Topics {
    pub fn new(base: &str, side: Side) -> Topics {
        let t = |suffix: &str| format!("mwperf/{base}/{suffix}");
        Topics {
            out: side.out_topic().map(t),
            input: side.in_topic().map(t),
            ready: t("ready"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms() {
        assert_eq!(
            Address::parse("127.0.0.1:1883").unwrap(),
            Address {
                broker: "127.0.0.1:1883".into(),
                base: None
            }
        );
        assert_eq!(Address::parse("127.0.0.1:1883/").unwrap().base, None);
        assert_eq!(
            Address::parse("localhost:1/a/b").unwrap(),
            Address {
                broker: "localhost:1".into(),
                base: Some("a/b".into())
            }
        );
        assert_eq!(Address::parse("[::1]:1883/x").unwrap().broker, "[::1]:1883");
        for bad in [
            "1883",
            "127.0.0.1",
            ":1883/x",
            "h:99999/x",
            "h:1/a/+",
            "h:1/#",
            "h:1/a//b",
            "h:1/a/",
        ] {
            let e = Address::parse(bad).unwrap_err().to_string();
            assert!(e.contains("<broker host>:<port>"), "{bad}: {e}");
        }
        let t = Topics::new("b", Side::Ping);
        assert_eq!(
            (t.out.as_deref(), t.input.as_deref(), t.ready.as_str()),
            (
                Some("mwperf/b/ping"),
                Some("mwperf/b/pong"),
                "mwperf/b/ready"
            )
        );
        let t = Topics::new("b", Side::Sub);
        assert_eq!((t.out, t.input.as_deref()), (None, Some("mwperf/b/ping")));
    }
}
