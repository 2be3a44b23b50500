//! Clients at the wire level for the server tests: a raw TLS stream (HTTP/1.1 written by hand) and
//! an HTTP/2 connection frame by frame (the h2 crate), each trusting only the test's CA.

use std::net::SocketAddr;

/// A TLS client configuration trusting only the certificates of `ca_pem`.
fn trusting(ca_pem: &str) -> rustls::ClientConfig {
    use rustls::pki_types::pem::PemObject;
    let mut roots = rustls::RootCertStore::empty();
    for cert in rustls::pki_types::CertificateDer::pem_slice_iter(ca_pem.as_bytes()) {
        roots.add(cert.unwrap()).unwrap();
    }
    rustls::ClientConfig::builder_with_provider(rustls::crypto::ring::default_provider().into())
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth()
}

/// A raw TLS connection to the server (no HTTP client in between), trusting only `ca_pem`; reads
/// time out after 10 s.
pub fn raw_tls(
    addr: SocketAddr,
    ca_pem: &str,
) -> rustls::StreamOwned<rustls::ClientConnection, std::net::TcpStream> {
    let name = rustls::pki_types::ServerName::try_from("localhost").unwrap();
    let conn = rustls::ClientConnection::new(std::sync::Arc::new(trusting(ca_pem)), name).unwrap();
    let tcp = std::net::TcpStream::connect(addr).unwrap();
    tcp.set_read_timeout(Some(std::time::Duration::from_secs(10))).unwrap();
    rustls::StreamOwned::new(conn, tcp)
}

/// An HTTP/2 connection (ALPN `h2`) to the server over TLS, trusting only `ca_pem`, driven in the
/// background.
pub async fn h2_connection(addr: SocketAddr, ca_pem: &str) -> h2::client::SendRequest<axum::body::Bytes> {
    let mut config = trusting(ca_pem);
    config.alpn_protocols = vec![b"h2".to_vec()];
    let tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    let name = rustls::pki_types::ServerName::try_from("localhost").unwrap();
    let tls = tokio_rustls::TlsConnector::from(std::sync::Arc::new(config)).connect(name, tcp).await.unwrap();
    let (client, connection) = h2::client::handshake(tls).await.unwrap();
    tokio::spawn(connection);
    client
}

/// The status and body of an HTTP/2 answer, read whole.
pub async fn answer_of(response: h2::client::ResponseFuture) -> (u16, serde_json::Value) {
    let response = response.await.unwrap();
    let status = response.status().as_u16();
    let mut body = response.into_body();
    let mut answer = Vec::new();
    while let Some(chunk) = body.data().await {
        let chunk = chunk.unwrap();
        let _ = body.flow_control().release_capacity(chunk.len());
        answer.extend_from_slice(&chunk);
    }
    (
        status,
        serde_json::from_slice(&answer).unwrap_or_else(|_| panic!("{}", String::from_utf8_lossy(&answer))),
    )
}

/// Opens a `POST /validate` stream declaring `declared` bytes of body, sending none yet.
pub async fn open_post(
    client: &mut h2::client::SendRequest<axum::body::Bytes>,
    declared: usize,
) -> (h2::client::ResponseFuture, h2::SendStream<axum::body::Bytes>) {
    let request = http::Request::post("https://localhost/validate")
        .header("content-type", "application/json")
        .header("content-length", declared)
        .body(())
        .unwrap();
    *client = client.clone().ready().await.unwrap();
    client.send_request(request, false).unwrap()
}

/// Sends `body` on `send` as a well-behaved client does, within the flow-control window the
/// server grants, and ends the stream; an error when the stream is reset or closed before.
pub async fn upload_within_the_window(
    send: &mut h2::SendStream<axum::body::Bytes>,
    body: &[u8],
) -> Result<(), String> {
    let mut rest = body;
    while !rest.is_empty() {
        send.reserve_capacity(rest.len().min(64 * 1024));
        let granted = match futures::future::poll_fn(|cx| send.poll_capacity(cx)).await {
            Some(Ok(n)) => n,
            Some(Err(e)) => return Err(format!("{e} with {} bytes unsent", rest.len())),
            None => return Err(format!("stream closed with {} bytes unsent", rest.len())),
        };
        let n = granted.min(rest.len());
        if n > 0 {
            // (A reset that arrives between the grant and the send fails the send: the same
            // refusal, seen a step later; under load it does.)
            send.send_data(axum::body::Bytes::copy_from_slice(&rest[..n]), n == rest.len())
                .map_err(|e| format!("{e} with {} bytes unsent", rest.len()))?;
            rest = &rest[n..];
        }
    }
    Ok(())
}

/// A TCP proxy on loopback to `target` that delays every chunk it forwards by `one_way`, in both
/// directions, without limiting bandwidth: a round trip through it takes twice `one_way` more
/// (`tc netem` is not available in every kernel). Serves until the test's runtime ends.
pub async fn latency_proxy(target: SocketAddr, one_way: std::time::Duration) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((client, _)) = listener.accept().await {
            let Ok(server) = tokio::net::TcpStream::connect(target).await else { continue };
            let _ = (client.set_nodelay(true), server.set_nodelay(true));
            let (client_read, client_write) = client.into_split();
            let (server_read, server_write) = server.into_split();
            tokio::spawn(delayed_pipe(client_read, server_write, one_way));
            tokio::spawn(delayed_pipe(server_read, client_write, one_way));
        }
    });
    addr
}

/// Forwards what `from` reads to `to`, each chunk `delay` after it was read, in order.
async fn delayed_pipe(
    mut from: tokio::net::tcp::OwnedReadHalf,
    mut to: tokio::net::tcp::OwnedWriteHalf,
    delay: std::time::Duration,
) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<(tokio::time::Instant, Vec<u8>)>();
    let writer = tokio::spawn(async move {
        while let Some((due, chunk)) = rx.recv().await {
            tokio::time::sleep_until(due).await;
            if to.write_all(&chunk).await.is_err() {
                return;
            }
        }
        let _ = to.shutdown().await;
    });
    let mut buf = vec![0u8; 64 * 1024];
    while let Ok(n) = from.read(&mut buf).await {
        if n == 0 || tx.send((tokio::time::Instant::now() + delay, buf[..n].to_vec())).is_err() {
            break;
        }
    }
    drop(tx);
    let _ = writer.await;
}
