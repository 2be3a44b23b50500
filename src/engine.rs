//! The policy engine: a PodSpec and the policy's rules in, findings and a JSONPatch out.
//!
//! Pure and synchronous: no I/O, no clock, no globals. The HTTPS server and the CLI are shells
//! around [`evaluate`].
//!
//! Containers evaluated: `spec.containers` and native sidecars (`spec.initContainers` entries with
//! `restartPolicy: Always`, Kubernetes docs "Sidecar Containers"). Never ordinary init containers
//! (probes are forbidden on them) nor ephemeral containers (no probes or lifecycle allowed).
//!
//! Patches only ever `add` object members (or `remove` one that the received object has), at
//! paths whose parents exist in the object as received, with container indexes taken from the
//! received arrays: every operation applies to the object exactly as the API server sent it, and
//! members the typed model does not know are never touched.

mod checklist;
pub mod configmaps;
/// Values Kubernetes fills in when a manifest leaves them out, and the kubelet's restart back-off.
/// Sources: Kubernetes API reference (Probe: `timeoutSeconds` 1, `periodSeconds` 10,
/// `successThreshold` 1, `failureThreshold` 3; PodSpec: `terminationGracePeriodSeconds` 30) and the
/// docs page "Pod Lifecycle" (CrashLoopBackOff: 10 s doubling to 300 s).
pub mod defaults {
    /// Probe `timeoutSeconds`, in seconds.
    pub const TIMEOUT_SECONDS: i32 = 1;
    /// Probe `periodSeconds`, in seconds.
    pub const PERIOD_SECONDS: i32 = 10;
    /// Probe `successThreshold`.
    pub const SUCCESS_THRESHOLD: i32 = 1;
    /// Probe `failureThreshold`.
    pub const FAILURE_THRESHOLD: i32 = 3;
    /// Pod `terminationGracePeriodSeconds`, in seconds.
    pub const TERMINATION_GRACE_PERIOD_SECONDS: i64 = 30;
    /// First restart back-off of a crashing container, in seconds.
    pub const RESTART_BACKOFF_INITIAL_SECONDS: u32 = 10;
    /// Longest restart back-off, in seconds.
    pub const RESTART_BACKOFF_MAX_SECONDS: u32 = 300;

    /// A probe field as messages show it: its value as the kubelet uses it, followed by
    /// ` (default)` when the manifest leaves it out or sets 0, which the API server replaces with
    /// `default` (`SetDefaults_Probe`), e.g. `1 (default)` for an unset `timeoutSeconds`. At
    /// admission the API server has filled it in already, so only `check` and `explain` show the mark.
    pub fn shown(value: Option<i32>, default: i32) -> String {
        match value {
            Some(v) if v > 0 => v.to_string(),
            _ => format!("{default} (default)"),
        }
    }
}
pub mod exec;
mod hosts;
pub mod known;
pub mod paths;
mod rules;
mod scripts;
pub mod simulate;
pub mod workload;

use json_patch::{Patch, PatchOperation};

use crate::policy::{Action, ContainerExemption, RuleId, RuleSet};
pub use checklist::metrics_only;
pub use configmaps::{ConfigMapLookup, ConfigMapSource, NoConfigMaps, StaticConfigMaps, configmaps_needed};
pub use exec::{PARSE_CACHE_ENTRIES, PARSE_CACHE_TEXT_BYTES, ParseCache};
pub use hosts::redact_host;
pub use workload::{ObjectMeta, OwnerReference, Workload, WorkloadError, WorkloadKind};

/// Which list of the PodSpec a container is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub enum ContainerKind {
    /// `spec.containers[]`.
    App,
    /// `spec.initContainers[]` with `restartPolicy: Always` (a native sidecar).
    Sidecar,
}

