//! Policy hot reload: watch the policy file's directory (a ConfigMap volume updates by swapping the
//! `..data` symlink, so the file itself is never written in place) and reload when its content
//! changes. The new policy is validated first; an invalid one is refused and the last good policy
//! stays in force. A poll every [`POLL_INTERVAL`] backs up the file watcher (events can be missed
//! when a whole directory is swapped).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use notify::{EventKind, RecursiveMode, Watcher};

use super::{AppState, LoadedPolicy};

/// How often the file is re-read regardless of events.
pub const POLL_INTERVAL: Duration = Duration::from_secs(2);

/// Quiet time after an event before reloading, so that a burst of writes reloads once.
pub const DEBOUNCE: Duration = Duration::from_millis(150);

/// Starts watching `path`; the returned watcher must be kept alive.
///
/// # Errors
/// When the directory cannot be watched.
pub fn spawn(path: PathBuf, state: Arc<AppState>) -> notify::Result<notify::RecommendedWatcher> {
    let (tx, mut rx) = tokio::sync::mpsc::channel::<()>(16);
    let mut watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
        if let Ok(e) = event
            && !matches!(e.kind, EventKind::Access(_))
        {
            let _ = tx.try_send(());
        }
    })?;
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new(".")).to_path_buf();
    watcher.watch(&dir, RecursiveMode::NonRecursive)?;
    tokio::spawn(async move {
        let mut last_failed: Option<String> = None;
        let mut poll = tokio::time::interval(POLL_INTERVAL);
        loop {
            tokio::select! {
                got = rx.recv() => {
                    if got.is_none() { break; }
                    tokio::time::sleep(DEBOUNCE).await;
                    while rx.try_recv().is_ok() {}
                }
                _ = poll.tick() => {}
            }
            reload_if_changed(&path, &state, &mut last_failed).await;
        }
    });
    Ok(watcher)
}

/// Re-reads the file; swaps the policy in when its content changed and it is valid.
pub async fn reload_if_changed(path: &Path, state: &AppState, last_failed: &mut Option<String>) {
    // Only regular files (after symlinks): opening a FIFO or a device would block.
    match tokio::fs::metadata(path).await {
        Ok(m) if m.is_file() => {}
        Ok(_) => {
            let key = "not a regular file".to_string();
            if last_failed.as_deref() != Some(&key) {
                tracing::error!(file = %path.display(), "the policy path is not a regular file; keeping the policy in force");
                state.metrics.reload(false);
                *last_failed = Some(key);
            }
            return;
        }
        Err(_) => {} // reported by the read below
    }
    let text = match tokio::fs::read_to_string(path).await {
        Ok(t) => t,
        Err(e) => {
            let key = format!("read:{e}");
            if last_failed.as_deref() != Some(&key) {
                tracing::error!(file = %path.display(), error = %e, "cannot read the policy file; keeping the policy in force");
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
    match crate::policy::parse(&text, &source) {
        Ok(policy) => {
            state.install(LoadedPolicy { policy, hash, source });
            state.metrics.reload(true);
            *last_failed = None;
        }
        Err(e) => {
            tracing::error!(error = %e, "refused an invalid policy; keeping the policy in force");
            state.metrics.reload(false);
            *last_failed = Some(hash);
        }
    }
}
