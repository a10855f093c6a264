//! The Cyclone DDS configuration of the probe's domain: which interface it listens on.
//!
//! - `lo`: loopback unicast discovery (the transport's LOOPBACK_CONFIG: `lo` carries no
//!   multicast), which is how every mwperf test and same-host peer runs.
//! - another interface name: that interface, with Cyclone's defaults (SPDP by multicast, as a
//!   ROS 2 system with default settings discovers).
//! - none: Cyclone's own choice of interface.
//!
//! Either way a large socket receive buffer is asked for (up to 4 MiB, taking what the kernel
//! allows), so a burst of fragments of a large message is not dropped before the probe reads it.

use crate::TransportError;

use super::super::domain::LOOPBACK_CONFIG;

/// The configuration text for `interface`; Err (a usage error) names an interface this host
/// does not have and lists the ones it has.
pub fn for_interface(interface: Option<&str>) -> Result<String, TransportError> {
    let Some(name) = interface else {
        return Ok(domain(""));
    };
    let known = interfaces();
    if !known.iter().any(|k| k == name) {
        return Err(TransportError::Address(format!(
            "--interface {name}: no such network interface on this host (it has: {})",
            known.join(", ")
        )));
    }
    if name == "lo" {
        return Ok(LOOPBACK_CONFIG.to_string());
    }
    Ok(domain(&format!(
        "<General><Interfaces><NetworkInterface name=\"{name}\"/></Interfaces></General>"
    )))
}

fn domain(general: &str) -> String {
    format!(
        "<CycloneDDS><Domain Id=\"any\">{general}<Internal><SocketReceiveBufferSize min=\"default\" max=\"4MiB\"/></Internal></Domain></CycloneDDS>"
    )
}

/// This host's interface names (sorted, each once).
fn interfaces() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir("/sys/class/net")
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_uses_unicast_discovery() {
        let text = for_interface(Some("lo")).unwrap();
        assert!(text.contains("127.0.0.1"), "{text}");
        assert!(text.contains("<AllowMulticast>false"), "{text}");
    }

    #[test]
    fn unknown_interface_is_named_with_the_ones_there() {
        let e = for_interface(Some("nosuch0")).unwrap_err();
        assert!(e.is_usage());
        let text = e.to_string();
        assert!(text.contains("--interface nosuch0"), "{text}");
        assert!(text.contains("lo"), "{text}");
    }

    #[test]
    fn default_lets_cyclone_choose() {
        let text = for_interface(None).unwrap();
        assert!(!text.contains("NetworkInterface"), "{text}");
        assert!(text.contains("SocketReceiveBufferSize"), "{text}");
    }
}
