//! Giving memory back to the system after a flood (glibc's allocator); in the binary, as the
//! library forbids `unsafe`.
//!
//! glibc keeps what a program frees for its next allocations: after a flood of connections the
//! server's resident size stayed at its peak (s26 break-it pass: 304 to 344 MB 30 s after the
//! clients of a 1,000-connection HTTP/2 flood had left, against deploy/'s 128 MiB limit), in
//! per-thread arenas (glibc makes up to 8 a core) and as free pages inside the heaps. Two
//! settings, measured in docs/server.md ("Memory across connections"):
//! - [`limit_arenas`]: at most [`MALLOC_ARENAS`] arenas (`mallopt(M_ARENA_MAX)`, what
//!   `MALLOC_ARENA_MAX` sets), so that what one flood freed is reused by the next instead of
//!   sitting in an arena of its own;
//! - [`spawn_trim`]: every [`TRIM_EVERY`], `malloc_trim(0)` returns the free pages of every arena
//!   to the system.
//!
//! Elsewhere than Linux with glibc both do nothing.

use std::time::Duration;

/// Most glibc malloc arenas: 2 (glibc's default is 8 a core).
pub const MALLOC_ARENAS: i32 = 2;

/// How often the allocator's free pages go back to the system: 10 s.
pub const TRIM_EVERY: Duration = Duration::from_secs(10);

/// Sets glibc's arena count to [`MALLOC_ARENAS`] unless `MALLOC_ARENA_MAX` is set (the
/// operator's choice stands). Call before any thread is started.
pub fn limit_arenas() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    if std::env::var_os("MALLOC_ARENA_MAX").is_none() {
        // SAFETY: mallopt only sets an allocator parameter; no other thread exists yet.
        unsafe {
            libc::mallopt(libc::M_ARENA_MAX, MALLOC_ARENAS);
        }
    }
}

/// Gives the allocator's free pages back to the system every [`TRIM_EVERY`], from a thread of
/// its own (a trim walks every arena: a few milliseconds after a flood, nothing when idle).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub fn spawn_trim() {
    let _ = std::thread::Builder::new().name("probegate-trim".into()).spawn(|| {
        loop {
            std::thread::sleep(TRIM_EVERY);
            // SAFETY: malloc_trim only releases memory the allocator holds free.
            unsafe {
                libc::malloc_trim(0);
            }
        }
    });
}

/// Elsewhere than glibc: nothing to trim.
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub fn spawn_trim() {}
