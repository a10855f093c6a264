//! Test fixtures: per transport, the addresses to use and the daemons to run (started on free
//! ports, killed when the fixture drops). A daemon that is not installed fails the test with the
//! install line: CI installs them (`.ci/run`), so a missing one must not pass silently.

#![allow(dead_code)]

use std::process::{Child, Command, Stdio};

use mwperf_transports::{Kind, Qos, Spec};

#[cfg(any(feature = "mqtt", feature = "foxglove"))]
mod certs;
#[cfg(feature = "cyclonedds")]
mod cyclonedds;
#[cfg(feature = "fastdds")]
mod fastdds;
#[cfg(feature = "foxglove")]
mod foxglove;
#[cfg(feature = "iceoryx2")]
mod iceoryx2;
#[cfg(feature = "mqtt")]
mod mqtt;
#[cfg(feature = "ros1")]
pub mod ros1;
#[cfg(feature = "ros2")]
mod ros2;
#[cfg(feature = "rustdds")]
mod rustdds;
#[cfg(feature = "zenoh")]
mod zenoh;

pub struct Fixture {
    pub kind: Kind,
    /// QoS every endpoint of the test is opened with (deep enough for the pipelined test).
    pub qos: Qos,
    pub options: Vec<(String, String)>,
    /// Makes a fresh listening address from a tag.
    listen: Box<dyn Fn(&str) -> String>,
    /// An address where nobody listens.
    nobody: String,
    /// Daemons (and anything else) that live as long as the fixture.
    pub guards: Vec<Daemon>,
}

impl Fixture {
    /// The fixture of `kind` with transport `options`; `("tls", "mtls")` (mqtt): the suite over
    /// mutual TLS, against a TLS broker with certificates made for the fixture; `("tls", "tls")`
    /// (foxglove): over wss, against a TLS server.
    pub fn with(kind: Kind, options: &[(&str, &str)]) -> Fixture {
        #[cfg(feature = "mqtt")]
        if kind == Kind::Mqtt && options == [("tls", "mtls")] {
            return mqtt::fixture_mtls();
        }
        #[cfg(feature = "foxglove")]
        if kind == Kind::Foxglove && options == [("tls", "tls")] {
            return foxglove::fixture_tls();
        }
        let mut fx = Fixture::new(kind);
        fx.options
            .extend(options.iter().map(|(k, v)| (k.to_string(), v.to_string())));
        fx
    }

    pub fn new(kind: Kind) -> Fixture {
        match kind {
            Kind::Udp | Kind::Tcp => Fixture::simple(
                kind,
                |_| "127.0.0.1:0".into(),
                if kind == Kind::Udp {
                    "127.0.0.1:9"
                } else {
                    "127.0.0.1:1"
                },
            ),
            Kind::Uds => Fixture::simple(
                kind,
                |tag| {
                    std::env::temp_dir()
                        .join(format!("mwperf-conf-{}-{tag}.sock", unique("")))
                        .display()
                        .to_string()
                },
                "/nonexistent/mwperf.sock",
            ),
            #[cfg(feature = "iceoryx2")]
            Kind::Iceoryx2 => iceoryx2::fixture(),
            #[cfg(feature = "cyclonedds")]
            Kind::CycloneDds => cyclonedds::fixture(),
            #[cfg(feature = "fastdds")]
            Kind::FastDds => fastdds::fixture(),
            #[cfg(feature = "rustdds")]
            Kind::RustDds => rustdds::fixture(),
            #[cfg(feature = "zenoh")]
            Kind::Zenoh => zenoh::fixture(),
            #[cfg(feature = "mqtt")]
            Kind::Mqtt => mqtt::fixture(),
            #[cfg(feature = "foxglove")]
            Kind::Foxglove => foxglove::fixture(),
            #[cfg(feature = "ros1")]
            Kind::Ros1 => ros1::fixture(),
            #[cfg(feature = "ros2")]
            Kind::Ros2 => ros2::fixture(),
            #[allow(unreachable_patterns)]
            _ => panic!("{kind:?} is not built"),
        }
    }

    pub fn simple(kind: Kind, listen: impl Fn(&str) -> String + 'static, nobody: &str) -> Fixture {
        Fixture {
            kind,
            qos: Qos::default(),
            options: vec![],
            listen: Box::new(listen),
            nobody: nobody.into(),
            guards: vec![],
        }
    }

