//! The services' part of the shim's C ABI (`service.c`), looked up with the rest of the shim
//! ([`super::ffi`]).

#![allow(non_camel_case_types)]

use std::ffi::{c_char, c_int, c_longlong, c_void, CStr};

use super::ffi::{mwr_node, Config};
use crate::TransportError;

/// Opaque service server handle of the shim.
#[repr(C)]
pub struct mwr_server {
    _private: [u8; 0],
}

/// Opaque service client handle of the shim.
#[repr(C)]
pub struct mwr_client {
    _private: [u8; 0],
}

type IdSizeFn = unsafe extern "C" fn() -> usize;
type ServerOpenFn =
    unsafe extern "C" fn(*mut mwr_node, *const Config, *mut c_char, usize) -> *mut mwr_server;
type ServerCloseFn = unsafe extern "C" fn(*mut mwr_server);
type ServerTakeFn = unsafe extern "C" fn(
    *mut mwr_server,
    *mut *const u8,
    *mut usize,
    *mut u8,
    *mut c_char,
    usize,
) -> c_int;
type ServerReplyFn =
    unsafe extern "C" fn(*mut mwr_server, *const u8, *const u8, usize, *mut c_char, usize) -> c_int;
type ServerWaitFn = unsafe extern "C" fn(*mut mwr_server, c_longlong, *mut c_char, usize) -> c_int;
type ClientOpenFn =
    unsafe extern "C" fn(*mut mwr_node, *const Config, *mut c_char, usize) -> *mut mwr_client;
type ClientCloseFn = unsafe extern "C" fn(*mut mwr_client);
type ClientCallFn = unsafe extern "C" fn(
    *mut mwr_client,
    *const c_char,
    usize,
    *mut c_longlong,
    *mut c_char,
    usize,
) -> c_int;
type ClientTakeFn = unsafe extern "C" fn(
    *mut mwr_client,
    *mut *const u8,
    *mut usize,
    *mut c_longlong,
    *mut c_char,
    usize,
) -> c_int;
type ClientWaitFn = unsafe extern "C" fn(*mut mwr_client, c_longlong, *mut c_char, usize) -> c_int;
type ClientReadyFn = unsafe extern "C" fn(*mut mwr_client) -> c_int;

/// The functions of service.c (signatures as there).
pub struct ServiceApi {
    /// `sizeof(rmw_request_id_t)`: the bytes a server keeps per request it has to answer.
    pub request_id_size: usize,
    pub server_open: ServerOpenFn,
    pub server_close: ServerCloseFn,
    pub server_take: ServerTakeFn,
    pub server_reply: ServerReplyFn,
    pub server_wait: ServerWaitFn,
    pub client_open: ClientOpenFn,
    pub client_close: ClientCloseFn,
    pub client_call: ClientCallFn,
    pub client_take: ClientTakeFn,
    pub client_wait: ClientWaitFn,
    pub client_ready: ClientReadyFn,
}

impl ServiceApi {
    /// Each function through `sym` (the shim's `dlsym`).
    pub fn load(
        sym: impl Fn(&CStr) -> Result<*mut c_void, TransportError>,
    ) -> Result<ServiceApi, TransportError> {
        macro_rules! get {
            ($name:literal, $ty:ty) => {{
                let p = sym(CStr::from_bytes_with_nul(concat!($name, "\0").as_bytes())
                    .expect("a literal with one NUL"))?;
                // SAFETY: the shim defines it with the signature the field declares (service.c).
                unsafe { std::mem::transmute::<*mut c_void, $ty>(p) }
            }};
        }
        let id_size: IdSizeFn = get!("mwr_request_id_size", IdSizeFn);
        Ok(ServiceApi {
            // SAFETY: a function of no arguments returning a size.
            request_id_size: unsafe { id_size() },
            server_open: get!("mwr_server_open", ServerOpenFn),
            server_close: get!("mwr_server_close", ServerCloseFn),
            server_take: get!("mwr_server_take", ServerTakeFn),
            server_reply: get!("mwr_server_reply", ServerReplyFn),
            server_wait: get!("mwr_server_wait", ServerWaitFn),
            client_open: get!("mwr_client_open", ClientOpenFn),
            client_close: get!("mwr_client_close", ClientCloseFn),
            client_call: get!("mwr_client_call", ClientCallFn),
            client_take: get!("mwr_client_take", ClientTakeFn),
            client_wait: get!("mwr_client_wait", ClientWaitFn),
            client_ready: get!("mwr_client_ready", ClientReadyFn),
        })
    }
}
