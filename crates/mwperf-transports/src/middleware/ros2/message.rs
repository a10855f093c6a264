//! The ROS 2 message types mwperf's bytes travel in, each a real type of the installed message
//! packages with the bytes in its `uint8[] data`: what a ROS 2 node of that type reads. The
//! control plane picks one per payload (python/mwperf/transports/ros2.py; `--opt type`
//! overrides). Each type's CDR is written and read here ([`super::cdr`]); its C type support
//! is `lib<pkg>__rosidl_typesupport_c.so`'s
//! `rosidl_typesupport_c__get_message_type_support_handle__<pkg>__msg__<Type>`.
//!
//! What mwperf writes around the bytes: a UInt8MultiArray without dimensions; a PointCloud2 of
//! one row of `len` one-byte points without fields (frame `mwperf`, dense); an Image of one row
//! of `len` `mono8` pixels (frame `mwperf`). What it reads may come from any publisher of the
//! type (dimensions, fields, other frames): only the fields' layout is relied on.

use std::path::PathBuf;

use super::cdr::{Reader, Writer};
use super::installation::Installation;
use crate::TransportError;

/// The message types the transport can carry mwperf's bytes in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MessageType {
    UInt8MultiArray,
    PointCloud2,
    Image,
}

/// Every type, the default first.
pub const TYPES: &[MessageType] = &[
    MessageType::UInt8MultiArray,
    MessageType::PointCloud2,
    MessageType::Image,
];

/// The message packages of [`TYPES`] (the shim links their C type supports).
pub const PACKAGES: &[&str] = &["std_msgs", "sensor_msgs"];

/// The frame mwperf's headers name.
const FRAME: &str = "mwperf";

impl MessageType {
    /// `<pkg>/msg/<Type>`.
    pub fn name(self) -> &'static str {
        match self {
            MessageType::UInt8MultiArray => "std_msgs/msg/UInt8MultiArray",
            MessageType::PointCloud2 => "sensor_msgs/msg/PointCloud2",
            MessageType::Image => "sensor_msgs/msg/Image",
        }
    }

    /// The type named `name`; the error lists the types there are.
    pub fn parse(name: &str) -> Result<MessageType, TransportError> {
        Self::named(super::T, "type", name)
    }

    /// The type named `name` as transport `transport`'s `--opt KEY` gives it; the error names
    /// the option and lists the types there are.
    pub fn named(
        transport: &'static str,
        key: &str,
        name: &str,
    ) -> Result<MessageType, TransportError> {
        TYPES
            .iter()
            .copied()
            .find(|t| t.name() == name)
            .ok_or_else(|| {
                let names: Vec<&str> = TYPES.iter().map(|t| t.name()).collect();
                TransportError::Unsupported {
                    transport,
                    what: format!("--opt {key}={name} (allowed: {})", names.join(", ")),
                }
            })
    }

    /// The message carrying `data`, serialized into `out` (replacing what it held).
    pub fn encode(self, out: &mut Vec<u8>, data: &[u8]) -> Result<(), String> {
        let mut w = Writer::new(out, 64 + data.len());
        let width = u32::try_from(data.len()).map_err(|_| format!("{} bytes", data.len()))?;
        match self {
            MessageType::UInt8MultiArray => {
                w.u32(0); // layout.dim: none
                w.u32(0); // layout.data_offset
                w.bytes(data)
            }
            MessageType::PointCloud2 => {
                header(&mut w);
                w.u32(1); // height
                w.u32(width);
                w.u32(0); // fields: none
                w.u8(0); // is_bigendian
                w.u32(1); // point_step
                w.u32(width); // row_step
                w.bytes(data)?;
                w.u8(1); // is_dense
                Ok(())
            }
            MessageType::Image => {
                header(&mut w);
                w.u32(1); // height
                w.u32(width);
                w.string("mono8"); // encoding
                w.u8(0); // is_bigendian
                w.u32(width); // step
                w.bytes(data)
            }
        }
    }

    /// The `data` bytes of a serialized message of this type.
    pub fn decode(self, cdr: &[u8]) -> Result<&[u8], String> {
        let mut r = Reader::new(cdr)?;
        match self {
            MessageType::UInt8MultiArray => {
                let dims = r.u32("layout.dim length")?;
                for _ in 0..dims {
                    // each dimension takes at least 12 bytes: a huge count ends at the end
                    r.skip_string("layout.dim[].label")?;
                    r.u32("layout.dim[].size")?;
                    r.u32("layout.dim[].stride")?;
                }
                r.u32("layout.data_offset")?;
                r.bytes("data")
            }
            MessageType::PointCloud2 => {
                skip_header(&mut r)?;
                r.u32("height")?;
                r.u32("width")?;
                let fields = r.u32("fields length")?;
                for _ in 0..fields {
                    r.skip_string("fields[].name")?;
                    r.u32("fields[].offset")?;
                    r.u8("fields[].datatype")?;
                    r.u32("fields[].count")?;
                }
                r.u8("is_bigendian")?;
                r.u32("point_step")?;
                r.u32("row_step")?;
                r.bytes("data")
            }
            MessageType::Image => {
                skip_header(&mut r)?;
                r.u32("height")?;
                r.u32("width")?;
                r.skip_string("encoding")?;
                r.u8("is_bigendian")?;
                r.u32("step")?;
                r.bytes("data")
            }
        }
    }

    /// Where its C type support is in `inst`; the error names the package's library.
    pub fn type_support(self, inst: &Installation) -> Result<TypeSupport, TransportError> {
        let name = self.name();
        let (pkg, ty) = name
            .split_once("/msg/")
            .expect("every type is <pkg>/msg/<Type>");
        let file = format!("lib{pkg}__rosidl_typesupport_c.so");
        let library = inst.library(&file).ok_or_else(|| TransportError::Missing {
            what: format!(
                "{file} (the message package {pkg}, for {name}) in ROS 2 {}",
                inst.describe()
            ),
            install: super::installation::INSTALL.into(),
        })?;
        Ok(TypeSupport {
            library,
            symbol: format!(
                "rosidl_typesupport_c__get_message_type_support_handle__{pkg}__msg__{ty}"
            ),
        })
    }
}

