//! The C shim (`shim.cpp`, compiled by build.rs against Debian's Fast DDS into a shared object)
//! and how it is loaded: its bytes are embedded in the agent, written to an anonymous memory
//! file (memfd) and `dlopen`ed from there on first use. So the agent stays one file (copied to
//! robots over SSH as it is), and starts where Fast DDS is not installed: only opening a fastdds
//! endpoint fails there, naming the package. With `--opt distro` the same shim compiled against
//! a ROS 2 distribution's Fast DDS ([`super::wheel`]) is loaded instead: one Fast DDS per
//! process (two in one would resolve each other's symbols), the first one opened.

#![allow(non_camel_case_types)]

use std::ffi::{c_char, CStr, CString};
use std::sync::OnceLock;

use crate::TransportError;

/// Opaque endpoint handle of the shim.
#[repr(C)]
pub struct mwfd_endpoint {
    _private: [u8; 0],
}

/// Opaque participant handle of the shim (a participant and the topics its endpoints use).
#[repr(C)]
pub struct mwfd_participant {
    _private: [u8; 0],
}

/// `struct mwfd_config` in shim.cpp (same order and types).
#[repr(C)]
pub struct Config {
    pub domain: u32,
    pub topic_out: *const c_char,
    pub topic_in: *const c_char,
    pub reliable: i32,
    pub keep_all: i32,
    pub depth: i32,
    pub transient_local: i32,
    pub max_blocking_ns: i64,
    pub shm: i32,
    pub async_publish: i32,
    pub data_sharing: i32,
    pub interface: *const c_char,
    pub peers: *const c_char,
    pub max_bytes_per_s: i64,
    pub heartbeat_ns: i64,
    /// The writer's and reader's type names (NULL: the topic type `Bytes_`).
    pub type_out: *const c_char,
    pub type_in: *const c_char,
    /// 1: the types are ROS 2 types whose CDR the caller writes (`--opt ros2-type`).
    pub raw_cdr: i32,
    /// Participant properties as "name=value" lines (`--opt security`); NULL: none.
    pub properties: *const c_char,
}

type ParticipantOpenFn =
    unsafe extern "C" fn(*const Config, *mut c_char, usize) -> *mut mwfd_participant;
type ParticipantCloseFn = unsafe extern "C" fn(*mut mwfd_participant);
type OpenFn = unsafe extern "C" fn(
    *mut mwfd_participant,
    *const Config,
    *mut c_char,
    usize,
) -> *mut mwfd_endpoint;
type CloseFn = unsafe extern "C" fn(*mut mwfd_endpoint);
type WriteFn = unsafe extern "C" fn(*mut mwfd_endpoint, *const u8, u32, i64, u64) -> i32;
type TakeFn = unsafe extern "C" fn(*mut mwfd_endpoint, *mut *const u8, *mut u32) -> i32;
type WaitFn = unsafe extern "C" fn(*mut mwfd_endpoint, i64) -> i32;
type WaitAckedFn = unsafe extern "C" fn(*mut mwfd_endpoint, i64) -> i32;
type MatchedFn = unsafe extern "C" fn(*mut mwfd_endpoint, *mut i32, *mut i32) -> i32;
type GuidsFn = unsafe extern "C" fn(*mut mwfd_endpoint, *mut u8, *mut u8) -> i32;
type WriteRelatedFn = unsafe extern "C" fn(
    *mut mwfd_endpoint,
    *const u8,
    u32,
    *const u8,
    i64,
    *mut u8,
    *mut i64,
) -> i32;
type TakeInfoFn = unsafe extern "C" fn(
    *mut mwfd_endpoint,
    *mut *const u8,
    *mut u32,
    *mut u8,
    *mut i64,
    *mut u8,
    *mut i64,
) -> i32;

/// The shim's functions (signatures as in shim.cpp).
pub struct Api {
    pub participant_open: ParticipantOpenFn,
    pub participant_close: ParticipantCloseFn,
    pub open: OpenFn,
    pub close: CloseFn,
    pub write: WriteFn,
    pub take: TakeFn,
    pub wait: WaitFn,
    pub wait_acked: WaitAckedFn,
    pub matched: MatchedFn,
    pub guids: GuidsFn,
    pub write_related: WriteRelatedFn,
    pub take_info: TakeInfoFn,
}

pub const INSTALL: &str =
    "install it: apt-get install libfastrtps2.9 (to build: libfastrtps-dev libfastcdr-dev)";

/// The shim, as build.rs compiled it.
static SHIM: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/libmwperf_fastdds.so"));

/// Which Fast DDS a process loaded: None Debian's (build.rs), Some(distro) a ROS 2 one's.
type Source = Option<String>;

/// The shim's functions for `distro` (None: Debian's Fast DDS, embedded; Some: the Fast DDS of
/// that ROS 2 distribution, compiled on first use), loaded on first use.
pub fn api(distro: Option<&str>) -> Result<&'static Api, TransportError> {
    static API: OnceLock<(Source, Result<Api, TransportError>)> = OnceLock::new();
    let (loaded, api) = API.get_or_init(|| {
        let source: Source = distro.map(str::to_string);
        let api = match distro {
            None => load().map_err(|why| TransportError::Missing {
                what: format!("Fast DDS ({why})"),
                install: INSTALL.into(),
            }),
            Some(d) => load_distro(d),
        };
        (source, api)
    });
    if loaded.as_deref() != distro {
        let name = |s: Option<&str>| {
            s.map_or("Debian's Fast DDS".to_string(), |d| {
                format!("the Fast DDS of ROS 2 {d}")
            })
        };
        return Err(TransportError::Unsupported {
            transport: "fastdds",
            what: format!(
                "{} in an agent that already uses {} (one Fast DDS per process: --opt distro the same on every fastdds endpoint of an agent)",
                name(distro),
                name(loaded.as_deref())
            ),
        });
    }
    match api {
        Ok(api) => Ok(api),
        // the first failure, repeated (a TransportError is not Clone)
        Err(TransportError::Missing { what, install }) => Err(TransportError::Missing {
            what: what.clone(),
            install: install.clone(),
        }),
        Err(TransportError::Unsupported { transport, what }) => Err(TransportError::Unsupported {
            transport,
            what: what.clone(),
        }),
        Err(e) => Err(TransportError::Middleware {
            transport: "fastdds",
            detail: e.to_string(),
        }),
    }
}

