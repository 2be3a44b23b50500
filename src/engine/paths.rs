//! HTTP health paths whose answer depends on more than the process, and the probe paths named for
//! the other kind of probe.
//!
//! Frameworks serve an aggregate health endpoint that runs every registered health check, the
//! database's included, beside a liveness group made for liveness probes. A liveness `httpGet` of
//! the aggregate restarts every replica when the database blips. The list is data
//! (`rules.liveness-dependency-path.knownHttpPaths` in the policy file): probegate ships entries
//! citing each framework's documentation ([`builtin`]); a policy adds its own, and
//! `defaultKnownHttpPaths: false` drops the built-in ones.

use std::sync::OnceLock;

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize};

/// One aggregate health path and the liveness path to use instead.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct KnownHttpPath {
    /// The aggregate path, compared with the probe's `httpGet.path` without its query string and
    /// trailing `/` (`/actuator/health`).
    #[serde(deserialize_with = "absolute_path")]
    pub path: String,
    /// The framework or product, for the message (`Spring Boot`).
    #[serde(deserialize_with = "non_empty_string")]
    pub framework: String,
    /// The path that answers for the process alone, for the message (`/actuator/health/liveness`).
    #[serde(deserialize_with = "absolute_path")]
    pub liveness_path: String,
    /// Where the framework documents the pair (a URL), for whoever reads the policy.
    #[serde(default)]
    pub source: String,
    /// Image patterns (`*` wildcards, matched against the image without tag or digest) that the
    /// entry is limited to; empty: any image. For a path as common as `/health`, the framework's
    /// images are the evidence that the path is that framework's aggregate.
    #[serde(default)]
    pub images: Vec<String>,
}

fn non_empty_string<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    let s = String::deserialize(d)?;
    if s.trim().is_empty() {
        return Err(serde::de::Error::custom("must not be empty"));
    }
    Ok(s)
}

fn absolute_path<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    let s = String::deserialize(d)?;
    if !s.starts_with('/') {
        return Err(serde::de::Error::custom(format!(
            "{s:?} is not an absolute path (it must start with /)"
        )));
    }
    Ok(s)
}

/// A probe path reduced for comparison: no query string or fragment, no trailing `/` (but `/`
/// stays `/`). `httpGet.path` defaults to `/` (Kubernetes API reference, HTTPGetAction).
pub fn normalize(path: &str) -> &str {
    let end = path.bytes().position(|b| b == b'?' || b == b'#').unwrap_or(path.len());
    let p = path[..end].trim_end_matches('/');
    if p.is_empty() { "/" } else { p }
}

/// An image reference without its tag or digest: `registry:5000/team/app:1.2@sha256:..` →
/// `registry:5000/team/app`.
fn image_name(image: &str) -> &str {
    let image = image.split('@').next().unwrap_or(image);
    match image.rfind(':') {
        Some(i) if !image[i..].contains('/') => &image[..i],
        _ => image,
    }
}

impl KnownHttpPath {
    /// Whether the entry applies to a container running `image`.
    pub fn applies_to_image(&self, image: &str) -> bool {
        let name = image_name(image).to_ascii_lowercase();
        self.images.is_empty()
            || self.images.iter().any(|p| super::known::wildcard(&p.to_ascii_lowercase(), &name))
    }

    /// Whether a probe's `httpGet.path` is this entry's aggregate path.
    pub fn matches(&self, probe_path: &str) -> bool {
        normalize(probe_path) == normalize(&self.path)
    }
}

fn entry(path: &str, framework: &str, liveness_path: &str, source: &str, images: &[&str]) -> KnownHttpPath {
    KnownHttpPath {
        path: path.into(),
        framework: framework.into(),
        liveness_path: liveness_path.into(),
        source: source.into(),
        images: images.iter().map(|s| s.to_string()).collect(),
    }
}

