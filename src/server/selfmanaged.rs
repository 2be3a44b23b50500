//! Self-managed TLS (`probegate serve --self-managed-tls`): probegate keeps its own CA and serving
//! certificate in a Secret and puts the CA into the `caBundle` of its webhook configurations, so that
//! a cluster without cert-manager can run it.
//!
//! [`ensure`] does one pass, [`maintain`] repeats it forever:
//!
//! 1. **Secret.** Read `<namespace>/<secret_name>`. Absent: generate a CA and a serving certificate and
//!    `create` the Secret. Two replicas starting together both try; the API server lets exactly one
//!    `create` succeed and answers the other `409 AlreadyExists`, and that one re-reads the Secret and
//!    uses the winner's CA (create-or-adopt), so all replicas agree on one CA without a lease.
//! 2. **Renewal.** Present: the serving certificate is reissued, **with the same CA**, when it expires
//!    within `renew_before_days`, is not signed by `ca.crt`, does not match `tls.key`, or does not cover
//!    the Service's names (a renamed Service). The `update` carries the `resourceVersion` that was read,
//!    so when two replicas renew at once the second gets `409 Conflict`, re-reads and adopts the
//!    first one's certificate. A Secret that exists but is empty (a placeholder) is filled in the
//!    same way. A Secret that holds a certificate but no usable `ca.crt`/`ca.key` is never
//!    overwritten: [`ensure`] fails and names it (someone else's certificate, or a damaged one:
//!    delete it to start over).
//! 3. **caBundle.** Every webhook of the MutatingWebhookConfiguration and of the
//!    ValidatingWebhookConfiguration gets `clientConfig.caBundle` = the CA PEM, by a strategic merge
//!    patch keyed on the webhook `name` (so nothing else in the configuration is touched), and only
//!    when some webhook's bundle differs. A configuration that does not exist (not installed yet, or
//!    an overlay that ships only one) is logged and skipped; any other failure is an error.
//!
//! # Secret format
//!
//! Type `kubernetes.io/tls`: `tls.crt` (the chain: serving certificate, then the CA), `tls.key` (the
//! serving key, PKCS#8), `ca.crt` (the CA certificate) and `ca.key` (the CA private key, PKCS#8).
//!
//! `ca.key` lives in the same Secret because every replica may have to renew the serving certificate
//! and must sign it with the one CA that the `caBundle` trusts; a second Secret would need the same
//! readers, so it would protect nothing and add a second object to keep consistent. Whoever can read
//! this Secret can mint certificates the API server trusts for probegate's webhooks, i.e. can
//! impersonate the webhook: **RBAC must restrict `get` on it to probegate's ServiceAccount** (a Role
//! in probegate's namespace with `resourceNames`, and no broad `secrets` read in that namespace for
//! anyone else).
//!
//! # RBAC this module needs
//!
//! - `secrets` `get` (Role in the webhook's namespace, `resourceNames: [<secret_name>]`): read the CA
//!   and the serving certificate.
//! - `secrets` `create` (same Role, no `resourceNames`: Kubernetes cannot restrict `create` by name,
//!   the name is not known when it authorizes): create the Secret on first start.
//! - `secrets` `update` (same Role, `resourceNames: [<secret_name>]`): renew the serving certificate.
//! - `mutatingwebhookconfigurations` `get` (ClusterRole, `resourceNames: [<mutating configuration>]`):
//!   compare its `caBundle`s before patching.
//! - `mutatingwebhookconfigurations` `patch` (same, `resourceNames`): write the `caBundle`.
//! - `validatingwebhookconfigurations` `get` and `patch` (ClusterRole, `resourceNames: [<validating
//!   configuration>]`): the same for the validating configuration.
//!
//! # Not covered
//!
//! The CA itself is not rotated: it is made for `ca_validity_days` (default ten years) and a
//! serving certificate never outlives it. When the CA is within `renew_before_days` of expiry every
//! pass logs a warning; deleting the Secret makes the replicas create a new CA and re-patch the
//! bundles (requests fail for up to one `maintain` interval while replicas switch).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use base64::Engine as _;
use k8s_openapi::ByteString;
use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhookConfiguration, ValidatingWebhookConfiguration,
};
use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::{Api, Patch, PatchParams, PostParams};
use rustls::client::danger::ServerCertVerifier as _;
use rustls::pki_types::pem::PemObject as _;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use time::OffsetDateTime;

