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
//!
//! # Watching the configurations
//!
//! [`watch_webhook_configurations`] wakes [`maintain`] whenever a configuration is created or
//! changed, so a re-applied or re-created configuration gets its `caBundle` back within about a
//! second. It needs `list` and `watch` on both configurations too (ClusterRole, same
//! `resourceNames`: the watch selects by `metadata.name`).

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

/// Runs forever: every `interval`, and whenever `wake` is notified (a webhook configuration changed
/// or was re-created: see [`watch_webhook_configurations`]), calls [`ensure`] and, when the serving
/// material differs from `current` (another replica renewed, or this one did), calls
/// `on_change(material)` (the server uses it to reload its rustls config) and remembers it as
/// current. `current` is what the server serves now (what the first [`ensure`] returned), so that an
/// unchanged certificate never causes a reload. Errors are logged and retried at the next tick.
pub async fn maintain(
    client: kube::Client,
    cfg: SelfManagedTls,
    current: TlsMaterial,
    interval: Duration,
    wake: Arc<tokio::sync::Notify>,
    on_change: impl Fn(TlsMaterial) + Send + 'static,
) {
    let mut current = current;
    let mut ticker = tokio::time::interval_at(tokio::time::Instant::now() + interval, interval);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = ticker.tick() => {}
            _ = wake.notified() => {}
        }
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

