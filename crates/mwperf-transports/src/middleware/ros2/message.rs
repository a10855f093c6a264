//! The ROS 2 message type the endpoints use, and where its C type support is: the type
//! `<pkg>/msg/<Type>` is `lib<pkg>__rosidl_typesupport_c.so`'s
//! `rosidl_typesupport_c__get_message_type_support_handle__<pkg>__msg__<Type>`. Its CDR is
//! written and read by [`super::cdr`].

use std::path::PathBuf;

use super::installation::Installation;
use crate::TransportError;

/// The type every ros2 endpoint publishes and subscribes (mwperf's bytes in its `data`).
pub const TYPE: &str = "std_msgs/msg/UInt8MultiArray";

/// The message packages whose types the transport uses (the shim links their C type supports).
pub const PACKAGES: &[&str] = &["std_msgs"];

/// Where a type's C type support is.
#[derive(Debug, PartialEq, Eq)]
pub struct TypeSupport {
    pub library: PathBuf,
    pub symbol: String,
}

/// The type support of `name` (`<pkg>/msg/<Type>`) in `inst`; the error lists what is missing.
pub fn type_support(inst: &Installation, name: &str) -> Result<TypeSupport, TransportError> {
    let (pkg, ty) = match name.split('/').collect::<Vec<_>>()[..] {
        [pkg, "msg", ty] if !pkg.is_empty() && !ty.is_empty() => (pkg, ty),
        _ => {
            return Err(TransportError::Unsupported {
                transport: super::T,
                what: format!("message type {name:?} (a ROS 2 type is <package>/msg/<Type>)"),
            })
        }
    };
    let file = format!("lib{pkg}__rosidl_typesupport_c.so");
    let library = inst.library(&file).ok_or_else(|| TransportError::Missing {
        what: format!(
            "{file} (the message package {pkg}) in ROS 2 {}",
            inst.describe()
        ),
        install: super::installation::INSTALL.into(),
    })?;
    Ok(TypeSupport {
        library,
        symbol: format!("rosidl_typesupport_c__get_message_type_support_handle__{pkg}__msg__{ty}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_map_to_the_c_type_support() {
        let tmp = std::env::temp_dir().join(format!("mwperf-ros2-msg-{}", std::process::id()));
        std::fs::create_dir_all(tmp.join("lib")).unwrap();
        std::fs::write(tmp.join("lib/libstd_msgs__rosidl_typesupport_c.so"), b"").unwrap();
        let inst = Installation::new(Some("kilted".into()), vec![tmp.clone()], "");
        let ts = type_support(&inst, TYPE).unwrap();
        assert_eq!(
            ts.library,
            tmp.join("lib/libstd_msgs__rosidl_typesupport_c.so")
        );
        assert_eq!(
            ts.symbol,
            "rosidl_typesupport_c__get_message_type_support_handle__std_msgs__msg__UInt8MultiArray"
        );
        let e = type_support(&inst, "sensor_msgs/msg/Image")
            .unwrap_err()
            .to_string();
        assert!(e.contains("libsensor_msgs__rosidl_typesupport_c.so"), "{e}");
        assert!(type_support(&inst, "Image").is_err());
        std::fs::remove_dir_all(&tmp).unwrap();
    }
}