use super::tls::TlsMaterial;

/// Settings (flags of `probegate serve --self-managed-tls`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SelfManagedTls {
    /// Where the Secret lives (the webhook's namespace), e.g. `probegate-system`.
    pub namespace: String,
    /// The Secret's name (default `probegate-tls`).
    pub secret_name: String,
    /// The webhook Service; the certificate covers `<svc>`, `<svc>.<ns>`, `<svc>.<ns>.svc` and
    /// `<svc>.<ns>.svc.cluster.local`.
    pub service_name: String,
    /// The MutatingWebhookConfiguration to patch (default `probegate`).
    pub mutating_webhook_configuration: String,
    /// The ValidatingWebhookConfiguration to patch (default `probegate`).
    pub validating_webhook_configuration: String,
    /// Validity of a new CA, in days (default 3650).
    pub ca_validity_days: u32,
    /// Validity of a serving certificate, in days (default 365); never beyond the CA's.
    pub cert_validity_days: u32,
    /// Renew the serving certificate when it expires sooner than this, in days (default 30).
    pub renew_before_days: u32,
}

impl SelfManagedTls {
    /// The defaults for a Service `service_name` in `namespace`.
    pub fn new(namespace: impl Into<String>, service_name: impl Into<String>) -> SelfManagedTls {
        SelfManagedTls {
            namespace: namespace.into(),
            secret_name: "probegate-tls".into(),
            service_name: service_name.into(),
            mutating_webhook_configuration: "probegate".into(),
            validating_webhook_configuration: "probegate".into(),
            ca_validity_days: 3650,
            cert_validity_days: 365,
            renew_before_days: 30,
        }
    }

    /// The DNS names the serving certificate covers, the API server's (`<svc>.<ns>.svc`) among them.
    pub fn dns_names(&self) -> Vec<String> {
        let (svc, ns) = (&self.service_name, &self.namespace);
        vec![
            svc.clone(),
            format!("{svc}.{ns}"),
            format!("{svc}.{ns}.svc"),
            format!("{svc}.{ns}.svc.cluster.local"),
        ]
    }

    /// Checks the settings.
    ///
    /// # Errors
    /// An empty name, a zero validity, a certificate validity not above `renew_before_days` (every
    /// pass would renew) or a CA validity below the certificate validity.
    pub fn validate(&self) -> anyhow::Result<()> {
        for (what, value) in [
            ("namespace", &self.namespace),
            ("secret name", &self.secret_name),
            ("service name", &self.service_name),
            ("mutating webhook configuration", &self.mutating_webhook_configuration),
            ("validating webhook configuration", &self.validating_webhook_configuration),
        ] {
            anyhow::ensure!(!value.is_empty(), "self-managed TLS: the {what} is empty");
        }
        anyhow::ensure!(
            self.cert_validity_days > self.renew_before_days,
            "self-managed TLS: the certificate validity ({} days) must exceed the renewal window ({} days), \
             else every check would renew it",
            self.cert_validity_days,
            self.renew_before_days
        );
        anyhow::ensure!(
            self.ca_validity_days >= self.cert_validity_days,
            "self-managed TLS: the CA validity ({} days) must be at least the certificate validity ({} days)",
            self.ca_validity_days,
            self.cert_validity_days
        );
        Ok(())
    }

    fn secret_ref(&self) -> String {
        format!("Secret {}/{}", self.namespace, self.secret_name)
    }
}

const TLS_CRT: &str = "tls.crt";
const TLS_KEY: &str = "tls.key";
const CA_CRT: &str = "ca.crt";
const CA_KEY: &str = "ca.key";
const SECRET_TYPE: &str = "kubernetes.io/tls";
const FIELD_MANAGER: &str = "probegate";

