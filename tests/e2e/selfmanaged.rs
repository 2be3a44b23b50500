//! `--self-managed-tls` against a real API server: the Secret created once by two replicas started
//! together and served by both; the serving certificate renewed from the same CA when it nears
//! expiry, and served without a restart; the `caBundle` of both webhook configurations kept right
//! when they are created after probegate, re-created, or overwritten. What needs an interleaving
//! on demand (both replicas reading before either writes, a Secret changed between a read and an
//! update) stays tested against the in-memory fake in `src/server/selfmanaged.rs`.

use std::time::Duration;

use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhookConfiguration, ValidatingWebhookConfiguration,
};
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use serde_json::json;

use crate::harness::{self, Probegate, WebhookOptions, Webhooks};

/// What the issue asks: the `caBundle` back within 5 s of a change.
const RESTORE_DEADLINE: Duration = Duration::from_secs(5);

fn bundles_mutating(c: &MutatingWebhookConfiguration) -> Vec<Vec<u8>> {
    c.webhooks
        .iter()
        .flatten()
        .map(|w| w.client_config.ca_bundle.clone().map(|b| b.0).unwrap_or_default())
        .collect()
}

fn bundles_validating(c: &ValidatingWebhookConfiguration) -> Vec<Vec<u8>> {
    c.webhooks
        .iter()
        .flatten()
        .map(|w| w.client_config.ca_bundle.clone().map(|b| b.0).unwrap_or_default())
        .collect()
}

/// deploy/overlays/self-managed's RBAC for ServiceAccount `ns/probegate`, with the configurations
/// named `name`: the Secret in `ns`, and get/list/watch/patch on the two configurations by name.
async fn grant_self_managed_rbac(ns: &str, name: &str) {
    use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, Role, RoleBinding};
    let client = harness::client().await;
    let pp = PostParams::default();
    let subject = json!([{"kind": "ServiceAccount", "name": "probegate", "namespace": ns}]);
    let role: Role = serde_json::from_value(json!({"metadata": {"name": "probegate-tls"}, "rules": [
        {"apiGroups": [""], "resources": ["secrets"], "resourceNames": ["probegate-tls"], "verbs": ["get", "update"]},
        {"apiGroups": [""], "resources": ["secrets"], "verbs": ["create"]}]}))
    .unwrap();
    Api::<Role>::namespaced(client.clone(), ns).create(&pp, &role).await.unwrap();
    let binding: RoleBinding = serde_json::from_value(json!({"metadata": {"name": "probegate-tls"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "probegate-tls"},
        "subjects": subject}))
    .unwrap();
    Api::<RoleBinding>::namespaced(client.clone(), ns).create(&pp, &binding).await.unwrap();
    // The rule as deploy/overlays/self-managed/clusterrole.yaml has it (read from there).
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/deploy/overlays/self-managed/clusterrole.yaml"
    ))
    .unwrap();
    let mut role: serde_json::Value = probegate::manifest::parse_documents(&text).unwrap().remove(0);
    role["metadata"] = json!({"name": name});
    for rule in role["rules"].as_array_mut().unwrap() {
        rule["resourceNames"] = json!([name]);
    }
    let role: ClusterRole = serde_json::from_value(role).unwrap();
    Api::<ClusterRole>::all(client.clone()).create(&pp, &role).await.unwrap();
    let binding: ClusterRoleBinding = serde_json::from_value(json!({"metadata": {"name": name},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name},
        "subjects": subject}))
    .unwrap();
    Api::<ClusterRoleBinding>::all(client).create(&pp, &binding).await.unwrap();
}