/// std_msgs/Header: a zero stamp (sec, nanosec) and mwperf's frame.
fn header(w: &mut Writer) {
    w.u32(0);
    w.u32(0);
    w.string(FRAME);
}

fn skip_header(r: &mut Reader) -> Result<(), String> {
    r.u32("header.stamp.sec")?;
    r.u32("header.stamp.nanosec")?;
    r.skip_string("header.frame_id")
}

/// Where a type's C type support is.
#[derive(Debug, PartialEq, Eq)]
pub struct TypeSupport {
    pub library: PathBuf,
    pub symbol: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_type_reads_back_what_it_wrote_and_refuses_every_cut() {
        for &t in TYPES {
            let mut out = Vec::new();
            t.encode(&mut out, b"hello").unwrap();
            assert_eq!(t.decode(&out).unwrap(), b"hello", "{t:?}");
            t.encode(&mut out, b"").unwrap();
            assert_eq!(t.decode(&out).unwrap(), b"", "{t:?}");
            t.encode(&mut out, b"abc").unwrap();
            let data_end = out.len() - usize::from(t == MessageType::PointCloud2); // is_dense
            for cut in 0..data_end {
                assert!(t.decode(&out[..cut]).is_err(), "{t:?} cut at {cut}");
            }
        }
    }

    /// As rclpy serializes `UInt8MultiArray(layout=MultiArrayLayout(dim=[MultiArrayDimension(
    /// label="x", size=3, stride=3)]), data=[1, 2, 3])`, big-endian.
    #[test]
    fn dimensions_and_big_endian_are_read() {
        let mut m = vec![0, 0, 0, 0];
        for v in [1u32, 2] {
            m.extend_from_slice(&v.to_be_bytes());
        }
        m.extend_from_slice(b"x\0\0\0"); // label + padding to 4
        for v in [3u32, 3, 0, 3] {
            m.extend_from_slice(&v.to_be_bytes());
        }
        m.extend_from_slice(&[1, 2, 3]);
        assert_eq!(MessageType::UInt8MultiArray.decode(&m).unwrap(), &[1, 2, 3]);
    }

    #[test]
    fn huge_counts_and_lengths_are_errors() {
        let mut out = Vec::new();
        MessageType::UInt8MultiArray
            .encode(&mut out, b"abc")
            .unwrap();
        let mut dims = out.clone();
        dims[4..8].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(MessageType::UInt8MultiArray.decode(&dims).is_err());
        let mut long = out;
        long[12..16].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(MessageType::UInt8MultiArray.decode(&long).is_err());
    }

    /// Foreign bytes never panic: 20 000 pseudo-random messages (a valid encapsulation header,
    /// then noise with small and huge lengths) per type, each an error or some data.
    #[test]
    fn noise_is_survived() {
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for &t in TYPES {
            for _ in 0..20_000 {
                let len = (next() % 96) as usize;
                let mut m = vec![0, (next() % 2) as u8, 0, 0];
                m.extend((0..len).map(|_| {
                    let v = next();
                    if v % 5 == 0 {
                        (v >> 8) as u8 % 4 // small lengths and counts, so parsing gets deep
                    } else {
                        (v >> 8) as u8
                    }
                }));
                if let Ok(data) = t.decode(&m) {
                    assert!(data.len() < m.len());
                }
            }
        }
    }

    #[test]
    fn names_map_to_the_c_type_support() {
        let tmp = std::env::temp_dir().join(format!("mwperf-ros2-msg-{}", std::process::id()));
        std::fs::create_dir_all(tmp.join("lib")).unwrap();
        std::fs::write(tmp.join("lib/libstd_msgs__rosidl_typesupport_c.so"), b"").unwrap();
        let inst = Installation::new(Some("kilted".into()), vec![tmp.clone()], "");
        let ts = MessageType::UInt8MultiArray.type_support(&inst).unwrap();
        assert_eq!(
            ts.library,
            tmp.join("lib/libstd_msgs__rosidl_typesupport_c.so")
        );
        assert_eq!(
            ts.symbol,
            "rosidl_typesupport_c__get_message_type_support_handle__std_msgs__msg__UInt8MultiArray"
        );
        let e = MessageType::Image
            .type_support(&inst)
            .unwrap_err()
            .to_string();
        assert!(e.contains("libsensor_msgs__rosidl_typesupport_c.so"), "{e}");
        let e = MessageType::parse("sensor_msgs/msg/Imu")
            .unwrap_err()
            .to_string();
        assert!(e.contains("allowed: std_msgs/msg/UInt8MultiArray, "), "{e}");
        std::fs::remove_dir_all(&tmp).unwrap();
    }
}