/// Watches the two webhook configurations named in `cfg` (each by a `metadata.name` field selector:
/// RBAC `list` and `watch` with `resourceNames`) and notifies `wake` whenever one is created,
/// changed, or listed again after the watch restarted, so that [`maintain`] puts the `caBundle`
/// back within about a second instead of at its next tick (a `kubectl apply` of the manifests, or a
/// deleted and re-created configuration, would otherwise leave the API server without the CA for
/// up to one interval: every call failing open, or every Pod refused under `failurePolicy: Fail`).
/// [`ensure`] patches only a bundle that differs, so its own patch wakes it once more, to no effect.
/// Runs until the process ends; watch errors are retried with back-off.
pub async fn watch_webhook_configurations(
    client: kube::Client,
    cfg: SelfManagedTls,
    wake: Arc<tokio::sync::Notify>,
) {
    use futures::StreamExt as _;
    use kube::runtime::{WatchStreamExt as _, watcher};
    fn changes<K>(
        api: Api<K>,
        name: &str,
    ) -> impl futures::Stream<Item = Result<watcher::Event<K>, watcher::Error>> + Send + 'static
    where
        K: kube::Resource + Clone + serde::de::DeserializeOwned + std::fmt::Debug + Send + 'static,
    {
        watcher(api, watcher::Config::default().fields(&format!("metadata.name={name}"))).default_backoff()
    }
    let mutating = changes(
        Api::<MutatingWebhookConfiguration>::all(client.clone()),
        &cfg.mutating_webhook_configuration,
    )
    .map(|e| e.map(|e| !matches!(e, watcher::Event::Delete(_) | watcher::Event::Init)));
    let validating =
        changes(Api::<ValidatingWebhookConfiguration>::all(client), &cfg.validating_webhook_configuration)
            .map(|e| e.map(|e| !matches!(e, watcher::Event::Delete(_) | watcher::Event::Init)));
    let mut events = std::pin::pin!(futures::stream::select(mutating, validating));
    let mut reported = false;
    while let Some(event) = events.next().await {
        match event {
            Ok(wakes) => {
                reported = false;
                if wakes {
                    wake.notify_one();
                }
            }
            Err(e) if !reported => {
                tracing::warn!(error = %super::kube_error_text(&e), "watch of the webhook configurations failed; retrying with back-off (the caBundle is still checked every interval)");
                reported = true;
            }
            Err(_) => {}
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

#[cfg(test)]
mod tests {
    //! Against an in-memory fake of the few API calls the module makes: Secrets (get, create,
    //! update with resourceVersion preconditions) and webhook configurations (get, strategic merge
    //! patch of `webhooks` by name), answering `Status` objects for 404, 409, 403 and 422 as the API
    //! server does.

    use std::sync::Mutex;

    use axum::http::{Request, Response};
    use kube::client::Body;
    use serde_json::{Value, json};

    use super::*;
    use crate::server::tls;

    const NS: &str = "probegate-system";
    const MUTATING: &str = "mutatingwebhookconfigurations";
    const VALIDATING: &str = "validatingwebhookconfigurations";

    #[derive(Default)]
    struct State {
        /// (namespace, name) -> Secret as JSON.
        secrets: BTreeMap<(String, String), Value>,
        /// (resource plural, name) -> webhook configuration as JSON.
        configs: BTreeMap<(String, String), Value>,
        next_rv: u64,
        log: Vec<Call>,
        /// The next `n` Secret GETs wait at this barrier after reading, before answering (replicas
        /// reading together).
        get_barrier: Option<(Arc<tokio::sync::Barrier>, usize)>,
        /// Right after the next Secret GET another writer changes the Secret (new resourceVersion).
        touch_after_get: bool,
        /// PATCH of webhook configurations answers 403 Forbidden.
        forbid_patch: bool,
    }

    #[derive(Debug, Clone)]
    struct Call {
        method: String,
        path: String,
        status: u16,
        body: Option<Value>,
    }

    impl State {
        fn next_rv(&mut self) -> String {
            self.next_rv += 1;
            self.next_rv.to_string()
        }

        /// Calls other than GET (the writes).
        fn writes(&self) -> Vec<Call> {
            self.log.iter().filter(|c| c.method != "GET").cloned().collect()
        }

        fn calls(&self, method: &str, path_part: &str) -> Vec<Call> {
            self.log.iter().filter(|c| c.method == method && c.path.contains(path_part)).cloned().collect()
        }

        fn secret(&self) -> &Value {
            &self.secrets[&(NS.to_string(), "probegate-tls".to_string())]
        }

        fn secret_mut(&mut self) -> &mut Value {
            self.secrets.get_mut(&(NS.to_string(), "probegate-tls".to_string())).expect("secret exists")
        }

        fn secret_data(&self) -> BTreeMap<String, Vec<u8>> {
            let data = self.secret()["data"].as_object().expect("data").clone();
            data.into_iter()
                .map(|(k, v)| {
                    let bytes = base64::engine::general_purpose::STANDARD
                        .decode(v.as_str().expect("base64 string"))
                        .expect("base64");
                    (k, bytes)
                })
                .collect()
        }

        /// Writes `material` as the Secret's serving certificate (as another replica would).
        fn set_serving(&mut self, material: &TlsMaterial) {
            let b64 = |b: &[u8]| json!(base64::engine::general_purpose::STANDARD.encode(b));
            let rv = self.next_rv();
            let secret = self.secret_mut();
            secret["data"][TLS_CRT] = b64(&material.cert_pem);
            secret["data"][TLS_KEY] = b64(&material.key_pem);
            secret["metadata"]["resourceVersion"] = json!(rv);
        }

        /// The decoded caBundle of each webhook of a configuration.
        fn bundles(&self, plural: &str) -> Vec<Option<Vec<u8>>> {
            let config = &self.configs[&(plural.to_string(), "probegate".to_string())];
            config["webhooks"]
                .as_array()
                .expect("webhooks")
                .iter()
                .map(|w| {
                    w["clientConfig"]["caBundle"].as_str().map(|b| {
                        base64::engine::general_purpose::STANDARD.decode(b).expect("base64 caBundle")
                    })
                })
                .collect()
        }
    }

    type Fake = Arc<Mutex<State>>;

    fn lock(fake: &Fake) -> std::sync::MutexGuard<'_, State> {
        fake.lock().expect("fake API state")
    }

    fn webhook(name: &str, path: &str, bundle: Option<&[u8]>) -> Value {
        let mut client_config =
            json!({"service": {"namespace": NS, "name": "probegate", "path": path, "port": 443}});
        if let Some(b) = bundle {
            client_config["caBundle"] = json!(base64::engine::general_purpose::STANDARD.encode(b));
        }
        json!({
            "name": name,
            "clientConfig": client_config,
            "rules": [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["pods"]}],
            "sideEffects": "None",
            "admissionReviewVersions": ["v1"],
            "timeoutSeconds": 5,
        })
    }

    /// Both configurations installed with two webhooks each, without or with a stale caBundle.
    fn fake() -> Fake {
        let mut state = State::default();
        let mutating = json!({
            "apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingWebhookConfiguration",
            "metadata": {"name": "probegate", "resourceVersion": "1"},
            "webhooks": [webhook("pods.mutate.probegate.dev", "/mutate", None),
                         webhook("templates.mutate.probegate.dev", "/mutate", None)],
        });
        let validating = json!({
            "apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
            "metadata": {"name": "probegate", "resourceVersion": "2"},
            "webhooks": [webhook("pods.validate.probegate.dev", "/validate", Some(b"an old CA")),
                         webhook("templates.validate.probegate.dev", "/validate", None)],
        });
        state.configs.insert((MUTATING.into(), "probegate".into()), mutating);
        state.configs.insert((VALIDATING.into(), "probegate".into()), validating);
        state.next_rv = 10;
        Arc::new(Mutex::new(state))
    }

    fn client(fake: &Fake) -> kube::Client {
        let fake = Arc::clone(fake);
        let service = tower::service_fn(move |req: Request<Body>| {
            let fake = Arc::clone(&fake);
            async move {
                let (status, body) = handle(&fake, req).await;
                let body = serde_json::to_vec(&body).expect("JSON");
                Response::builder()
                    .status(status)
                    .header("content-type", "application/json")
                    .body(Body::from(body))
            }
        });
        kube::Client::new(service, NS)
    }

    async fn handle(fake: &Fake, req: Request<Body>) -> (u16, Value) {
        let method = req.method().as_str().to_string();
        let path = req.uri().path().to_string();
        let content_type =
            req.headers().get("content-type").and_then(|v| v.to_str().ok()).unwrap_or("").to_string();
        let bytes = req.into_body().collect_bytes().await.expect("request body");
        let body: Option<Value> =
            if bytes.is_empty() { None } else { Some(serde_json::from_slice(&bytes).expect("JSON body")) };
        let secret_get = method == "GET" && path.contains("/secrets/");
        let (status, out, barrier) = {
            let mut state = lock(fake);
            let (status, out) = route(&mut state, &method, &path, &content_type, body.clone());
            if secret_get && status == 200 && std::mem::take(&mut state.touch_after_get) {
                let rv = state.next_rv();
                state.secret_mut()["metadata"]["annotations"] = json!({"touched-by": "someone else"});
                state.secret_mut()["metadata"]["resourceVersion"] = json!(rv);
            }
            state.log.push(Call { method, path, status, body });
            let barrier = match &mut state.get_barrier {
                Some((barrier, n)) if secret_get && *n > 0 => {
                    *n -= 1;
                    Some(Arc::clone(barrier))
                }
                _ => None,
            };
            (status, out, barrier)
        };
        // Read, then wait for the other replica's read: both answers reflect the state before either
        // replica writes.
        if let Some(barrier) = barrier {
            barrier.wait().await;
        }
        (status, out)
    }

    fn status(code: u16, reason: &str, message: String) -> (u16, Value) {
        let body = json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                          "message": message, "reason": reason, "code": code});
        (code, body)
    }

    fn route(
        state: &mut State,
        method: &str,
        path: &str,
        content_type: &str,
        body: Option<Value>,
    ) -> (u16, Value) {
        let segments: Vec<&str> = path.trim_start_matches('/').split('/').collect();
        match (method, segments.as_slice()) {
            ("GET", ["api", "v1", "namespaces", ns, "secrets", name]) => {
                match state.secrets.get(&(ns.to_string(), name.to_string())) {
                    Some(secret) => (200, secret.clone()),
                    None => status(404, "NotFound", format!("secrets \"{name}\" not found")),
                }
            }
            ("POST", ["api", "v1", "namespaces", ns, "secrets"]) => {
                let mut secret = body.expect("POST body");
                let name = secret["metadata"]["name"].as_str().expect("metadata.name").to_string();
                let key = (ns.to_string(), name.clone());
                if state.secrets.contains_key(&key) {
                    return status(409, "AlreadyExists", format!("secrets \"{name}\" already exists"));
                }
                if let Err(message) = validate_secret(&secret) {
                    return status(422, "Invalid", message);
                }
                let rv = state.next_rv();
                secret["metadata"]["namespace"] = json!(ns);
                secret["metadata"]["uid"] = json!(format!("uid-{rv}"));
                secret["metadata"]["resourceVersion"] = json!(rv);
                state.secrets.insert(key, secret.clone());
                (201, secret)
            }
            ("PUT", ["api", "v1", "namespaces", ns, "secrets", name]) => {
                let key = (ns.to_string(), name.to_string());
                let Some(current) = state.secrets.get(&key) else {
                    return status(404, "NotFound", format!("secrets \"{name}\" not found"));
                };
                let mut secret = body.expect("PUT body");
                let sent = secret["metadata"]["resourceVersion"].as_str();
                // Like the API server: no resourceVersion means an unconditional update.
                if sent.is_some_and(|rv| Some(rv) != current["metadata"]["resourceVersion"].as_str()) {
                    return status(
                        409,
                        "Conflict",
                        format!(
                            "Operation cannot be fulfilled on secrets \"{name}\": the object has been modified; \
                             please apply your changes to the latest version and try again"
                        ),
                    );
                }
                if secret["type"] != current["type"] {
                    return status(
                        422,
                        "Invalid",
                        format!("Secret \"{name}\" is invalid: type: field is immutable"),
                    );
                }
                if let Err(message) = validate_secret(&secret) {
                    return status(422, "Invalid", message);
                }
                secret["metadata"]["uid"] = current["metadata"]["uid"].clone();
                secret["metadata"]["resourceVersion"] = json!(state.next_rv());
                state.secrets.insert(key, secret.clone());
                (200, secret)
            }
            ("GET", ["apis", "admissionregistration.k8s.io", "v1", plural, name]) => {
                match state.configs.get(&(plural.to_string(), name.to_string())) {
                    Some(config) => (200, config.clone()),
                    None => status(
                        404,
                        "NotFound",
                        format!("{plural}.admissionregistration.k8s.io \"{name}\" not found"),
                    ),
                }
            }
            ("PATCH", ["apis", "admissionregistration.k8s.io", "v1", plural, name]) => {
                if state.forbid_patch {
                    return status(
                        403,
                        "Forbidden",
                        format!("cannot patch resource \"{plural}\" \"{name}\""),
                    );
                }
                if content_type != "application/strategic-merge-patch+json" {
                    return status(
                        415,
                        "UnsupportedMediaType",
                        format!("unexpected patch type {content_type}"),
                    );
                }
                let rv = state.next_rv();
                let Some(config) = state.configs.get_mut(&(plural.to_string(), name.to_string())) else {
                    return status(
                        404,
                        "NotFound",
                        format!("{plural}.admissionregistration.k8s.io \"{name}\" not found"),
                    );
                };
                let mut patch = body.expect("PATCH body");
                let hooks = patch.as_object_mut().and_then(|p| p.remove("webhooks")).unwrap_or(json!([]));
                let mut merged = config.clone();
                for hook in hooks.as_array().expect("webhooks list") {
                    let existing = merged["webhooks"]
                        .as_array_mut()
                        .and_then(|list| list.iter_mut().find(|w| w["name"] == hook["name"]));
                    // The API server would append the entry, which then fails validation.
                    let Some(existing) = existing else {
                        return status(422, "Invalid", format!("webhook {} is incomplete", hook["name"]));
                    };
                    json_patch::merge(existing, hook);
                }
                json_patch::merge(&mut merged, &patch);
                merged["metadata"]["resourceVersion"] = json!(rv);
                *config = merged.clone();
                (200, merged)
            }
            _ => status(404, "NotFound", format!("the server could not find the requested resource {path}")),
        }
    }

    fn validate_secret(secret: &Value) -> Result<(), String> {
        if secret["type"] == SECRET_TYPE
            && (secret["data"][TLS_CRT].is_null() || secret["data"][TLS_KEY].is_null())
        {
            return Err("data[tls.crt] and data[tls.key]: Required value".into());
        }
        Ok(())
    }

    fn cfg() -> SelfManagedTls {
        SelfManagedTls::new(NS, "probegate")
    }

    fn certs(pem: &[u8]) -> Vec<CertificateDer<'static>> {
        CertificateDer::pem_slice_iter(pem).collect::<Result<_, _>>().expect("PEM certificates")
    }

    fn not_after(pem: &[u8]) -> i64 {
        let chain = certs(pem);
        let (_, leaf) = x509_parser::parse_x509_certificate(&chain[0]).expect("X.509");
        leaf.validity().not_after.timestamp()
    }

    /// A serving certificate from the Secret's CA that expires in `hours`.
    fn short_lived(state: &State, hours: i64) -> TlsMaterial {
        let data = state.secret_data();
        let ca = Ca::load(&data[CA_CRT], &data[CA_KEY]).expect("CA");
        let now = OffsetDateTime::now_utc();
        ca.issue(&cfg().dns_names(), now - BACKDATE, now + time::Duration::hours(hours)).expect("issue")
    }

    #[tokio::test]
    async fn first_start_creates_the_secret_and_patches_every_webhook() {
        let fake = fake();
        let (material, ca_pem) = ensure(&client(&fake), &cfg()).await.expect("ensure");

        let state = lock(&fake);
        let secret = state.secret();
        assert_eq!(secret["type"], SECRET_TYPE);
        assert_eq!(secret["metadata"]["labels"]["app.kubernetes.io/managed-by"], "probegate");
        let data = state.secret_data();
        assert_eq!(data.keys().collect::<Vec<_>>(), [CA_CRT, CA_KEY, TLS_CRT, TLS_KEY]);
        assert_eq!(data[TLS_CRT], material.cert_pem);
        assert_eq!(data[TLS_KEY], material.key_pem);
        assert_eq!(data[CA_CRT], ca_pem.as_bytes());
        // The chain is the serving certificate, then the CA.
        let chain = certs(&material.cert_pem);
        assert_eq!(chain.len(), 2);
        assert_eq!(chain[1], certs(ca_pem.as_bytes())[0]);
        let days = (not_after(&material.cert_pem) - OffsetDateTime::now_utc().unix_timestamp()) / 86_400;
        assert!((364..=365).contains(&days), "{days} days");

        for plural in [MUTATING, VALIDATING] {
            let bundles = state.bundles(plural);
            assert_eq!(bundles.len(), 2);
            for bundle in bundles {
                assert_eq!(bundle.as_deref(), Some(ca_pem.as_bytes()), "{plural}");
            }
        }
        // The patch set caBundle and nothing else.
        let config = &state.configs[&(VALIDATING.to_string(), "probegate".to_string())];
        assert_eq!(config["webhooks"][0]["clientConfig"]["service"]["path"], "/validate");
        assert_eq!(config["webhooks"][0]["sideEffects"], "None");
        let writes: Vec<(String, u16)> = state.writes().into_iter().map(|c| (c.method, c.status)).collect();
        assert_eq!(writes, [("POST".into(), 201), ("PATCH".into(), 200), ("PATCH".into(), 200)]);
    }

    #[tokio::test]
    async fn a_second_call_adopts_the_secret_and_patches_nothing() {
        let fake = fake();
        let client = client(&fake);
        let first = ensure(&client, &cfg()).await.expect("first ensure");
        let writes = lock(&fake).writes().len();
        let second = ensure(&client, &cfg()).await.expect("second ensure");
        assert_eq!(second.0.cert_pem, first.0.cert_pem);
        assert_eq!(second.0.key_pem, first.0.key_pem);
        assert_eq!(second.1, first.1);
        assert_eq!(lock(&fake).writes().len(), writes, "the second call only reads");
    }

    #[tokio::test]
    async fn concurrent_replicas_agree_on_one_ca() {
        let fake = fake();
        // Both replicas read "no Secret" before either creates it.
        lock(&fake).get_barrier = Some((Arc::new(tokio::sync::Barrier::new(2)), 2));
        let (a, b) = (client(&fake), client(&fake));
        let config = cfg();
        let (ra, rb) = tokio::join!(ensure(&a, &config), ensure(&b, &config));
        let ((ma, ca_a), (mb, ca_b)) = (ra.expect("replica a"), rb.expect("replica b"));
        assert_eq!(ca_a, ca_b, "one CA");
        assert_eq!(ma.cert_pem, mb.cert_pem);
        assert_eq!(ma.key_pem, mb.key_pem);

        let state = lock(&fake);
        assert_eq!(state.secrets.len(), 1);
        assert_eq!(state.secret_data()[CA_CRT], ca_a.as_bytes());
        let mut creates: Vec<u16> = state.calls("POST", "/secrets").iter().map(|c| c.status).collect();
        creates.sort();
        assert_eq!(creates, [201, 409], "both created, the loser got AlreadyExists");
        assert!(state.calls("PUT", "/secrets").is_empty(), "the loser adopted, it did not overwrite");
        for plural in [MUTATING, VALIDATING] {
            assert!(state.bundles(plural).iter().all(|b| b.as_deref() == Some(ca_a.as_bytes())));
        }
    }

    #[tokio::test]
    async fn an_expiring_serving_certificate_is_renewed_with_the_same_ca() {
        let fake = fake();
        let client = client(&fake);
        let (_, ca_pem) = ensure(&client, &cfg()).await.expect("first ensure");
        let (old, ca_key, read_rv) = {
            let mut state = lock(&fake);
            let old = short_lived(&state, 24);
            state.set_serving(&old);
            state.log.clear();
            let rv = state.secret()["metadata"]["resourceVersion"].clone();
            (old, state.secret_data()[CA_KEY].clone(), rv)
        };

        let (renewed, ca_after) = ensure(&client, &cfg()).await.expect("renewing ensure");
        assert_eq!(ca_after, ca_pem, "same CA");
        assert_ne!(renewed.cert_pem, old.cert_pem);
        assert_ne!(renewed.key_pem, old.key_pem, "a new key too");
        let days = (not_after(&renewed.cert_pem) - OffsetDateTime::now_utc().unix_timestamp()) / 86_400;
        assert!((364..=365).contains(&days), "{days} days");

        let state = lock(&fake);
        let data = state.secret_data();
        assert_eq!(data[TLS_CRT], renewed.cert_pem);
        assert_eq!(data[CA_CRT], ca_pem.as_bytes());
        assert_eq!(data[CA_KEY], ca_key);
        let puts = state.calls("PUT", "/secrets/probegate-tls");
        assert_eq!(puts.len(), 1);
        assert_eq!(puts[0].status, 200);
        let body = puts[0].body.as_ref().expect("PUT body");
        assert_eq!(
            body["metadata"]["resourceVersion"], read_rv,
            "the update is conditional on what was read"
        );
        assert!(state.calls("PATCH", "").is_empty(), "the CA did not change: no caBundle patch");
    }

    #[tokio::test]
    async fn a_stale_resource_version_gets_409_and_the_secret_is_reread() {
        let fake = fake();
        let client = client(&fake);
        ensure(&client, &cfg()).await.expect("first ensure");
        {
            let mut state = lock(&fake);
            let old = short_lived(&state, 1);
            state.set_serving(&old);
            state.touch_after_get = true;
            state.log.clear();
        }
        let (renewed, _) = ensure(&client, &cfg()).await.expect("ensure after a conflict");

        let state = lock(&fake);
        let puts = state.calls("PUT", "/secrets/probegate-tls");
        let statuses: Vec<u16> = puts.iter().map(|c| c.status).collect();
        assert_eq!(statuses, [409, 200]);
        let rv = |c: &Call| c.body.as_ref().expect("body")["metadata"]["resourceVersion"].clone();
        assert_ne!(rv(&puts[0]), rv(&puts[1]), "the retry carries the re-read resourceVersion");
        assert_eq!(state.calls("GET", "/secrets/probegate-tls").len(), 2);
        assert_eq!(state.secret()["metadata"]["annotations"]["touched-by"], "someone else", "kept");
        assert_eq!(state.secret_data()[TLS_CRT], renewed.cert_pem);
    }

    #[tokio::test]
    async fn replicas_renewing_together_adopt_one_certificate() {
        let fake = fake();
        ensure(&client(&fake), &cfg()).await.expect("first ensure");
        {
            let mut state = lock(&fake);
            let old = short_lived(&state, 1);
            state.set_serving(&old);
            state.get_barrier = Some((Arc::new(tokio::sync::Barrier::new(2)), 2));
            state.log.clear();
        }
        let (a, b) = (client(&fake), client(&fake));
        let config = cfg();
        let (ra, rb) = tokio::join!(ensure(&a, &config), ensure(&b, &config));
        let ((ma, _), (mb, _)) = (ra.expect("replica a"), rb.expect("replica b"));
        assert_eq!(ma.cert_pem, mb.cert_pem, "the loser adopted the winner's certificate");
        assert_eq!(ma.key_pem, mb.key_pem);

        let state = lock(&fake);
        let mut puts: Vec<u16> = state.calls("PUT", "/secrets").iter().map(|c| c.status).collect();
        puts.sort();
        assert_eq!(puts, [200, 409]);
        assert_eq!(state.secret_data()[TLS_CRT], ma.cert_pem);
    }

    #[tokio::test]
    async fn a_missing_webhook_configuration_is_not_fatal() {
        let fake = fake();
        lock(&fake).configs.remove(&(MUTATING.to_string(), "probegate".to_string()));
        let (_, ca_pem) =
            ensure(&client(&fake), &cfg()).await.expect("ensure without the mutating configuration");
        let state = lock(&fake);
        assert!(state.bundles(VALIDATING).iter().all(|b| b.as_deref() == Some(ca_pem.as_bytes())));
        let gets = state.calls("GET", MUTATING);
        assert_eq!(gets.len(), 1);
        assert_eq!(gets[0].status, 404);
        assert!(state.calls("PATCH", MUTATING).is_empty());
    }

    #[tokio::test]
    async fn other_patch_failures_are_errors_naming_the_configuration() {
        let fake = fake();
        lock(&fake).forbid_patch = true;
        let err = ensure(&client(&fake), &cfg()).await.expect_err("forbidden patch");
        let message = format!("{err:#}");
        assert!(message.contains("MutatingWebhookConfiguration probegate: patch caBundle"), "{message}");
        assert!(message.contains("ValidatingWebhookConfiguration probegate: patch caBundle"), "{message}");
        assert!(message.contains("Forbidden") || message.contains("cannot patch"), "{message}");
    }

    #[tokio::test]
    async fn the_returned_material_serves_tls_trusted_by_the_ca_bundle() {
        let fake = fake();
        let config = cfg();
        let (material, ca_pem) = ensure(&client(&fake), &config).await.expect("ensure");
        let bundle = lock(&fake).bundles(VALIDATING)[0].clone().expect("caBundle");
        assert_eq!(bundle, ca_pem.as_bytes());

        tls::server_config(&material).expect("a rustls ServerConfig");
        tls::rustls_config(&material).expect("the axum-server config");

        // As the API server does: trust only the caBundle, dial <svc>.<ns>.svc.
        let ca = certs(&bundle).remove(0);
        let mut roots = rustls::RootCertStore::empty();
        roots.add(ca).expect("CA as a trust anchor");
        let roots = Arc::new(roots);
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let verifier = rustls::client::WebPkiServerVerifier::builder_with_provider(
            Arc::clone(&roots),
            Arc::clone(&provider),
        )
        .build()
        .expect("verifier");
        let chain = certs(&material.cert_pem);
        for name in config.dns_names() {
            let server_name = ServerName::try_from(name.clone()).expect("DNS name");
            verifier
                .verify_server_cert(&chain[0], &chain[1..], &server_name, &[], UnixTime::now())
                .unwrap_or_else(|e| panic!("{name}: {e}"));
        }
        let elsewhere = ServerName::try_from("probegate.default.svc").expect("DNS name");
        assert!(
            verifier.verify_server_cert(&chain[0], &chain[1..], &elsewhere, &[], UnixTime::now()).is_err()
        );

        // And a real handshake, in memory.
        handshake(&material, roots, provider, "probegate.probegate-system.svc").expect("TLS handshake");
    }

    fn handshake(
        material: &TlsMaterial,
        roots: Arc<rustls::RootCertStore>,
        provider: Arc<rustls::crypto::CryptoProvider>,
        name: &str,
    ) -> Result<(), rustls::Error> {
        let server_config = Arc::new(tls::server_config(material).expect("server config"));
        let client_config = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()?
            .with_root_certificates(roots)
            .with_no_client_auth();
        let server_name = ServerName::try_from(name.to_string()).expect("DNS name");
        let mut client = rustls::ClientConnection::new(Arc::new(client_config), server_name)?;
        let mut server = rustls::ServerConnection::new(server_config)?;
        for _ in 0..10 {
            let mut buf = Vec::new();
            while client.wants_write() {
                client.write_tls(&mut buf).expect("client write");
            }
            let mut rd = &buf[..];
            while !rd.is_empty() {
                server.read_tls(&mut rd).expect("server read");
                server.process_new_packets()?;
            }
            let mut buf = Vec::new();
            while server.wants_write() {
                server.write_tls(&mut buf).expect("server write");
            }
            let mut rd = &buf[..];
            while !rd.is_empty() {
                client.read_tls(&mut rd).expect("client read");
                client.process_new_packets()?;
            }
            if !client.is_handshaking() && !server.is_handshaking() {
                return Ok(());
            }
        }
        Err(rustls::Error::General("handshake did not finish".into()))
    }

    #[tokio::test]
    async fn maintain_reloads_only_when_the_certificate_changes() {
        let fake = fake();
        let client = client(&fake);
        let (current, _) = ensure(&client, &cfg()).await.expect("ensure");
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let wake = Arc::new(tokio::sync::Notify::new());
        let task =
            tokio::spawn(maintain(client, cfg(), current, Duration::from_millis(20), wake, move |m| {
                let _ = tx.send(m);
            }));
        tokio::time::sleep(Duration::from_millis(150)).await;
        assert!(rx.try_recv().is_err(), "nothing changed: no reload");

        // Another replica renewed: this one picks the new certificate up.
        let theirs = {
            let mut state = lock(&fake);
            let theirs = short_lived(&state, 24 * 200);
            state.set_serving(&theirs);
            theirs
        };
        let got =
            tokio::time::timeout(Duration::from_secs(5), rx.recv()).await.expect("a reload").expect("sent");
        assert_eq!(got.cert_pem, theirs.cert_pem);
        assert_eq!(got.key_pem, theirs.key_pem);

        // The certificate nears expiry: this replica renews it and reloads what it wrote.
        {
            let mut state = lock(&fake);
            let expiring = short_lived(&state, 2);
            state.set_serving(&expiring);
        }
        let got =
            tokio::time::timeout(Duration::from_secs(5), rx.recv()).await.expect("a reload").expect("sent");
        assert_eq!(got.cert_pem, lock(&fake).secret_data()[TLS_CRT]);
        assert!(not_after(&got.cert_pem) - OffsetDateTime::now_utc().unix_timestamp() > 300 * 86_400);
        task.abort();
    }

    #[tokio::test]
    async fn a_renamed_service_gets_a_certificate_for_its_names_from_the_same_ca() {
        let fake = fake();
        let client = client(&fake);
        let (_, ca_pem) = ensure(&client, &cfg()).await.expect("first ensure");
        let renamed = SelfManagedTls { service_name: "probegate-webhook".into(), ..cfg() };
        let (material, ca_after) = ensure(&client, &renamed).await.expect("ensure for the new name");
        assert_eq!(ca_after, ca_pem);
        let data = lock(&fake).secret_data();
        let ca = Ca::load(&data[CA_CRT], &data[CA_KEY]).expect("CA");
        let chain = certs(&material.cert_pem);
        verify_serving(&chain[0], &ca, &renamed.dns_names(), OffsetDateTime::now_utc().unix_timestamp())
            .expect("covers the new names");
        assert_eq!(lock(&fake).calls("PUT", "/secrets").len(), 1);
    }

    #[tokio::test]
    async fn a_certificate_cut_at_the_ca_expiry_is_not_renewed_over_and_over() {
        let fake = fake();
        let now = OffsetDateTime::now_utc();
        let ca = Ca::generate(now, 10).expect("a CA that expires in 10 days");
        let contents = Contents::issue(&ca, &cfg(), now).expect("issue");
        assert!(not_after(&contents.tls_crt) <= ca.not_after.unix_timestamp(), "cut at the CA's expiry");
        {
            let mut state = lock(&fake);
            let secret = serde_json::to_value(new_secret(&cfg(), &contents)).expect("JSON");
            route(&mut state, "POST", &format!("/api/v1/namespaces/{NS}/secrets"), "", Some(secret));
        }
        let client = client(&fake);
        let (first, _) = ensure(&client, &cfg()).await.expect("ensure");
        let (second, _) = ensure(&client, &cfg()).await.expect("ensure again");
        assert_eq!(first.cert_pem, contents.tls_crt);
        assert_eq!(second.cert_pem, contents.tls_crt);
        assert!(lock(&fake).calls("PUT", "/secrets").is_empty());
    }

    #[tokio::test]
    async fn a_secret_with_a_certificate_but_no_ca_is_left_alone() {
        let fake = fake();
        let foreign = tls::generate(&["probegate.probegate-system.svc".into()]).expect("generate").material;
        let secret = json!({
            "apiVersion": "v1", "kind": "Secret", "type": SECRET_TYPE,
            "metadata": {"name": "probegate-tls"},
            "data": {TLS_CRT: base64::engine::general_purpose::STANDARD.encode(&foreign.cert_pem),
                     TLS_KEY: base64::engine::general_purpose::STANDARD.encode(&foreign.key_pem)},
        });
        route(&mut lock(&fake), "POST", &format!("/api/v1/namespaces/{NS}/secrets"), "", Some(secret));
        let err = ensure(&client(&fake), &cfg()).await.expect_err("a foreign Secret");
        let message = format!("{err:#}");
        assert!(message.starts_with("Secret probegate-system/probegate-tls: holds no ca.crt"), "{message}");
        assert!(lock(&fake).writes().is_empty());
    }

    #[tokio::test]
    async fn an_empty_placeholder_secret_is_filled_in() {
        let fake = fake();
        let secret = json!({"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
                            "metadata": {"name": "probegate-tls"}, "data": {"note": "a2VwdA=="}});
        route(&mut lock(&fake), "POST", &format!("/api/v1/namespaces/{NS}/secrets"), "", Some(secret));
        let (material, ca_pem) = ensure(&client(&fake), &cfg()).await.expect("ensure");
        let state = lock(&fake);
        assert_eq!(state.secret()["type"], "Opaque", "the type is immutable and kept");
        assert_eq!(state.secret_data()[TLS_CRT], material.cert_pem);
        assert_eq!(state.secret_data()[CA_CRT], ca_pem.as_bytes());
        assert_eq!(state.secret_data()["note"], b"kept", "other entries are kept");
        assert_eq!(state.calls("PUT", "/secrets").len(), 1);
    }

    #[tokio::test]
    async fn invalid_settings_fail_before_any_call() {
        let fake = fake();
        let cfg = SelfManagedTls { cert_validity_days: 30, renew_before_days: 30, ..cfg() };
        let err = ensure(&client(&fake), &cfg).await.expect_err("renewal window as long as the validity");
        assert!(format!("{err:#}").contains("must exceed the renewal window"), "{err:#}");
        let cfg = SelfManagedTls { ca_validity_days: 100, ..SelfManagedTls::new(NS, "probegate") };
        assert!(cfg.validate().is_err());
        assert!(lock(&fake).log.is_empty());
    }
}