/// One rule's verdict on one container.
#[derive(Clone, Debug, PartialEq)]
pub struct Finding {
    /// The rule that found it.
    pub rule: RuleId,
    /// The rule's configured action (`deny`, `warn` or `mutate`; never `off`).
    pub action: Action,
    /// The container's name.
    pub container: String,
    /// Which list the container is in.
    pub container_kind: ContainerKind,
    /// What is wrong and what to do instead, without the container name or rule id (the caller
    /// formats `container NAME: MESSAGE (RULE-ID)`). Never contains env values.
    pub message: String,
    /// The JSONPatch operations that fix it, relative to the object root. Non-empty only when the
    /// action is `mutate` and the fix is possible (a `prestop-sleep` with too short a grace period,
    /// say, has none: it is reported as a warning instead).
    pub patch: Vec<PatchOperation>,
    /// The message as it reads when the patch is not applied (audit mode, a dry run): "would add
    /// a startupProbe ..." where [`Finding::message`] says "added one ...". `None` when the finding
    /// has no patch (its message then says nothing was patched).
    pub dry_run_message: Option<String>,
    /// For `liveness-dependency` and `readiness-shared-dependency`: how the probe's result follows
    /// what it reaches, as the message says it. `explain` reads it rather than analysing again, so
    /// that it says what `check` says. `None` for the other rules.
    pub coupling: Option<Coupling>,
}

/// How a probe's result follows a dependency it reaches (see [`Finding::coupling`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Coupling {
    /// The dependency's outage fails the probe (`liveness-dependency` denies it under `deny`).
    Fails,
    /// An exec client reaches the dependency, but its exit status cannot fail the probe (it runs
    /// in the background, its pipeline's status is a filter's, a later command's status is the
    /// script's, ...): an outage that makes the client fail restarts nothing, and only a client
    /// that hangs past the probe's `timeoutSeconds` fails it (Kubernetes docs, exec probes: the
    /// command's exit status decides; a command over `timeoutSeconds` is a failure).
    HangOnly {
        /// The client program, as the message names it (`pg_isready`).
        program: String,
        /// What it reaches, as the message shows it (`db`).
        target: String,
        /// Why its exit status cannot fail the probe (`it runs in the background (`&`)`).
        how: String,
    },
    /// Reported without certainty: the target may be this Pod (a host known only at run time, an
    /// address that may be the node), whether the client's status fails the probe is known only
    /// at run time, or the probe does not run what it says. Never a denial.
    Uncertain,
}

impl Finding {
    /// `container NAME: MESSAGE (RULE-ID)`, the form used in denials, warnings and reports.
    pub fn describe(&self) -> String {
        display_safe(&format!("container {}: {} ({})", self.container, self.message, self.rule)).into_owned()
    }

    /// As [`Finding::describe`], with what the patch would do instead of what it did: for audit
    /// mode, where nothing is patched.
    pub fn describe_dry_run(&self) -> String {
        let message = self.dry_run_message.as_deref().unwrap_or(&self.message);
        display_safe(&format!("container {}: {} ({})", self.container, message, self.rule)).into_owned()
    }
}

/// Is `c` unsafe to show as is: a control character (newline, ESC, BEL), a line or paragraph
/// separator, or an invisible format character that reorders or hides text (bidi overrides and
/// isolates, zero-width characters, the byte-order mark)?
fn is_unsafe_to_show(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{200B}'..='\u{200F}' | '\u{2028}'..='\u{202E}' | '\u{2060}'..='\u{2069}' | '\u{FEFF}')
}

/// `s` cut to at most `max` characters, with `…` added when it was cut: for text from a request
/// that is echoed back (an error naming a 3 MB `apiVersion` repeats 64 characters of it).
pub fn excerpt(s: &str, max: usize) -> std::borrow::Cow<'_, str> {
    if s.chars().count() <= max {
        return std::borrow::Cow::Borrowed(s);
    }
    std::borrow::Cow::Owned(s.chars().take(max).collect::<String>() + "…")
}

/// `s` cut to at most `max` characters, `…` included, between words: after the last blank in the
/// second half of what fits, else after the last other separator (ASCII punctuation) there, else
/// at the bound (one word longer than half of `max`). Counted in characters, so never inside one
/// (the API server also counts warnings in runes). `s` itself when it fits.
pub fn cut_between_words(s: &str, max: usize) -> String {
    let chars: Vec<char> = s.chars().collect();
    if chars.len() <= max {
        return s.to_string();
    }
    let head = &chars[..max.saturating_sub(1)];
    let separator = |c: char| c.is_whitespace() || c.is_ascii_punctuation();
    // Already between words: the first character left out starts a new one, or the last kept ends one.
    let at_boundary =
        head.last().is_none_or(|&c| separator(c)) || chars.get(head.len()).is_none_or(|&c| separator(c));
    let cut = if at_boundary {
        head.len()
    } else {
        let after = |pred: &dyn Fn(char) -> bool| {
            head.iter().rposition(|&c| pred(c)).filter(|&i| i >= max / 2).map(|i| i + 1)
        };
        after(&|c| c.is_whitespace()).or_else(|| after(&separator)).unwrap_or(head.len())
    };
    head[..cut].iter().collect::<String>().trim_end().to_string() + "…"
}

