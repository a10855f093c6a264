//! An agent serving several topics (`--topics N`): one thread per topic, each running the role on
//! its own endpoint with its own sequence numbers and statistics, and one report for them all.
//! Senders share one schedule (lane.rs); servers run their callbacks through the chosen executor
//! (executor.rs); a measuring role writes each topic's raw samples to that topic's own file
//! (topic_names.rs). The report's `per_topic` lists each topic's measurement under the topic's
//! name, with its address; its top-level
//! measurement pools them (mwperf_core::stats::pool), counters and sent counts add up, and the
//! status is the worst topic's. With one topic `roles::run` runs the role directly, on its own
//! thread.

use mwperf_core::result::{Counters, Discovery, OutageCounts, Status, TopicMeasurement};
use mwperf_core::stats::pool;
use mwperf_transports::Endpoint;

use crate::cli::{Role, SenderArgs, ServerArgs};
use crate::executor::{Callback, Serial};
use crate::lane::Lanes;
use crate::roles::{self, RoleOutcome};
use crate::wait::Waiter;

/// One topic: its endpoint and its address (what the peer uses to reach it).
pub type Topic = (Box<dyn Endpoint>, String);

/// Run `role` on every topic at once and combine the outcomes; `names[i]` is topic i's name,
/// `samples[i]` its samples file (with --samples).
pub fn run(
    role: &Role,
    topics: Vec<Topic>,
    names: &[String],
    samples: &[Option<String>],
    waiter: &Waiter,
) -> RoleOutcome {
    let addresses: Vec<String> = topics.iter().map(|(_, n)| n.clone()).collect();
    let outcomes = match role {
        Role::Ping(a) | Role::Pub(a) => {
            let mut args = a.clone();
            args.common.run_id.get_or_insert_with(roles::random_run_id); // one run id for all topics
                                                                         // a replay's topics follow their own recorded times: no common ticks to order
            let lanes = Lanes::new(topics.len(), args.rate > 0.0 && args.replay_trace.is_none());
            let ping = matches!(role, Role::Ping(_));
            each(topics, |i, ep, peer| {
                let lane = Some(lanes.lane(i));
                if ping {
                    let args = SenderArgs {
                        samples: samples[i].clone(),
                        ..args.clone()
                    };
                    roles::ping::run(&args, ep, peer, waiter, lane)
                } else {
                    roles::publish::run(&args, ep, peer, waiter, lane)
                }
            })
        }
        Role::Pong(a) | Role::Sub(a) => {
            let serial = Serial::new();
            let serial = (a.executor == "single").then_some(&serial);
            let pong = matches!(role, Role::Pong(_));
            each(topics, |topic, ep, addr| {
                let cb = Callback {
                    topic,
                    serial,
                    busy_loop_ns: a.busy_loop,
                };
                if pong {
                    roles::pong::run(a, ep, addr, cb)
                } else {
                    let a = ServerArgs {
                        samples: samples[topic].clone(),
                        ..a.clone()
                    };
                    roles::subscribe::run(&a, ep, addr, cb)
                }
            })
        }
        _ => unreachable!("only measuring roles have topics"),
    };
    combine(outcomes, names, &addresses)
}

fn each(
    topics: Vec<Topic>,
    f: impl Fn(usize, Box<dyn Endpoint>, &str) -> RoleOutcome + Sync,
) -> Vec<RoleOutcome> {
    std::thread::scope(|s| {
        let f = &f;
        let threads: Vec<_> = topics
            .into_iter()
            .enumerate()
            .map(|(i, (ep, name))| s.spawn(move || f(i, ep, &name)))
            .collect();
        threads
            .into_iter()
            .map(|t| {
                t.join()
                    .unwrap_or_else(|_| RoleOutcome::failed("a topic's thread panicked"))
            })
            .collect()
    })
}

fn rank(s: Status) -> u8 {
    match s {
        Status::Complete => 0,
        Status::Partial => 1,
        Status::Failed => 2,
    }
}

/// The topics' reasons: one when all topics give the same, else each prefixed with its topic.
fn reason(outcomes: &[RoleOutcome]) -> Option<String> {
    let given: Vec<(usize, &String)> = outcomes
        .iter()
        .enumerate()
        .filter_map(|(i, o)| o.reason.as_ref().map(|r| (i, r)))
        .collect();
    match given.first() {
        None => None,
        Some((_, r)) if given.len() == outcomes.len() && given.iter().all(|(_, x)| x == r) => {
            Some((*r).clone())
        }
        Some(_) => Some(
            given
                .iter()
                .map(|(i, r)| format!("topic {i}: {r}"))
                .collect::<Vec<_>>()
                .join("; "),
        ),
    }
}

fn sum_counters(parts: &[&Counters]) -> Counters {
    parts.iter().fold(Counters::default(), |a, b| Counters {
        received: a.received + b.received,
        echoed: a.echoed + b.echoed,
        foreign: a.foreign + b.foreign,
        malformed: a.malformed + b.malformed,
        send_errors: a.send_errors + b.send_errors,
        connections: a.connections + b.connections,
    })
}

