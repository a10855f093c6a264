//! `--opt timer=rcl`: a ros2 sender paced by an rcl timer (`rcl_timer_init2` on the steady
//! clock, waited for in an rcl wait set, `rcl_timer_call`) — what an rclc or rclcpp node's
//! timer callback publishing at a rate is — instead of mwperf's own pacer (`timer=mwperf`, the
//! default). The senders it paces: the pub of `--mode oneway` / `throughput`, the ping of a
//! round trip (its subscription waits in the timer's wait set: one wait for the tick or the
//! echo, as a node's executor waits for its timer and subscription callbacks) and a graph
//! node's timer publishers. A pong or a sub has nothing to pace: it answers or counts in its
//! subscription's wait set, as a subscription callback (the option is accepted there, so one
//! option serves both ends and a graph node's endpoints).
//!
//! The sender's schedule stays mwperf's (message k due at start + k x period), so the timer's
//! lateness is measured and reported as the pacer's is (the schedule's lateness and messages
//! sent more than a period late): the first message is sent when it is due, the timer is
//! started then (its ticks fall one, two, ... periods after it), and every later message is
//! sent at the tick of its slot. As rcl does, ticks the sender missed are skipped, so after a
//! stall the sender catches up back to back as with the pacer (those messages are late), and a
//! tick that comes for a slot already sent (more than half a period before the next slot is
//! due) is taken without sending.

use std::ffi::c_char;

use super::ffi;
use crate::spec::Options;
use crate::{Side, TransportError};

/// What paces the sender.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pacing {
    /// mwperf's pacer (absolute deadlines, its own sleep and spin).
    Mwperf,
    /// An rcl timer.
    Rcl,
}

/// `--opt timer`: `rcl` or `mwperf` (the default). `rcl` paces the side's sends where it has a
/// schedule (a pub, a ping, a graph node's publisher); a pong or a sub, given the same
/// options, sends nothing on a schedule and ignores it.
pub fn pacing(opts: &Options<'_>, side: Side) -> Result<Pacing, TransportError> {
    let pacing = match opts.get("timer") {
        None | Some("mwperf") => Pacing::Mwperf,
        Some("rcl") => Pacing::Rcl,
        Some(other) => {
            return Err(unsupported(format!(
                "--opt timer={other} (allowed: rcl, mwperf)"
            )))
        }
    };
    Ok(match side {
        Side::Pub | Side::Ping => pacing,
        Side::Pong | Side::Sub => Pacing::Mwperf,
    })
}

/// What one wait of [`Timer::tick`] saw.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tick {
    /// The slot's tick: send it now.
    Send,
    /// Not yet (timed out, a tick of a slot already sent, or a message waits on the
    /// endpoint's subscription: take it without waiting).
    NotYet,
}

/// The rcl timer of one sender, started at its first tick.
pub struct Timer {
    api: &'static ffi::Api,
    handle: *mut ffi::mwr_timer,
    period_ns: u64,
}

impl Timer {
    /// Wait (at most `max_wait_ns`) for the tick of the slot due at `due_ns`, or a message on
    /// the endpoint's subscription (a ping's echo). `timer` is started on the first call, at
    /// `due_ns` on mwperf's clock.
    pub fn tick(
        timer: &mut Option<Timer>,
        api: &'static ffi::Api,
        ep: *mut ffi::mwr_endpoint,
        due_ns: u64,
        period_ns: u64,
        max_wait_ns: u64,
    ) -> Result<Tick, TransportError> {
        let Some(t) = timer else {
            mwperf_core::clock::sleep_until_ns(due_ns);
            let mut err = [0 as c_char; 512];
            // SAFETY: a valid endpoint handle; err is writable.
            let handle =
                unsafe { (api.timer_open)(ep, period_ns as i64, err.as_mut_ptr(), err.len()) };
            if handle.is_null() {
                return Err(TransportError::Middleware {
                    transport: super::T,
                    detail: ffi::text(&err),
                });
            }
            *timer = Some(Timer {
                api,
                handle,
                period_ns,
            });
            return Ok(Tick::Send);
        };
        let mut err = [0 as c_char; 512];
        // SAFETY: a valid timer handle; err is writable.
        let rc = unsafe {
            (t.api.timer_wait)(t.handle, max_wait_ns as i64, err.as_mut_ptr(), err.len())
        };
        if rc < 0 {
            return Err(TransportError::Middleware {
                transport: super::T,
                detail: ffi::text(&err),
            });
        }
        // a tick of a slot the sender already caught up on is not this slot's
        Ok(
            if rc & 1 != 0 && mwperf_core::clock::now_ns() + t.period_ns / 2 >= due_ns {
                Tick::Send
            } else {
                Tick::NotYet
            },
        )
    }
}

impl Drop for Timer {
    fn drop(&mut self) {
        // SAFETY: closed once; nothing refers to it afterwards.
        unsafe { (self.api.timer_close)(self.handle) };
    }
}

fn unsupported(what: String) -> TransportError {
    TransportError::Unsupported {
        transport: super::T,
        what,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Spec;

    fn pacing_of(value: Option<&str>, side: Side) -> Result<Pacing, TransportError> {
        let spec = match value {
            Some(v) => Spec::new("0/x").with_option("timer", v),
            None => Spec::new("0/x"),
        };
        let opts = spec.options_of(&crate::middleware::ros2_descriptor::DESCRIPTOR)?;
        pacing(&opts, side)
    }

    #[test]
    fn an_rcl_timer_paces_the_senders_and_the_answering_sides_ignore_it() {
        assert_eq!(pacing_of(Some("rcl"), Side::Pub).unwrap(), Pacing::Rcl);
        assert_eq!(pacing_of(Some("rcl"), Side::Ping).unwrap(), Pacing::Rcl);
        assert_eq!(pacing_of(Some("rcl"), Side::Pong).unwrap(), Pacing::Mwperf);
        assert_eq!(pacing_of(Some("rcl"), Side::Sub).unwrap(), Pacing::Mwperf);
        assert_eq!(
            pacing_of(Some("mwperf"), Side::Ping).unwrap(),
            Pacing::Mwperf
        );
        assert_eq!(pacing_of(None, Side::Pub).unwrap(), Pacing::Mwperf);
    }

    #[test]
    fn an_unknown_timer_is_refused_naming_the_allowed_ones() {
        let e = pacing_of(Some("wall"), Side::Pong).unwrap_err().to_string();
        assert!(e.contains("--opt timer=wall (allowed: rcl, mwperf)"), "{e}");
    }
}
