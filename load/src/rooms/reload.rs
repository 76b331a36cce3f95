//! Page reloads of a socket's room, over HTTP beside the socket.

use super::{Shared, Socket};
use crate::fill::per_socket;
use headroom_results::histogram::micros;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use tokio::time::Instant;

/// A page reload on its own task, so the socket keeps reading.
pub(super) fn spawn_reload(shared: &Arc<Shared>, socket: Socket, intended: Instant) {
    let Some(reload) = &shared.reload else { return };
    let path = match crate::web::parse_url(&per_socket(&reload.url, socket.room, socket.peer)) {
        Some((_, path)) => path,
        None => return,
    };
    let shared = Arc::clone(shared);
    shared.reloads_in_flight.fetch_add(1, Ordering::Relaxed);
    tokio::spawn(async move {
        let Some(reload) = &shared.reload else { return };
        let outcome = crate::web::get(
            reload.address,
            &reload.authority,
            None,
            &path,
            None,
            reload.timeout,
        )
        .await;
        let done = Instant::now();
        if let Ok(mut reloads) = shared.reloads.lock() {
            let _ = reloads.latency.record(micros(done - intended));
            match outcome {
                Ok((status, _)) if (200..300).contains(&status) => reloads.ok += 1,
                Ok(_) => reloads.errors.status += 1,
                Err(crate::web::ErrorKind::Connect) => reloads.errors.connect += 1,
                Err(crate::web::ErrorKind::Timeout) => reloads.errors.timeout += 1,
                Err(crate::web::ErrorKind::Protocol) => reloads.errors.protocol += 1,
            }
        }
        shared.reloads_in_flight.fetch_sub(1, Ordering::Relaxed);
    });
}