/// The slowest topic's discovery (the run could start only when all had made contact).
fn slowest(parts: &[&Discovery]) -> Discovery {
    Discovery {
        open_ns: parts.iter().filter_map(|d| d.open_ns).max(),
        matched_ns: parts.iter().map(|d| d.matched_ns).max().unwrap_or(0),
        first_reply_ns: parts.iter().filter_map(|d| d.first_reply_ns).max(),
        probes: parts.iter().map(|d| d.probes).sum(),
    }
}

fn combine(outcomes: Vec<RoleOutcome>, names: &[String], addresses: &[String]) -> RoleOutcome {
    let per_topic: Vec<TopicMeasurement> = outcomes
        .iter()
        .enumerate()
        .filter_map(|(i, o)| {
            o.measurement.clone().map(|m| TopicMeasurement {
                topic: i as u32,
                name: names[i].clone(),
                address: Some(addresses[i].clone()),
                measurement: m,
            })
        })
        .collect();
    let measured: Vec<_> = per_topic.iter().map(|t| &t.measurement).collect();
    let counters: Vec<&Counters> = outcomes
        .iter()
        .filter_map(|o| o.counters.as_ref())
        .collect();
    let discoveries: Vec<&Discovery> = outcomes
        .iter()
        .filter_map(|o| o.discovery.as_ref())
        .collect();
    let sent: Vec<u64> = outcomes.iter().filter_map(|o| o.sent).collect();
    RoleOutcome {
        status: outcomes
            .iter()
            .map(|o| o.status)
            .max_by_key(|s| rank(*s))
            .unwrap_or(Status::Failed),
        reason: reason(&outcomes),
        measurement: (!measured.is_empty()).then(|| pool::pool_measurements(&measured)),
        counters: (!counters.is_empty()).then(|| sum_counters(&counters)),
        sent: (!sent.is_empty()).then(|| sent.iter().sum()),
        schedule: pool::pool_schedules(
            &outcomes
                .iter()
                .filter_map(|o| o.schedule.as_ref())
                .collect::<Vec<_>>(),
        ),
        warmup_ns: outcomes.iter().find_map(|o| o.warmup_ns),
        discovery: (!discoveries.is_empty()).then(|| slowest(&discoveries)),
        outage: pool_outage(
            &outcomes
                .iter()
                .filter_map(|o| o.outage.as_ref())
                .collect::<Vec<_>>(),
        ),
        per_topic,
        serving: None,
        throughput: None,
    }
}

/// All topics around one outage: counts summed; recovered when the last topic did (None if
/// any topic never did), the last delivery before it across topics.
fn pool_outage(each: &[&OutageCounts]) -> Option<OutageCounts> {
    let first = each.first()?;
    let sum = |f: fn(&OutageCounts) -> Option<u64>| each.iter().map(|c| f(c)).sum::<Option<u64>>();
    Some(OutageCounts {
        start_ns: first.start_ns,
        end_ns: first.end_ns,
        sent: sum(|c| c.sent),
        delivered: sum(|c| c.delivered),
        last_before_ns: each.iter().filter_map(|c| c.last_before_ns).max(),
        first_after_ns: each
            .iter()
            .map(|c| c.first_after_ns)
            .collect::<Option<Vec<u64>>>()
            .and_then(|v| v.into_iter().max()),
        series_origin_ns: each.iter().filter_map(|c| c.series_origin_ns).min(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(status: Status, reason: Option<&str>) -> RoleOutcome {
        RoleOutcome {
            status,
            reason: reason.map(String::from),
            counters: Some(Counters {
                received: 2,
                echoed: 1,
                ..Default::default()
            }),
            ..RoleOutcome::failed("")
        }
    }

    #[test]
    fn worst_status_and_reasons_by_topic() {
        let names = vec!["a".to_string(), "b".to_string()];
        let c = combine(
            vec![
                with(Status::Complete, None),
                with(Status::Partial, Some("peer silent")),
            ],
            &names,
            &names,
        );
        assert_eq!(c.status, Status::Partial);
        assert_eq!(c.reason.as_deref(), Some("topic 1: peer silent"));
        assert_eq!(c.counters.unwrap().received, 4);
        let same = combine(
            vec![
                with(Status::Complete, Some("idle timeout")),
                with(Status::Complete, Some("idle timeout")),
            ],
            &names,
            &names,
        );
        assert_eq!(same.reason.as_deref(), Some("idle timeout"));
        assert!(same.per_topic.is_empty() && same.measurement.is_none());
    }

    #[test]
    fn per_topic_entries_have_the_topic_name_and_address() {
        let measured = || RoleOutcome {
            status: Status::Complete,
            reason: None,
            measurement: Some(
                crate::collector::Collector::new(0, 0, None)
                    .unwrap()
                    .finish("roundtrip", 0, 0, 16, 0, None),
            ),
            ..RoleOutcome::failed("")
        };
        let names = vec!["/camera/image_raw".to_string(), "/scan".to_string()];
        let addresses = vec!["127.0.0.1:7000".to_string(), "127.0.0.1:7001".to_string()];
        let c = combine(vec![measured(), measured()], &names, &addresses);
        let got: Vec<(u32, &str, Option<&str>)> = c
            .per_topic
            .iter()
            .map(|t| (t.topic, t.name.as_str(), t.address.as_deref()))
            .collect();
        assert_eq!(
            got,
            vec![
                (0, "/camera/image_raw", Some("127.0.0.1:7000")),
                (1, "/scan", Some("127.0.0.1:7001"))
            ]
        );
    }
}