/// Certificates start this far in the past, so that a replica or an API server whose clock is a
/// little behind still accepts them.
const BACKDATE: time::Duration = time::Duration::minutes(5);

/// Reads, creates and updates of the Secret before giving up (each retry follows a 409 caused by
/// another writer, which has then made progress).
const MAX_ATTEMPTS: usize = 5;

/// Ensures the Secret holds a CA and a serving certificate, creating them if absent (create-or-adopt:
/// the replica whose `create` gets 409 AlreadyExists re-reads and uses the winner's), renewing the
/// serving certificate (same CA) when it expires within `renew_before_days` (optimistic concurrency on
/// `resourceVersion`; on 409 Conflict re-read and adopt), and patches `caBundle` (base64 of the CA PEM)
/// into every webhook of both webhook configurations (only when different; a missing configuration is
/// logged and skipped, not fatal). Returns the serving [`TlsMaterial`] (chain + key) and the CA PEM.
///
/// # Errors
/// Invalid settings; an API call that fails other than as described (each error names the object
/// and the verb); a Secret holding a certificate without a usable CA; more than a few conflicts in a
/// row. When both configurations fail to patch, both are reported.
pub async fn ensure(client: &kube::Client, cfg: &SelfManagedTls) -> anyhow::Result<(TlsMaterial, String)> {
    cfg.validate()?;
    let secrets: Api<Secret> = Api::namespaced(client.clone(), &cfg.namespace);
    let contents = ensure_secret(&secrets, cfg).await?;
    let ca_pem = String::from_utf8(contents.ca_crt.clone())
        .with_context(|| format!("{}: {CA_CRT} is not UTF-8 PEM", cfg.secret_ref()))?;

    let mutating: Api<MutatingWebhookConfiguration> = Api::all(client.clone());
    let validating: Api<ValidatingWebhookConfiguration> = Api::all(client.clone());
    let results = [
        patch_ca_bundle(&mutating, &cfg.mutating_webhook_configuration, &ca_pem).await,
        patch_ca_bundle(&validating, &cfg.validating_webhook_configuration, &ca_pem).await,
    ];
    let errors: Vec<String> = results.into_iter().filter_map(|r| r.err().map(|e| format!("{e:#}"))).collect();
    anyhow::ensure!(errors.is_empty(), "{}", errors.join("; "));

    Ok((TlsMaterial { cert_pem: contents.tls_crt, key_pem: contents.tls_key }, ca_pem))
}

/// Runs forever: every `interval`, calls [`ensure`] and, when the serving material differs from
/// `current` (another replica renewed, or this one did), calls `on_change(material)` (the server uses
/// it to reload its rustls config) and remembers it as current. `current` is what the server serves
/// now (what the first [`ensure`] returned), so that an unchanged certificate never causes a reload.
/// Errors are logged and retried at the next tick.
pub async fn maintain(
    client: kube::Client,
    cfg: SelfManagedTls,
    current: TlsMaterial,
    interval: Duration,
    on_change: impl Fn(TlsMaterial) + Send + 'static,
) {
    let mut current = current;
    let mut ticker = tokio::time::interval_at(tokio::time::Instant::now() + interval, interval);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticker.tick().await;
        match ensure(&client, &cfg).await {
            Ok((material, _)) => {
                if material.cert_pem != current.cert_pem || material.key_pem != current.key_pem {
                    tracing::info!(secret = %cfg.secret_ref(), "serving certificate changed; reloading it");
                    on_change(material.clone());
                    current = material;
                }
            }
            Err(e) => tracing::warn!(
                error = format!("{e:#}"),
                retry_in_s = interval.as_secs(),
                "self-managed TLS check failed; serving the current certificate"
            ),
        }
    }
}

/// The four entries of the Secret.
#[derive(Clone, PartialEq, Eq)]
struct Contents {
    tls_crt: Vec<u8>,
    tls_key: Vec<u8>,
    ca_crt: Vec<u8>,
    ca_key: Vec<u8>,
}