#[tokio::test]
async fn the_ca_bundle_is_restored_within_seconds_of_a_change_or_re_creation() {
    let ns = harness::namespace("selfmanaged").await;
    let name = format!("e2e-{ns}");
    grant_self_managed_rbac(&ns, &name).await;
    let kubeconfig = harness::cluster().service_account_kubeconfig(&ns, "probegate").await;
    let pg = Probegate::start_with_kubeconfig(
        &[
            "--self-managed-tls",
            "--no-namespace-watch",
            "--service-namespace",
            &ns,
            "--mutating-webhook-configuration",
            &name,
            "--validating-webhook-configuration",
            &name,
        ],
        &kubeconfig,
    );
    let client = harness::client().await;
    let secret =
        Api::<Secret>::namespaced(client.clone(), &ns).get("probegate-tls").await.expect("the Secret");
    let ca = secret.data.unwrap()["ca.crt"].0.clone();
    assert!(String::from_utf8_lossy(&ca).contains("BEGIN CERTIFICATE"));

    // Configurations created after probegate started, without a caBundle: filled in.
    let options = WebhookOptions {
        ca_bundle: Some(String::new()),
        failure_policy: "Ignore".into(),
        wait_until_called: false,
        ..Default::default()
    };
    let _hooks = Webhooks::register_with(&pg, &ns, options).await;
    let mutating: Api<MutatingWebhookConfiguration> = Api::all(client.clone());
    let validating: Api<ValidatingWebhookConfiguration> = Api::all(client.clone());
    let restored = || async {
        let m = mutating.get_opt(&name).await.ok()??;
        let v = validating.get_opt(&name).await.ok()??;
        let all = bundles_mutating(&m).into_iter().chain(bundles_validating(&v));
        all.into_iter().all(|b| b == ca).then_some(())
    };
    harness::eventually(RESTORE_DEADLINE, "caBundle set on configurations created after the start", restored)
        .await;

    // Deleted and re-created (as an emergency procedure or a reinstall does): restored.
    let mut fresh = validating.get(&name).await.unwrap();
    validating.delete(&name, &DeleteParams::default()).await.unwrap();
    fresh.metadata = kube::api::ObjectMeta { name: Some(name.clone()), ..Default::default() };
    for w in fresh.webhooks.iter_mut().flatten() {
        w.client_config.ca_bundle = None;
    }
    validating.create(&PostParams::default(), &fresh).await.unwrap();
    harness::eventually(RESTORE_DEADLINE, "caBundle restored after re-creation", restored).await;

    // Overwritten (a re-apply of manifests that carry another bundle): restored.
    let patch =
        json!({"webhooks": [{"name": "pods.mutate.probegate.dev", "clientConfig": {"caBundle": "Zm9v"}}]});
    mutating.patch(&name, &PatchParams::default(), &Patch::Strategic(patch)).await.unwrap();
    harness::eventually(RESTORE_DEADLINE, "caBundle restored after an overwrite", restored).await;
    // All with the overlay's RBAC only: the watch by name was allowed.
    let denied = pg.log_lines().into_iter().filter(|l| l.to_string().contains("forbidden")).count();
    assert_eq!(denied, 0, "{:?}", pg.log_lines());
}

/// `probegate serve --self-managed-tls` for namespace `ns`, configurations named `name`, as
/// ServiceAccount `ns/probegate` with the overlay's RBAC (granted by the caller).
fn start_self_managed(ns: &str, name: &str, kubeconfig: &std::path::Path) -> Probegate {
    let args = [
        "--self-managed-tls",
        "--no-namespace-watch",
        "--service-namespace",
        ns,
        "--mutating-webhook-configuration",
        name,
        "--validating-webhook-configuration",
        name,
    ];
    Probegate::start_with_kubeconfig(&args, kubeconfig)
}

/// The DER certificates of a PEM chain.
fn der_chain(pem: &[u8]) -> Vec<Vec<u8>> {
    use rustls::pki_types::CertificateDer;
    use rustls::pki_types::pem::PemObject as _;
    CertificateDer::pem_slice_iter(pem).map(|c| c.expect("a PEM certificate").to_vec()).collect()
}

/// Seconds from now until the certificate `der` expires.
fn seconds_left(der: &[u8]) -> i64 {
    let (_, cert) = x509_parser::parse_x509_certificate(der).expect("X.509");
    cert.validity().not_after.timestamp() - time::OffsetDateTime::now_utc().unix_timestamp()
}

/// The Secret's entries.
async fn secret_data(ns: &str) -> std::collections::BTreeMap<String, Vec<u8>> {
    let secret = Api::<Secret>::namespaced(harness::client().await, ns).get("probegate-tls").await.unwrap();
    secret.data.unwrap_or_default().into_iter().map(|(k, v)| (k, v.0)).collect()
}

