//! probegate: a Kubernetes admission webhook that enforces health-probe standards.
//!
//! - [`policy`]: the policy file model and loading (pure).
//! - [`engine`]: the rules: a PodSpec in, findings and a JSONPatch out (pure).
//! - [`admission`]: AdmissionReview in, AdmissionReview out (pure glue).
//! - [`audit`]: `probegate audit`, the verdicts on what already runs in a cluster (a shell).
//! - [`server`]: the HTTPS webhook server (axum + rustls), a thin shell around the above.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod admission;
pub mod audit;
pub mod cli;
pub mod engine;
pub mod manifest;
pub mod policy;
pub mod server;
