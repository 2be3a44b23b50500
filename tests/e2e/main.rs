//! End-to-end tests against a real kube-apiserver (cargo feature `e2e`; see docs/e2e.md).
//!
//! `cargo test --features e2e --test e2e` with `KUBEBUILDER_ASSETS` set to a folder holding
//! `kube-apiserver`, `etcd` and `kubectl`. One API server serves every test of this binary; each
//! test works in its own namespace, with its own probegate process and webhook configurations.

pub mod harness;

mod annotations;
mod audit;
mod bypasses;
mod configmaps;
mod deploy;
mod fixtures;
mod namespaces;
mod observability;
mod reapply;
mod selfmanaged;
mod smoke;
mod webhooks;
