//! Where the log lines go: stderr, written by a thread of their own, never by the thread that
//! answers a review.
//!
//! Until s26 each line was written to stderr by the thread that logged it. A log reader that
//! stops reading (a stalled log shipper; stderr a pipe or a FIFO whose 64 KiB filled up) then
//! blocked that write, and with it the async worker making it: every review hung while `/healthz`,
//! which logs nothing, stayed 200 (s26 break-it pass, `repro_logblock.sh`; under
//! `failurePolicy: Ignore` each hung review is admitted unchecked once the API server gives up).
//! Lines now go through a bounded queue ([`LOG_QUEUE_LINES`]) to a writer thread
//! (tracing-appender's `non_blocking`, lossy): when the queue is full, a line is dropped and
//! counted ([`dropped_lines`], the metric `probegate_log_lines_dropped_total`, and a WARN line
//! `log lines dropped` once the writer moves again, [`spawn_dropped_lines_report`]), and the
//! review goes on. What a line holds is unchanged: names, rule ids and sizes, never an object's
//! content (env values can hold secrets).

use std::sync::OnceLock;
use std::time::Duration;

use tracing_appender::non_blocking::{ErrorCounter, NonBlocking, NonBlockingBuilder, WorkerGuard};

/// Most log lines waiting for the writer thread: 4,096. A decision line is about 300 to 500
/// bytes, so a full queue holds about 2 MB; it covers a log reader's pause of seconds under a
/// burst of denials. tracing-appender's default, 128,000 lines, could hold some 60 MB.
pub const LOG_QUEUE_LINES: usize = 4096;

/// How often [`spawn_dropped_lines_report`] looks for dropped lines: 60 s.
pub const DROPPED_LINES_REPORT_EVERY: Duration = Duration::from_secs(60);

/// The counter of lines dropped by the writer installed with [`non_blocking_stderr`].
static DROPPED: OnceLock<ErrorCounter> = OnceLock::new();

/// Keeps the writer thread for the process's life; when dropped (at exit) it waits up to about
/// 1 s for the lines queued to be written, unless lines were dropped (the reader stalled): then
/// it does not wait.
pub struct LogGuard {
    guard: Option<WorkerGuard>,
}

impl Drop for LogGuard {
    fn drop(&mut self) {
        if dropped_lines() > 0 {
            // tracing-appender's guard waits 0.1 s to queue its shutdown and then prints a
            // complaint to stdout, which may be the same stalled pipe: leave the thread be.
            std::mem::forget(self.guard.take());
        }
    }
}

/// A writer of log lines to stderr through a thread of its own (see the module's
/// documentation), and the guard that keeps it; the first call's counter is what
/// [`dropped_lines`] reads.
pub fn non_blocking_stderr() -> (NonBlocking, LogGuard) {
    let (writer, guard) = NonBlockingBuilder::default()
        .lossy(true)
        .buffered_lines_limit(LOG_QUEUE_LINES)
        .thread_name("probegate-log")
        .finish(std::io::stderr());
    let _ = DROPPED.set(writer.error_counter());
    (writer, LogGuard { guard: Some(guard) })
}

/// Log lines dropped so far because the writer thread's queue was full (0 when no
/// [`non_blocking_stderr`] writer was installed: a server started in a test writes its lines
/// where its test says).
pub fn dropped_lines() -> u64 {
    DROPPED.get().map_or(0, |c| c.dropped_lines() as u64)
}

/// Every [`DROPPED_LINES_REPORT_EVERY`], logs how many lines were dropped since the last look, if
/// any (a WARN line `log lines dropped`, `dropped=N`): queued like every line, it is written once
/// the reader reads again.
pub fn spawn_dropped_lines_report() {
    tokio::spawn(async move {
        let mut reported = dropped_lines();
        let mut tick = tokio::time::interval(DROPPED_LINES_REPORT_EVERY);
        tick.tick().await;
        loop {
            tick.tick().await;
            let now = dropped_lines();
            if now > reported {
                tracing::warn!(
                    dropped = now - reported,
                    total = now,
                    "log lines dropped: stderr was not read fast enough (a stalled or slow log reader); reviews were answered meanwhile"
                );
                reported = now;
            }
        }
    });
}
