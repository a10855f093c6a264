//! The Cyclone DDS configuration of the probe's domain: what a ROS 2 node started in the same
//! environment on rmw_cyclonedds_cpp would use, so the probe discovers what that node would.
//!
//! In order (Cyclone merges the parts, a later one overriding an earlier one):
//! 1. a large socket receive buffer (up to 4 MiB, taking what the kernel allows), so a burst of
//!    fragments of a large message is not dropped before the probe reads it;
//! 2. the discovery range (`ROS_AUTOMATIC_DISCOVERY_RANGE`) and static peers
//!    (`ROS_STATIC_PEERS`), mapped as rmw_cyclonedds_cpp maps them:
//!    - LOCALHOST: no multicast; unicast SPDP to `localhost` (and each static peer) on the
//!      participant ports of indices 0..32 (ParticipantIndex auto), which is also where
//!      rmw_fastrtps_cpp's LOCALHOST participants listen and send (127.0.0.1, 32 ports);
//!    - SUBNET (ROS 2's default): Cyclone's multicast, participant index auto, the static peers
//!      added as unicast peers;
//!    - OFF: no multicast and a discovery tag of this process's own (nobody is discovered);
//!    - SYSTEM_DEFAULT: Cyclone's defaults, static peers ignored;
//! 3. `CYCLONEDDS_URI` as given (rmw_cyclonedds_cpp appends it after its own part too);
//! 4. `--interface`, the probe's own flag: `lo` = this host only, by unicast (the transport's
//!    LOOPBACK_CONFIG: `lo` carries no multicast, plus the host's other addresses, which
//!    same-host peers announce: [`same_host`]), another name = that interface.

use crate::netif;
use crate::ros2probe::{DiscoveryRange, Options};
use crate::TransportError;

use super::super::domain::LOOPBACK_CONFIG;

/// How many participant indices unicast discovery covers on a host (rmw_cyclonedds_cpp's
/// MaxAutoParticipantIndex and rmw_fastrtps_cpp's maxInitialPeersRange under LOCALHOST).
const HOST_PARTICIPANTS: u32 = 32;

/// The configuration text for `opts`; Err (a usage error) names an interface this host does
/// not have (listing the ones it has) or a static peer that cannot be an address.
pub fn for_probe(opts: &Options) -> Result<String, TransportError> {
    let mut parts = vec![domain(
        "<Internal><SocketReceiveBufferSize min=\"default\" max=\"4MiB\"/></Internal>",
    )];
    let range = discovery(opts.range, &opts.static_peers)?;
    if !range.is_empty() {
        parts.push(domain(&range));
    }
    if let Some(uri) = opts
        .cyclonedds_uri
        .as_deref()
        .filter(|u| !u.trim().is_empty())
    {
        parts.push(uri.trim().to_string());
    }
    if let Some(text) = for_interface(opts.interface.as_deref())? {
        parts.push(text);
    }
    Ok(parts.join(","))
}

/// The discovery part of `range` with `peers` ("" = Cyclone's defaults).
fn discovery(range: DiscoveryRange, peers: &[String]) -> Result<String, TransportError> {
    for peer in peers {
        if peer.is_empty()
            || peer
                .chars()
                .any(|c| c.is_whitespace() || "<>\"&,".contains(c))
        {
            return Err(TransportError::Address(format!(
                "static peer '{peer}' (ROS_STATIC_PEERS): expected a host name or IP address"
            )));
        }
    }
    let peer_list = |localhost: bool| {
        let mut list: Vec<&str> = peers.iter().map(String::as_str).collect();
        if localhost {
            list.insert(0, "localhost");
        }
        if list.is_empty() {
            return String::new();
        }
        let each: String = list
            .iter()
            .map(|p| format!("<Peer address=\"{p}\"/>"))
            .collect();
        format!("<Peers>{each}</Peers>")
    };
    let auto_index = format!(
        "<ParticipantIndex>auto</ParticipantIndex>\
         <MaxAutoParticipantIndex>{HOST_PARTICIPANTS}</MaxAutoParticipantIndex>"
    );
    const NO_MULTICAST: &str = "<General><AllowMulticast>false</AllowMulticast></General>";
    Ok(match range {
        DiscoveryRange::SystemDefault => String::new(),
        DiscoveryRange::Subnet => {
            format!("<Discovery>{auto_index}{}</Discovery>", peer_list(false))
        }
        DiscoveryRange::Localhost => {
            format!(
                "{NO_MULTICAST}<Discovery>{auto_index}{}</Discovery>",
                peer_list(true)
            )
        }
        DiscoveryRange::Off => format!(
            "{NO_MULTICAST}<Discovery><ParticipantIndex>none</ParticipantIndex>\
             <Tag>ros_discovery_off_{}</Tag></Discovery>",
            std::process::id()
        ),
    })
}

/// The part for `--interface` (None: none given); Err names an interface this host does not
/// have and lists the ones it has.
fn for_interface(interface: Option<&str>) -> Result<Option<String>, TransportError> {
    let Some(name) = interface else {
        return Ok(None);
    };
    let known = interfaces();
    if !known.iter().any(|k| k == name) {
        return Err(TransportError::Address(format!(
            "--interface {name}: no such network interface on this host (it has: {})",
            known.join(", ")
        )));
    }
    if name == "lo" {
        return Ok(Some(format!("{LOOPBACK_CONFIG}{}", same_host())));
    }
    Ok(Some(domain(&format!(
        "<General><Interfaces><NetworkInterface name=\"{name}\"/></Interfaces></General>"
    ))))
}

