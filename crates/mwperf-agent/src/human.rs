//! The human summary an agent prints when run by hand (the control plane passes --quiet).

use mwperf_core::result::{AgentReport, Stats};
use mwperf_core::units::format_ns;

fn f(v: Option<u64>) -> String {
    v.map_or("-".into(), |n| format_ns(n as f64))
}

fn row(name: &str, s: &Stats) -> String {
    format!(
        "  {name:<9} n={:<8} min {:>9}  p50 {:>9}  p90 {:>9}  p99 {:>9}  p99.9 {:>9}  max {:>9}  sd {:>9}",
        s.count,
        f(s.min_ns),
        f(s.p50_ns),
        f(s.p90_ns),
        f(s.p99_ns),
        f(s.p999_ns),
        f(s.max_ns),
        s.stddev_ns.map_or("-".into(), format_ns)
    )
}

pub fn summary(r: &AgentReport) -> String {
    let mut out = format!("mwperf-agent {}: {:?}", r.role, r.status).to_lowercase();
    if let Some(why) = &r.status_reason {
        out += &format!(" ({why})");
    }
    out.push('\n');
    if let Some(m) = &r.measurement {
        let a = &m.accounting;
        out += &format!(
            "{} latency, {} B payload ({} B message)\n",
            m.latency_kind, m.payload_bytes, m.message_bytes
        );
        out += &row("response", &m.response);
        out.push('\n');
        out += &row("service", &m.service);
        out.push('\n');
        out += &format!(
            "  sent {} received {} lost {} duplicated {} reordered {} corrupted {} foreign {} malformed {}\n",
            a.sent, a.received, a.lost, a.duplicated, a.reordered, a.corrupted, a.foreign, a.malformed
        );
        out += &format!(
            "  {:.0} msgs/s, {:.2} MB/s payload",
            m.throughput.msgs_per_s,
            m.throughput.payload_bytes_per_s / 1e6
        );
        if let Some(j) = m.jitter_rfc3550_ns {
            out += &format!(", RFC 3550 jitter {}", format_ns(j));
        }
        if let Some(l) = &m.late {
            out += &format!(
                ", late (> {}) {}",
                format_ns(l.threshold_ns as f64),
                l.count
            );
        }
        out.push('\n');
        if let Some(s) = &m.schedule {
            out += &format!(
                "  send lateness p50 {} p99 {} max {}\n",
                f(s.lateness.p50_ns),
                f(s.lateness.p99_ns),
                f(s.lateness.max_ns)
            );
        }
    }
    for t in &r.per_topic {
        let (s, a) = (&t.measurement.response, &t.measurement.accounting);
        let mut topic = format!("topic {}", t.topic);
        if t.name != topic {
            topic = format!("{topic} {}", t.name); // a name of its own (--topic-name)
        }
        out += &format!(
            "  {topic} ({}): n={} p50 {} p99 {} max {} lost {}\n",
            t.address.as_deref().unwrap_or("-"),
            s.count,
            f(s.p50_ns),
            f(s.p99_ns),
            f(s.max_ns),
            a.lost
        );
    }
    if let Some(c) = &r.counters {
        out += &format!(
            "  received {} echoed {} foreign {} malformed {} send errors {}\n",
            c.received, c.echoed, c.foreign, c.malformed, c.send_errors
        );
    }
    if let Some(n) = r.sent {
        if r.measurement.is_none() {
            out += &format!("  sent {n}\n");
        }
    }
    let p = &r.process;
    out += &format!(
        "  cpu user {:.2}s sys {:.2}s over {:.2}s, max rss {} KiB\n",
        p.cpu_user_s, p.cpu_sys_s, p.wall_s, p.max_rss_kib
    );
    for w in &r.warnings {
        out += &format!("  warning: {}", w.message);
        if let Some(h) = &w.hint {
            out += &format!(" (hint: {h})");
        }
        out.push('\n');
    }
    out
}
