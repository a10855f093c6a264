//! One address per topic (`--topics N`). `--listen`/`--connect` take either N comma-separated
//! addresses (what a listener's READY line prints) or one, from which the N are derived:
//! - udp, tcp: `host:port` → ports port, port+1, …; port 0 stays 0 (each topic any free port);
//! - uds: `path` → `path` for topic 0, `path.1`, `path.2`, … for the others;
//! - middleware: the same address for every topic; a listener whose base is picked (`auto` or
//!   none) gets a distinct base per topic. Topics that would share one address are refused
//!   ([`distinct`]) — give N addresses then.
//!
//! With one topic the address is used exactly as given.

use mwperf_transports::Kind;

/// The N addresses for `given`; Err names the flag.
pub fn split(kind: Kind, flag: &str, given: &str, topics: u32) -> Result<Vec<String>, String> {
    let n = topics as usize;
    if n == 1 {
        return Ok(vec![given.to_string()]);
    }
    let parts: Vec<&str> = given.split(',').map(str::trim).collect();
    if parts.len() == n {
        return Ok(parts.into_iter().map(str::to_string).collect());
    }
    if parts.len() != 1 {
        return Err(format!("{flag}: {} addresses given for --topics {topics}; give one (the others are derived from it) or {topics}, comma-separated", parts.len()));
    }
    (0..n)
        .map(|i| derive(kind, flag, given.trim(), i))
        .collect()
}

fn derive(kind: Kind, flag: &str, addr: &str, i: usize) -> Result<String, String> {
    match kind {
        Kind::Udp | Kind::Tcp => {
            let (host, port) = addr
                .rsplit_once(':')
                .ok_or_else(|| format!("{flag}: '{addr}' is not host:port"))?;
            let port: u16 = port
                .parse()
                .map_err(|_| format!("{flag}: '{port}' in '{addr}' is not a port number"))?;
            if port == 0 {
                return Ok(addr.to_string());
            }
            let derived = port as usize + i;
            if derived > u16::MAX as usize {
                return Err(format!("{flag}: topic {i} would need port {derived} (above 65535); use a lower port or 0"));
            }
            Ok(format!("{host}:{derived}"))
        }
        Kind::Uds if i == 0 => Ok(addr.to_string()),
        Kind::Uds => Ok(format!("{addr}.{i}")),
        _ => Ok(addr.to_string()),
    }
}

/// A pub's `--connect` split into one part per subscriber (`--subscribers N`): plain sockets
/// take every subscriber's addresses, separated by ';' (the pub sends to each); middleware takes
/// the one address all subscribers share (it fans out natively). Err names the flag.
pub fn subscribers(
    kind: Kind,
    flag: &str,
    given: &str,
    subscribers: u32,
) -> Result<Vec<String>, String> {
    let parts: Vec<String> = given.split(';').map(|p| p.trim().to_string()).collect();
    if kind.has_discovery() {
        if parts.len() > 1 {
            return Err(format!("{flag}: {} fans out to its subscribers itself: give the one address they share, without ';'", kind.name()));
        }
        return Ok(parts);
    }
    if parts.len() != subscribers as usize {
        return Err(format!("{flag}: {} subscribers' addresses given for --subscribers {subscribers}; give each subscriber's addresses (its READY line), separated by ';'", parts.len()));
    }
    Ok(parts)
}

/// The addresses that name one place before anything is opened (socket transports, port not 0);
/// others are "pick one" (port 0) or middleware bases, checked once opened. Others become
/// unique placeholders so [`distinct`] skips them.
pub fn fixed(kind: Kind, addrs: &[String]) -> Vec<String> {
    let picks = |a: &str| match kind {
        Kind::Udp | Kind::Tcp => a.ends_with(":0"),
        Kind::Uds => false,
        _ => true,
    };
    addrs
        .iter()
        .enumerate()
        .map(|(i, a)| {
            if picks(a) {
                format!("\u{0}{i}")
            } else {
                a.clone()
            }
        })
        .collect()
}

/// Refuse topics that ended up on one address (the peer could not tell them apart).
pub fn distinct(flag: &str, addrs: &[String]) -> Result<(), String> {
    for (i, a) in addrs.iter().enumerate() {
        if let Some(j) = addrs[..i].iter().position(|b| b == a) {
            return Err(format!("{flag}: topics {j} and {i} would share the address '{a}'; give {} comma-separated addresses, or let the listener pick them (port 0, base 'auto')", addrs.len()));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_topic_is_untouched() {
        assert_eq!(split(Kind::Udp, "--listen", "a,b", 1).unwrap(), vec!["a,b"]);
    }

    #[test]
    fn derived_per_transport() {
        assert_eq!(
            split(Kind::Udp, "--listen", "127.0.0.1:7000", 3).unwrap(),
            vec!["127.0.0.1:7000", "127.0.0.1:7001", "127.0.0.1:7002"]
        );
        assert_eq!(
            split(Kind::Tcp, "--listen", "127.0.0.1:0", 2).unwrap(),
            vec!["127.0.0.1:0", "127.0.0.1:0"]
        );
        assert_eq!(
            split(Kind::Uds, "--listen", "/tmp/s", 3).unwrap(),
            vec!["/tmp/s", "/tmp/s.1", "/tmp/s.2"]
        );
        assert_eq!(
            split(
                Kind::Zenoh,
                "--connect",
                "tcp/127.0.0.1:1#a, tcp/127.0.0.1:2#b",
                2
            )
            .unwrap(),
            vec!["tcp/127.0.0.1:1#a", "tcp/127.0.0.1:2#b"]
        );
    }

    #[test]
    fn subscribers_split_on_sockets_only() {
        assert_eq!(
            subscribers(Kind::Udp, "--connect", "h:1,h:2; h:3,h:4", 2).unwrap(),
            vec!["h:1,h:2", "h:3,h:4"]
        );
        assert_eq!(
            subscribers(Kind::Uds, "--connect", "/a", 1).unwrap(),
            vec!["/a"]
        );
        assert_eq!(
            subscribers(Kind::CycloneDds, "--connect", "0/base", 3).unwrap(),
            vec!["0/base"]
        );
        let e = subscribers(Kind::Tcp, "--connect", "h:1;h:2", 3).unwrap_err();
        assert!(
            e.starts_with("--connect: 2 subscribers' addresses given for --subscribers 3"),
            "{e}"
        );
        let e = subscribers(Kind::Zenoh, "--connect", "a;b", 2).unwrap_err();
        assert!(
            e.contains("zenoh fans out to its subscribers itself"),
            "{e}"
        );
    }

    #[test]
    fn errors_name_the_flag() {
        let e = split(Kind::Udp, "--connect", "a:1,b:2", 3).unwrap_err();
        assert!(
            e.starts_with("--connect: 2 addresses given for --topics 3"),
            "{e}"
        );
        assert!(split(Kind::Udp, "--listen", "127.0.0.1:65535", 2)
            .unwrap_err()
            .contains("65536"));
        let e = distinct("--listen", &["x".into(), "y".into(), "x".into()]).unwrap_err();
        assert!(distinct("--listen", &fixed(Kind::Udp, &["h:0".into(), "h:0".into()])).is_ok());
        assert!(distinct("--listen", &fixed(Kind::Uds, &["/s".into(), "/s".into()])).is_err());
        assert!(
            e.contains("topics 0 and 2 would share the address 'x'"),
            "{e}"
        );
    }
}
