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
