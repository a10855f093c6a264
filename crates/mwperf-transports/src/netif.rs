//! This host's (this network namespace's) IPv4 interfaces, from getifaddrs(3): which addresses
//! discovery can use (RustDDS's `network=auto`, the ROS 2 probe's same-host interfaces).

use std::net::Ipv4Addr;

use crate::TransportError;

/// One IPv4 address of an interface, with the flags that decide whether discovery can use it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Interface {
    pub name: String,
    pub addr: Ipv4Addr,
    pub up: bool,
    pub loopback: bool,
    pub multicast: bool,
}

/// Every IPv4 address of this host's (this namespace's) interfaces, from getifaddrs(3).
pub fn interfaces() -> Result<Vec<Interface>, TransportError> {
    let mut head: *mut libc::ifaddrs = std::ptr::null_mut();
    // SAFETY: getifaddrs fills `head` with a list we free below with freeifaddrs.
    if unsafe { libc::getifaddrs(&mut head) } != 0 {
        return Err(std::io::Error::last_os_error().into());
    }
    let mut out = vec![];
    let mut cur = head;
    while !cur.is_null() {
        // SAFETY: `cur` is a node of the list getifaddrs returned and is not freed yet.
        let ifa = unsafe { &*cur };
        cur = ifa.ifa_next;
        if ifa.ifa_addr.is_null() || unsafe { (*ifa.ifa_addr).sa_family } as i32 != libc::AF_INET {
            continue;
        }
        // SAFETY: an AF_INET address is a sockaddr_in; the name is a NUL-terminated C string.
        let sin = unsafe { &*(ifa.ifa_addr as *const libc::sockaddr_in) };
        let name = unsafe { std::ffi::CStr::from_ptr(ifa.ifa_name) }
            .to_string_lossy()
            .into_owned();
        let flags = ifa.ifa_flags as i32;
        out.push(Interface {
            name,
            addr: Ipv4Addr::from(u32::from_be(sin.sin_addr.s_addr)),
            up: flags & libc::IFF_UP != 0,
            loopback: flags & libc::IFF_LOOPBACK != 0,
            multicast: flags & libc::IFF_MULTICAST != 0,
        });
    }
    // SAFETY: `head` came from getifaddrs and is freed once.
    unsafe { libc::freeifaddrs(head) };
    Ok(out)
}