/// The leaf certificate (DER) `pg` serves to a client that trusts only `ca_pem` and asks for the
/// Service's name `probegate.NS.svc` (what the API server asks for): the handshake fails unless
/// the certificate chains to that CA and covers that name.
async fn served_leaf(pg: &Probegate, ns: &str, ca_pem: &[u8]) -> Result<Vec<u8>, reqwest::Error> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let host = format!("probegate.{ns}.svc");
    let client = reqwest::Client::builder()
        .use_rustls_tls()
        .tls_built_in_root_certs(false)
        .add_root_certificate(reqwest::Certificate::from_pem(ca_pem).expect("a PEM CA"))
        .resolve(&host, pg.addr)
        .tls_info(true)
        .timeout(Duration::from_secs(5))
        .build()
        .expect("a client");
    let r = client.get(format!("https://{host}:{}/metrics", pg.addr.port())).send().await?;
    let info = r.extensions().get::<reqwest::tls::TlsInfo>().expect("TLS info");
    Ok(info.peer_certificate().expect("a peer certificate").to_vec())
}

#[tokio::test]
async fn two_replicas_started_together_share_one_secret_and_serve_its_certificate() {
    let ns = harness::namespace("selfmanaged-race").await;
    let name = format!("e2e-{ns}");
    grant_self_managed_rbac(&ns, &name).await;
    let kubeconfig = harness::cluster().service_account_kubeconfig(&ns, "probegate").await;
    // Both processes start at once, with no Secret yet: each reads, finds none, and creates one
    // unless the other's create came first (then its own gets 409 AlreadyExists and it adopts).
    let (a, b) = std::thread::scope(|s| {
        let a = s.spawn(|| start_self_managed(&ns, &name, &kubeconfig));
        let b = s.spawn(|| start_self_managed(&ns, &name, &kubeconfig));
        (a.join().unwrap(), b.join().unwrap())
    });

    let data = secret_data(&ns).await;
    assert_eq!(
        data.keys().map(String::as_str).collect::<Vec<_>>(),
        ["ca.crt", "ca.key", "tls.crt", "tls.key"]
    );
    let secret = Api::<Secret>::namespaced(harness::client().await, &ns).get("probegate-tls").await.unwrap();
    assert_eq!(secret.type_.as_deref(), Some("kubernetes.io/tls"));
    assert_eq!(secret.metadata.labels.unwrap()["app.kubernetes.io/managed-by"], "probegate");
    let chain = der_chain(&data["tls.crt"]);
    assert_eq!(chain.len(), 2, "the serving certificate, then the CA");
    assert_eq!(chain[1], der_chain(&data["ca.crt"])[0]);
    let days = seconds_left(&chain[0]) / 86_400;
    assert!((364..=365).contains(&days), "{days} days");

    // Exactly one replica created the Secret; the other adopted it (after a 409, or by reading it).
    let said = |pg: &Probegate, what: &str| pg.log_lines().iter().any(|l| l["message"] == what);
    let created = [&a, &b].iter().filter(|pg| said(pg, "created a CA and a serving certificate")).count();
    assert_eq!(created, 1, "{:?}\n{:?}", a.log_lines(), b.log_lines());
    let raced =
        [&a, &b].iter().any(|pg| said(pg, "another replica created the Secret first; adopting its CA"));
    eprintln!(
        "the second replica {}",
        if raced { "lost the create race (409) and adopted" } else { "read the Secret" }
    );

    // Both serve the Secret's certificate, trusted by its CA for the Service's name.
    for pg in [&a, &b] {
        let leaf = served_leaf(pg, &ns, &data["ca.crt"]).await.expect("a handshake trusting the Secret's CA");
        assert_eq!(leaf, chain[0], "replica {} serves the Secret's certificate", pg.pid());
    }
    // A client trusting another CA is refused: the check above can fail.
    let other = probegate::server::tls::generate(&["localhost".into()]).unwrap();
    assert!(served_leaf(&a, &ns, other.ca_pem.as_bytes()).await.is_err());
}

