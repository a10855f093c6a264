//! mwperf-linkem: a userspace link emulator between two network namespaces.
//!
//! For kernels without netem (sch_netem): it creates one TUN device in each namespace and moves
//! IP packets between them, one thread per direction, applying that direction's impairments
//! (src/model.rs). Prints `READY DEV_A DEV_B epoch_ns=N` once forwarding (N: CLOCK_MONOTONIC at
//! the link's time 0, where scheduled outages count from), and on SIGINT/SIGTERM writes a JSON
//! report of what happened to the packets (per direction: forwarded, dropped by cause, release
//! lateness, when the outage dropped its first and last packet) and each direction's scheduled
//! outage window in CLOCK_MONOTONIC ns (the agents' clock) to `--report` and stdout. The devices vanish with the process. `--realtime P` runs the
//! forwarding threads SCHED_FIFO at priority P: like the kernel's own network path they then
//! preempt ordinary processes, so a busy machine delays releases by microseconds, not
//! milliseconds (mwperf passes it; refused without privilege, it warns and goes on).
//!
//! usage: mwperf-linkem --netns-a PATH --dev-a NAME --netns-b PATH --dev-b NAME
//!                      [--up SPEC] [--down SPEC] [--seed N] [--report FILE] [--spin-ns N]
//!                      [--realtime PRIORITY] [--medium FILE] [--packet-log PREFIX [--packet-log-max N]]
//!                      [--layer-log PREFIX [--layer-log-max N]]
//! `--medium FILE`: rate-limited directions serialize on a medium shared with every emulator
//! given the same FILE (src/medium.rs), e.g. the members of one WiFi segment.
//! `--packet-log PREFIX [--packet-log-max N]`: every released packet's time and size to
//! `PREFIX-up.bin` / `PREFIX-down.bin` (src/packetlog.rs), for bytes on the wire per phase.
//! `--layer-log PREFIX [--layer-log-max N]`: every forwarded mwperf message's read and release
//! times to `PREFIX-up.layers.csv` / `PREFIX-down.layers.csv` (src/layerlog.rs), for the link's
//! share of a message's latency (`mwperf run --layers`).
//! `up` is a -> b, `down` is b -> a; SPEC is the canonical `key=value,...` form (src/spec.rs).

mod clock;
mod counters;
mod forward;
mod layerlog;
mod medium;
mod model;
mod packetlog;
mod rng;
mod scan;
mod spec;
mod tun;

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Duration;

use clock::Clock;
use counters::Counters;
use model::Model;
use spec::Impairments;
use tun::Tun;

/// Spin for the last 100 µs before a release: covers the timer wake-up of a SCHED_FIFO thread
/// even on a busy 2-core VM (measured: BENCHMARKS.md, "Emulated links").
const DEFAULT_SPIN_NS: u64 = 100_000;

static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    STOP.store(true, Relaxed);
}

struct Args {
    netns: [String; 2],
    dev: [String; 2],
    spec: [Impairments; 2],
    seed: u64,
    report: Option<String>,
    spin_ns: u64,
    realtime: i32,
    medium: Option<String>,
    packet_log: Option<String>,
    packet_log_max: usize,
    layer_log: Option<String>,
    layer_log_max: usize,
}

/// Default room of a packet log per direction (12 bytes each: 48 MB, touched only as it fills).
const DEFAULT_PACKET_LOG_MAX: usize = 4_000_000;
/// Default room of a layer log per direction (32 bytes each: 64 MB, touched only as it fills):
/// half an hour of a 1 kHz round trip.
const DEFAULT_LAYER_LOG_MAX: usize = 2_000_000;

