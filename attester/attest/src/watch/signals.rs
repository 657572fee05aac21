//! Stopping the loop cleanly on SIGINT or SIGTERM.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use serde_json::json;

use super::log::log;

/// Sets `stop` on SIGINT or SIGTERM. The handlers are installed before this returns, so a signal that
/// arrives at any later moment stops the loop cleanly instead of killing the process mid-write.
pub fn stop_on_signals(stop: Arc<AtomicBool>) {
    let Ok(rt) = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    else {
        log(
            "signals_unavailable",
            json!({"note": "could not install SIGINT/SIGTERM handlers"}),
        );
        return;
    };
    #[cfg(unix)]
    let streams = {
        use tokio::signal::unix::{signal, SignalKind};
        let _guard = rt.enter();
        match (
            signal(SignalKind::terminate()),
            signal(SignalKind::interrupt()),
        ) {
            (Ok(term), Ok(int)) => (term, int),
            _ => {
                log(
                    "signals_unavailable",
                    json!({"note": "could not install SIGINT/SIGTERM handlers"}),
                );
                return;
            }
        }
    };
    std::thread::spawn(move || {
        #[cfg(unix)]
        let signal_name = rt.block_on(async move {
            let (mut term, mut int) = streams;
            tokio::select! {
                _ = term.recv() => "SIGTERM",
                _ = int.recv() => "SIGINT",
            }
        });
        #[cfg(not(unix))]
        let signal_name = {
            let _ = rt.block_on(tokio::signal::ctrl_c());
            "ctrl-c"
        };
        log(
            "stopping",
            json!({"signal": signal_name,
            "note": "finishing the check in progress (a sent transaction is followed to its end)"}),
        );
        stop.store(true, Ordering::SeqCst);
    });
}
