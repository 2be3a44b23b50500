//! Watching files that are replaced under a running server (a ConfigMap or Secret volume swaps a
//! `..data` symlink, so the file itself is never written in place): watch the files' directories,
//! debounce bursts of events, and poll every [`POLL_INTERVAL`] as a backstop (events can be missed
//! when a whole directory is swapped). Used by the policy and the certificate reloaders.

use std::path::{Path, PathBuf};
use std::time::Duration;

use notify::{EventKind, RecursiveMode, Watcher};

/// How often the files are re-read regardless of file events.
pub const POLL_INTERVAL: Duration = Duration::from_secs(2);

/// Quiet time after an event before reporting it, so that a burst of writes is one change.
pub const DEBOUNCE: Duration = Duration::from_millis(150);

/// Ticks for a set of watched files: one after each debounced burst of events, and one every
/// [`POLL_INTERVAL`]. Keep the returned watcher alive as long as the ticks are used.
pub struct Ticks {
    events: tokio::sync::mpsc::Receiver<()>,
    poll: tokio::time::Interval,
}

impl Ticks {
    /// Waits for the next tick; `false` once the watcher is gone.
    pub async fn next(&mut self) -> bool {
        tokio::select! {
            got = self.events.recv() => {
                if got.is_none() {
                    return false;
                }
                tokio::time::sleep(DEBOUNCE).await;
                while self.events.try_recv().is_ok() {}
                true
            }
            _ = self.poll.tick() => true,
        }
    }
}

/// Watches the directories of `files` (access events ignored).
///
/// # Errors
/// When a directory cannot be watched.
pub fn watch(files: &[&Path]) -> notify::Result<(notify::RecommendedWatcher, Ticks)> {
    let (tx, events) = tokio::sync::mpsc::channel::<()>(16);
    let mut watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
        if let Ok(e) = event
            && !matches!(e.kind, EventKind::Access(_))
        {
            let _ = tx.try_send(());
        }
    })?;
    let mut dirs: Vec<PathBuf> = files
        .iter()
        .map(|p| p.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new(".")).to_path_buf())
        .collect();
    dirs.dedup();
    for dir in &dirs {
        watcher.watch(dir, RecursiveMode::NonRecursive)?;
    }
    Ok((watcher, Ticks { events, poll: tokio::time::interval(POLL_INTERVAL) }))
}

/// Reads a file that must be a regular file (after symlinks): opening a FIFO or a device would
/// block the reader.
///
/// # Errors
/// When the path is not a regular file or cannot be read.
pub async fn read_regular(path: &Path) -> std::io::Result<Vec<u8>> {
    let meta = tokio::fs::metadata(path).await?;
    if !meta.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    tokio::fs::read(path).await
}
