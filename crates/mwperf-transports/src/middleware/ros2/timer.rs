//! `--opt timer=rcl`: a ros2 publisher paced by an rcl timer (`rcl_timer_init2` on the steady
//! clock, waited for in an rcl wait set, `rcl_timer_call`) — what an rclc or rclcpp node's
//! timer callback publishing at a rate is — instead of mwperf's own pacer (`timer=mwperf`, the
//! default).
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
use crate::{Side, Spec, TransportError};

/// What paces the sender.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pacing {
    /// mwperf's pacer (absolute deadlines, its own sleep and spin).
    Mwperf,
    /// An rcl timer.
    Rcl,
}

/// `--opt timer`: `rcl` or `mwperf` (the default); `rcl` only on a publisher of its own node
/// (its subscriber, given the same options, ignores it).
pub fn pacing(opts: &Options<'_>, side: Side, spec: &Spec) -> Result<Pacing, TransportError> {
    let pacing = match opts.get("timer") {
        None | Some("mwperf") => Pacing::Mwperf,
        Some("rcl") => Pacing::Rcl,
        Some(other) => {
            return Err(unsupported(format!(
                "--opt timer={other} (allowed: rcl, mwperf)"
            )))
        }
    };
    if side == Side::Sub {
        return Ok(Pacing::Mwperf); // the stream's other end: it sends nothing to pace
    }
    if pacing == Pacing::Rcl && (side != Side::Pub || spec.shared_session) {
        return Err(unsupported(
            "--opt timer=rcl outside a publisher's stream (it paces the pub of --mode oneway or throughput; a ping, a pong, a graph's nodes keep mwperf's pacer)".into(),
        ));
    }
    Ok(pacing)
}

/// The rcl timer of one publisher, started at its first tick.
pub struct Timer {
    api: &'static ffi::Api,
    handle: *mut ffi::mwr_timer,
    period_ns: u64,
}

impl Timer {
    /// Wait (at most `max_wait_ns`) for the tick of the slot due at `due_ns`; Ok(true) = send
    /// it now. `timer` is started on the first call, at `due_ns` on mwperf's clock.
    pub fn tick(
        timer: &mut Option<Timer>,
        api: &'static ffi::Api,
        ep: *mut ffi::mwr_endpoint,
        due_ns: u64,
        period_ns: u64,
        max_wait_ns: u64,
    ) -> Result<bool, TransportError> {
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
            return Ok(true);
        };
        let mut err = [0 as c_char; 512];
        // SAFETY: a valid timer handle; err is writable.
        let rc = unsafe {
            (t.api.timer_wait)(t.handle, max_wait_ns as i64, err.as_mut_ptr(), err.len())
        };
        match rc {
            1 => {
                // a tick of a slot the sender already caught up on is not this slot's
                let now = mwperf_core::clock::now_ns();
                Ok(now + t.period_ns / 2 >= due_ns)
            }
            0 => Ok(false),
            _ => Err(TransportError::Middleware {
                transport: super::T,
                detail: ffi::text(&err),
            }),
        }
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
