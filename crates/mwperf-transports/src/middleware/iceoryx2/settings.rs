//! What one iceoryx2 endpoint is opened with: the QoS mapped to iceoryx2 service settings, and
//! the transport options (`--opt key=value`).
//!
//! iceoryx2 queues are fixed when a service is created, and whoever creates it first decides its
//! settings; both sides therefore derive them from their QoS the same way and check that the
//! service they opened has exactly these settings (`services.rs`).

use std::time::Duration;

use crate::spec::{Durability, History, Reliability, Spec};
use crate::TransportError;

use super::NAME;

/// Longest `--opt domain=` name (it prefixes every file iceoryx2 creates, in /dev/shm too).
const MAX_DOMAIN: usize = 32;

/// The iceoryx2 configuration for `--opt domain=NAME`: every file of the run (services, nodes,
/// and the node counter iceoryx2 keeps in /dev/shm for good) starts with `NAME_` instead of
/// `iox2_`, so only peers in the same domain meet, and the run's files can be found and removed
/// afterwards (mwperf passes its lease tag). None without the option: iceoryx2's defaults.
pub fn domain_config(spec: &Spec) -> Result<Option<iceoryx2::prelude::Config>, TransportError> {
    use iceoryx2::prelude::{Config, FileName, SemanticString};
    let opts = spec.options_of(&super::super::iceoryx2_descriptor::DESCRIPTOR)?;
    let Some(domain) = opts.get("domain") else {
        return Ok(None);
    };
    if domain.is_empty()
        || domain.len() > MAX_DOMAIN
        || !domain
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-')
    {
        return Err(unsupported_value(
            "domain",
            domain,
            &format!("1 to {MAX_DOMAIN} letters, digits or '-'"),
        ));
    }
    let mut config = Config::default();
    config.global.prefix = FileName::new(format!("{domain}_").as_bytes())
        .map_err(|e| unsupported_value("domain", domain, &format!("{e:?}")))?;
    Ok(Some(config))
}

/// How long a reliable send waits for a full subscriber queue (or a full memory pool) to drain
/// before it reports an error for that message (`--opt send-timeout=`).
const DEFAULT_SEND_TIMEOUT: Duration = Duration::from_secs(1);

/// Shared memory one publisher may preallocate for its samples (`--opt max-shm=`). Without a
/// cap, keep-last 1000 with 4 MiB messages would zero gigabytes of /dev/shm per publisher.
const DEFAULT_MAX_SHM: usize = 256 << 20;

/// Ports a service admits: a pub's `--subscribers` (at most 16) plus one, which covers a peer
/// that is being replaced (the old one is still registered while the new one opens); publishers
/// are cheap. The publisher's sample pool stays capped by `max-shm`.
pub const MAX_SUBSCRIBERS: usize = 17;
pub const MAX_PUBLISHERS: usize = 4;
/// Samples a subscriber holds at once: one (it copies each out and releases it at once), plus
/// one of slack.
pub const SUBSCRIBER_BORROWED: usize = 2;
/// Samples a publisher loans at once: it loans, writes and sends one message at a time.
pub const PUBLISHER_LOANS: usize = 1;

/// The service settings both sides must agree on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ServiceSettings {
    /// Subscriber queue length (keep-last N).
    pub depth: usize,
    /// Samples a publisher keeps for late joiners (transient-local: N, volatile: 0).
    pub history: usize,
    /// Best effort: a full queue drops its oldest sample instead of holding the publisher back.
    pub safe_overflow: bool,
}

impl ServiceSettings {
    /// Describes the settings in the agent's terms, for mismatch errors.
    pub fn describe(&self) -> String {
        let rel = if self.safe_overflow {
            "best-effort"
        } else {
            "reliable"
        };
        let dur = if self.history > 0 {
            format!("transient-local (history {})", self.history)
        } else {
            "volatile".into()
        };
        format!("{rel}, keep-last:{}, {dur}", self.depth)
    }

    /// Samples a publisher needs so that it can never run out (iceoryx2's own worst case).
    pub fn worst_case_samples(&self) -> usize {
        MAX_SUBSCRIBERS * (self.depth + SUBSCRIBER_BORROWED) + self.history + PUBLISHER_LOANS
    }

    /// Samples a publisher needs at the very least to keep working: its history, its loan and
    /// what subscribers may hold while reading, plus one in flight.
    pub fn minimum_samples(&self) -> usize {
        self.history + PUBLISHER_LOANS + MAX_SUBSCRIBERS * SUBSCRIBER_BORROWED + 1
    }
}

/// Everything derived from a [`Spec`] besides the address.
#[derive(Debug, Clone, Copy)]
pub struct Settings {
    pub service: ServiceSettings,
    pub reliable: bool,
    pub send_timeout: Duration,
    pub max_shm: usize,
    /// `--opt loans=on` (the default): a receiver that can read a message where it arrived
    /// (`Endpoint::recv_view`) reads it in the publisher's shared memory and releases the
    /// sample at its next receive; off: every sample is copied out and released at once
    pub loans: bool,
}