/// `s` cut to at most `max` characters, `…` included, for a reader: at a blank in the second half
/// of what fits, the last one where the kept text closes every backtick, double quote and
/// parenthesis it opens (else the last blank there), a trailing `,`, `;` or `:` dropped before the
/// `…`; [`cut_between_words`] when no blank is there (one long word). `s` itself when it fits.
/// Admission warnings use it: "... (`| cat`, `| tee`…" or "... is the last filter…" (of
/// "filter's") read as the reason cut in the middle (fresh-user pass).
pub fn cut_at_blank(s: &str, max: usize) -> String {
    let chars: Vec<char> = s.chars().collect();
    if chars.len() <= max {
        return s.to_string();
    }
    let room = max.saturating_sub(1);
    let (mut ticks, mut quotes, mut depth) = (0usize, 0usize, 0isize);
    let (mut any, mut closed) = (None, None);
    for (i, &c) in chars.iter().enumerate().take(room + 1) {
        // Cutting before chars[i] keeps chars[..i]; what it opened is counted below, after.
        if c.is_whitespace() && i >= max / 2 {
            any = Some(i);
            if ticks % 2 == 0 && quotes % 2 == 0 && depth == 0 {
                closed = Some(i);
            }
        }
        match c {
            '`' => ticks += 1,
            '"' => quotes += 1,
            '(' => depth += 1,
            ')' => depth -= 1,
            _ => {}
        }
    }
    match closed.or(any) {
        Some(i) => {
            let kept: String = chars[..i].iter().collect();
            kept.trim_end_matches(|c: char| c.is_whitespace() || matches!(c, ',' | ';' | ':')).to_string()
                + "…"
        }
        None => cut_between_words(s, max),
    }
}

/// A command `s` cut to at most `max` characters, `…` included, between words only: at the last
/// blank that leaves room for the `…` (the blanks before it dropped). A first word longer than
/// that is cut after its last `/`, `=` or `,` that fits (`dns:///…`), characters a `host:port`
/// never holds, so the cut never splits a host from its port; a word with none of them, at the
/// bound. `s` itself when it fits.
pub fn cut_command(s: &str, max: usize) -> String {
    let chars: Vec<char> = s.chars().collect();
    if chars.len() <= max {
        return s.to_string();
    }
    let room = max.saturating_sub(1);
    // A blank at `room` itself is a cut that keeps `room` characters.
    let head = &chars[..=room.min(chars.len() - 1)];
    let cut = match head.iter().rposition(|c| c.is_whitespace()) {
        Some(i) if head[..i].iter().any(|c| !c.is_whitespace()) => i,
        _ => head[..room].iter().rposition(|c| matches!(c, '/' | '=' | ',')).map_or(room, |i| i + 1),
    };
    chars[..cut].iter().collect::<String>().trim_end().to_string() + "…"
}

/// The length in bytes of `value` written as JSON, counted as it is written out, without keeping
/// the text (a 3 MB exec handler is measured before it is copied, s26); `usize::MAX` when it
/// cannot be written.
pub(crate) fn json_len<T: serde::Serialize + ?Sized>(value: &T) -> usize {
    /// Counts the bytes written to it and keeps none.
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0 = self.0.saturating_add(bytes.len());
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    serde_json::to_writer(&mut count, value).map_or(usize::MAX, |()| count.0)
}

/// Text from an object (names, commands) made safe for a message, a warning, a terminal or a log
/// line: every character that could start a new line, drive a terminal or reorder the text is
/// written as its `\u{..}` escape. Borrowed when there is nothing to escape.
pub fn display_safe(s: &str) -> std::borrow::Cow<'_, str> {
    if !s.chars().any(is_unsafe_to_show) {
        return std::borrow::Cow::Borrowed(s);
    }
    std::borrow::Cow::Owned(
        s.chars()
            .map(|c| if is_unsafe_to_show(c) { c.escape_unicode().to_string() } else { c.to_string() })
            .collect(),
    )
}

