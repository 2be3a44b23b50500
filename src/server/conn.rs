//! Connection limits below TLS: at most [`MAX_CONNECTIONS`] open at once, and a connection that
//! sends nothing for [`IDLE_TIMEOUT`] is closed (HTTP/1.1 keep-alive and HTTP/2 alike; hyper has
//! no idle timeout for HTTP/2). Reads only record their time; one timer per connection fires at
//! most once per [`IDLE_TIMEOUT`] and re-arms itself from the last read, so a busy connection
//! costs no timer work per read (a timer reset on every read, as `tokio-io-timeout` does, took
//! the runtime's timer lock twice per read and woke the connection once more per read).
//!
//! At the cap, a new connection does not lock everyone out until idle ones time out: the
//! connection that has been without a request in flight for longest (at least [`EVICT_AFTER`])
//! is closed to make room. Requests, not bytes, count as activity, so HTTP/2 PINGs or TCP
//! keep-alives do not keep a connection from eviction; a connection holding a slot must keep
//! requests in flight, each bounded by the request timeout.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use futures::task::AtomicWaker;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// Most connections served at once: 128. The API server keeps a handful per replica (Go's HTTP/2
/// client opens another only past a connection's [`super::H2_MAX_CONCURRENT_STREAMS`]); 128 leaves
/// room for many API servers and probes while bounding file descriptors and memory: a connection
/// costs tens of KiB idle, and up to its HTTP/2 window ([`super::H2_CONNECTION_WINDOW_BYTES`]) or
/// HTTP/1.1 read buffer ([`super::HTTP1_MAX_BUF_BYTES`]) plus a few KiB a request in flight under
/// a flood. It was 1,024 until s27: 1,000 flooding connections took the server to 286 to 345 MB
/// (docs/server.md, "Memory across connections").
pub const MAX_CONNECTIONS: usize = 128;

/// A connection from which nothing was read for this long is closed: 120 s, longer than the
/// 90 s after which the API server's client closes its idle connections itself
/// (`IdleConnTimeout`, k8s.io/apimachinery `SetTransportDefaults`), so the server never closes
/// a connection the API server is about to reuse.
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(120);

/// At the cap, only a connection without a request in flight for at least this long is closed
/// to make room: 1 s, enough for a new connection to finish its TLS handshake and send its first
/// request. Go's HTTP client (the API server's) retries a request on another connection when the
/// server closed an idle one before the request was written.
pub const EVICT_AFTER: Duration = Duration::from_secs(1);

/// How long a new connection at the cap waits for an evicted one to close.
const EVICT_WAIT: Duration = Duration::from_secs(1);

/// One connection's activity, shared by its stream and its service.
struct Activity {
    /// The registry's epoch, for [`Activity::idle_since_ms`].
    epoch: Instant,
    in_flight: AtomicUsize,
    /// Milliseconds since the registry's epoch when the connection was accepted or its last
    /// request ended.
    idle_since_ms: AtomicU64,
    evicted: AtomicBool,
    /// The task reading the connection, woken to notice an eviction.
    reader: AtomicWaker,
}

/// Milliseconds since `epoch`.
fn ms_since(epoch: Instant) -> u64 {
    u64::try_from(epoch.elapsed().as_millis()).unwrap_or(u64::MAX)
}

/// Every open connection's activity.
struct Registry {
    epoch: Instant,
    conns: Mutex<Vec<Weak<Activity>>>,
}

impl Registry {
    fn register(&self) -> Arc<Activity> {
        let activity = Arc::new(Activity {
            epoch: self.epoch,
            in_flight: AtomicUsize::new(0),
            idle_since_ms: AtomicU64::new(ms_since(self.epoch)),
            evicted: AtomicBool::new(false),
            reader: AtomicWaker::new(),
        });
        let mut conns = self.conns.lock().unwrap_or_else(|e| e.into_inner());
        if conns.len() >= conns.capacity() {
            conns.retain(|w| w.strong_count() > 0);
        }
        conns.push(Arc::downgrade(&activity));
        activity
    }

    /// Closes the connection idle for longest, if one has been idle for `min_idle`; true if one was.
    fn evict_one(&self, min_idle: Duration) -> bool {
        let now = ms_since(self.epoch);
        let min_idle = u64::try_from(min_idle.as_millis()).unwrap_or(u64::MAX);
        let mut conns = self.conns.lock().unwrap_or_else(|e| e.into_inner());
        conns.retain(|w| w.strong_count() > 0);
        let oldest = conns
            .iter()
            .filter_map(Weak::upgrade)
            .filter(|a| !a.evicted.load(Ordering::Acquire) && a.in_flight.load(Ordering::Acquire) == 0)
            .filter(|a| now.saturating_sub(a.idle_since_ms.load(Ordering::Acquire)) >= min_idle)
            .min_by_key(|a| a.idle_since_ms.load(Ordering::Acquire));
        match oldest {
            Some(a) => {
                a.evicted.store(true, Ordering::Release);
                a.reader.wake();
                true
            }
            None => false,
        }
    }
}

