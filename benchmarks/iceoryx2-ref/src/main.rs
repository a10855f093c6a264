//! A minimal publish-subscribe throughput pair on iceoryx2 0.10 (the version mwperf uses), for
//! benchmarks/bench_throughput.py. mwperf's own code, written from the crate's API:
//!
//!   iox2_thr [--prefix P] pub SERVICE SIZE SECONDS DEPTH reliable|best-effort
//!   iox2_thr [--prefix P] sub SERVICE DEPTH reliable|best-effort [INTERVAL_MS]
//!
//! --prefix: iceoryx2's file prefix (default iox2_), so that the benchmark can remove what
//! iceoryx2 keeps in /dev/shm for good (its node counter) after a run.
//!
//! Both open (or create) the publish-subscribe service SERVICE of byte slices with a subscriber
//! queue of DEPTH; best-effort lets the queue overflow (the oldest sample is replaced), reliable
//! does not, and its publisher retries until the subscriber made room (iceoryx2's blocking
//! send). The publisher waits until its samples reach a subscriber, then loans, fills (a copy
//! of one prepared payload, as an application writing its data) and sends SIZE-byte samples
//! back to back for SECONDS (counting those that reached the subscriber), prints
//! "sent msgs=N bytes=B seconds=S" and lingers 200 ms (the subscriber takes what is still
//! queued). The subscriber busy-polls (yielding the CPU when its queue is empty; SIGTERM ends
//! it cleanly), counts messages and payload bytes, and every INTERVAL_MS (default 100) prints
//! its running totals with the CLOCK_MONOTONIC time: "tp t_ns=T msgs=N bytes=B". It runs until
//! SIGTERM or SIGINT.

use std::io::Write;
use std::time::{Duration, Instant};

use iceoryx2::prelude::*;

fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: ts is a valid timespec; CLOCK_MONOTONIC always exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

fn usage(msg: &str) -> ! {
    eprintln!("error: {msg}\nusage: iox2_thr [--prefix P] pub SERVICE SIZE SECONDS DEPTH reliable|best-effort\n       iox2_thr [--prefix P] sub SERVICE DEPTH reliable|best-effort [INTERVAL_MS]");
    std::process::exit(2)
}

fn num<T: std::str::FromStr>(s: &str, what: &str) -> T {
    s.parse().unwrap_or_else(|_| usage(&format!("{what} must be a number, not '{s}'")))
}

fn reliable(s: &str) -> bool {
    match s {
        "reliable" => true,
        "best-effort" => false,
        _ => usage(&format!("'{s}': reliable or best-effort")),
    }
}

type Svc = ipc_threadsafe::Service;

