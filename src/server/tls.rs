//! The serving certificate: loaded from PEM files, or generated for local use.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context as _;
use axum_server::tls_rustls::RustlsConfig;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

/// A PEM certificate chain and its private key.
#[derive(Clone)]
pub struct TlsMaterial {
    /// PEM certificate chain, leaf first.
    pub cert_pem: Vec<u8>,
    /// PEM private key (PKCS#8, PKCS#1 or SEC1).
    pub key_pem: Vec<u8>,
}

impl std::fmt::Debug for TlsMaterial {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never print the key.
        f.debug_struct("TlsMaterial").field("cert_pem_bytes", &self.cert_pem.len()).finish_non_exhaustive()
    }
}

impl TlsMaterial {
    /// Reads a certificate and key from PEM files and checks that they parse and match.
    ///
    /// # Errors
    /// Names the file that cannot be read or holds no usable PEM.
    pub fn from_files(cert: &Path, key: &Path) -> anyhow::Result<TlsMaterial> {
        let cert_pem = std::fs::read(cert)
            .with_context(|| format!("{}: cannot read the certificate", cert.display()))?;
        let key_pem =
            std::fs::read(key).with_context(|| format!("{}: cannot read the private key", key.display()))?;
        parse_certs(&cert_pem).with_context(|| format!("{}: not a PEM certificate", cert.display()))?;
        PrivateKeyDer::from_pem_slice(&key_pem)
            .map_err(|e| anyhow::anyhow!("{}: not a PEM private key: {e}", key.display()))?;
        let material = TlsMaterial { cert_pem, key_pem };
        server_config(&material).with_context(|| {
            format!("{} and {}: unusable certificate and key", cert.display(), key.display())
        })?;
        Ok(material)
    }
}

/// A CA and a serving certificate signed by it, made at start-up.
pub struct GeneratedCertificate {
    /// The CA certificate (PEM): what `curl --cacert` and a webhook configuration's `caBundle` trust.
    pub ca_pem: String,
    /// The serving certificate chain and key.
    pub material: TlsMaterial,
}

/// Generates a throw-away CA and a serving certificate for `localhost`, `127.0.0.1` and `::1`.
///
/// # Errors
/// Only if key generation fails.
pub fn generate_localhost() -> anyhow::Result<GeneratedCertificate> {
    generate(&["localhost".into(), "127.0.0.1".into(), "::1".into()])
}

/// Generates a throw-away CA and a serving certificate for the given DNS names and IP addresses.
///
/// # Errors
/// Only if key generation fails or a name is invalid.
pub fn generate(names: &[String]) -> anyhow::Result<GeneratedCertificate> {
    use rcgen::{
        BasicConstraints, CertificateParams, DistinguishedName, DnType, IsCa, Issuer, KeyPair,
        KeyUsagePurpose,
    };
    let ca_key = KeyPair::generate()?;
    let mut ca_params = CertificateParams::new(Vec::<String>::new())?;
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
    let mut dn = DistinguishedName::new();
    dn.push(DnType::CommonName, "probegate local CA");
    ca_params.distinguished_name = dn;
    let ca_cert = ca_params.self_signed(&ca_key)?;
    let issuer = Issuer::new(ca_params, ca_key);

    let leaf_key = KeyPair::generate()?;
    let mut leaf_params = CertificateParams::new(names.to_vec())?;
    let mut dn = DistinguishedName::new();
    dn.push(DnType::CommonName, names.first().cloned().unwrap_or_else(|| "probegate".into()));
    leaf_params.distinguished_name = dn;
    let leaf = leaf_params.signed_by(&leaf_key, &issuer)?;
    let mut chain = leaf.pem();
    chain.push_str(&ca_cert.pem());
    Ok(GeneratedCertificate {
        ca_pem: ca_cert.pem(),
        material: TlsMaterial {
            cert_pem: chain.into_bytes(),
            key_pem: leaf_key.serialize_pem().into_bytes(),
        },
    })
}

/// Where `probegate serve` writes the generated CA by default: `$TMPDIR/probegate-ca.pem`
/// (`/tmp/probegate-ca.pem` on most systems).
pub fn default_ca_path() -> PathBuf {
    std::env::temp_dir().join("probegate-ca.pem")
}

fn parse_certs(pem: &[u8]) -> anyhow::Result<Vec<CertificateDer<'static>>> {
    let certs: Vec<CertificateDer<'static>> =
        CertificateDer::pem_slice_iter(pem).collect::<Result<_, _>>()?;
    anyhow::ensure!(!certs.is_empty(), "no CERTIFICATE block found");
    Ok(certs)
}

/// A rustls ServerConfig (ring provider, TLS 1.2 and 1.3, ALPN `h2` and `http/1.1`).
///
/// # Errors
/// When the PEM does not parse or the key does not match the certificate.
pub fn server_config(material: &TlsMaterial) -> anyhow::Result<rustls::ServerConfig> {
    let certs = parse_certs(&material.cert_pem)?;
    let key =
        PrivateKeyDer::from_pem_slice(&material.key_pem).map_err(|e| anyhow::anyhow!("private key: {e}"))?;
    let mut config =
        rustls::ServerConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
            .with_safe_default_protocol_versions()?
            .with_no_client_auth()
            .with_single_cert(certs, key)?;
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(config)
}

/// The axum-server TLS configuration for the material.
///
/// # Errors
/// As [`server_config`].
pub fn rustls_config(material: &TlsMaterial) -> anyhow::Result<RustlsConfig> {
    Ok(RustlsConfig::from_config(Arc::new(server_config(material)?)))
}

/// Watches a certificate and key file pair and reloads the serving configuration when they
/// change: new connections get the new certificate, existing ones keep theirs. Both files must
/// parse and match (the key belongs to the certificate) before the switch; until then, and on any
/// error, the previous pair stays in force. Watched as [`super::watch`] describes.
///
/// # Errors
/// When a directory cannot be watched.
pub fn spawn_reloader(
    cert: PathBuf,
    key: PathBuf,
    config: RustlsConfig,
) -> notify::Result<notify::RecommendedWatcher> {
    let (watcher, mut ticks) = super::watch::watch(&[&cert, &key])?;
    tokio::spawn(async move {
        let mut current = fingerprint(&cert, &key).await;
        let mut last_error: Option<String> = None;
        while ticks.next().await {
            let seen = fingerprint(&cert, &key).await;
            if seen == current {
                continue;
            }
            match TlsMaterial::from_files(&cert, &key).and_then(|m| server_config(&m)) {
                Ok(cfg) => {
                    config.reload_from_config(Arc::new(cfg));
                    tracing::info!(cert = %super::log_field(&cert.display().to_string()), "serving certificate reloaded");
                    current = seen;
                    last_error = None;
                }
                Err(e) => {
                    let text = format!("{e:#}");
                    if last_error.as_deref() != Some(&text) {
                        tracing::warn!(error = %super::log_safe(&text), "certificate files changed but are not usable (yet); keeping the previous pair");
                        last_error = Some(text);
                    }
                }
            }
        }
    });
    Ok(watcher)
}

async fn fingerprint(cert: &Path, key: &Path) -> Option<(Vec<u8>, Vec<u8>)> {
    let c = super::watch::read_regular(cert).await.ok()?;
    let k = super::watch::read_regular(key).await.ok()?;
    Some((c, k))
}