/// The acceptor: counts connections, wraps each in the idle timeout, and at the cap closes the
/// longest-idle one to make room.
#[derive(Clone)]
pub struct LimitAcceptor {
    slots: Arc<Semaphore>,
    idle: Duration,
    evict_after: Duration,
    registry: Arc<Registry>,
}

impl Default for LimitAcceptor {
    fn default() -> Self {
        LimitAcceptor::new(MAX_CONNECTIONS, IDLE_TIMEOUT, EVICT_AFTER)
    }
}

impl LimitAcceptor {
    /// At most `max` connections at once, each closed after `idle` without a byte read; at the
    /// cap, one without a request in flight for `evict_after` is closed for a new one.
    pub fn new(max: usize, idle: Duration, evict_after: Duration) -> LimitAcceptor {
        LimitAcceptor {
            slots: Arc::new(Semaphore::new(max)),
            idle,
            evict_after,
            registry: Arc::new(Registry { epoch: Instant::now(), conns: Mutex::new(Vec::new()) }),
        }
    }

    async fn admit(&self) -> io::Result<OwnedSemaphorePermit> {
        if let Ok(permit) = Arc::clone(&self.slots).try_acquire_owned() {
            return Ok(permit);
        }
        let refused = || io::Error::other("too many connections, none idle");
        if !self.registry.evict_one(self.evict_after) {
            return Err(refused());
        }
        match tokio::time::timeout(EVICT_WAIT, Arc::clone(&self.slots).acquire_owned()).await {
            Ok(Ok(permit)) => Ok(permit),
            _ => Err(refused()),
        }
    }
}

impl<S: Send + 'static> axum_server::accept::Accept<TcpStream, S> for LimitAcceptor {
    type Stream = LimitedStream;
    type Service = Tracked<S>;
    type Future = Pin<Box<dyn Future<Output = io::Result<(LimitedStream, Tracked<S>)>> + Send>>;

    fn accept(&self, stream: TcpStream, service: S) -> Self::Future {
        let this = self.clone();
        Box::pin(async move {
            let permit = this.admit().await?;
            let _ = stream.set_nodelay(true);
            let activity = this.registry.register();
            let tracked = Tracked { inner: service, activity: Arc::clone(&activity) };
            let now = tokio::time::Instant::now();
            let stream = LimitedStream {
                inner: stream,
                idle: this.idle,
                last_read: now,
                idle_timer: Box::pin(tokio::time::sleep_until(now + this.idle)),
                activity,
                _permit: permit,
            };
            Ok((stream, tracked))
        })
    }
}

/// An accepted connection: its idle timeout and its place among [`MAX_CONNECTIONS`], released
/// when it closes. Reads fail once it is evicted.
pub struct LimitedStream {
    inner: TcpStream,
    /// A read waiting this long after the last one fails with `TimedOut`.
    idle: Duration,
    /// When a read last completed (or the connection was accepted).
    last_read: tokio::time::Instant,
    /// Fires no earlier than `last_read + idle` as of when it was armed; re-armed from
    /// `last_read` when it fires early.
    idle_timer: Pin<Box<tokio::time::Sleep>>,
    activity: Arc<Activity>,
    _permit: OwnedSemaphorePermit,
}

impl AsyncRead for LimitedStream {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        self.activity.reader.register(cx.waker());
        if self.activity.evicted.load(Ordering::Acquire) {
            return Poll::Ready(Err(io::Error::new(
                io::ErrorKind::ConnectionAborted,
                "closed to make room for a new connection",
            )));
        }
        let this = &mut *self;
        match Pin::new(&mut this.inner).poll_read(cx, buf) {
            Poll::Pending => {}
            ready => {
                this.last_read = tokio::time::Instant::now();
                return ready;
            }
        }
        // Nothing to read: time out once `idle` has passed since the last read.
        while this.idle_timer.as_mut().poll(cx).is_ready() {
            let deadline = this.last_read + this.idle;
            if tokio::time::Instant::now() >= deadline {
                return Poll::Ready(Err(io::Error::new(io::ErrorKind::TimedOut, "idle connection")));
            }
            this.idle_timer.as_mut().reset(deadline);
        }
        Poll::Pending
    }
}