impl Contents {
    fn issue(ca: &Ca, cfg: &SelfManagedTls, now: OffsetDateTime) -> anyhow::Result<Contents> {
        let not_after = now + time::Duration::days(i64::from(cfg.cert_validity_days));
        let leaf = ca.issue(&cfg.dns_names(), now - BACKDATE, not_after)?;
        Ok(Contents {
            tls_crt: leaf.cert_pem,
            tls_key: leaf.key_pem,
            ca_crt: ca.cert_pem.clone().into_bytes(),
            ca_key: ca.key_pem.clone().into_bytes(),
        })
    }

    fn data(&self) -> BTreeMap<String, ByteString> {
        [(TLS_CRT, &self.tls_crt), (TLS_KEY, &self.tls_key), (CA_CRT, &self.ca_crt), (CA_KEY, &self.ca_key)]
            .into_iter()
            .map(|(k, v)| (k.to_string(), ByteString(v.clone())))
            .collect()
    }

    fn from_data(data: &BTreeMap<String, ByteString>) -> Option<Contents> {
        let get = |k: &str| data.get(k).map(|b| b.0.clone());
        Some(Contents {
            tls_crt: get(TLS_CRT)?,
            tls_key: get(TLS_KEY)?,
            ca_crt: get(CA_CRT)?,
            ca_key: get(CA_KEY)?,
        })
    }
}

/// What to do with the Secret as read.
enum Verdict {
    /// Use it as it is.
    Current(Contents),
    /// Write these contents over it (reissued serving certificate, or a filled placeholder).
    Update(Contents, String),
}

async fn ensure_secret(api: &Api<Secret>, cfg: &SelfManagedTls) -> anyhow::Result<Contents> {
    let what = cfg.secret_ref();
    for _ in 0..MAX_ATTEMPTS {
        let now = OffsetDateTime::now_utc();
        let existing = api.get_opt(&cfg.secret_name).await.with_context(|| format!("{what}: get"))?;
        let Some(mut secret) = existing else {
            let ca = Ca::generate(now, cfg.ca_validity_days)?;
            let contents = Contents::issue(&ca, cfg, now)?;
            match api
                .create(
                    &PostParams { field_manager: Some(FIELD_MANAGER.into()), ..Default::default() },
                    &new_secret(cfg, &contents),
                )
                .await
            {
                Ok(_) => {
                    tracing::info!(secret = %what, "created a CA and a serving certificate");
                    return Ok(contents);
                }
                Err(kube::Error::Api(s)) if s.is_already_exists() => {
                    tracing::info!(secret = %what, "another replica created the Secret first; adopting its CA");
                    continue;
                }
                Err(e) => return Err(e).with_context(|| format!("{what}: create")),
            }
        };
        let data = secret.data.take().unwrap_or_default();
        match inspect(&data, cfg, now).with_context(|| what.clone())? {
            Verdict::Current(contents) => return Ok(contents),
            Verdict::Update(contents, reason) => {
                // `secret` keeps the resourceVersion that was read: the update is conditional on it.
                // Entries other than the four are kept.
                let mut merged = data;
                merged.extend(contents.data());
                secret.data = Some(merged);
                let pp = PostParams { field_manager: Some(FIELD_MANAGER.into()), ..Default::default() };
                match api.replace(&cfg.secret_name, &pp, &secret).await {
                    Ok(_) => {
                        tracing::info!(secret = %what, reason = %reason, "issued a new serving certificate");
                        return Ok(contents);
                    }
                    Err(kube::Error::Api(s)) if s.is_conflict() => {
                        tracing::info!(secret = %what, "the Secret changed since it was read (another replica?); re-reading");
                        continue;
                    }
                    Err(e) => return Err(e).with_context(|| format!("{what}: update")),
                }
            }
        }
    }
    anyhow::bail!(
        "{what}: still conflicting after {MAX_ATTEMPTS} attempts (another writer keeps changing it)"
    )
}

fn new_secret(cfg: &SelfManagedTls, contents: &Contents) -> Secret {
    Secret {
        metadata: ObjectMeta {
            name: Some(cfg.secret_name.clone()),
            namespace: Some(cfg.namespace.clone()),
            labels: Some(BTreeMap::from([("app.kubernetes.io/managed-by".into(), "probegate".into())])),
            ..Default::default()
        },
        type_: Some(SECRET_TYPE.into()),
        data: Some(contents.data()),
        ..Default::default()
    }
}