/// A script that a probe ([`Unresolved::probe`]) runs from a volume and that could not be read
/// (its ConfigMap is not available, it is in a Secret, ...): its commands were not analysed, and
/// the verdict rests on the other evidence. Reported as a note, never a finding.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unresolved {
    /// The container whose probe runs it.
    pub container: String,
    /// The script's path as run.
    pub script: String,
    /// Why it could not be read.
    pub reason: String,
    /// Over one of the analysis bounds rather than unreadable (a liveness probe's is warned about
    /// as well; a readiness or startup probe's only noted).
    pub over_bound: bool,
    /// The probe that runs it: `liveness`, `readiness` or `startup` (a readiness or startup
    /// script is analysed for `readiness-shared-dependency` and `startup-remote-dependency`, and
    /// noted when it cannot be read; s24: it got no note at all).
    pub probe: &'static str,
}

/// A container no rule looked at: an exemption of the policy covers its name and its image.
/// Reported (audit annotation, `check` notes), so that a skipped rule is never silent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Exempted {
    /// The container's name.
    pub container: String,
    /// Which list the container is in.
    pub container_kind: ContainerKind,
    /// Its image, as written.
    pub image: String,
}

/// Everything the rules found in one workload, in container order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Evaluation {
    /// The findings, app containers first (in array order), then native sidecars.
    pub findings: Vec<Finding>,
    /// Liveness scripts that could not be read, each once per container.
    pub unresolved: Vec<Unresolved>,
    /// Readiness and startup probes' scripts that could not be read, each once per container
    /// and script (noted by `check` and `audit`, not in the webhook's annotation).
    pub other_unresolved: Vec<Unresolved>,
    /// Containers skipped because an exemption covers them, in container order.
    pub exempted: Vec<Exempted>,
}

impl Evaluation {
    /// Findings whose configured action is `action`.
    pub fn with_action(&self, action: Action) -> impl Iterator<Item = &Finding> {
        self.findings.iter().filter(move |f| f.action == action)
    }

    /// The JSONPatch of every `mutate` finding, in finding order.
    pub fn patch(&self) -> Patch {
        Patch(self.findings.iter().flat_map(|f| f.patch.iter().cloned()).collect())
    }
}

/// Evaluates the rules on a workload's PodSpec.
///
/// Rules whose action is `off` are skipped. Patch paths are rooted at the object (`/spec/...` for a
/// Pod, `/spec/template/spec/...` for most controllers, `/spec/jobTemplate/spec/template/spec/...`
/// for a CronJob); whether a patch is returned to the API server is the caller's decision
/// (Pods on CREATE, templates only when the policy says so).
pub fn evaluate(rules: &RuleSet, workload: &Workload) -> Evaluation {
    evaluate_with(rules, workload, &[])
}

/// As [`evaluate`], skipping the containers an exemption covers by name and image (the policy's
/// `exemptions.containers`, e.g. mesh sidecars that own their probes); they are listed in
/// [`Evaluation::exempted`].
pub fn evaluate_with(
    rules: &RuleSet,
    workload: &Workload,
    exempt_containers: &[ContainerExemption],
) -> Evaluation {
    evaluate_with_configmaps(rules, workload, exempt_containers, &NoConfigMaps, "")
}

/// As [`evaluate_with`], reading the ConfigMaps that liveness scripts and env values come from
/// through `configmaps`, in `namespace` (empty: the object's own `metadata.namespace`, else
/// `default`). What the source cannot answer is unresolved: never a finding by itself.
pub fn evaluate_with_configmaps(
    rules: &RuleSet,
    workload: &Workload,
    exempt_containers: &[ContainerExemption],
    configmaps: &dyn ConfigMapSource,
    namespace: &str,
) -> Evaluation {
    evaluate_cached(rules, workload, exempt_containers, configmaps, namespace, &mut ParseCache::cold())
}

/// As [`evaluate_with_configmaps`], drawing the object's script parses (and the parser) from the
/// caller's `cache` and adding its new parses to it (see [`ParseCache`] for what is kept and
/// its bounds). The evaluation is the same as without a cache, finding for finding and byte for
/// byte: only parses are reused, each where a fresh parse would give the same trees and spend the
/// same parse allowance.
pub fn evaluate_cached(
    rules: &RuleSet,
    workload: &Workload,
    exempt_containers: &[ContainerExemption],
    configmaps: &dyn ConfigMapSource,
    namespace: &str,
    cache: &mut ParseCache,
) -> Evaluation {
    let mut findings = Vec::new();
    let mut unresolved = Vec::new();
    let exempted = each_target(workload, exempt_containers, configmaps, namespace, cache, |target| {
        rules::evaluate_container(rules, target, &mut findings, &mut unresolved);
    });
    // A readiness or startup probe's script not read is noted by `check` and `audit` only: the
    // webhook's `unresolved-scripts` annotation lists the liveness probes' (docs/scripts.md).
    let (unresolved, other_unresolved) = unresolved.into_iter().partition(|u| u.probe == "liveness");
    Evaluation { findings, unresolved, other_unresolved, exempted }
}

