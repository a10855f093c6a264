//! ROS 1: one rosmaster per fixture on a free port (Debian python3-rosmaster), addresses
//! `http://127.0.0.1:<port>/#<base>`. Also used by `tests/ros1_relay.rs`.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use mwperf_transports::{History, Kind, Qos};

use super::{free_port, unique, Daemon, Fixture};

pub const INSTALL: &str = "apt-get install python3-rosmaster topic-tools";

/// A running rosmaster: its URI, the environment ROS tools need to use it, its process.
pub struct Master {
    pub uri: String,
    pub env: Vec<(String, String)>,
    pub daemon: Daemon,
}

impl Master {
    pub fn start() -> Master {
        let port = free_port();
        let uri = format!("http://127.0.0.1:{port}/");
        // One shared ROS_HOME for all test masters: it only collects their (uniquely named) logs.
        let home = std::env::temp_dir().join("mwperf-ros-tests");
        std::fs::create_dir_all(&home).unwrap();
        let home_s = home.display().to_string();
        let env = vec![
            ("ROS_MASTER_URI".to_string(), uri.clone()),
            ("ROS_IP".to_string(), "127.0.0.1".to_string()),
            ("ROS_HOME".to_string(), home_s.clone()),
            ("ROS_LOG_DIR".to_string(), home_s),
        ];
        let env_ref: Vec<(&str, &str)> =
            env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        let port_s = port.to_string();
        let mut daemon = Daemon::start(
            "rosmaster",
            &["/usr/bin/rosmaster", "--core", "-p", &port_s, "-w", "3"],
            &env_ref,
            INSTALL,
        );
        daemon.wait_ready(20, || get_pid(&uri));
        Master { uri, env, daemon }
    }

    /// Start another process with this master's environment, killed on drop.
    pub fn run(&self, name: &str, argv: &[&str]) -> Daemon {
        let env_ref: Vec<(&str, &str)> = self
            .env
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        Daemon::start(name, argv, &env_ref, INSTALL)
    }
}

/// Whether the master answers getPid with code 1.
pub fn get_pid(uri: &str) -> bool {
    call(uri, "getPid", &["/mwperf_test"])
        .is_some_and(|r| r.contains("<int>1</int>") || r.contains("<i4>1</i4>"))
}

/// One XML-RPC call with string parameters; the raw response body.
pub fn call(uri: &str, method: &str, params: &[&str]) -> Option<String> {
    let hostport = uri.strip_prefix("http://")?.trim_end_matches('/');
    let mut s = TcpStream::connect(hostport).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(2))).ok()?;
    let params: String = params
        .iter()
        .map(|p| format!("<param><value><string>{p}</string></value></param>"))
        .collect();
    let body = format!("<?xml version=\"1.0\"?><methodCall><methodName>{method}</methodName><params>{params}</params></methodCall>");
    write!(
        s,
        "POST / HTTP/1.0\r\nContent-Type: text/xml\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .ok()?;
    let mut out = String::new();
    s.read_to_string(&mut out).ok()?;
    Some(out)
}

pub fn fixture() -> Fixture {
    let master = Master::start();
    let uri = master.uri.clone();
    let nobody = format!("{uri}#nobody_{}", unique("").replace('-', "_"));
    let mut fx = Fixture::simple(
        Kind::Ros1,
        move |tag| format!("{uri}#{}", unique(tag).replace('-', "_")),
        &nobody,
    );
    // Deep enough that the pipelined test's 200 messages never meet the keep-last queue.
    fx.qos = Qos {
        history: History::KeepLast(1000),
        ..Qos::default()
    };
    fx.guards.push(master.daemon);
    fx
}
