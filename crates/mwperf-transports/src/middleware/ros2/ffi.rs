//! The rcl shim's C ABI (`shim.c`) and how it is loaded: compiled for the installation the
//! environment names ([`super::compile`]) and `dlopen`ed once per process.

#![allow(non_camel_case_types)]

use std::ffi::{c_char, c_int, c_longlong, c_uint, CStr, CString};
use std::sync::OnceLock;

use super::installation::Installation;
use crate::TransportError;

/// Opaque node handle of the shim (a context and its node).
#[repr(C)]
pub struct mwr_node {
    _private: [u8; 0],
}

/// Opaque endpoint handle of the shim (a publisher and/or a subscription).
#[repr(C)]
pub struct mwr_endpoint {
    _private: [u8; 0],
}

/// Opaque timer handle of the shim (an rcl clock, timer and the wait set it waits in).
#[repr(C)]
pub struct mwr_timer {
    _private: [u8; 0],
}

/// `struct mwr_config` in shim.c (same order and types).
#[repr(C)]
pub struct Config {
    pub topic_out: *const c_char,
    pub topic_in: *const c_char,
    pub type_library: *const c_char,
    pub type_symbol: *const c_char,
    pub reliable: c_int,
    pub keep_all: c_int,
    pub depth: c_int,
    pub transient_local: c_int,
}

type NodeOpenFn = unsafe extern "C" fn(c_uint, *const c_char, *mut c_char, usize) -> *mut mwr_node;
type NodeCloseFn = unsafe extern "C" fn(*mut mwr_node);
type OpenFn =
    unsafe extern "C" fn(*mut mwr_node, *const Config, *mut c_char, usize) -> *mut mwr_endpoint;
type CloseFn = unsafe extern "C" fn(*mut mwr_endpoint);
type PublishFn =
    unsafe extern "C" fn(*mut mwr_endpoint, *const u8, usize, *mut c_char, usize) -> c_int;
type TakeFn = unsafe extern "C" fn(
    *mut mwr_endpoint,
    *mut *const u8,
    *mut usize,
    *mut c_char,
    usize,
) -> c_int;
type WaitFn = unsafe extern "C" fn(*mut mwr_endpoint, c_longlong, *mut c_char, usize) -> c_int;
type MatchedFn = unsafe extern "C" fn(*mut mwr_endpoint, *mut c_int, *mut c_int) -> c_int;
type GraphCountsFn =
    unsafe extern "C" fn(*mut mwr_endpoint, *const c_char, *mut c_int, *mut c_int) -> c_int;
type WaitAckedFn = unsafe extern "C" fn(*mut mwr_endpoint, c_longlong) -> c_int;
type CanLoanFn = unsafe extern "C" fn(*mut mwr_endpoint) -> c_int;
type TimerOpenFn =
    unsafe extern "C" fn(*mut mwr_endpoint, c_longlong, *mut c_char, usize) -> *mut mwr_timer;
type TimerCloseFn = unsafe extern "C" fn(*mut mwr_timer);
type TimerWaitFn = unsafe extern "C" fn(*mut mwr_timer, c_longlong, *mut c_char, usize) -> c_int;

/// The shim's functions (signatures as in shim.c).
pub struct Api {
    pub node_open: NodeOpenFn,
    pub node_close: NodeCloseFn,
    pub open: OpenFn,
    pub close: CloseFn,
    pub publish: PublishFn,
    pub take: TakeFn,
    pub wait: WaitFn,
    pub matched: MatchedFn,
    pub graph_counts: GraphCountsFn,
    pub wait_acked: WaitAckedFn,
    pub can_loan: CanLoanFn,
    pub timer_open: TimerOpenFn,
    pub timer_close: TimerCloseFn,
    pub timer_wait: TimerWaitFn,
    /// The services' functions (service.c).
    pub services: super::service_ffi::ServiceApi,
    /// The installation it was compiled for.
    pub installation: Installation,
}

/// The shim of this process's ROS 2, compiled and loaded on first use.
pub fn api() -> Result<&'static Api, TransportError> {
    static API: OnceLock<Result<Api, TransportError>> = OnceLock::new();
    match API.get_or_init(load) {
        Ok(api) => Ok(api),
        // the first failure, repeated (a TransportError is not Clone)
        Err(TransportError::Missing { what, install }) => Err(TransportError::Missing {
            what: what.clone(),
            install: install.clone(),
        }),
        Err(e) => Err(TransportError::Middleware {
            transport: super::T,
            detail: e.to_string(),
        }),
    }
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

fn load() -> Result<Api, TransportError> {
    let installation = Installation::from_env()?;
    let so = super::compile::shim(&installation)?;
    let path = CString::new(so.as_os_str().as_encoded_bytes()).map_err(|_| {
        TransportError::Middleware {
            transport: super::T,
            detail: format!("{} has a NUL in its path", so.display()),
        }
    })?;
    // SAFETY: dlopen of the shim compiled for this installation; kept open for the process's life.
    let lib = unsafe { libc::dlopen(path.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
    if lib.is_null() {
        return Err(TransportError::Missing {
            what: format!(
                "ROS 2 {}'s libraries ({})",
                installation.describe(),
                dl_error()
            ),
            install: super::installation::INSTALL.into(),
        });
    }
    macro_rules! sym {
        ($name:literal, $ty:ty) => {{
            // SAFETY: looking up a symbol of the shim by its C name.
            let p = unsafe { libc::dlsym(lib, concat!($name, "\0").as_ptr().cast()) };
            if p.is_null() {
                return Err(TransportError::Middleware {
                    transport: super::T,
                    detail: format!("the shim {} lacks {}", so.display(), $name),
                });
            }
            // SAFETY: the shim defines it with the signature the field declares (shim.c).
            unsafe { std::mem::transmute::<*mut libc::c_void, $ty>(p) }
        }};
    }
    Ok(Api {
        node_open: sym!("mwr_node_open", NodeOpenFn),
        node_close: sym!("mwr_node_close", NodeCloseFn),
        open: sym!("mwr_open", OpenFn),
        close: sym!("mwr_close", CloseFn),
        publish: sym!("mwr_publish", PublishFn),
        take: sym!("mwr_take", TakeFn),
        wait: sym!("mwr_wait", WaitFn),
        matched: sym!("mwr_matched", MatchedFn),
        graph_counts: sym!("mwr_graph_counts", GraphCountsFn),
        wait_acked: sym!("mwr_wait_acked", WaitAckedFn),
        can_loan: sym!("mwr_can_loan", CanLoanFn),
        timer_open: sym!("mwr_timer_open", TimerOpenFn),
        timer_close: sym!("mwr_timer_close", TimerCloseFn),
        timer_wait: sym!("mwr_timer_wait", TimerWaitFn),
        services: super::service_ffi::ServiceApi::load(|name| {
            // SAFETY: looking up a symbol of the shim by its C name (NUL-terminated).
            let p = unsafe { libc::dlsym(lib, name.as_ptr()) };
            (!p.is_null())
                .then_some(p)
                .ok_or_else(|| TransportError::Middleware {
                    transport: super::T,
                    detail: format!("the shim {} lacks {}", so.display(), name.to_string_lossy()),
                })
        })?,
        installation,
    })
}

/// The text the shim wrote into an error buffer (NUL-terminated by snprintf, or all zeros).
pub fn text(err: &[c_char]) -> String {
    // SAFETY: the buffer holds a NUL (snprintf terminates; a zeroed buffer starts with one).
    unsafe { CStr::from_ptr(err.as_ptr()) }
        .to_string_lossy()
        .into_owned()
}
