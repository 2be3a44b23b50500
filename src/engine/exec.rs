//! TEMPORARY stub; replaced by the real analyzer.
#![allow(missing_docs)]
use std::collections::HashMap;
pub enum EnvValue {
    Literal(String),
    PodIp,
    PodName,
    Unresolved,
}
pub struct ExecEnv {
    pub vars: HashMap<String, EnvValue>,
    pub has_env_from: bool,
}
#[derive(Debug)]
pub enum DependencyCategory {
    Database,
    Network,
}
pub struct Dependency {
    pub program: String,
    pub category: DependencyCategory,
    pub target: String,
    pub command: String,
}
pub fn find_dependency(_argv: &[String], _env: &ExecEnv) -> Option<Dependency> {
    None
}
pub fn expand_kubelet_vars(arg: &str, _env: &ExecEnv) -> String {
    arg.to_string()
}