/// Decides whether the Secret's contents can be used as they are.
fn inspect(
    data: &BTreeMap<String, ByteString>,
    cfg: &SelfManagedTls,
    now: OffsetDateTime,
) -> anyhow::Result<Verdict> {
    let present = |k: &str| data.get(k).is_some_and(|v| !v.0.is_empty());
    if ![TLS_CRT, TLS_KEY, CA_CRT, CA_KEY].into_iter().any(present) {
        let ca = Ca::generate(now, cfg.ca_validity_days)?;
        return Ok(Verdict::Update(Contents::issue(&ca, cfg, now)?, "the Secret was empty".into()));
    }
    anyhow::ensure!(
        present(CA_CRT) && present(CA_KEY),
        "holds no {CA_CRT} and {CA_KEY}, so it was not made by `probegate serve --self-managed-tls` and \
         is left alone: delete it, or choose another secret name"
    );
    let ca = Ca::load(&data[CA_CRT].0, &data[CA_KEY].0).with_context(|| {
        format!("{CA_CRT}/{CA_KEY} are unusable and are left alone; delete the Secret to start a new CA")
    })?;
    if ca.not_after - now < time::Duration::days(i64::from(cfg.renew_before_days)) {
        tracing::warn!(
            secret = %cfg.secret_ref(),
            ca_not_after = %ca.not_after,
            "the self-managed CA expires soon and is not rotated automatically: delete the Secret to start a new CA"
        );
    }
    match serving_problem(data, &ca, cfg, now) {
        None => Contents::from_data(data)
            .map(Verdict::Current)
            .context("incomplete Secret (checked above: unreachable)"),
        Some(reason) => Ok(Verdict::Update(Contents::issue(&ca, cfg, now)?, reason)),
    }
}

/// Why the serving certificate must be reissued, if it must.
fn serving_problem(
    data: &BTreeMap<String, ByteString>,
    ca: &Ca,
    cfg: &SelfManagedTls,
    now: OffsetDateTime,
) -> Option<String> {
    let (Some(crt), Some(key)) = (data.get(TLS_CRT), data.get(TLS_KEY)) else {
        return Some(format!("{TLS_CRT} or {TLS_KEY} is missing"));
    };
    let Ok(chain) = CertificateDer::pem_slice_iter(&crt.0).collect::<Result<Vec<_>, _>>() else {
        return Some(format!("{TLS_CRT} is not PEM"));
    };
    if chain.len() != 2 || chain[1] != ca.der {
        return Some(format!("{TLS_CRT} is not the serving certificate followed by {CA_CRT}"));
    }
    let Ok((_, leaf)) = x509_parser::parse_x509_certificate(&chain[0]) else {
        return Some(format!("{TLS_CRT} does not parse"));
    };
    let key_matches = std::str::from_utf8(&key.0)
        .ok()
        .and_then(|pem| rcgen::KeyPair::from_pem(pem).ok())
        .is_some_and(|k| k.public_key_raw() == &*leaf.public_key().subject_public_key.data);
    if !key_matches {
        return Some(format!("{TLS_KEY} does not match {TLS_CRT}"));
    }
    let not_before = leaf.validity().not_before.timestamp();
    let not_after = leaf.validity().not_after.timestamp();
    // Checked at the start of its validity at the latest, so that a certificate a replica with a
    // clock ahead of ours made is not taken for invalid; expiry is checked separately below.
    let at = now.unix_timestamp().max(not_before).max(0);
    if let Err(e) = verify_serving(&chain[0], ca, &cfg.dns_names(), at) {
        return Some(format!("{TLS_CRT} does not verify: {e}"));
    }
    let remaining = not_after - now.unix_timestamp();
    let window = i64::from(cfg.renew_before_days) * 86_400;
    // A certificate already cut at the CA's expiry cannot be improved by renewing it.
    if remaining < window && not_after < ca.not_after.unix_timestamp() {
        return Some(format!(
            "the serving certificate expires in {} hours, within the {}-day renewal window",
            remaining / 3600,
            cfg.renew_before_days
        ));
    }
    None
}

