//! How mwperf's QoS (DDS terms) and `--opt` options map to MQTT.
//!
//! - Reliability: best-effort → QoS 0, reliable → QoS 1 (at least once: a resend after a lost
//!   connection can duplicate, which the accounting counts); `--opt qos=0|1|2` overrides it
//!   (2 = exactly once).
//! - History: MQTT has no per-endpoint history; what queues up for a slow subscriber is bounded
//!   by the broker (`max_queued_messages`, which the control plane sets to the depth, 0 =
//!   unlimited for keep-all). Every history is accepted; the broker config decides.
//! - Durability: transient-local → every PUBLISH is retained, so a late subscriber gets the last
//!   message; a broker retains one message per topic, so only with keep-last:1. Retained data
//!   stays on the broker after the run (until the broker restarts or the topic is overwritten).
//! - `--opt tls=ca=PATH[,cert=PATH,key=PATH]`: the connection to the broker is TLS, its
//!   certificate checked against the CA (and naming the broker's host); cert/key: the client's
//!   own, presented when the broker asks (mosquitto's `require_certificate`: mTLS).

use super::codec::QoS;
use crate::tls_files::{self, TlsFiles};
use crate::{Durability, History, Spec, TransportError};

pub const TRANSPORT: &str = "mqtt";

/// What one endpoint publishes and subscribes with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delivery {
    pub qos: QoS,
    pub retain: bool,
    /// `--opt tls`: the connection's TLS files (None: plain TCP).
    pub tls: Option<TlsFiles>,
}

pub fn delivery(spec: &Spec) -> Result<Delivery, TransportError> {
    let options = spec.options_of(&super::super::mqtt_descriptor::DESCRIPTOR)?;
    let qos = match options.get("qos") {
        None => match spec.qos.reliability {
            crate::Reliability::BestEffort => QoS::AtMostOnce,
            crate::Reliability::Reliable => QoS::AtLeastOnce,
        },
        Some(v) => match v.parse::<u8>().ok().and_then(QoS::from_bits) {
            Some(q) => q,
            None => {
                return Err(TransportError::Unsupported {
                    transport: TRANSPORT,
                    what: format!("'--opt qos={v}' (allowed: 0, 1, 2)"),
                })
            }
        },
    };
    let retain = match (spec.qos.durability, spec.qos.history) {
        (Durability::Volatile, _) => false,
        (Durability::TransientLocal, History::KeepLast(1)) => true,
        (Durability::TransientLocal, h) => {
            return Err(TransportError::Unsupported {
                transport: TRANSPORT,
                what: format!("--durability transient-local with --history {} (a broker retains only the last message per topic; use --history keep-last:1 or --durability volatile)", h.name()),
            })
        }
    };
    let tls = TlsFiles::of(TRANSPORT, options.get(tls_files::OPT))?;
    Ok(Delivery { qos, retain, tls })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Qos, Reliability};

    fn spec(r: Reliability, h: History, d: Durability) -> Spec {
        Spec::new("x:1").with_qos(Qos {
            reliability: r,
            history: h,
            durability: d,
        })
    }

    #[test]
    fn mapping() {
        let d = delivery(&spec(
            Reliability::BestEffort,
            History::KeepAll,
            Durability::Volatile,
        ))
        .unwrap();
        assert_eq!(
            d,
            Delivery {
                qos: QoS::AtMostOnce,
                retain: false,
                tls: None
            }
        );
        let d = delivery(&spec(
            Reliability::Reliable,
            History::KeepLast(1),
            Durability::TransientLocal,
        ))
        .unwrap();
        assert_eq!(
            d,
            Delivery {
                qos: QoS::AtLeastOnce,
                retain: true,
                tls: None
            }
        );
        let d = delivery(
            &spec(
                Reliability::BestEffort,
                History::KeepLast(5),
                Durability::Volatile,
            )
            .with_option("qos", "2"),
        )
        .unwrap();
        assert_eq!(d.qos, QoS::ExactlyOnce);
        let e = delivery(&spec(
            Reliability::Reliable,
            History::KeepLast(10),
            Durability::TransientLocal,
        ))
        .unwrap_err();
        assert!(
            e.is_usage()
                && e.to_string().contains("keep-last:10")
                && e.to_string().contains("not supported by mqtt"),
            "{e}"
        );
        let e = delivery(&Spec::new("x:1").with_option("qos", "3")).unwrap_err();
        assert!(
            e.is_usage() && e.to_string().contains("allowed: 0, 1, 2"),
            "{e}"
        );
        let d = delivery(&Spec::new("x:1").with_option("tls", "ca=/s/ca.pem")).unwrap();
        assert_eq!(d.tls.map(|t| t.ca), Some("/s/ca.pem".into()));
        let e = delivery(&Spec::new("x:1").with_option("tls", "ca=ca.pem")).unwrap_err();
        assert!(e.is_usage() && e.to_string().contains("absolute"), "{e}");
        let e = delivery(&Spec::new("x:1").with_option("depth", "3")).unwrap_err();
        assert!(e.is_usage() && e.to_string().contains("knows: qos"), "{e}");
    }
}