fn service(node: &Node<Svc>, name: &str, depth: usize, reliable: bool) -> iceoryx2::service::port_factory::publish_subscribe::PortFactory<Svc, [u8], ()> {
    let name = ServiceName::new(name).unwrap_or_else(|e| usage(&format!("service name: {e:?}")));
    node.service_builder(&name)
        .publish_subscribe::<[u8]>()
        .subscriber_max_buffer_size(depth)
        .history_size(0)
        .enable_safe_overflow(!reliable)
        .max_subscribers(2)
        .max_publishers(2)
        .open_or_create()
        .unwrap_or_else(|e| {
            eprintln!("iox2_thr: cannot open or create the service: {e:?}");
            std::process::exit(1)
        })
}

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let mut config = Config::default();
    if args.first().map(String::as_str) == Some("--prefix") {
        let prefix = args.get(1).cloned().unwrap_or_else(|| usage("--prefix needs a value"));
        config.global.prefix = FileName::new(prefix.as_bytes()).unwrap_or_else(|e| usage(&format!("--prefix {prefix}: {e:?}")));
        args.drain(..2);
    }
    // SIGTERM/SIGINT: the subscriber leaves its loop and removes its port and node files
    let node = NodeBuilder::new().config(&config).signal_handling_mode(SignalHandlingMode::HandleTerminationRequests).create::<Svc>().unwrap_or_else(|e| {
        eprintln!("iox2_thr: cannot create a node: {e:?}");
        std::process::exit(1)
    });
    match args.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
        ["pub", name, size, seconds, depth, delivery] => {
            let (size, rel) = (num::<usize>(size, "SIZE"), reliable(delivery));
            let seconds = Duration::from_secs_f64(num(seconds, "SECONDS"));
            let service = service(&node, name, num(depth, "DEPTH"), rel);
            let strategy = if rel { BackpressureStrategy::RetryUntilDelivered } else { BackpressureStrategy::DiscardData };
            let publisher = service
                .publisher_builder()
                .initial_max_slice_len(size)
                .allocation_strategy(AllocationStrategy::Static)
                .backpressure_strategy(strategy)
                .create()
                .unwrap_or_else(|e| {
                    eprintln!("iox2_thr: cannot create a publisher of {size}-byte samples: {e:?}");
                    std::process::exit(1)
                });
            // The subscriber shows in the service at once, but the publisher reaches it only once
            // both sides connected: until a sample reaches it (send() says to how many), probe.
            let payload = vec![0x5au8; size];
            let give_up = Instant::now() + Duration::from_secs(15);
            let send = || -> usize {
                let sample = publisher.loan_slice_uninit(size).unwrap_or_else(|e| {
                    eprintln!("iox2_thr: loan failed: {e:?}");
                    std::process::exit(1)
                });
                sample.write_from_slice(&payload).send().unwrap_or_else(|e| {
                    eprintln!("iox2_thr: send failed: {e:?}");
                    std::process::exit(1)
                })
            };
            while send() == 0 {
                if Instant::now() > give_up {
                    eprintln!("iox2_thr: no subscriber in 15 s");
                    std::process::exit(1);
                }
                std::thread::sleep(Duration::from_millis(1));
            }
            println!("matched");
            let start = Instant::now();
            let mut sent: u64 = 1;
            loop {
                if send() > 0 {
                    sent += 1;
                }
                if sent % 64 == 0 && start.elapsed() >= seconds {
                    break;
                }
            }
            println!("sent msgs={sent} bytes={} seconds={:.6}", sent * size as u64, start.elapsed().as_secs_f64());
            // the subscriber takes what is still queued while the publisher (its memory) lives
            std::thread::sleep(Duration::from_millis(200));
        }
        ["sub", name, depth, delivery, rest @ ..] if rest.len() <= 1 => {
            let every = rest.first().map_or(100, |s| num::<u64>(s, "INTERVAL_MS")) * 1_000_000;
            let service = service(&node, name, num(depth, "DEPTH"), reliable(delivery));
            let subscriber = service.subscriber_builder().create().unwrap_or_else(|e| {
                eprintln!("iox2_thr: cannot subscribe: {e:?}");
                std::process::exit(1)
            });
            println!("READY");
            let mut out = std::io::stdout().lock();
            let (mut msgs, mut bytes, mut since_check) = (0u64, 0u64, 0u32);
            let mut next = monotonic_ns();
            loop {
                let got = match subscriber.receive() {
                    Ok(Some(sample)) => {
                        msgs += 1;
                        bytes += sample.payload().len() as u64;
                        true
                    }
                    Ok(None) => false,
                    Err(e) => {
                        eprintln!("iox2_thr: receive failed: {e:?}");
                        std::process::exit(1)
                    }
                };
                since_check += 1;
                if !got || since_check >= 256 {
                    since_check = 0;
                    let now = monotonic_ns();
                    let report = now >= next;
                    if report {
                        writeln!(out, "tp t_ns={now} msgs={msgs} bytes={bytes}").unwrap();
                        out.flush().unwrap();
                        next = now + every;
                    }
                    // an empty queue, or each report: give the CPU away (nanosleep(0)) and see
                    // to SIGTERM
                    if (!got || report) && node.wait(Duration::ZERO).is_err() {
                        break;
                    }
                }
            }
        }
        _ => usage("pub or sub with their arguments"),
    }
}
