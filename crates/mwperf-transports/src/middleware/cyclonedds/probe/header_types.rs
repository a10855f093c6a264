//! Which ROS 2 types start with a `std_msgs/Header`, and the stamp such a sample carries.
//!
//! The probe reads samples as bytes without their type's definition (ROS 2's RMWs announce no
//! XTypes information), so it knows by name: the message types of ROS 2's common interfaces
//! (sensor_msgs, geometry_msgs, nav_msgs, ...) whose first field is `std_msgs/Header header`,
//! `std_msgs/Header` itself, and by convention every `...Stamped` type. A sample's stamp is then
//! the first 8 bytes after the CDR encapsulation header: `builtin_interfaces/Time` (int32 sec,
//! uint32 nanosec), little- or big-endian as the encapsulation says.

/// DDS type names (`pkg::msg::dds_::Type_`) whose first field is a std_msgs/Header.
const HEADER_FIRST: &[&str] = &[
    "std_msgs::msg::dds_::Header_",
    "sensor_msgs::msg::dds_::BatteryState_",
    "sensor_msgs::msg::dds_::CameraInfo_",
    "sensor_msgs::msg::dds_::CompressedImage_",
    "sensor_msgs::msg::dds_::FluidPressure_",
    "sensor_msgs::msg::dds_::Illuminance_",
    "sensor_msgs::msg::dds_::Image_",
    "sensor_msgs::msg::dds_::Imu_",
    "sensor_msgs::msg::dds_::JointState_",
    "sensor_msgs::msg::dds_::Joy_",
    "sensor_msgs::msg::dds_::LaserScan_",
    "sensor_msgs::msg::dds_::MagneticField_",
    "sensor_msgs::msg::dds_::MultiDOFJointState_",
    "sensor_msgs::msg::dds_::MultiEchoLaserScan_",
    "sensor_msgs::msg::dds_::NavSatFix_",
    "sensor_msgs::msg::dds_::PointCloud_",
    "sensor_msgs::msg::dds_::PointCloud2_",
    "sensor_msgs::msg::dds_::Range_",
    "sensor_msgs::msg::dds_::RelativeHumidity_",
    "sensor_msgs::msg::dds_::Temperature_",
    "sensor_msgs::msg::dds_::TimeReference_",
    "geometry_msgs::msg::dds_::PoseArray_",
    "nav_msgs::msg::dds_::GridCells_",
    "nav_msgs::msg::dds_::OccupancyGrid_",
    "nav_msgs::msg::dds_::Odometry_",
    "nav_msgs::msg::dds_::Path_",
    "stereo_msgs::msg::dds_::DisparityImage_",
    "visualization_msgs::msg::dds_::ImageMarker_",
    "visualization_msgs::msg::dds_::InteractiveMarker_",
    "visualization_msgs::msg::dds_::InteractiveMarkerFeedback_",
    "visualization_msgs::msg::dds_::Marker_",
    "trajectory_msgs::msg::dds_::JointTrajectory_",
    "trajectory_msgs::msg::dds_::MultiDOFJointTrajectory_",
    "diagnostic_msgs::msg::dds_::DiagnosticArray_",
];

/// Whether samples of `type_name` start with a std_msgs/Header.
pub fn starts_with_header(type_name: &str) -> bool {
    HEADER_FIRST.contains(&type_name)
        || (type_name.contains("::msg::dds_::") && type_name.ends_with("Stamped_"))
}

/// Bytes of a sample needed to read its stamp (encapsulation header + sec + nanosec).
pub const STAMP_BYTES: usize = 12;

/// The stamp (unix ns, or ROS time ns) of a serialized sample's header, or None when the
/// encapsulation is not plain CDR or the nanoseconds are out of range.
pub fn stamp_ns(bytes: &[u8]) -> Option<i64> {
    if bytes.len() < STAMP_BYTES || bytes[0] != 0 {
        return None;
    }
    let little = match bytes[1] {
        0 => false, // CDR_BE
        1 => true,  // CDR_LE
        _ => return None,
    };
    let word = |at: usize| {
        let b = [bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]];
        if little {
            u32::from_le_bytes(b)
        } else {
            u32::from_be_bytes(b)
        }
    };
    let (sec, nanosec) = (word(4) as i32, word(8));
    if nanosec >= 1_000_000_000 {
        return None;
    }
    Some(i64::from(sec) * 1_000_000_000 + i64::from(nanosec))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_and_stamped_types_start_with_a_header() {
        assert!(starts_with_header("sensor_msgs::msg::dds_::Image_"));
        assert!(starts_with_header("geometry_msgs::msg::dds_::PoseStamped_"));
        assert!(starts_with_header("std_msgs::msg::dds_::Header_"));
        assert!(!starts_with_header("std_msgs::msg::dds_::String_"));
        assert!(!starts_with_header("tf2_msgs::msg::dds_::TFMessage_"));
        assert!(!starts_with_header("KeyedSeq"));
    }

    #[test]
    fn stamp_reads_both_byte_orders() {
        let mut le = vec![0, 1, 0, 0];
        le.extend_from_slice(&1_700_000_000i32.to_le_bytes());
        le.extend_from_slice(&123_456_789u32.to_le_bytes());
        assert_eq!(stamp_ns(&le), Some(1_700_000_000_123_456_789));
        let mut be = vec![0, 0, 0, 0];
        be.extend_from_slice(&5i32.to_be_bytes());
        be.extend_from_slice(&7u32.to_be_bytes());
        assert_eq!(stamp_ns(&be), Some(5_000_000_007));
    }

    #[test]
    fn stamp_refuses_what_is_not_a_time() {
        assert_eq!(stamp_ns(&[0, 1, 0, 0, 1, 0]), None);
        let mut bad = vec![0, 1, 0, 0, 1, 0, 0, 0];
        bad.extend_from_slice(&2_000_000_000u32.to_le_bytes());
        assert_eq!(stamp_ns(&bad), None);
        let mut pl = vec![0, 3, 0, 0];
        pl.extend_from_slice(&[0; 8]);
        assert_eq!(stamp_ns(&pl), None);
    }
}
