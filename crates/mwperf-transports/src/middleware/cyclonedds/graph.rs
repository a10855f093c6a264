//! The ROS 2 graph: `--opt ros-node=[NAMESPACE/]NAME` makes an endpoint announce itself as a
//! ROS 2 node on `ros_discovery_info` (rmw_dds_common/msg/ParticipantEntitiesInfo), as
//! rmw_cyclonedds does for every node: the participant's GID and one node listing the GIDs of
//! this endpoint's reader and writer. Tools that follow the ROS 2 graph rather than raw DDS
//! discovery need it: zenoh-plugin-ros2dds routes a DDS topic only once a node owns it.
//!
//! The sample is written once (reliable, transient-local, keep-last 1, as rmw does), so a
//! bridge that starts later still receives it; the writer lives as long as the participant.

use std::ffi::CString;

use super::ffi::{self, Api, Gid, NodeEntitiesInfo, ParticipantEntitiesInfo, Seq};
use super::{check, T};
use crate::TransportError;

/// `ros_discovery_info`: the topic of the ROS 2 graph.
pub const TOPIC: &str = "ros_discovery_info";

/// The entity's DDS GUID as a Humble GID (GUID then 8 zero bytes).
fn gid(api: &Api, entity: ffi::dds_entity_t) -> Result<Gid, TransportError> {
    let mut guid = [0u8; 16];
    // SAFETY: valid entity; Cyclone writes 16 bytes.
    check(
        api,
        unsafe { (api.dds_get_guid)(entity, &mut guid) },
        "reading a GUID",
    )?;
    let mut data = [0u8; 24];
    data[..16].copy_from_slice(&guid);
    Ok(Gid { data })
}

/// Announce node `node` (`[namespace/]name`) of `participant` owning `readers` and `writers`.
pub fn announce(
    api: &Api,
    participant: ffi::dds_entity_t,
    node: &str,
    readers: &[ffi::dds_entity_t],
    writers: &[ffi::dds_entity_t],
) -> Result<(), TransportError> {
    let (namespace, name) = match node.rsplit_once('/') {
        Some((ns, name)) => (format!("/{}", ns.trim_start_matches('/')), name),
        None => ("/".to_string(), node),
    };
    let bad = |_| TransportError::Unsupported {
        transport: T,
        what: format!("--opt ros-node={node} (a NUL byte)"),
    };
    let (c_ns, c_name) = (
        CString::new(namespace).map_err(bad)?,
        CString::new(name).map_err(bad)?,
    );
    let mut reader_gids = readers
        .iter()
        .map(|&e| gid(api, e))
        .collect::<Result<Vec<_>, _>>()?;
    let mut writer_gids = writers
        .iter()
        .map(|&e| gid(api, e))
        .collect::<Result<Vec<_>, _>>()?;
    let mut nodes = [NodeEntitiesInfo {
        node_namespace: c_ns.as_ptr() as *mut _,
        node_name: c_name.as_ptr() as *mut _,
        reader_gid_seq: Seq::borrowing(&mut reader_gids),
        writer_gid_seq: Seq::borrowing(&mut writer_gids),
    }];
    let sample = ParticipantEntitiesInfo {
        gid: gid(api, participant)?,
        node_entities_info_seq: Seq::borrowing(&mut nodes),
    };

    let topic_name = CString::new(TOPIC).expect("no NUL");
    // SAFETY: valid participant and descriptor; Cyclone copies the name and QoS.
    let writer = unsafe {
        let topic = check(
            api,
            (api.dds_create_topic)(
                participant,
                ffi::graph_descriptor(),
                topic_name.as_ptr(),
                std::ptr::null(),
                std::ptr::null(),
            ),
            "creating topic ros_discovery_info",
        )?;
        let qos = (api.dds_create_qos)();
        (api.dds_qset_reliability)(qos, ffi::DDS_RELIABILITY_RELIABLE, 100_000_000);
        (api.dds_qset_durability)(qos, ffi::DDS_DURABILITY_TRANSIENT_LOCAL);
        (api.dds_qset_history)(qos, ffi::DDS_HISTORY_KEEP_LAST, 1);
        let w = (api.dds_create_writer)(participant, topic, qos, std::ptr::null());
        (api.dds_delete_qos)(qos);
        check(api, w, "creating the ros_discovery_info writer")?
    };
    // SAFETY: the sample's pointers borrow the vectors and strings above, alive for the call;
    // Cyclone serializes it before returning.
    check(
        api,
        unsafe { (api.dds_write)(writer, (&sample as *const ParticipantEntitiesInfo).cast()) },
        "writing ros_discovery_info",
    )?;
    Ok(())
}
