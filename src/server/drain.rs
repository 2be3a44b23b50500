//! Refusals answered whole: the unread rest of a refused request's body is read and discarded
//! after the answer, so that the client can finish its upload and then read the answer.
//!
//! When a handler answers without reading the whole request body (a 413 over the size limit, 405,
//! 404, 415, 501, 408) and drops it:
//! - over HTTP/2, the h2 crate ends the stream with RST_STREAM(NO_ERROR) after the answer (RFC 9113
//!   section 8.1: "the response is complete, stop sending the body"; h2 PR 634). Go's client, the
//!   API server's, reads such an answer (golang/go issue 49645), and so does hyper's since 1.0
//!   (hyper PR 3275), but curl 7.88 fails the transfer with error 92 ("Stream error in the HTTP/2
//!   framing layer") while it still uploads, and curl 8 with a send error (curl issue 22984): the
//!   answer and its JSON message are lost (s19 break-it pass);
//! - over HTTP/1.1, hyper closes the connection after the answer, under the client's upload: the
//!   client's next write fails, and the kernel answers data still arriving on a closed socket with
//!   a TCP reset, which can discard the answer before the client reads it (curl 7.88: "(55) Send
//!   failure: Broken pipe" in 1 of 40 chunked 1 MB uploads to a wrong path, hyper's client
//!   "IncompleteMessage").
//!
//! Reading the rest of the body instead lets the client end its upload as usual, within bounds
//! ([`DRAIN_MAX_BYTES`], [`DRAIN_TIMEOUT`]); past them the stream is reset, or the connection
//! closed, as before.

use std::pin::Pin;
use std::task::{Context, Poll, ready};
use std::time::Duration;

use axum::body::{Body, Bytes};
use http_body::{Body as _, Frame, SizeHint};

use super::{MAX_BODY_BYTES, REQUEST_TIMEOUT};

/// Most bytes of an unread request body read and discarded after its answer: 8 MiB, twice the
/// largest body accepted ([`MAX_BODY_BYTES`]). A body declared larger than what is left of it to
/// read is not drained at all (its stream is reset, or its connection closed, at once); one of
/// unstated length once this much more of it has arrived. Nothing drained is kept: the bound is on
/// the time and bandwidth spent on a body already refused.
pub const DRAIN_MAX_BYTES: u64 = 2 * MAX_BODY_BYTES as u64;

/// How long an unread request body is drained after its answer before its stream is reset (or its
/// HTTP/1.1 connection closed): 4 s (the request bound, [`REQUEST_TIMEOUT`]). A stalled client
/// holds its stream or connection no longer.
pub const DRAIN_TIMEOUT: Duration = REQUEST_TIMEOUT;

/// `request` with a body that, when dropped before its end, goes on being read (and discarded) in
/// a task of its own, within [`DRAIN_MAX_BYTES`] and [`DRAIN_TIMEOUT`] (HTTP/1.1 and HTTP/2 alike),
/// unless its [`NoDrain`] (in the request's extensions) was set.
pub fn on_drop(request: axum::extract::Request) -> axum::extract::Request {
    let skip = NoDrain::default();
    let (mut parts, body) = request.into_parts();
    parts.extensions.insert(skip.clone());
    axum::extract::Request::from_parts(
        parts,
        Body::new(DrainOnDrop { inner: Some(body), ended: false, skip }),
    )
}

/// In a request's extensions (put there by [`on_drop`]): set, the request's unread body is not
/// drained after its answer but dropped, so that HTTP/2 resets its stream after the answer
/// (RST_STREAM(NO_ERROR), RFC 9113 section 8.1) and the client stops sending it. For the 503 of a
/// request refused because too many bodies already wait ([`super::WAITING_BODY_BYTES`]): draining
/// it kept the client uploading a body already refused, at the expense of the bodies admitted
/// beside it on its connection, and under a flood (s24: 64 HTTP/2 connections of 64 streams of
/// 2.8 MB reviews) the data arriving for thousands of such streams was what the server held.
#[derive(Clone, Default)]
pub struct NoDrain(std::sync::Arc<std::sync::atomic::AtomicBool>);

impl NoDrain {
    /// The body is dropped, not drained, when the request is done with it.
    pub fn set(&self) {
        self.0.store(true, std::sync::atomic::Ordering::Release);
    }

    fn is_set(&self) -> bool {
        self.0.load(std::sync::atomic::Ordering::Acquire)
    }
}

