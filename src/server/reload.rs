//! Policy hot reload: reload the policy file when its content changes (watched as
//! [`super::watch`] describes). The new policy is validated first; an invalid one is refused and
//! the last good policy stays in force.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::{AppState, LoadedPolicy};

/// Starts watching `path` (see [`super::watch`]); the returned watcher must be kept alive. A
/// `SIGHUP` also makes it read the file again (the usual "reload your configuration" signal; s26
/// break-it pass: with no handler the signal's default action ended the server at once, exit 129,
/// without a log line or a drain).
///
/// # Errors
/// When the directory cannot be watched.
pub fn spawn(path: PathBuf, state: Arc<AppState>) -> notify::Result<notify::RecommendedWatcher> {
    let (watcher, mut ticks) = super::watch::watch(&[&path])?;
    let mut hangups = hangups();
    tokio::spawn(async move {
        let mut last_failed: Option<String> = None;
        loop {
            tokio::select! {
                tick = ticks.next() => {
                    if !tick {
                        break;
                    }
                }
                Some(()) = next_hangup(&mut hangups) => {
                    tracing::info!(file = %super::log_field(&path.display().to_string()), "SIGHUP: reading the policy file again");
                    // A SIGHUP asks for a fresh read even of a text refused before.
                    last_failed = None;
                }
            }
            reload_if_changed(&path, &state, &mut last_failed).await;
        }
    });
    Ok(watcher)
}

/// `SIGHUP`s, where the platform has them (`None`: none will come).
#[cfg(unix)]
type Hangups = Option<tokio::signal::unix::Signal>;
#[cfg(not(unix))]
type Hangups = Option<()>;

/// Starts listening for `SIGHUP` (replacing its default action, which ends the process).
fn hangups() -> Hangups {
    #[cfg(unix)]
    {
        tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup()).ok()
    }
    #[cfg(not(unix))]
    {
        None
    }
}

/// The next `SIGHUP`; never resolves where there are none.
async fn next_hangup(hangups: &mut Hangups) -> Option<()> {
    #[cfg(unix)]
    if let Some(signal) = hangups {
        return signal.recv().await;
    }
    let _ = hangups;
    std::future::pending().await
}

/// Without a policy file (the embedded default) there is nothing to read again: a `SIGHUP` is
/// logged and the server goes on (its default action would end the process).
pub fn ignore_hangups() {
    let mut hangups = hangups();
    tokio::spawn(async move {
        while next_hangup(&mut hangups).await.is_some() {
            tracing::info!("SIGHUP: no policy file to read again (the embedded default policy is in force)");
        }
    });
}

/// Re-reads the file; swaps the policy in when its content changed and it is valid.
pub async fn reload_if_changed(path: &Path, state: &AppState, last_failed: &mut Option<String>) {
    let read = super::watch::read_regular(path)
        .await
        .and_then(|bytes| crate::policy::policy_text(bytes).map_err(std::io::Error::other));
    let text = match read {
        Ok(t) => t,
        Err(e) => {
            let key = format!("read:{e}");
            if last_failed.as_deref() != Some(&key) {
                tracing::error!(file = %super::log_field(&path.display().to_string()), error = %super::log_safe(&e.to_string()), "cannot read the policy file; keeping the policy in force");
                state.metrics.reload(false);
                *last_failed = Some(key);
            }
            return;
        }
    };
    let hash = super::policy_hash(&text);
    if hash == state.current().hash || last_failed.as_deref() == Some(&hash) {
        return;
    }
    let source = path.display().to_string();
    match crate::policy::parse_all(&text, &source) {
        Ok(policy) => {
            state.install(LoadedPolicy { policy, hash, source });
            state.metrics.reload(true);
            *last_failed = None;
        }
        Err(errors) => {
            // Every error, one line each with its file, line and field, as `policy validate` prints them.
            for (n, e) in errors.iter().enumerate() {
                tracing::error!(error = %super::log_safe(&e.to_string()), "refused an invalid policy ({} of {} errors); keeping the policy in force", n + 1, errors.len());
            }
            state.metrics.reload(false);
            *last_failed = Some(hash);
        }
    }
}
