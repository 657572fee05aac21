//! How every long-running command (`watch`, `localnet`, `serve`) stops: SIGINT or SIGTERM raises one
//! flag, and the command finishes what it is doing before it returns. The handlers are installed before a
//! command starts its work, so a signal at any later moment stops it cleanly instead of killing the
//! process mid-write.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

/// The stop flag SIGINT and SIGTERM raise, and which of them did.
#[derive(Clone)]
pub struct Stop {
    flag: Arc<AtomicBool>,
    signal: Arc<OnceLock<&'static str>>,
}

impl Stop {
    /// The flag itself, for loops that poll it.
    pub fn flag(&self) -> Arc<AtomicBool> {
        self.flag.clone()
    }

    /// Blocks until a signal arrives; returns its name.
    pub fn wait(&self) -> &'static str {
        while !self.flag.load(Ordering::SeqCst) {
            std::thread::sleep(Duration::from_millis(50));
        }
        self.signal.get().copied().unwrap_or("signal")
    }

    /// Waits, without blocking an async worker, until a signal arrives.
    pub async fn stopped(&self) {
        while !self.flag.load(Ordering::SeqCst) {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

/// The signal handlers could not be installed.
#[derive(Debug, thiserror::Error)]
#[error("cannot install the {handlers} handler{plural}: {source}", plural = if handlers.contains('/') { "s" } else { "" })]
pub struct InstallError {
    /// Which handlers: `SIGINT/SIGTERM`, `SIGTERM` or `SIGINT`.
    handlers: &'static str,
    /// Why.
    source: std::io::Error,
}

/// Installs the SIGINT and SIGTERM handlers; `on_signal` runs once with the signal's name, before the
/// flag is raised (a command logs there what it will finish before stopping).
pub fn install(
    on_signal: impl FnOnce(&'static str) + Send + 'static,
) -> Result<Stop, InstallError> {
    let failed = |handlers| move |source| InstallError { handlers, source };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(failed("SIGINT/SIGTERM"))?;
    #[cfg(unix)]
    let streams = {
        use tokio::signal::unix::{signal, SignalKind};
        let _guard = runtime.enter();
        let term = signal(SignalKind::terminate()).map_err(failed("SIGTERM"))?;
        let int = signal(SignalKind::interrupt()).map_err(failed("SIGINT"))?;
        (term, int)
    };
    let stop = Stop {
        flag: Arc::new(AtomicBool::new(false)),
        signal: Arc::new(OnceLock::new()),
    };
    let raised = stop.clone();
    std::thread::spawn(move || {
        #[cfg(unix)]
        let name = runtime.block_on(async move {
            let (mut term, mut int) = streams;
            tokio::select! {
                _ = term.recv() => "SIGTERM",
                _ = int.recv() => "SIGINT",
            }
        });
        #[cfg(not(unix))]
        let name = {
            let _ = runtime.block_on(tokio::signal::ctrl_c());
            "ctrl-c"
        };
        on_signal(name);
        let _ = raised.signal.set(name);
        raised.flag.store(true, Ordering::SeqCst);
    });
    Ok(stop)
}