    pub fn spec(&self, addr: &str) -> Spec {
        Spec {
            addr: addr.into(),
            qos: self.qos,
            options: self.options.clone(),
            shared_session: false,
        }
    }

    pub fn listen_addr(&self, tag: &str) -> String {
        (self.listen)(tag)
    }

    pub fn nobody_addr(&self) -> String {
        self.nobody.clone()
    }
}

/// Set in a child process running one test of this binary on its own ([`here`]).
const ALONE: &str = "MWPERF_TEST_ALONE";

/// Whether the calling test runs in this process: true, or false after this same test ran in a
/// process of its own (this binary again, `--exact` the current test) and passed there.
///
/// ros2 needs that: the wheels' rmw_fastrtps_cpp (Fast DDS 3.2) and the fastdds transport's
/// Debian Fast DDS 2.9 in one process break ros2's discovery (the ros2 endpoints match nothing
/// once fastdds endpoints ran beside them; each passes alone). An agent loads one transport, so
/// only this test binary meets it.
pub fn here(kind: Kind) -> bool {
    here_or_alone(kind, false)
}

/// [`here`], and with `own` true a process of its own for any transport: a fixture with
/// transport options (the raw DDS transports' `ros2-type` puts Cyclone DDS on this host's
/// address, a configuration of its own, and Cyclone takes one configuration per domain and
/// process: beside the loopback fixtures' it is refused).
pub fn here_or_alone(kind: Kind, own: bool) -> bool {
    if (kind != Kind::Ros2 && !own) || std::env::var_os(ALONE).is_some() {
        return true;
    }
    let test = std::thread::current()
        .name()
        .expect("libtest names each test's thread after the test")
        .to_string();
    let me = std::env::current_exe().expect("the test binary's path");
    let status = Command::new(me)
        .args(["--exact", &test, "--test-threads=1", "--nocapture"])
        .env(ALONE, "1")
        .status()
        .expect("run the test binary again");
    assert!(status.success(), "{test} in a process of its own: {status}");
    false
}

/// A name no other test (or test run) uses: pid + counter + tag.
pub fn unique(tag: &str) -> String {
    use std::sync::atomic::{AtomicU32, Ordering};
    static N: AtomicU32 = AtomicU32::new(0);
    format!(
        "t{}-{}{}{tag}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed),
        if tag.is_empty() { "" } else { "-" }
    )
}

/// A TCP port free right now on 127.0.0.1.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A child process killed (and reaped) on drop.
pub struct Daemon {
    pub name: String,
    child: Child,
    /// A folder of its files (a TLS broker's certificates), removed once it is gone.
    files: Option<std::path::PathBuf>,
}

impl Daemon {
    /// Start `argv`; panics with `install` when the program is not there.
    pub fn start(name: &str, argv: &[&str], env: &[(&str, &str)], install: &str) -> Daemon {
        let mut cmd = Command::new(argv[0]);
        cmd.args(&argv[1..])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        for (k, v) in env {
            cmd.env(k, v);
        }
        let child = cmd.spawn().unwrap_or_else(|e| {
            panic!(
                "cannot start {name} ({}): {e}; install it: {install}",
                argv[0]
            )
        });
        Daemon {
            name: name.into(),
            child,
            files: None,
        }
    }

    /// Remove `folder` (the daemon's files) when the daemon is dropped.
    pub fn owning(mut self, folder: std::path::PathBuf) -> Daemon {
        self.files = Some(folder);
        self
    }

    /// Wait until `ready()` holds, at most `secs`; panics naming the daemon otherwise.
    pub fn wait_ready(&mut self, secs: u64, mut ready: impl FnMut() -> bool) {
        let end = std::time::Instant::now() + std::time::Duration::from_secs(secs);
        while !ready() {
            if let Ok(Some(st)) = self.child.try_wait() {
                panic!("{} exited during start-up: {st}", self.name);
            }
            assert!(
                std::time::Instant::now() < end,
                "{} not ready after {secs} s",
                self.name
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if let Some(folder) = &self.files {
            let _ = std::fs::remove_dir_all(folder);
        }
    }
}
