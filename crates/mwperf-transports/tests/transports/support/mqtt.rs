//! MQTT: one mosquitto per fixture on a free port, with a generated config (loopback only,
//! anonymous, no persistence, Nagle off, queues deep enough for the suite).

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use mwperf_transports::{History, Kind, Qos, Reliability};

use super::certs::make_certificates;
use super::{free_port, unique, Daemon, Fixture};

const MOSQUITTO: &str = "/usr/sbin/mosquitto";
/// Queue depth per client; the fixture's QoS says keep-last with the same depth.
const DEPTH: u32 = 1000;

pub fn fixture() -> Fixture {
    let port = free_port();
    let conf = std::env::temp_dir().join(format!("mwperf-mosquitto-{}.conf", unique("")));
    let text = format!(
        "listener {port} 127.0.0.1\nallow_anonymous true\npersistence false\nset_tcp_nodelay true\n\
         max_queued_messages {DEPTH}\nmax_inflight_messages 20\nlog_dest stderr\n"
    );
    std::fs::write(&conf, text).expect("write mosquitto config");
    let conf_arg = conf.display().to_string();
    let mut broker = Daemon::start(
        "mosquitto",
        &[MOSQUITTO, "-c", &conf_arg],
        &[],
        "apt-get install mosquitto",
    );
    broker.wait_ready(10, || connack(port));
    let _ = std::fs::remove_file(&conf); // read once at start-up
                                         // MQTT_QOS=0|1|2 runs the suite at that MQTT QoS (`--opt qos=N`); default: reliable → 1.
    let options = std::env::var("MQTT_QOS")
        .map(|q| vec![("qos".to_string(), q)])
        .unwrap_or_default();
    at_broker(port, broker, options)
}

/// The suite's endpoints at the broker on `port` (owned by the fixture), reliable with a queue
/// as deep as the broker's, with transport `options`.
fn at_broker(port: u16, broker: Daemon, options: Vec<(String, String)>) -> Fixture {
    let mut fx = Fixture::simple(
        Kind::Mqtt,
        move |tag| format!("127.0.0.1:{port}/{}", unique(tag)),
        &format!("127.0.0.1:{port}/nobody-{}", unique("")),
    );
    fx.qos = Qos {
        reliability: Reliability::Reliable,
        history: History::KeepLast(DEPTH),
        ..Qos::default()
    };
    fx.options = options;
    fx.guards.push(broker);
    fx
}

/// The broker with one listener, mutual TLS only (`require_certificate true`), and a client
/// certificate for the suite's endpoints (`--opt tls=ca=..,cert=..,key=..`): certificates made
/// by OpenSSL (an implementation other than the rustls that checks them), removed with the
/// broker.
pub fn fixture_mtls() -> Fixture {
    let port = free_port();
    let dir = std::env::temp_dir().join(format!("mwperf-mqtt-tls-{}", unique("")));
    std::fs::create_dir_all(&dir).expect("make the TLS fixture's folder");
    let path = |name: &str| dir.join(name).display().to_string();
    make_certificates(&dir);
    let text =
        format!(
        "listener {port} 127.0.0.1\ncafile {}\ncertfile {}\nkeyfile {}\nrequire_certificate true\n\
         {}allow_anonymous true\npersistence false\nset_tcp_nodelay true\n\
         max_queued_messages {DEPTH}\nmax_inflight_messages 20\nlog_dest stderr\n",
        path("ca.pem"),
        path("broker.pem"),
        path("broker.key"),
        // mosquitto reads its certificates after dropping root's privileges
        // SAFETY: geteuid cannot fail
        if unsafe { libc::geteuid() } == 0 { "user root\n" } else { "" },
    );
    let conf = path("mosquitto.conf");
    std::fs::write(&conf, text).expect("write mosquitto config");
    let mut broker = Daemon::start(
        "mosquitto",
        &[MOSQUITTO, "-c", &conf],
        &[],
        "apt-get install mosquitto",
    )
    .owning(dir.clone());
    // listening: its TLS context (certificates loaded) is made before the listener opens
    broker.wait_ready(10, || TcpStream::connect(("127.0.0.1", port)).is_ok());
    let tls = format!(
        "ca={},cert={},key={}",
        path("ca.pem"),
        path("client.pem"),
        path("client.key")
    );
    at_broker(port, broker, vec![("tls".to_string(), tls)])
}

/// Whether the broker answers a minimal CONNECT (MQTT 3.1.1, empty client id, clean session)
/// with CONNACK "accepted".
fn connack(port: u16) -> bool {
    let Ok(mut s) = TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = s.set_read_timeout(Some(Duration::from_secs(1)));
    let connect = [0x10, 12, 0, 4, b'M', b'Q', b'T', b'T', 4, 0x02, 0, 0, 0, 0];
    let mut reply = [0u8; 4];
    s.write_all(&connect).is_ok() && s.read_exact(&mut reply).is_ok() && reply == [0x20, 2, 0, 0]
}