impl AsyncWrite for LimitedStream {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }
}

/// A connection's service: counts its requests in flight, so that a busy connection is never
/// the one evicted.
#[derive(Clone)]
pub struct Tracked<S> {
    inner: S,
    activity: Arc<Activity>,
}

/// Marks a request in flight until dropped (answered, failed or cancelled).
struct InFlight(Arc<Activity>);

impl InFlight {
    fn start(activity: &Arc<Activity>) -> InFlight {
        activity.in_flight.fetch_add(1, Ordering::AcqRel);
        InFlight(Arc::clone(activity))
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        if self.0.in_flight.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.0.idle_since_ms.store(ms_since(self.0.epoch), Ordering::Release);
        }
    }
}

impl<S, R> tower::Service<R> for Tracked<S>
where
    S: tower::Service<R>,
    S::Future: Send + 'static,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<S::Response, S::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: R) -> Self::Future {
        let guard = InFlight::start(&self.activity);
        let response = self.inner.call(request);
        Box::pin(async move {
            let out = response.await;
            drop(guard);
            out
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum_server::accept::Accept;
    use tokio::io::AsyncReadExt;
    use tokio::net::TcpListener;
    use tokio::sync::oneshot;
    use tower::Service;

    /// A service whose requests stay in flight until their sender is used or dropped.
    fn held()
    -> impl tower::Service<
        oneshot::Receiver<()>,
        Response = (),
        Error = std::convert::Infallible,
        Future: Send,
    > + Clone
    + Send
    + 'static {
        tower::service_fn(|rx: oneshot::Receiver<()>| async move {
            let _ = rx.await;
            Ok(())
        })
    }

    async fn connect(listener: &TcpListener) -> (TcpStream, TcpStream) {
        let client = TcpStream::connect(listener.local_addr().unwrap()).await.unwrap();
        let (server, _) = listener.accept().await.unwrap();
        (client, server)
    }

    #[tokio::test]
    async fn connections_are_capped_and_idle_ones_time_out() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        // Nothing is ever idle long enough to be evicted here.
        let acceptor = LimitAcceptor::new(2, Duration::from_millis(200), Duration::from_secs(3600));
        let mut clients = Vec::new();
        let mut accepted = Vec::new();
        for _ in 0..3 {
            let (client, server) = connect(&listener).await;
            clients.push(client);
            accepted.push(acceptor.accept(server, ()).await);
        }
        assert!(accepted[0].is_ok() && accepted[1].is_ok());
        assert!(accepted[2].is_err(), "the third connection is over the cap");
        // Nothing is sent: the read fails with a timeout instead of waiting forever.
        let (mut first, _) = accepted.remove(0).unwrap();
        let mut buf = [0u8; 8];
        let err = first.read(&mut buf).await.unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::TimedOut);
        // A closed connection gives its place back.
        drop(first);
        let (_client, server) = connect(&listener).await;
        assert!(acceptor.accept(server, ()).await.is_ok());
    }

    #[tokio::test]
    async fn at_the_cap_the_longest_idle_connection_makes_room_and_busy_ones_are_kept() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let acceptor = LimitAcceptor::new(2, Duration::from_secs(60), Duration::ZERO);
        let mut clients = Vec::new();
        let (client, server) = connect(&listener).await;
        clients.push(client);
        let (_a, mut a_service) = acceptor.accept(server, held()).await.unwrap();
        let (client, server) = connect(&listener).await;
        clients.push(client);
        let (mut b, _b_service) = acceptor.accept(server, held()).await.unwrap();
        // `a` is the older, but it has a request in flight: `b`, idle, is the one closed.
        let (a_done, rx) = oneshot::channel();
        let a_request = a_service.call(rx);
        let (client, server) = connect(&listener).await;
        clients.push(client);
        let c_acceptor = acceptor.clone();
        let c = tokio::spawn(async move { c_acceptor.accept(server, held()).await });
        let mut buf = [0u8; 8];
        let err = b.read(&mut buf).await.unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::ConnectionAborted);
        drop(b);
        let (_c, mut c_service) = c.await.unwrap().expect("the new connection took the evicted one's place");
        // Both connections busy: a new one is refused, none is closed.
        let (_c_done, rx) = oneshot::channel();
        let _c_request = c_service.call(rx);
        let (client, server) = connect(&listener).await;
        clients.push(client);
        assert!(acceptor.accept(server, held()).await.is_err());
        // Once `a`'s request is answered, `a` is idle and may make room again.
        a_done.send(()).unwrap();
        a_request.await.unwrap();
        assert!(acceptor.registry.evict_one(Duration::ZERO));
    }
}