/// Verifies `leaf` against `ca` for every name at `unix_seconds`, as a TLS client trusting only the CA
/// would (signature, validity, names).
fn verify_serving(
    leaf: &CertificateDer<'_>,
    ca: &Ca,
    names: &[String],
    unix_seconds: i64,
) -> anyhow::Result<()> {
    let mut roots = rustls::RootCertStore::empty();
    roots.add(ca.der.clone())?;
    let verifier = rustls::client::WebPkiServerVerifier::builder_with_provider(
        Arc::new(roots),
        Arc::new(rustls::crypto::ring::default_provider()),
    )
    .build()?;
    let at = UnixTime::since_unix_epoch(Duration::from_secs(u64::try_from(unix_seconds)?));
    for name in names {
        let server_name = ServerName::try_from(name.as_str())?;
        verifier
            .verify_server_cert(leaf, &[], &server_name, &[], at)
            .with_context(|| format!("for {name}"))?;
    }
    Ok(())
}

/// The CA: certificate and key (PEM), and what is needed to check and sign with it.
struct Ca {
    cert_pem: String,
    key_pem: String,
    der: CertificateDer<'static>,
    not_after: OffsetDateTime,
}

impl Ca {
    fn generate(now: OffsetDateTime, validity_days: u32) -> anyhow::Result<Ca> {
        use rcgen::{
            BasicConstraints, CertificateParams, DistinguishedName, DnType, IsCa, KeyPair, KeyUsagePurpose,
        };
        let key = KeyPair::generate().context("generating the CA key")?;
        let mut params = CertificateParams::new(Vec::<String>::new())?;
        // Path length 0: it signs serving certificates only, never another CA.
        params.is_ca = IsCa::Ca(BasicConstraints::Constrained(0));
        params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        let mut dn = DistinguishedName::new();
        dn.push(DnType::CommonName, "probegate self-managed CA");
        params.distinguished_name = dn;
        params.not_before = now - BACKDATE;
        params.not_after = now + time::Duration::days(i64::from(validity_days));
        let cert = params.self_signed(&key).context("signing the CA certificate")?;
        Ok(Ca {
            cert_pem: cert.pem(),
            key_pem: key.serialize_pem(),
            der: cert.der().clone(),
            not_after: params.not_after,
        })
    }

    fn load(cert_pem: &[u8], key_pem: &[u8]) -> anyhow::Result<Ca> {
        let cert_pem = String::from_utf8(cert_pem.to_vec()).context("ca.crt is not UTF-8 PEM")?;
        let key_pem = String::from_utf8(key_pem.to_vec()).context("ca.key is not UTF-8 PEM")?;
        let der = CertificateDer::from_pem_slice(cert_pem.as_bytes())
            .map_err(|e| anyhow::anyhow!("ca.crt: not a PEM certificate: {e}"))?;
        let (_, cert) =
            x509_parser::parse_x509_certificate(&der).context("ca.crt: not an X.509 certificate")?;
        anyhow::ensure!(cert.is_ca(), "ca.crt is not a CA certificate");
        let key = rcgen::KeyPair::from_pem(&key_pem).context("ca.key: not a PKCS#8 PEM private key")?;
        anyhow::ensure!(
            key.public_key_raw() == &*cert.public_key().subject_public_key.data,
            "ca.key does not match ca.crt"
        );
        let not_after = OffsetDateTime::from_unix_timestamp(cert.validity().not_after.timestamp())
            .context("ca.crt: notAfter out of range")?;
        Ok(Ca { cert_pem, key_pem, der: der.into_owned(), not_after })
    }