impl Settings {
    pub fn from_spec(spec: &Spec) -> Result<Settings, TransportError> {
        let opts = spec.options_of(&super::super::iceoryx2_descriptor::DESCRIPTOR)?;
        let depth = match spec.qos.history {
            History::KeepLast(n) => n as usize,
            History::KeepAll => {
                return Err(TransportError::Unsupported {
                    transport: NAME,
                    what: "--history keep-all (iceoryx2 queues are fixed when the service is created; use keep-last:N)".into(),
                })
            }
        };
        let reliable = spec.qos.reliability == Reliability::Reliable;
        let history = if spec.qos.durability == Durability::TransientLocal {
            depth
        } else {
            0
        };
        let send_timeout = match opts.get("send-timeout") {
            None => DEFAULT_SEND_TIMEOUT,
            Some(t) => Duration::from_nanos(
                mwperf_core::units::parse_duration_ns(t)
                    .map_err(|e| unsupported_value("send-timeout", t, &e))?,
            ),
        };
        let max_shm = match opts.get("max-shm") {
            None => DEFAULT_MAX_SHM,
            Some(t) => match mwperf_core::units::parse_bytes(t) {
                Ok(n) if n >= 1 << 20 => n,
                Ok(_) => return Err(unsupported_value("max-shm", t, "must be at least 1MiB")),
                Err(e) => return Err(unsupported_value("max-shm", t, &e)),
            },
        };
        let loans = match opts.get("loans") {
            None | Some("on") => true,
            Some("off") => false,
            Some(v) => return Err(unsupported_value("loans", v, "on or off")),
        };
        Ok(Settings {
            service: ServiceSettings {
                depth,
                history,
                safe_overflow: !reliable,
            },
            reliable,
            send_timeout,
            max_shm,
            loans,
        })
    }
}

fn unsupported_value(key: &str, value: &str, why: &str) -> TransportError {
    TransportError::Unsupported {
        transport: NAME,
        what: format!("--opt {key}={value} ({why})"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::Qos;

    fn spec(r: Reliability, h: History, d: Durability) -> Spec {
        Spec::new("x").with_qos(Qos {
            reliability: r,
            history: h,
            durability: d,
        })
    }

    #[test]
    fn a_domain_prefixes_the_files_and_is_checked() {
        assert!(domain_config(&Spec::new("x")).unwrap().is_none());
        let c = domain_config(&Spec::new("x").with_option("domain", "mwp12ab34"))
            .unwrap()
            .unwrap();
        assert_eq!(c.global.prefix.to_string(), "mwp12ab34_");
        for bad in ["", "a/b", "x y", &"d".repeat(33)] {
            let e = domain_config(&Spec::new("x").with_option("domain", bad)).unwrap_err();
            assert!(
                e.is_usage() && e.to_string().contains("--opt domain="),
                "{e}"
            );
        }
    }

    #[test]
    fn qos_maps_to_service_settings() {
        let s = Settings::from_spec(&spec(
            Reliability::Reliable,
            History::KeepLast(10),
            Durability::Volatile,
        ))
        .unwrap();
        assert_eq!(
            s.service,
            ServiceSettings {
                depth: 10,
                history: 0,
                safe_overflow: false
            }
        );
        assert!(s.reliable);
        let s = Settings::from_spec(&spec(
            Reliability::BestEffort,
            History::KeepLast(5),
            Durability::TransientLocal,
        ))
        .unwrap();
        assert_eq!(
            s.service,
            ServiceSettings {
                depth: 5,
                history: 5,
                safe_overflow: true
            }
        );
        let e = Settings::from_spec(&spec(
            Reliability::Reliable,
            History::KeepAll,
            Durability::Volatile,
        ))
        .unwrap_err();
        assert!(e.is_usage() && e.to_string().contains("keep-all"), "{e}");
    }

    #[test]
    fn options_are_checked() {
        let s = Settings::from_spec(
            &Spec::new("x")
                .with_option("send-timeout", "20ms")
                .with_option("max-shm", "64m")
                .with_option("loans", "off"),
        )
        .unwrap();
        assert_eq!(
            (s.send_timeout, s.max_shm, s.loans),
            (Duration::from_millis(20), 64 << 20, false)
        );
        assert!(Settings::from_spec(&Spec::new("x")).unwrap().loans);
        for (k, v) in [
            ("send-timeout", "soon"),
            ("max-shm", "1k"),
            ("loans", "yes"),
            ("colour", "red"),
        ] {
            let e = Settings::from_spec(&Spec::new("x").with_option(k, v)).unwrap_err();
            assert!(e.is_usage() && e.to_string().contains(k), "{e}");
        }
    }
}
