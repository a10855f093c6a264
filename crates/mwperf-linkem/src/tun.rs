//! TUN devices: created inside a network namespace, read and written without blocking.
//!
//! The main thread enters each namespace (setns) before opening /dev/net/tun, so each device is
//! born in its host's namespace; the file descriptor keeps working from any namespace. The
//! devices are not persistent: they disappear when this process exits, however it exits.

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

const IFF_TUN: libc::c_short = 0x0001;
const IFF_NO_PI: libc::c_short = 0x1000;
const TUNSETIFF: libc::c_ulong = 0x4004_54CA;
pub const MAX_NAME: usize = 15;

#[repr(C)]
struct IfReq {
    name: [u8; libc::IFNAMSIZ],
    flags: libc::c_short,
    _pad: [u8; 22],
}

/// One TUN device (IP packets, no packet-information header).
pub struct Tun {
    fd: OwnedFd,
    pub name: String,
}

impl Tun {
    /// Create TUN device `name` in the network namespace at `netns` (e.g. /run/netns/NAME).
    pub fn create_in(netns: &str, name: &str) -> io::Result<Tun> {
        enter_netns(netns)?;
        Tun::create(name)
    }

    fn create(name: &str) -> io::Result<Tun> {
        if name.is_empty() || name.len() > MAX_NAME {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("device name '{name}' must be 1 to {MAX_NAME} bytes"),
            ));
        }
        let path = CString::new("/dev/net/tun").unwrap();
        // SAFETY: a valid C string; the result is checked.
        let raw = unsafe {
            libc::open(
                path.as_ptr(),
                libc::O_RDWR | libc::O_NONBLOCK | libc::O_CLOEXEC,
            )
        };
        if raw < 0 {
            return Err(annotate(io::Error::last_os_error(), "open /dev/net/tun"));
        }
        // SAFETY: `raw` is a file descriptor we own from here on.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        let mut req = IfReq {
            name: [0; libc::IFNAMSIZ],
            flags: IFF_TUN | IFF_NO_PI,
            _pad: [0; 22],
        };
        req.name[..name.len()].copy_from_slice(name.as_bytes());
        // SAFETY: TUNSETIFF reads and writes a struct ifreq, which IfReq lays out (40 bytes).
        if unsafe { libc::ioctl(fd.as_raw_fd(), TUNSETIFF as _, &mut req) } < 0 {
            return Err(annotate(
                io::Error::last_os_error(),
                &format!("create TUN device {name}"),
            ));
        }
        Ok(Tun {
            fd,
            name: name.to_string(),
        })
    }

    pub fn raw(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    /// Read one packet into `buf`; None when none is waiting.
    pub fn read(&self, buf: &mut [u8]) -> io::Result<Option<usize>> {
        // SAFETY: buf is valid for buf.len() bytes.
        let n = unsafe { libc::read(self.raw(), buf.as_mut_ptr().cast(), buf.len()) };
        if n >= 0 {
            return Ok(Some(n as usize));
        }
        let err = io::Error::last_os_error();
        match err.kind() {
            io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted => Ok(None),
            _ => Err(err),
        }
    }

    /// Write one packet (the kernel refuses malformed ones: an error, not a crash).
    pub fn write(&self, packet: &[u8]) -> io::Result<()> {
        // SAFETY: packet is valid for packet.len() bytes.
        let n = unsafe { libc::write(self.raw(), packet.as_ptr().cast(), packet.len()) };
        if n < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(())
        }
    }
}

fn enter_netns(path: &str) -> io::Result<()> {
    let cpath = CString::new(path)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "NUL in path"))?;
    // SAFETY: a valid C string; the result is checked.
    let raw = unsafe { libc::open(cpath.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC) };
    if raw < 0 {
        return Err(annotate(
            io::Error::last_os_error(),
            &format!("open network namespace {path}"),
        ));
    }
    // SAFETY: we own `raw`.
    let fd = unsafe { OwnedFd::from_raw_fd(raw) };
    // SAFETY: fd is a namespace file; setns affects only this thread (the main thread, before
    // any other thread exists).
    if unsafe { libc::setns(fd.as_raw_fd(), libc::CLONE_NEWNET) } < 0 {
        return Err(annotate(
            io::Error::last_os_error(),
            &format!("enter network namespace {path}"),
        ));
    }
    Ok(())
}

fn annotate(err: io::Error, what: &str) -> io::Error {
    io::Error::new(err.kind(), format!("{what}: {err}"))
}