/// A request body drained when dropped unfinished (see [`on_drop`]).
struct DrainOnDrop {
    /// `None` once handed to the draining task.
    inner: Option<Body>,
    /// The body returned its end (`None`): nothing is left to drain.
    ended: bool,
    /// Set: dropped, not drained.
    skip: NoDrain,
}

impl http_body::Body for DrainOnDrop {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        let this = self.get_mut();
        let Some(inner) = this.inner.as_mut() else { return Poll::Ready(None) };
        let frame = ready!(Pin::new(inner).poll_frame(cx));
        this.ended |= frame.is_none();
        Poll::Ready(frame)
    }

    fn is_end_stream(&self) -> bool {
        self.ended || self.inner.as_ref().is_none_or(http_body::Body::is_end_stream)
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.as_ref().map_or_else(|| SizeHint::with_exact(0), http_body::Body::size_hint)
    }
}

impl Drop for DrainOnDrop {
    fn drop(&mut self) {
        let Some(body) = self.inner.take() else { return };
        if self.ended || self.skip.is_set() || body.is_end_stream() || !worth_draining(&body.size_hint()) {
            return;
        }
        // Dropped on a runtime thread (the request's task); without a runtime, dropped as it is.
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(drain(body, DRAIN_MAX_BYTES, DRAIN_TIMEOUT));
        }
    }
}

/// Whether a body with this much left to read can be drained within [`DRAIN_MAX_BYTES`]: not one
/// declared larger (a client that announces 1 GB is reset at once, as before).
fn worth_draining(left: &SizeHint) -> bool {
    left.lower() <= DRAIN_MAX_BYTES
}

/// Reads `body` to its end and discards it, giving up after more than `max` bytes or `within`
/// (the body is then dropped: its stream reset, its connection closed); returns the bytes read.
async fn drain(mut body: Body, max: u64, within: Duration) -> u64 {
    let mut read = 0u64;
    let _ = tokio::time::timeout(within, async {
        while let Some(Ok(frame)) = std::future::poll_fn(|cx| Pin::new(&mut body).poll_frame(cx)).await {
            read += frame.data_ref().map_or(0, |d| d.len() as u64);
            if read > max {
                break;
            }
        }
    })
    .await;
    read
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_body_declared_larger_than_the_bound_is_not_drained() {
        assert!(worth_draining(&SizeHint::with_exact(DRAIN_MAX_BYTES)));
        assert!(!worth_draining(&SizeHint::with_exact(DRAIN_MAX_BYTES + 1)));
        // Unstated length: drained up to the bound.
        assert!(worth_draining(&SizeHint::default()));
    }

    /// On tokio's paused clock, so the deadline is measured exactly, whatever the machine's load.
    #[tokio::test(start_paused = true)]
    async fn draining_stops_at_the_byte_bound_and_the_deadline() {
        let chunks =
            || futures::stream::iter((0..10).map(|_| Ok::<_, std::io::Error>(Bytes::from(vec![0u8; 1000]))));
        // To the end when it fits.
        assert_eq!(drain(Body::from_stream(chunks()), 10_000, Duration::from_secs(5)).await, 10_000);
        // Past the bound: stops at the first chunk over it.
        assert_eq!(drain(Body::from_stream(chunks()), 2_500, Duration::from_secs(5)).await, 3_000);
        // A body that never ends: given up at the deadline.
        let stalled = futures::stream::pending::<Result<Bytes, std::io::Error>>();
        let started = tokio::time::Instant::now();
        assert_eq!(drain(Body::from_stream(stalled), 10_000, Duration::from_millis(100)).await, 0);
        assert_eq!(started.elapsed(), Duration::from_millis(100));
    }

    #[tokio::test]
    async fn a_body_dropped_before_its_end_is_read_to_its_end() {
        let (tx, rx) = tokio::sync::mpsc::channel::<Result<Bytes, std::io::Error>>(1);
        let request = on_drop(axum::extract::Request::new(Body::from_stream(tokio_stream_of(rx))));
        drop(request);
        // Someone reads what is sent after the drop: the sender never blocks for long.
        for _ in 0..5 {
            tokio::time::timeout(Duration::from_secs(2), tx.send(Ok(Bytes::from_static(b"x"))))
                .await
                .expect("the dropped body is drained")
                .unwrap();
        }
    }

    fn tokio_stream_of(
        mut rx: tokio::sync::mpsc::Receiver<Result<Bytes, std::io::Error>>,
    ) -> impl futures::Stream<Item = Result<Bytes, std::io::Error>> {
        futures::stream::poll_fn(move |cx| rx.poll_recv(cx))
    }
}