#[tokio::test]
async fn an_expiring_certificate_is_renewed_with_the_same_ca_and_served_without_a_restart() {
    let ns = harness::namespace("selfmanaged-renew").await;
    let name = format!("e2e-{ns}");
    grant_self_managed_rbac(&ns, &name).await;
    let kubeconfig = harness::cluster().service_account_kubeconfig(&ns, "probegate").await;
    let pg = start_self_managed(&ns, &name, &kubeconfig);
    let options = WebhookOptions {
        ca_bundle: Some(String::new()),
        failure_policy: "Ignore".into(),
        wait_until_called: false,
        ..Default::default()
    };
    let _hooks = Webhooks::register_with(&pg, &ns, options).await;
    let first = secret_data(&ns).await;

    // Another replica (this test) renewed a while ago with a certificate that now expires within
    // a day, inside the 30-day renewal window: issued by the Secret's own CA, so only its expiry
    // is wrong.
    let ca_pem = String::from_utf8(first["ca.crt"].clone()).unwrap();
    let ca_key = rcgen::KeyPair::from_pem(std::str::from_utf8(&first["ca.key"]).unwrap()).unwrap();
    let issuer = rcgen::Issuer::from_ca_cert_pem(&ca_pem, ca_key).unwrap();
    let names: Vec<String> = ["", ".NS", ".NS.svc", ".NS.svc.cluster.local"]
        .iter()
        .map(|s| format!("probegate{}", s.replace("NS", &ns)))
        .collect();
    let mut params = rcgen::CertificateParams::new(names).unwrap();
    let now = time::OffsetDateTime::now_utc();
    params.not_before = now - time::Duration::minutes(5);
    params.not_after = now + time::Duration::hours(20);
    let key = rcgen::KeyPair::generate().unwrap();
    let expiring = params.signed_by(&key, &issuer).unwrap();
    let secrets = Api::<Secret>::namespaced(harness::client().await, &ns);
    let mut secret = secrets.get("probegate-tls").await.unwrap();
    let data = secret.data.as_mut().unwrap();
    data.insert(
        "tls.crt".into(),
        k8s_openapi::ByteString(format!("{}{ca_pem}", expiring.pem()).into_bytes()),
    );
    data.insert("tls.key".into(), k8s_openapi::ByteString(key.serialize_pem().into_bytes()));
    secrets.replace("probegate-tls", &PostParams::default(), &secret).await.unwrap();

    // The next check (woken here by a change of a webhook configuration, as a re-apply does;
    // otherwise every 5 minutes) renews it: a year's certificate from the same CA, in the Secret
    // and served by the running process.
    let touch = json!({"metadata": {"labels": {"touched": "yes"}}});
    Api::<MutatingWebhookConfiguration>::all(harness::client().await)
        .patch(&name, &PatchParams::default(), &Patch::Merge(&touch))
        .await
        .unwrap();
    let renewed = harness::eventually(RESTORE_DEADLINE, "the expiring certificate renewed", || async {
        let data = secret_data(&ns).await;
        let leaf = der_chain(&data["tls.crt"]).remove(0);
        (leaf != expiring.der().to_vec()).then_some(data)
    })
    .await;
    assert_eq!(renewed["ca.crt"], first["ca.crt"], "the same CA");
    assert_eq!(renewed["ca.key"], first["ca.key"]);
    let leaf = der_chain(&renewed["tls.crt"]).remove(0);
    assert_ne!(leaf, der_chain(&first["tls.crt"])[0], "a new certificate, not the first one back");
    assert_ne!(renewed["tls.key"], key.serialize_pem().into_bytes(), "a new key");
    let days = seconds_left(&leaf) / 86_400;
    assert!((364..=365).contains(&days), "{days} days");
    harness::eventually(RESTORE_DEADLINE, "the renewed certificate served", || async {
        let served = served_leaf(&pg, &ns, &first["ca.crt"]).await.ok()?;
        (served == leaf).then_some(())
    })
    .await;
    let reloaded = pg.log_lines().iter().any(|l| l["message"] == "serving certificate changed; reloading it");
    assert!(reloaded, "{:?}", pg.log_lines());
}