/// For `explain`: each container whose liveness exec command reaches more than one dependency
/// whose outage alone fails the probe, with their targets as `HOST (CATEGORY, via PROGRAM)`, in the
/// order met. Read as [`evaluate_with_configmaps`] reads the object.
pub fn liveness_dependencies(
    rules: &RuleSet,
    workload: &Workload,
    exempt_containers: &[ContainerExemption],
    configmaps: &dyn ConfigMapSource,
    namespace: &str,
) -> Vec<(String, Vec<String>)> {
    let mut out = Vec::new();
    each_target(workload, exempt_containers, configmaps, namespace, &mut ParseCache::cold(), |target| {
        let mut names: Vec<String> = Vec::new();
        for d in rules::liveness_dependencies(rules, target).into_iter().filter(|d| !d.unknown_host) {
            let name = format!("{} ({}, via {})", d.target, d.category, d.program);
            if !names.contains(&name) {
                names.push(name);
            }
        }
        if names.len() > 1 {
            out.push((target.container.name.clone(), names));
        }
    });
    out
}

/// Calls `f` with each container the rules look at (app containers, then native sidecars, less
/// the exempt ones), sharing one analysis budget whose parses are drawn from `cache`; returns the
/// exempt containers.
fn each_target(
    workload: &Workload,
    exempt_containers: &[ContainerExemption],
    configmaps: &dyn ConfigMapSource,
    namespace: &str,
    cache: &mut ParseCache,
    mut f: impl FnMut(&rules::Target<'_>),
) -> Vec<Exempted> {
    let namespace = match namespace {
        "" => workload.metadata.namespace.as_deref().filter(|n| !n.is_empty()).unwrap_or("default"),
        ns => ns,
    };
    let spec = &workload.spec;
    let base = workload.kind.pod_spec_tokens();
    let apps = spec.containers.iter().enumerate().map(|(i, c)| (ContainerKind::App, i, c));
    let sidecars = spec
        .init_containers
        .iter()
        .flatten()
        .enumerate()
        .filter(|(_, c)| c.restart_policy.as_deref() == Some("Always"))
        .map(|(i, c)| (ContainerKind::Sidecar, i, c));
    let mut exempted = Vec::new();
    let mut in_scope = |(kind, _, c): &(ContainerKind, usize, &k8s_openapi::api::core::v1::Container)| {
        let exempt = exempt_containers.iter().any(|e| e.covers(&c.name, c.image.as_deref()));
        if exempt {
            exempted.push(Exempted {
                container: c.name.clone(),
                container_kind: *kind,
                image: c.image.clone().unwrap_or_default(),
            });
        }
        !exempt
    };
    let budget = exec::AnalysisBudget::drawing_on(cache);
    // The readiness analysis has a budget of its own: a large readiness script must never spend what
    // the liveness (deny) analysis of a later container needs.
    // (It shares the object's parser and parsed scripts: liveness and readiness often run one script.)
    let readiness_budget = budget.sharing_parses();
    let bare_pod = workload.kind.is_pod() && workload.metadata.controller().is_none();
    let controller = workload.metadata.controller().map(|c| c.kind.as_str());
    let outage_kills = rules::outage_kills(workload.kind, controller);
    let in_job = rules::in_job(workload.kind, controller);
    let own_names = hosts::own_host_names(workload, namespace);
    let own_namespace = workload.metadata.namespace.as_deref().filter(|n| !n.is_empty());
    for (kind, index, container) in apps.chain(sidecars).filter(&mut in_scope) {
        let target = rules::Target {
            spec,
            container,
            kind,
            base,
            index,
            configmaps,
            namespace,
            budget: &budget,
            readiness_budget: &readiness_budget,
            bare_pod,
            outage_kills,
            in_job,
            exempt_containers,
            own_names: &own_names,
            own_namespace,
        };
        f(&target);
    }
    budget.give_back(cache);
    exempted
}
