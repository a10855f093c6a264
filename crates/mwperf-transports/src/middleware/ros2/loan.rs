//! `--opt loan=on|off`: publish through messages the RMW lends (`rcl_borrow_loaned_message`,
//! `rcl_publish_loaned_message`) instead of serialized CDR. Asked for, a publisher asks rcl
//! whether its RMW lends messages of the topic's type (`rcl_publisher_can_loan_messages`) and
//! refuses to open otherwise, naming the type and the RMW. rmw_fastrtps_cpp lends only plain
//! types (its type support's `is_plain()`: fixed size, no strings or sequences, through Fast
//! DDS's data sharing), and every type mwperf carries its bytes in has an unbounded `uint8[]`
//! (`std_msgs/msg/UInt8MultiArray`, `sensor_msgs/msg/PointCloud2`, `sensor_msgs/msg/Image`), so
//! on the managed Kilted and Jazzy the answer is no. Where an RMW would lend one, mwperf still
//! refuses: a loan is a ROS message struct filled in place, and mwperf publishes the type's CDR
//! without one (no loaned path yet).

use super::ffi;
use crate::spec::Options;
use crate::TransportError;

/// `--opt loan`: true for `on`; `off` (the default) false; anything else refused.
pub fn asked(opts: &Options<'_>) -> Result<bool, TransportError> {
    match opts.get("loan") {
        None | Some("off") => Ok(false),
        Some("on") => Ok(true),
        Some(other) => Err(unsupported(format!(
            "--opt loan={other} (allowed: on, off)"
        ))),
    }
}

/// A publisher opened with `--opt loan=on`: why it cannot publish loaned messages.
pub fn refuse(
    api: &ffi::Api,
    ep: *mut ffi::mwr_endpoint,
    type_name: &str,
    rmw_name: &str,
) -> TransportError {
    // SAFETY: a valid endpoint handle.
    let lends = unsafe { (api.can_loan)(ep) } == 1;
    let rmw = format!("{rmw_name} of ROS 2 {}", api.installation.describe());
    let why = if rmw_name == "rmw_fastrtps_cpp" {
        format!(": rmw_fastrtps_cpp lends plain, fixed-size types only, and {type_name} has an unbounded uint8[]")
    } else {
        String::new()
    };
    unsupported(if lends {
        format!(
            "--opt loan=on: {rmw} lends {type_name} messages (rcl_publisher_can_loan_messages), but mwperf publishes the type's CDR and fills no message struct in place: no loaned path yet (allowed: loan=off)"
        )
    } else {
        format!(
            "--opt loan=on: {rmw} does not lend {type_name} messages (rcl_publisher_can_loan_messages is false{why}); allowed: loan=off"
        )
    })
}

fn unsupported(what: String) -> TransportError {
    TransportError::Unsupported {
        transport: super::T,
        what,
    }
}
