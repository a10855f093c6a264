//! Which interfaces a RustDDS participant uses: `--opt network=loopback|auto|<IPv4>`.
//!
//! - `loopback` (the default): 127.0.0.1 only, with RustDDS's same-host loopback discovery
//!   (`lo` has no MULTICAST flag, so SPDP goes by unicast to the well-known ports there).
//! - `auto`: every IPv4 address of an interface that is up, not loopback and multicast-capable —
//!   what an agent in an emulated host's namespace has (its TUN or veth end). Discovery is SPDP
//!   by multicast on those interfaces (RustDDS 0.15 has no unicast peer list), so the two peers
//!   must share a link that carries multicast: a point-to-point link does, a routed hop does not.
//! - an IPv4 address: that interface only (two real hosts on a LAN).

use std::net::{IpAddr, Ipv4Addr};

use crate::netif::{interfaces, Interface};
use crate::TransportError;

/// The `--opt network=` values, for errors and docs.
pub const ALLOWED: &str = "loopback, auto, or an IPv4 address of this host";

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Network {
    Loopback,
    Auto,
    Address(Ipv4Addr),
}

impl Network {
    pub fn parse(value: Option<&str>) -> Result<Network, TransportError> {
        match value {
            None | Some("loopback") => Ok(Network::Loopback),
            Some("auto") => Ok(Network::Auto),
            Some(text) => text.parse::<Ipv4Addr>().map(Network::Address).map_err(|_| {
                TransportError::Unsupported {
                    transport: super::NAME,
                    what: format!("'--opt network={text}' (allowed: {ALLOWED})"),
                }
            }),
        }
    }

    /// The addresses to pin the participant to, and whether same-host loopback discovery is on.
    pub fn resolve(&self) -> Result<(Vec<IpAddr>, bool), TransportError> {
        match self {
            Network::Loopback => Ok((vec![IpAddr::V4(Ipv4Addr::LOCALHOST)], true)),
            Network::Address(a) => {
                let mine = interfaces()?;
                if !mine.iter().any(|i| i.addr == *a) {
                    return Err(nowhere(format!(
                        "no interface of this host has the address {a} (this host has: {})",
                        list(&mine)
                    )));
                }
                Ok((vec![IpAddr::V4(*a)], false))
            }
            Network::Auto => {
                let mine = interfaces()?;
                let usable: Vec<IpAddr> = mine
                    .iter()
                    .filter(|i| i.usable())
                    .map(|i| IpAddr::V4(i.addr))
                    .collect();
                if usable.is_empty() {
                    return Err(nowhere(format!(
                        "'--opt network=auto' found no interface that is up, not loopback and multicast-capable (this host has: {}); give an address or use network=loopback",
                        list(&mine)
                    )));
                }
                Ok((usable, false))
            }
        }
    }
}

fn nowhere(detail: String) -> TransportError {
    TransportError::Middleware {
        transport: super::NAME,
        detail,
    }
}

impl Interface {
    fn usable(&self) -> bool {
        self.up && !self.loopback && self.multicast
    }
}

fn list(interfaces: &[Interface]) -> String {
    if interfaces.is_empty() {
        return "no IPv4 addresses".into();
    }
    interfaces
        .iter()
        .map(|i| {
            let mut flags = vec![];
            if !i.up {
                flags.push("down");
            }
            if i.loopback {
                flags.push("loopback");
            }
            if !i.multicast {
                flags.push("no multicast");
            }
            if flags.is_empty() {
                format!("{} {}", i.name, i.addr)
            } else {
                format!("{} {} ({})", i.name, i.addr, flags.join(", "))
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_values_and_refuses_others_by_name() {
        assert_eq!(Network::parse(None).unwrap(), Network::Loopback);
        assert_eq!(Network::parse(Some("loopback")).unwrap(), Network::Loopback);
        assert_eq!(Network::parse(Some("auto")).unwrap(), Network::Auto);
        assert_eq!(
            Network::parse(Some("10.0.0.1")).unwrap(),
            Network::Address(Ipv4Addr::new(10, 0, 0, 1))
        );
        let e = Network::parse(Some("eth0")).unwrap_err().to_string();
        assert!(
            e.contains("network=eth0") && e.contains("loopback, auto"),
            "{e}"
        );
    }

    #[test]
    fn loopback_pins_to_localhost_with_same_host_discovery() {
        assert_eq!(
            Network::Loopback.resolve().unwrap(),
            (vec![IpAddr::V4(Ipv4Addr::LOCALHOST)], true)
        );
    }

    #[test]
    fn this_host_has_loopback_and_a_foreign_address_is_refused() {
        let mine = interfaces().unwrap();
        assert!(
            mine.iter()
                .any(|i| i.loopback && i.addr == Ipv4Addr::LOCALHOST),
            "{mine:?}"
        );
        assert!(!mine.iter().any(|i| i.addr == Ipv4Addr::new(192, 0, 2, 77)));
        let e = Network::Address(Ipv4Addr::new(192, 0, 2, 77))
            .resolve()
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("192.0.2.77") && e.contains("lo 127.0.0.1"),
            "{e}"
        );
    }

    #[test]
    fn auto_takes_only_usable_interfaces() {
        let lo = Interface {
            name: "lo".into(),
            addr: Ipv4Addr::LOCALHOST,
            up: true,
            loopback: true,
            multicast: false,
        };
        let tun = Interface {
            name: "mwp0".into(),
            addr: Ipv4Addr::new(10, 77, 0, 1),
            up: true,
            loopback: false,
            multicast: true,
        };
        let down = Interface {
            up: false,
            ..tun.clone()
        };
        assert!(!lo.usable() && tun.usable() && !down.usable());
        assert_eq!(
            list(&[lo, down]),
            "lo 127.0.0.1 (loopback, no multicast), mwp0 10.77.0.1 (down)"
        );
    }
}