fn parse_args(argv: &[String]) -> Result<Args, String> {
    let mut netns = [None, None];
    let mut dev = [None, None];
    let mut spec = [Impairments::default(), Impairments::default()];
    let (mut seed, mut report, mut spin_ns) = (1u64, None, DEFAULT_SPIN_NS);
    let mut realtime = 0;
    let mut medium = None;
    let (mut packet_log, mut packet_log_max) = (None, DEFAULT_PACKET_LOG_MAX);
    let (mut layer_log, mut layer_log_max) = (None, DEFAULT_LAYER_LOG_MAX);
    let mut it = argv.iter();
    while let Some(flag) = it.next() {
        let mut value = || {
            it.next()
                .cloned()
                .ok_or_else(|| format!("{flag}: missing value"))
        };
        match flag.as_str() {
            "--netns-a" => netns[0] = Some(value()?),
            "--netns-b" => netns[1] = Some(value()?),
            "--dev-a" => dev[0] = Some(value()?),
            "--dev-b" => dev[1] = Some(value()?),
            "--up" => spec[0] = Impairments::parse(&value()?).map_err(|e| format!("--up: {e}"))?,
            "--down" => {
                spec[1] = Impairments::parse(&value()?).map_err(|e| format!("--down: {e}"))?
            }
            "--seed" => {
                seed = value()?
                    .parse()
                    .map_err(|_| "--seed: not a whole number".to_string())?
            }
            "--report" => report = Some(value()?),
            "--realtime" => {
                realtime = value()?
                    .parse()
                    .ok()
                    .filter(|p| (1..=99).contains(p))
                    .ok_or_else(|| "--realtime: a priority from 1 to 99".to_string())?
            }
            "--medium" => medium = Some(value()?),
            "--packet-log" => packet_log = Some(value()?),
            "--packet-log-max" => {
                packet_log_max = value()?
                    .parse()
                    .ok()
                    .filter(|n| *n > 0)
                    .ok_or_else(|| "--packet-log-max: a whole number above 0".to_string())?
            }
            "--layer-log" => layer_log = Some(value()?),
            "--layer-log-max" => {
                layer_log_max = value()?
                    .parse()
                    .ok()
                    .filter(|n| *n > 0)
                    .ok_or_else(|| "--layer-log-max: a whole number above 0".to_string())?
            }
            "--spin-ns" => {
                spin_ns = value()?
                    .parse()
                    .map_err(|_| "--spin-ns: not a whole number".to_string())?
            }
            _ => return Err(format!("unknown argument '{flag}'")),
        }
    }
    let need = |v: Option<String>, name: &str| v.ok_or_else(|| format!("{name} is required"));
    let [na, nb] = netns;
    let [da, db] = dev;
    Ok(Args {
        netns: [need(na, "--netns-a")?, need(nb, "--netns-b")?],
        dev: [need(da, "--dev-a")?, need(db, "--dev-b")?],
        spec,
        seed,
        report,
        spin_ns,
        realtime,
        medium,
        packet_log,
        packet_log_max,
        layer_log,
        layer_log_max,
    })
}

fn main() {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let args = match parse_args(&argv) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("mwperf-linkem: {e}");
            std::process::exit(2);
        }
    };
    for sig in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: the handler only stores to an atomic.
        unsafe { libc::signal(sig, on_signal as *const () as libc::sighandler_t) };
    }
    let tuns = match (
        Tun::create_in(&args.netns[0], &args.dev[0]),
        Tun::create_in(&args.netns[1], &args.dev[1]),
    ) {
        (Ok(a), Ok(b)) => Arc::new([a, b]),
        (Err(e), _) | (_, Err(e)) => {
            eprintln!("mwperf-linkem: {e}");
            std::process::exit(1);
        }
    };
    let medium = match args.medium.as_deref().map(medium::Medium::open).transpose() {
        Ok(m) => m.map(Arc::new),
        Err(e) => {
            eprintln!("mwperf-linkem: {e}");
            std::process::exit(2);
        }
    };
    let clock = Arc::new(Clock::start());
    let counters = [Arc::new(Counters::default()), Arc::new(Counters::default())];
    let stop = Arc::new(AtomicBool::new(false));
    let outages = outage_json(&args.spec, clock.epoch_ns());
    let [up, down] = args.spec;
    let workers: Vec<_> = [(0usize, up), (1, down)]
        .into_iter()
        .map(|(i, imp)| {
            let (tuns, clock, counters, stop) = (
                tuns.clone(),
                clock.clone(),
                counters[i].clone(),
                stop.clone(),
            );
            let mut model = Model::new(imp, args.seed.wrapping_mul(2).wrapping_add(i as u64));
            if let Some(m) = &medium {
                model = model.with_medium(m.clone(), clock.epoch_ns());
            }
            let waiting = forward::Waiting {
                spin_ns: args.spin_ns,
                realtime: args.realtime,
            };
            let logs = forward::Logs {
                packets: args
                    .packet_log
                    .as_ref()
                    .map(|_| packetlog::PacketLog::new(args.packet_log_max)),
                layers: args
                    .layer_log
                    .as_ref()
                    .map(|_| layerlog::LayerLog::new(args.layer_log_max)),
            };
            std::thread::Builder::new()
                .name(["up", "down"][i].into())
                .spawn(move || {
                    forward::run(
                        &tuns[i],
                        &tuns[1 - i],
                        model,
                        &clock,
                        &counters,
                        &stop,
                        waiting,
                        logs,
                    )
                })
                .expect("spawn a forwarding thread")
        })
        .collect();
    println!(
        "READY {} {} epoch_ns={}",
        args.dev[0],
        args.dev[1],
        clock.epoch_ns()
    );
    let _ = std::io::stdout().flush();
    while !STOP.load(Relaxed) && !stop.load(Relaxed) {
        std::thread::sleep(Duration::from_millis(5));
    }
    stop.store(true, Relaxed);
    let (packet_logs, layer_logs): (Vec<_>, Vec<_>) = workers
        .into_iter()
        .map(|w| w.join().map_or((None, None), |l| (l.packets, l.layers)))
        .unzip();
    let packet_log = match &args.packet_log {
        None => String::new(),
        Some(prefix) => {
            let mut parts = Vec::new();
            for (way, log) in ["up", "down"].iter().zip(&packet_logs) {
                let path = format!("{prefix}-{way}.bin");
                match log {
                    Some(log) => match log.write(&path) {
                        Ok(()) => parts.push(format!("\"{way}\": {}", log.to_json(&path))),
                        Err(e) => eprintln!("mwperf-linkem: writing {path}: {e}"),
                    },
                    None => eprintln!("mwperf-linkem: the {way} direction's packet log was lost"),
                }
            }
            format!(", \"packet_log\": {{{}}}", parts.join(", "))
        }
    };
    let layer_log = args.layer_log.as_ref().map_or(String::new(), |prefix| {
        write_layer_logs(prefix, &layer_logs, clock.epoch_ns())
    });
    let report = format!(
        "{{\"emulator\": \"userspace\", \"epoch_ns\": {}, \"elapsed_ns\": {}, \"outages\": {outages}, \"up\": {}, \"down\": {}{packet_log}{layer_log}}}",
        clock.epoch_ns(), clock.now_ns(), counters[0].to_json(clock.epoch_ns()), counters[1].to_json(clock.epoch_ns())
    );
    if let Some(path) = &args.report {
        let tmp = format!("{path}.tmp");
        if let Err(e) = std::fs::write(&tmp, &report).and_then(|()| std::fs::rename(&tmp, path)) {
            eprintln!("mwperf-linkem: writing {path}: {e}");
        }
    }
    println!("{report}");
}

