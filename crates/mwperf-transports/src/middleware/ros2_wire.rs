//! ROS 2's wire form on the raw DDS transports (cyclonedds, fastdds, rustdds): `--opt
//! ros2-type=<pkg>/msg/<Type>` carries mwperf's message in the `data` of that real ROS 2 type,
//! under the DDS type name a ROS 2 RMW gives it (`std_msgs::msg::dds_::UInt8MultiArray_`) and
//! in its CDR, so a real ROS 2 node (rclpy, rcl) of that type reads what mwperf publishes and
//! publishes what mwperf reads. The topics are the ones every DDS transport already uses
//! (`rt/mwperf/<base>/ping|pong`: [`super::dds_address`]).
//!
//! The layouts are the ros2 transport's ([`super::ros2::message`], one owner): the raw
//! transports hand its CDR (encapsulation header included) to the DDS library as it is.

#[cfg(any(feature = "cyclonedds", feature = "rustdds", feature = "fastdds"))]
pub use with_types::*;

/// The option's key (in each raw DDS transport's descriptor).
pub const OPT: &str = "ros2-type";

/// The option's help text (the same in the three descriptors).
pub const HELP: &str = "carry mwperf's message in the data of this real ROS 2 type, with ROS 2's DDS type name and CDR (std_msgs/msg/UInt8MultiArray, sensor_msgs/msg/PointCloud2 or sensor_msgs/msg/Image): a real ROS 2 node (rclpy, rcl) of that type on /mwperf/<base>/ping|pong is then the peer (default: mwperf_msgs/msg/Bytes)";

/// The wire form itself (with a raw DDS transport built in; the option's name and help are
/// above so every descriptor lists it).
#[cfg(any(feature = "cyclonedds", feature = "rustdds", feature = "fastdds"))]
mod with_types {
    use super::OPT;
    use crate::middleware::ros2::message::MessageType;
    use crate::TransportError;

    /// A raw DDS endpoint's ROS 2 type.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct Ros2Wire {
        pub ty: MessageType,
        /// The DDS type name, e.g. `std_msgs::msg::dds_::UInt8MultiArray_`.
        pub type_name: String,
    }

    impl Ros2Wire {
        /// `--opt ros2-type` of `transport` (None: absent); the error lists the types there are.
        pub fn from_opt(
            transport: &'static str,
            value: Option<&str>,
        ) -> Result<Option<Ros2Wire>, TransportError> {
            let Some(name) = value else { return Ok(None) };
            let ty = MessageType::named(transport, OPT, name)?;
            Ok(Some(Ros2Wire {
                ty,
                type_name: dds_type_name(ty.name()),
            }))
        }

        /// `msg` as the type's CDR (encapsulation header first) into `out`.
        pub fn encode(&self, out: &mut Vec<u8>, msg: &[u8]) -> Result<(), String> {
            self.ty.encode(out, msg)
        }

        /// The `data` of a serialized message of the type (encapsulation header first).
        pub fn decode<'a>(&self, cdr: &'a [u8]) -> Result<&'a [u8], String> {
            self.ty.decode(cdr)
        }
    }

    /// The address a raw DDS participant of this host uses to meet ROS 2 nodes here when the user
    /// named none: the first IPv4 address of an interface that is up and not loopback. A ROS 2
    /// node's Fast DDS (the wheels' 3.x, ROS 2's default discovery) announces only such addresses;
    /// measured: Debian Fast DDS 2.9 and Cyclone DDS 0.10 pinned to 127.0.0.1 discover no ROS 2
    /// node on this host (RustDDS, which sends from 127.0.0.1 to any address, does).
    pub fn host_address(
        transport: &'static str,
        flag: &str,
    ) -> Result<std::net::Ipv4Addr, TransportError> {
        let all = crate::netif::interfaces()?;
        all.iter()
        .find(|i| i.up && !i.loopback)
        .map(|i| i.addr)
        .ok_or_else(|| TransportError::Unsupported {
            transport,
            what: format!(
                "--opt {OPT} without {flag}: this host has no IPv4 interface that is up besides loopback, where a ROS 2 node announces itself (name one with {flag})"
            ),
        })
    }

    /// `<pkg>/msg/<Type>` → `<pkg>::msg::dds_::<Type>_` (rosidl's DDS name of a message type).
    pub fn dds_type_name(ros_name: &str) -> String {
        let (pkg, ty) = ros_name
            .split_once("/msg/")
            .expect("every type is <pkg>/msg/<Type>");
        format!("{pkg}::msg::dds_::{ty}_")
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn names_and_refusals() {
            let w = Ros2Wire::from_opt("fastdds", Some("std_msgs/msg/UInt8MultiArray"))
                .unwrap()
                .unwrap();
            assert_eq!(w.type_name, "std_msgs::msg::dds_::UInt8MultiArray_");
            assert_eq!(
                dds_type_name("sensor_msgs/msg/PointCloud2"),
                "sensor_msgs::msg::dds_::PointCloud2_"
            );
            assert_eq!(Ros2Wire::from_opt("fastdds", None).unwrap(), None);
            let e = Ros2Wire::from_opt("rustdds", Some("sensor_msgs/msg/Imu"))
                .unwrap_err()
                .to_string();
            assert!(e.contains("--opt ros2-type=sensor_msgs/msg/Imu"), "{e}");
            assert!(e.contains("allowed: std_msgs/msg/UInt8MultiArray, sensor_msgs/msg/PointCloud2, sensor_msgs/msg/Image"), "{e}");
            let mut out = Vec::new();
            w.encode(&mut out, b"abc").unwrap();
            assert_eq!(&out[..4], &[0, 1, 0, 0]);
            assert_eq!(w.decode(&out).unwrap(), b"abc");
        }
    }
}