/// The built-in list. Each entry's `source` is the framework's documentation of the pair.
pub fn builtin() -> &'static [KnownHttpPath] {
    static LIST: OnceLock<Vec<KnownHttpPath>> = OnceLock::new();
    LIST.get_or_init(|| {
        vec![
            // "Kubernetes Probes": /actuator/health aggregates every HealthIndicator (DataSource,
            // Redis, ...); the liveness group contains only the LivenessState by default.
            entry(
                "/actuator/health",
                "Spring Boot",
                "/actuator/health/liveness",
                "https://docs.spring.io/spring-boot/reference/actuator/endpoints.html#actuator.endpoints.kubernetes-probes",
                &[],
            ),
            // SmallRye Health: /q/health runs every check (liveness, readiness, startup, e.g. the
            // datasource's readiness check); /q/health/live only the liveness ones.
            entry("/q/health", "Quarkus", "/q/health/live", "https://quarkus.io/guides/smallrye-health", &[]),
            // MicroProfile Health 3.x: /health is the union of /health/live, /health/ready and
            // /health/started (Open Liberty, Payara, WildFly, Helidon 2-3, Keycloak's management
            // port). `/health` is common far beyond MicroProfile: only these runtimes' images.
            entry(
                "/health",
                "MicroProfile Health",
                "/health/live",
                "https://download.eclipse.org/microprofile/microprofile-health-4.0/microprofile-health-spec-4.0.html",
                &["*openliberty*", "*open-liberty*", "*websphere-liberty*", "*payara*", "*wildfly*", "*helidon*", "*keycloak*"],
            ),
            // Micronaut management: /health aggregates every HealthIndicator; /health/liveness
            // holds only the liveness ones.
            entry(
                "/health",
                "Micronaut",
                "/health/liveness",
                "https://docs.micronaut.io/latest/guide/#healthEndpoint",
                &["*micronaut*"],
            ),
            // .NET Aspire service defaults: /health runs every registered check, /alive only the
            // checks tagged "live" (ASP.NET Core health checks filtered by tag). The images: Aspire's,
            // and ASP.NET Core's runtime (`mcr.microsoft.com/dotnet/aspnet`), not every name holding
            // `aspnet`: .NET Framework's `mcr.microsoft.com/dotnet/framework/aspnet` has no health
            // checks middleware, so its `/health` is the application's own (s26 fresh user).
            entry(
                "/health",
                ".NET Aspire",
                "/alive",
                "https://learn.microsoft.com/dotnet/aspire/fundamentals/health-checks",
                &["*aspire*", "*dotnet/aspnet"],
            ),
            // Helidon 4 observability: /observe/health aggregates, /observe/health/live is liveness.
            entry(
                "/observe/health",
                "Helidon 4",
                "/observe/health/live",
                "https://helidon.io/docs/v4/se/guides/health",
                &[],
            ),
            // Dropwizard admin servlet: /healthcheck runs every registered HealthCheck (database
            // included); /ping answers for the process.
            entry(
                "/healthcheck",
                "Dropwizard (admin port)",
                "/ping",
                "https://www.dropwizard.io/en/stable/manual/core.html#health-checks",
                &[],
            ),
        ]
    })
}

/// Paths named for readiness (rules.md §1.1.6): a liveness probe on one is probably swapped.
const READINESS_NAMED: &[&str] = &[
    "ready",
    "readyz",
    "readiness",
    "health/ready",
    "health/readiness",
    "q/health/ready",
    "actuator/health/readiness",
];

/// Paths named for liveness: a readiness probe on one is probably swapped.
const LIVENESS_NAMED: &[&str] = &[
    "live",
    "livez",
    "liveness",
    "health/live",
    "health/liveness",
    "q/health/live",
    "actuator/health/liveness",
];

/// What a path's last segments name: `Some(true)` for readiness (`/ready`, `/readyz`,
/// `/health/readiness`), `Some(false)` for liveness (`/livez`, `/health/live`), `None` otherwise.
/// Only whole segments at the end count (`/api/v1/readyz`, not `/already`).
pub fn named_for_readiness(path: &str) -> Option<bool> {
    let p = normalize(path).trim_start_matches('/').as_bytes();
    // `p`, lowercased, is `n` or ends with `/n` (the names are lowercase ASCII).
    let ends = |list: &[&str]| {
        list.iter().any(|n| {
            let n = n.as_bytes();
            p.len() >= n.len()
                && p[p.len() - n.len()..].eq_ignore_ascii_case(n)
                && (p.len() == n.len() || p[p.len() - n.len() - 1] == b'/')
        })
    };
    if ends(READINESS_NAMED) {
        Some(true)
    } else if ends(LIVENESS_NAMED) {
        Some(false)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matching_ignores_query_and_trailing_slash() {
        let spring = &builtin()[0];
        assert!(spring.matches("/actuator/health"));
        assert!(spring.matches("/actuator/health/"));
        assert!(spring.matches("/actuator/health?x=1"));
        assert!(!spring.matches("/actuator/health/liveness"));
        assert!(!spring.matches("/actuator"));
    }

    #[test]
    fn every_builtin_liveness_path_is_not_itself_flagged() {
        for e in builtin() {
            assert!(!builtin().iter().any(|o| o.matches(&e.liveness_path)), "{}", e.liveness_path);
            assert!(e.source.starts_with("https://"), "{}", e.path);
            assert_ne!(named_for_readiness(&e.liveness_path), Some(true), "{}", e.liveness_path);
        }
    }

    #[test]
    fn generic_paths_need_the_framework_image() {
        let mp = builtin().iter().find(|e| e.framework == "MicroProfile Health").unwrap();
        assert!(mp.applies_to_image("icr.io/appcafe/open-liberty:24.0.0.1-full-java17-openj9"));
        assert!(mp.applies_to_image("quay.io/keycloak/keycloak:26.0"));
        assert!(!mp.applies_to_image("ghcr.io/acme/orders:1.2"));
        assert_eq!(image_name("registry:5000/team/app:1.2@sha256:00"), "registry:5000/team/app");
        assert_eq!(image_name("registry:5000/team/app"), "registry:5000/team/app");
    }

    #[test]
    fn names() {
        for p in ["/ready", "/readyz", "/health/readiness", "/q/health/ready", "/api/readyz/", "/READY"] {
            assert_eq!(named_for_readiness(p), Some(true), "{p}");
        }
        for p in ["/livez", "/health/live", "/actuator/health/liveness", "/q/health/live"] {
            assert_eq!(named_for_readiness(p), Some(false), "{p}");
        }
        for p in ["/", "/healthz", "/already", "/health", "/alive", "/delivery"] {
            assert_eq!(named_for_readiness(p), None, "{p}");
        }
    }
}