/// Write each direction's layer log to `PREFIX-<way>.layers.csv`; the report's
/// `, "layer_log": {"up": {...}, "down": {...}}` (a direction whose log could not be written is
/// left out, with the reason on stderr; so is a full log's count of rows it could not keep).
fn write_layer_logs(prefix: &str, logs: &[Option<layerlog::LayerLog>], epoch_ns: u64) -> String {
    let mut parts = Vec::new();
    for (way, log) in ["up", "down"].iter().zip(logs) {
        let path = format!("{prefix}-{way}.layers.csv");
        let Some(log) = log else {
            eprintln!("mwperf-linkem: the {way} direction's layer log was lost");
            continue;
        };
        if log.truncated > 0 {
            eprintln!(
                "mwperf-linkem: the {way} direction's layer log was full: {} message(s) after the first {} not logged (raise --layer-log-max)",
                log.truncated,
                log.len()
            );
        }
        match log.write(&path, epoch_ns) {
            Ok(()) => parts.push(format!("\"{way}\": {}", log.to_json(&path))),
            Err(e) => eprintln!("mwperf-linkem: writing {path}: {e}"),
        }
    }
    format!(", \"layer_log\": {{{}}}", parts.join(", "))
}

/// Each direction's scheduled outage as `{"start_ns", "end_ns", "every_ns"}` on CLOCK_MONOTONIC
/// (the first one; `every_ns`: repeated from one start to the next, 0 = once; null: none).
fn outage_json(spec: &[Impairments; 2], epoch_ns: u64) -> String {
    let one = |imp: &Impairments| match imp.outage_ns {
        0 => "null".to_string(),
        len => format!(
            "{{\"start_ns\": {}, \"end_ns\": {}, \"every_ns\": {}}}",
            epoch_ns + imp.outage_at_ns,
            epoch_ns + imp.outage_at_ns + len,
            imp.outage_every_ns
        ),
    };
    format!("{{\"up\": {}, \"down\": {}}}", one(&spec[0]), one(&spec[1]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outage_windows_on_the_monotonic_clock() {
        let spec = [
            Impairments::parse("outage_at_ns=5,outage_ns=2").unwrap(),
            Impairments::default(),
        ];
        assert_eq!(
            outage_json(&spec, 100),
            r#"{"up": {"start_ns": 105, "end_ns": 107, "every_ns": 0}, "down": null}"#
        );
    }

    #[test]
    fn layer_log_flags() {
        let argv = |extra: &[&str]| -> Vec<String> {
            [
                "--netns-a",
                "/a",
                "--dev-a",
                "a",
                "--netns-b",
                "/b",
                "--dev-b",
                "b",
            ]
            .iter()
            .chain(extra)
            .map(|s| s.to_string())
            .collect()
        };
        let args = parse_args(&argv(&[])).unwrap();
        assert_eq!(args.layer_log, None);
        let args = parse_args(&argv(&["--layer-log", "/tmp/x", "--layer-log-max", "5"])).unwrap();
        assert_eq!(
            (args.layer_log.as_deref(), args.layer_log_max),
            (Some("/tmp/x"), 5)
        );
        let err = parse_args(&argv(&["--layer-log-max", "0"])).err().unwrap();
        assert!(err.contains("--layer-log-max"), "{err}");
    }
}
