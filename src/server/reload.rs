//! Policy hot reload: reload the policy file when its content changes (watched as
//! [`super::watch`] describes). The new policy is validated first; an invalid one is refused and
//! the last good policy stays in force.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::{AppState, LoadedPolicy};

/// Starts watching `path` (see [`super::watch`]); the returned watcher must be kept alive.
///
/// # Errors
/// When the directory cannot be watched.
pub fn spawn(path: PathBuf, state: Arc<AppState>) -> notify::Result<notify::RecommendedWatcher> {
    let (watcher, mut ticks) = super::watch::watch(&[&path])?;
    tokio::spawn(async move {
        let mut last_failed: Option<String> = None;
        while ticks.next().await {
            reload_if_changed(&path, &state, &mut last_failed).await;
        }
    });
    Ok(watcher)
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
