//! iceoryx2 request/response (see crate::service): not implemented yet; the descriptor says so, and
//! crate::service refuses before it gets here.

use crate::service::{Client, Server};
use crate::{Spec, TransportError};

fn missing() -> TransportError {
    TransportError::Unsupported {
        transport: "iceoryx2",
        what: "request/response".into(),
    }
}

pub fn client(_spec: &Spec) -> Result<Box<dyn Client>, TransportError> {
    Err(missing())
}

pub fn server(_spec: &Spec) -> Result<Box<dyn Server>, TransportError> {
    Err(missing())
}