/// The shim compiled against the Fast DDS of `distro`, the ROS 2 the agent's environment names.
#[cfg(feature = "ros2")]
fn load_distro(distro: &str) -> Result<Api, TransportError> {
    use crate::middleware::ros2::installation::Installation;
    let inst = Installation::from_env()?;
    if inst.distro.as_deref() != Some(distro) {
        return Err(TransportError::Unsupported {
            transport: "fastdds",
            what: format!(
                "--opt distro={distro} in an agent whose environment is ROS 2 {} (the control plane starts the agent with the environment of the distribution asked for)",
                inst.describe()
            ),
        });
    }
    let so = super::wheel::shim(&inst)?;
    let path = CString::new(so.as_os_str().as_encoded_bytes()).map_err(|_| {
        TransportError::Middleware {
            transport: "fastdds",
            detail: format!("{} (a NUL in the path)", so.display()),
        }
    })?;
    // SAFETY: dlopen of the shim compiled for this distribution; the handle stays open.
    let lib = unsafe { libc::dlopen(path.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
    if lib.is_null() {
        return Err(TransportError::Middleware {
            transport: "fastdds",
            detail: format!("loading {}: {}", so.display(), dl_error()),
        });
    }
    symbols(lib).map_err(|detail| TransportError::Middleware {
        transport: "fastdds",
        detail,
    })
}

#[cfg(not(feature = "ros2"))]
fn load_distro(distro: &str) -> Result<Api, TransportError> {
    Err(TransportError::Unsupported {
        transport: "fastdds",
        what: format!("--opt distro={distro}: this agent was built without the ros2 feature, which finds ROS 2 installations"),
    })
}

fn dl_error() -> String {
    // SAFETY: dlerror returns NULL or a C string valid until the next dl call on this thread.
    let e = unsafe { libc::dlerror() };
    if e.is_null() {
        "unknown dlopen error".into()
    } else {
        // SAFETY: non-null C string from dlerror.
        unsafe { CStr::from_ptr(e) }.to_string_lossy().into_owned()
    }
}

fn load() -> Result<Api, String> {
    let name = CString::new("mwperf-fastdds-shim").expect("no NUL");
    // SAFETY: plain syscall wrapper; the fd is ours and closed below.
    let fd = unsafe { libc::memfd_create(name.as_ptr(), libc::MFD_CLOEXEC) };
    if fd < 0 {
        return Err(format!("memfd_create: {}", std::io::Error::last_os_error()));
    }
    let mut written = 0;
    while written < SHIM.len() {
        // SAFETY: valid fd and a slice of SHIM.
        let n = unsafe { libc::write(fd, SHIM[written..].as_ptr().cast(), SHIM.len() - written) };
        if n <= 0 {
            let e = std::io::Error::last_os_error();
            // SAFETY: closing our own fd.
            unsafe { libc::close(fd) };
            return Err(format!("writing the shim to memory: {e}"));
        }
        written += n as usize;
    }
    let path = CString::new(format!("/proc/self/fd/{fd}")).expect("no NUL");
    // SAFETY: dlopen of the shim we just wrote; the handle stays open for the process's life.
    let lib = unsafe { libc::dlopen(path.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
    // SAFETY: the mapping outlives the fd.
    unsafe { libc::close(fd) };
    if lib.is_null() {
        return Err(dl_error());
    }
    symbols(lib)
}

/// The shim's functions in the loaded `lib`.
fn symbols(lib: *mut libc::c_void) -> Result<Api, String> {
    macro_rules! sym {
        ($name:literal, $ty:ty) => {{
            // SAFETY: looking up a symbol of the shim by its C name.
            let p = unsafe { libc::dlsym(lib, concat!($name, "\0").as_ptr().cast()) };
            if p.is_null() {
                return Err(format!("the shim lacks {}", $name));
            }
            // SAFETY: the shim defines it with the signature the field declares (shim.cpp).
            unsafe { std::mem::transmute::<*mut libc::c_void, $ty>(p) }
        }};
    }
    Ok(Api {
        participant_open: sym!("mwfd_participant_open", ParticipantOpenFn),
        participant_close: sym!("mwfd_participant_close", ParticipantCloseFn),
        open: sym!("mwfd_open", OpenFn),
        close: sym!("mwfd_close", CloseFn),
        write: sym!("mwfd_write", WriteFn),
        take: sym!("mwfd_take", TakeFn),
        wait: sym!("mwfd_wait", WaitFn),
        wait_acked: sym!("mwfd_wait_acked", WaitAckedFn),
        matched: sym!("mwfd_matched", MatchedFn),
        guids: sym!("mwfd_guids", GuidsFn),
        write_related: sym!("mwfd_write_related", WriteRelatedFn),
        take_info: sym!("mwfd_take_info", TakeInfoFn),
    })
}

/// The text the shim wrote into an error buffer (NUL-terminated by snprintf, or all zeros).
pub fn text(err: &[c_char]) -> String {
    // SAFETY: the buffer holds a NUL (snprintf terminates; a zeroed buffer starts with one).
    unsafe { CStr::from_ptr(err.as_ptr()) }
        .to_string_lossy()
        .into_owned()
}
