//! The zenoh address form `<endpoint>[#<base>]` (e.g. `tcp/127.0.0.1:7447#demo`): a zenoh
//! endpoint to listen on or connect to, plus the base of the key expressions
//! `mwperf/<base>/ping` and `mwperf/<base>/pong`.

use crate::{spec, TransportError};

/// A parsed address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Address {
    /// The zenoh endpoint, e.g. `tcp/127.0.0.1:7447`.
    pub endpoint: String,
    /// The key base; `None` when the address had none (or `auto`).
    pub base: Option<String>,
}

fn bad(addr: &str, why: &str) -> TransportError {
    TransportError::Address(format!(
        "zenoh address '{addr}': {why}; expected <endpoint>[#<base>], e.g. tcp/127.0.0.1:7447#demo"
    ))
}

impl Address {
    /// Parse `<endpoint>[#<base>]`. The base is the text after the last `#`; zenoh's own endpoint
    /// configuration (`#key=value`) is not supported here, so a suffix with `=` is refused.
    pub fn parse(addr: &str) -> Result<Address, TransportError> {
        let (endpoint, base) = match addr.rsplit_once('#') {
            Some((e, b)) => (e.trim(), Some(b.trim())),
            None => (addr.trim(), None),
        };
        let Some((proto, rest)) = endpoint.split_once('/') else {
            return Err(bad(addr, "the endpoint needs a protocol prefix"));
        };
        if proto.is_empty() || rest.is_empty() {
            return Err(bad(
                addr,
                "the endpoint needs a protocol prefix and a host:port",
            ));
        }
        let base = match base {
            None | Some("") | Some("auto") => None,
            Some(b)
                if b.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c)) =>
            {
                Some(b.to_string())
            }
            Some(b) => {
                return Err(bad(
                    addr,
                    &format!("'{b}' is not a base name (letters, digits, '-', '_', '.')"),
                ))
            }
        };
        Ok(Address {
            endpoint: endpoint.to_string(),
            base,
        })
    }

    /// The base, or a fresh one for a listener (`auto`, like port 0 for sockets).
    pub fn base_or_auto(&self) -> String {
        self.base.clone().unwrap_or_else(spec::auto_base)
    }

    /// `tcp/<host>:0` → `Some((host, "tcp"))`: the caller must pick the port (zenoh's stable API
    /// cannot report the port it bound).
    pub fn wants_free_port(&self) -> Option<(&str, &str)> {
        let (proto, rest) = self.endpoint.split_once('/')?;
        let rest = rest.split(['?', '#']).next().unwrap_or(rest);
        let (host, port) = rest.rsplit_once(':')?;
        (port == "0").then_some((host, proto))
    }

    /// The endpoint with its port replaced (only meaningful after `wants_free_port`).
    pub fn with_port(&self, port: u16) -> String {
        let (proto, rest) = self
            .endpoint
            .split_once('/')
            .unwrap_or(("tcp", &self.endpoint));
        let tail_at = rest.find(['?', '#']).unwrap_or(rest.len());
        let (hostport, tail) = rest.split_at(tail_at);
        let host = hostport.rsplit_once(':').map_or(hostport, |(h, _)| h);
        format!("{proto}/{host}:{port}{tail}")
    }
}

/// A TCP port free right now on `host` (`[::1]` or `127.0.0.1`); zenoh binds it right after.
/// The small race with other programs is handled by the caller retrying.
pub fn free_tcp_port(host: &str) -> Result<u16, TransportError> {
    free_port(host, |at| std::net::TcpListener::bind(at)?.local_addr())
}

/// A UDP port free right now on `host` (a `quic/` endpoint's), as [`free_tcp_port`].
pub fn free_udp_port(host: &str) -> Result<u16, TransportError> {
    free_port(host, |at| std::net::UdpSocket::bind(at)?.local_addr())
}

fn free_port(
    host: &str,
    bind: impl Fn((&str, u16)) -> std::io::Result<std::net::SocketAddr>,
) -> Result<u16, TransportError> {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let at = bind((host, 0)).map_err(|err| TransportError::Bind {
        addr: format!("{host}:0"),
        err,
    })?;
    Ok(at.port())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms() {
        let a = Address::parse("tcp/127.0.0.1:7447#demo").unwrap();
        assert_eq!(
            (a.endpoint.as_str(), a.base.as_deref()),
            ("tcp/127.0.0.1:7447", Some("demo"))
        );
        assert_eq!(Address::parse("tcp/127.0.0.1:7447").unwrap().base, None);
        assert_eq!(
            Address::parse("tcp/127.0.0.1:7447#auto").unwrap().base,
            None
        );
        assert!(Address::parse("127.0.0.1:7447")
            .unwrap_err()
            .to_string()
            .contains("protocol prefix"));
        assert!(Address::parse("tcp/127.0.0.1:7447#a/b")
            .unwrap_err()
            .to_string()
            .contains("not a base"));
        assert!(Address::parse("tcp/127.0.0.1:7447#iface=lo").is_err());
    }

    #[test]
    fn port_zero() {
        let a = Address::parse("tcp/127.0.0.1:0#x").unwrap();
        assert_eq!(a.wants_free_port(), Some(("127.0.0.1", "tcp")));
        assert_eq!(a.with_port(4242), "tcp/127.0.0.1:4242");
        let a = Address::parse("tcp/[::1]:0").unwrap();
        assert_eq!(a.wants_free_port(), Some(("[::1]", "tcp")));
        assert_eq!(a.with_port(7), "tcp/[::1]:7");
        assert_eq!(
            Address::parse("tcp/127.0.0.1:7447")
                .unwrap()
                .wants_free_port(),
            None
        );
    }
}