/// The host's other IPv4 addresses as unicast-only interfaces: a same-host peer announces
/// them (rmw_fastrtps_cpp's Fast DDS announces eth0's address, not 127.0.0.1, even under
/// LOCALHOST), and Cyclone ignores a participant none of whose locators is on its interfaces.
/// No multicast, and the peers stay 127.0.0.1: remote hosts are not discovered through them.
fn same_host() -> String {
    let each: String = netif::interfaces()
        .unwrap_or_default()
        .iter()
        .filter(|i| i.up && !i.loopback)
        .map(|i| {
            format!(
                "<NetworkInterface address=\"{}\" multicast=\"false\"/>",
                i.addr
            )
        })
        .collect();
    if each.is_empty() {
        return String::new();
    }
    format!(
        ",{}",
        domain(&format!(
            "<General><Interfaces>{each}</Interfaces></General>"
        ))
    )
}

fn domain(inner: &str) -> String {
    format!("<CycloneDDS><Domain Id=\"any\">{inner}</Domain></CycloneDDS>")
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

    fn opts(
        range: DiscoveryRange,
        peers: &[&str],
        uri: Option<&str>,
        interface: Option<&str>,
    ) -> Options {
        Options {
            domain: 0,
            interface: interface.map(str::to_string),
            range,
            static_peers: peers.iter().map(|p| p.to_string()).collect(),
            cyclonedds_uri: uri.map(str::to_string),
            topics: vec![],
            reliable: false,
            depth: 1,
            discovery_ns: 1,
            duration_ns: 1,
        }
    }

    #[test]
    fn loopback_uses_unicast_discovery() {
        let text = for_probe(&opts(DiscoveryRange::Subnet, &[], None, Some("lo"))).unwrap();
        assert!(text.contains(LOOPBACK_CONFIG), "{text}");
        assert!(!text.contains("address=\"127.0.0.1\" multicast"), "{text}");
        assert!(text.contains("127.0.0.1"), "{text}");
    }

    #[test]
    fn unknown_interface_is_named_with_the_ones_there() {
        let e = for_probe(&opts(DiscoveryRange::Subnet, &[], None, Some("nosuch0"))).unwrap_err();
        assert!(e.is_usage());
        let text = e.to_string();
        assert!(text.contains("--interface nosuch0"), "{text}");
        assert!(text.contains("lo"), "{text}");
    }

    #[test]
    fn system_default_lets_cyclone_choose() {
        let text = for_probe(&opts(
            DiscoveryRange::SystemDefault,
            &["10.0.0.9"],
            None,
            None,
        ))
        .unwrap();
        assert!(!text.contains("NetworkInterface"), "{text}");
        assert!(!text.contains("Peer"), "static peers are ignored: {text}");
        assert!(text.contains("SocketReceiveBufferSize"), "{text}");
    }

    #[test]
    fn localhost_is_unicast_to_localhost_and_the_static_peers() {
        let text = for_probe(&opts(DiscoveryRange::Localhost, &["10.0.0.9"], None, None)).unwrap();
        assert!(
            text.contains("<AllowMulticast>false</AllowMulticast>"),
            "{text}"
        );
        assert!(
            text.contains("<ParticipantIndex>auto</ParticipantIndex>"),
            "{text}"
        );
        assert!(text.contains("<MaxAutoParticipantIndex>32<"), "{text}");
        assert!(
            text.contains(
                "<Peers><Peer address=\"localhost\"/><Peer address=\"10.0.0.9\"/></Peers>"
            ),
            "{text}"
        );
    }

    #[test]
    fn subnet_keeps_multicast_and_adds_the_static_peers() {
        let text = for_probe(&opts(DiscoveryRange::Subnet, &["robot.local"], None, None)).unwrap();
        assert!(!text.contains("AllowMulticast"), "{text}");
        assert!(text.contains("<Peer address=\"robot.local\"/>"), "{text}");
        assert!(!text.contains("localhost"), "{text}");
    }

    #[test]
    fn off_discovers_nobody() {
        let text = for_probe(&opts(DiscoveryRange::Off, &["10.0.0.9"], None, None)).unwrap();
        assert!(text.contains("<ParticipantIndex>none<"), "{text}");
        assert!(text.contains("<Tag>ros_discovery_off_"), "{text}");
        assert!(!text.contains("Peer "), "{text}");
    }

    #[test]
    fn cyclonedds_uri_comes_after_the_range_and_before_the_interface() {
        let uri = "file:///etc/cyclone.xml";
        let text = for_probe(&opts(DiscoveryRange::Localhost, &[], Some(uri), Some("lo"))).unwrap();
        let at = |s: &str| text.find(s).unwrap_or_else(|| panic!("{s} in {text}"));
        assert!(
            at("localhost") < at(uri) && at(uri) < at(LOOPBACK_CONFIG),
            "{text}"
        );
    }

    #[test]
    fn a_peer_that_is_no_address_is_refused() {
        let e = for_probe(&opts(DiscoveryRange::Subnet, &["a b"], None, None)).unwrap_err();
        assert!(
            e.is_usage() && e.to_string().contains("ROS_STATIC_PEERS"),
            "{e}"
        );
    }
}
