//! Connection limits below TLS: at most [`MAX_CONNECTIONS`] open at once, and a connection that
//! sends nothing for [`IDLE_TIMEOUT`] is closed (HTTP/1.1 keep-alive and HTTP/2 alike; hyper has
//! no idle timeout for HTTP/2). The read timeout comes from `tokio-io-timeout`.

use std::future::Ready;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_io_timeout::TimeoutStream;

/// Most connections served at once; more are closed as soon as they are accepted. The API
/// server keeps a handful per replica; 1,024 leaves room for many API servers and probes while
/// bounding file descriptors and memory (an idle HTTP/2 connection costs tens of KiB).
pub const MAX_CONNECTIONS: usize = 1024;

/// A connection from which nothing was read for this long is closed: 120 s, longer than the
/// 90 s after which the API server's client closes its idle connections itself
/// (`IdleConnTimeout`, k8s.io/apimachinery `SetTransportDefaults`), so the server never closes
/// a connection the API server is about to reuse.
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(120);

/// The acceptor: counts connections and wraps each in the idle timeout.
#[derive(Clone)]
pub struct LimitAcceptor {
    slots: Arc<Semaphore>,
    idle: Duration,
}

impl Default for LimitAcceptor {
    fn default() -> Self {
        LimitAcceptor::new(MAX_CONNECTIONS, IDLE_TIMEOUT)
    }
}

impl LimitAcceptor {
    /// At most `max` connections at once, each closed after `idle` without a byte read.
    pub fn new(max: usize, idle: Duration) -> LimitAcceptor {
        LimitAcceptor { slots: Arc::new(Semaphore::new(max)), idle }
    }
}

impl<S> axum_server::accept::Accept<TcpStream, S> for LimitAcceptor {
    type Stream = LimitedStream;
    type Service = S;
    type Future = Ready<io::Result<(LimitedStream, S)>>;

    fn accept(&self, stream: TcpStream, service: S) -> Self::Future {
        let Ok(permit) = Arc::clone(&self.slots).try_acquire_owned() else {
            return std::future::ready(Err(io::Error::other("too many connections")));
        };
        let _ = stream.set_nodelay(true);
        let mut timed = TimeoutStream::new(stream);
        timed.set_read_timeout(Some(self.idle));
        std::future::ready(Ok((LimitedStream { inner: Box::pin(timed), _permit: permit }, service)))
    }
}

/// An accepted connection: its idle timeout and its place among [`MAX_CONNECTIONS`], released
/// when it closes.
pub struct LimitedStream {
    inner: Pin<Box<TimeoutStream<TcpStream>>>,
    _permit: OwnedSemaphorePermit,
}

impl AsyncRead for LimitedStream {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        self.inner.as_mut().poll_read(cx, buf)
    }
}

impl AsyncWrite for LimitedStream {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        self.inner.as_mut().poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.inner.as_mut().poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.inner.as_mut().poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        self.inner.as_mut().poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum_server::accept::Accept;
    use tokio::io::AsyncReadExt;

    #[tokio::test]
    async fn connections_are_capped_and_idle_ones_time_out() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let acceptor = LimitAcceptor::new(2, Duration::from_millis(200));
        let mut clients = Vec::new();
        let mut accepted = Vec::new();
        for _ in 0..3 {
            clients.push(TcpStream::connect(addr).await.unwrap());
            let (stream, _) = listener.accept().await.unwrap();
            accepted.push(acceptor.accept(stream, ()).await);
        }
        assert!(accepted[0].is_ok() && accepted[1].is_ok());
        assert!(accepted[2].is_err(), "the third connection is over the cap");
        // Nothing is sent: the read fails with a timeout instead of waiting forever.
        let (mut first, ()) = accepted.remove(0).unwrap();
        let mut buf = [0u8; 8];
        let err = first.read(&mut buf).await.unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::TimedOut);
        // A closed connection gives its place back.
        drop(first);
        let _client = TcpStream::connect(addr).await.unwrap();
        let (stream, _) = listener.accept().await.unwrap();
        assert!(acceptor.accept(stream, ()).await.is_ok());
    }
}