    /// A serving certificate for `names` signed by this CA, valid from `not_before` to `not_after`
    /// (cut at the CA's own expiry), as a chain (leaf, CA) and a new key.
    fn issue(
        &self,
        names: &[String],
        not_before: OffsetDateTime,
        not_after: OffsetDateTime,
    ) -> anyhow::Result<TlsMaterial> {
        use rcgen::{
            CertificateParams, DistinguishedName, DnType, ExtendedKeyUsagePurpose, Issuer, KeyPair,
            KeyUsagePurpose,
        };
        let ca_key = KeyPair::from_pem(&self.key_pem).context("ca.key: not a PKCS#8 PEM private key")?;
        let issuer =
            Issuer::from_ca_cert_pem(&self.cert_pem, ca_key).context("ca.crt: cannot sign with it")?;
        let mut params = CertificateParams::new(names.to_vec()).context("serving certificate names")?;
        let mut dn = DistinguishedName::new();
        dn.push(DnType::CommonName, names.first().cloned().unwrap_or_else(|| "probegate".into()));
        params.distinguished_name = dn;
        params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        params.use_authority_key_identifier_extension = true;
        params.not_before = not_before;
        params.not_after = not_after.min(self.not_after);
        let key = KeyPair::generate().context("generating the serving key")?;
        let leaf = params.signed_by(&key, &issuer).context("signing the serving certificate")?;
        let mut chain = leaf.pem();
        chain.push_str(&self.cert_pem);
        Ok(TlsMaterial { cert_pem: chain.into_bytes(), key_pem: key.serialize_pem().into_bytes() })
    }
}

/// A webhook configuration: its webhooks' names and current `caBundle`s.
trait WebhookConfiguration:
    kube::Resource<DynamicType = ()> + Clone + serde::de::DeserializeOwned + std::fmt::Debug
{
    fn bundles(&self) -> Vec<(&str, Option<&[u8]>)>;
}

impl WebhookConfiguration for MutatingWebhookConfiguration {
    fn bundles(&self) -> Vec<(&str, Option<&[u8]>)> {
        let hooks = self.webhooks.as_deref().unwrap_or_default();
        hooks
            .iter()
            .map(|w| (w.name.as_str(), w.client_config.ca_bundle.as_ref().map(|b| &b.0[..])))
            .collect()
    }
}

impl WebhookConfiguration for ValidatingWebhookConfiguration {
    fn bundles(&self) -> Vec<(&str, Option<&[u8]>)> {
        let hooks = self.webhooks.as_deref().unwrap_or_default();
        hooks
            .iter()
            .map(|w| (w.name.as_str(), w.client_config.ca_bundle.as_ref().map(|b| &b.0[..])))
            .collect()
    }
}

/// Sets `caBundle` on every webhook of the configuration whose bundle differs. Returns whether it
/// patched; a configuration that does not exist is logged and skipped.
async fn patch_ca_bundle<K: WebhookConfiguration>(
    api: &Api<K>,
    name: &str,
    ca_pem: &str,
) -> anyhow::Result<bool> {
    let what = format!("{} {name}", K::kind(&()));
    let Some(config) = api.get_opt(name).await.with_context(|| format!("{what}: get"))? else {
        tracing::warn!(configuration = %what, "webhook configuration not found; not patching its caBundle");
        return Ok(false);
    };
    let encoded = base64::engine::general_purpose::STANDARD.encode(ca_pem);
    let stale: Vec<serde_json::Value> = config
        .bundles()
        .into_iter()
        .filter(|(_, bundle)| *bundle != Some(ca_pem.as_bytes()))
        .map(|(hook, _)| serde_json::json!({"name": hook, "clientConfig": {"caBundle": encoded}}))
        .collect();
    if stale.is_empty() {
        return Ok(false);
    }
    let count = stale.len();
    // Strategic merge: `webhooks` merges by `name`, so only these webhooks' caBundle changes.
    let patch = serde_json::json!({"webhooks": stale});
    let pp = PatchParams { field_manager: Some(FIELD_MANAGER.into()), ..Default::default() };
    api.patch(name, &pp, &Patch::Strategic(patch))
        .await
        .with_context(|| format!("{what}: patch caBundle"))?;
    tracing::info!(configuration = %what, webhooks = count, "patched caBundle");
    Ok(true)
}
