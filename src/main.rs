//! `probegate`: the command line. A thin shell: parse arguments, set up logging, dispatch.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};

mod memory;
use probegate::cli;
use probegate::server::{self, LoadedPolicy, ServeConfig, selfmanaged, tls};

/// Kubernetes admission webhook that enforces health-probe standards.
///
/// check, fix and explain read defaults from $PROBEGATE_CONFIG, else from .probegate.yaml in the
/// current folder or the nearest parent that has one (policy, namespace, failOn, output, skip,
/// paths); flags win.
#[derive(Parser)]
#[command(name = "probegate", version, about, long_about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Serve the validating (/validate) and mutating (/mutate) admission webhook over HTTPS.
    Serve(Box<ServeArgs>),
    /// Policy file tooling.
    #[command(subcommand)]
    Policy(PolicyCommand),
    /// Check manifest files with the webhook's engine and policy: exit 0 clean, 1 findings at or
    /// above --fail-on, 2 unreadable input or invalid policy.
    Check(CheckArgs),
    /// Apply the policy's mutate rules to manifest files (Pods and pod templates): to standard
    /// output or back to the files (the whole manifest, as it is), or as a diff (env values and
    /// credentials shown as ***). Exit 0,
    /// 1 for a finding left at or above --fail-on, 2 for bad input or a refused --in-place.
    ///
    /// Exit codes: 0 when every file was fixed or had nothing to fix, and no finding fix cannot fix
    /// is left at or above --fail-on; 1 when one is (by default a denial, such as
    /// liveness-dependency: fix names each finding left to you on standard error, and still fixes
    /// the files); 2 when an input
    /// cannot be read, has a YAML error or an object not valid for its kind (that file is left as
    /// it is, the others are still fixed), the policy or the configuration file is invalid
    /// (nothing is fixed), a file cannot
    /// be written, or --in-place is refused: for standard input, or for a file with a document
    /// that could only be fixed by re-serializing it, losing its comments and layout (that file is
    /// not written; see --diff). 2 wins over 1.
    Fix(FixArgs),
    /// Explain the probes of manifest files in seconds, and simulate a dependency outage as written
    /// and as fixed.
    Explain(ExplainArgs),
    /// List the rules: id, default action, what each finds, and a link to its documentation.
    Rules {
        /// Output format.
        #[arg(long, short = 'o', value_enum, default_value = "text")]
        output: cli::rules::Format,
    },
    /// Print a shell completion script, e.g. `probegate completions bash >
    /// /etc/bash_completion.d/probegate` or `probegate completions zsh > "${fpath[1]}/_probegate"`.
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
    /// Check what already runs in a cluster (read-only): the same verdicts and formats as check,
    /// with restart evidence for liveness findings. Exit codes as check's.
    Audit(AuditArgs),
}

#[derive(Args)]
struct AuditArgs {
    /// Policy file (default: the embedded default).
    #[arg(long)]
    policy: Option<PathBuf>,
    /// kubeconfig context [default: the current one; in a Pod, the service account].
    #[arg(long)]
    context: Option<String>,
    /// Audit one namespace [default: the context's namespace].
    #[arg(long, short = 'n', conflicts_with = "all_namespaces")]
    namespace: Option<String>,
    /// Audit every namespace.
    #[arg(long, short = 'A')]
    all_namespaces: bool,
    /// Label selector on the workload objects, as kubectl's (`app=api,tier!=cache`).
    #[arg(long, short = 'l')]
    selector: Option<String>,
    /// Output format.
    #[arg(long, short = 'o', value_enum, default_value = "text")]
    output: cli::check::Format,
    /// Lowest finding level that makes the exit code 1: deny, warn, fix or info.
    #[arg(long, value_enum, default_value = "deny")]
    fail_on: cli::input::Level,
    /// Order of objects: by name, or most restarts first.
    #[arg(long, value_enum, default_value = "name")]
    sort: probegate::audit::Sort,
    /// Only objects with at least this many restarts (or liveness kills) on a liveness finding.
    #[arg(long)]
    min_restarts: Option<u64>,
    /// Requests per second to the API server, at most. 300 lets a first pass write 10,000 reports
    /// within about 40 s; lower it on a small or busy control plane (kubectl's default is 50).
    #[arg(long, default_value_t = 300.0)]
    qps: f64,
    /// With -A: only namespaces whose labels match this selector (kubectl syntax), e.g. to give
    /// each --watch Deployment its own group of namespaces.
    #[arg(long, requires = "all_namespaces")]
    namespace_selector: Option<String>,
    /// With -A: audit only the namespaces whose name hashes to this shard (0-based); run one
    /// replica set per shard, each with its own --lease.
    #[arg(long, requires_all = ["all_namespaces", "shard_count"])]
    shard_index: Option<u32>,
    /// The number of shards --shard-index divides namespaces into.
    #[arg(long, requires = "shard_index", value_parser = clap::value_parser!(u32).range(1..))]
    shard_count: Option<u32>,
    /// Objects per list request (`limit`).
    #[arg(long, default_value_t = 500)]
    page_size: u32,
    /// Exit 0 when there are findings (errors still exit 2): for scheduled runs whose output is
    /// the reports.
    #[arg(long)]
    exit_zero: bool,
    /// Also write one policy report per audited workload into the cluster (only those whose
    /// content changed); needs the report CRD (deploy/components/reports).
    #[arg(long)]
    write_reports: bool,
    /// Keep running: re-audit when workloads, Namespaces or the policy change (and every
    /// --resync-seconds), writing reports (implies --write-reports) while holding the Lease.
    #[arg(long)]
    watch: bool,
    /// With --watch: the coordination.k8s.io Lease that elects the one writing replica
    /// [default: probegate-audit; with a shard, probegate-audit-shard-I-of-N].
    #[arg(long)]
    lease: Option<String>,
    /// With --watch: the Lease's namespace.
    #[arg(long, env = "POD_NAMESPACE", default_value = "probegate-system")]
    lease_namespace: String,
    /// With --watch: this replica's name in the Lease [default: $POD_NAME, else the host name].
    #[arg(long, env = "POD_NAME")]
    identity: Option<String>,
    /// With --watch: quiet time after a change before it is handled, in milliseconds.
    #[arg(long, default_value_t = 300)]
    debounce_ms: u64,
    /// With --watch: least seconds between the starts of two passes.
    #[arg(long, default_value_t = 10)]
    min_interval_seconds: u64,
    /// With --watch: a pass at least this often, in seconds.
    #[arg(long, default_value_t = 600)]
    resync_seconds: u64,
    /// With --watch: plain-HTTP address for /metrics and /healthz, e.g. 0.0.0.0:8080.
    #[arg(long)]
    admin_addr: Option<SocketAddr>,
    /// With --watch: log format.
    #[arg(long, value_enum, default_value = "text")]
    log_format: LogFormat,
    /// The report API to write.
    #[arg(long, value_enum, default_value = "openreports", requires = "write_reports")]
    report_api: probegate::audit::reports::ReportApi,
    /// Report writes (and deletes) sent at once, each still under --qps.
    #[arg(long, default_value_t = probegate::audit::WRITE_CONCURRENCY, value_parser = clap::value_parser!(u16).range(1..))]
    writes_in_flight: u16,
    /// How reports are written: create (the default: POST, lean reports), apply, create-ignore
    /// (fieldValidation=Ignore), before (the path before 2026-12-02). A benchmark knob.
    #[arg(long, value_enum, default_value = "create", hide = true)]
    report_writes: probegate::audit::cluster::ReportWrites,
}

#[derive(Args)]
struct ExplainArgs {
    /// Policy file (default: the embedded default): what "as fixed" applies.
    #[arg(long)]
    policy: Option<PathBuf>,
    /// Namespace for objects without metadata.namespace (selects the policy's overrides)
    /// [default: default].
    #[arg(long, short = 'n', value_parser = cli::config::parse_namespace)]
    namespace: Option<String>,
    /// Turn a rule off (repeat, or comma-separate; see `probegate rules`).
    #[arg(long, value_name = "RULE", value_delimiter = ',', value_parser = cli::config::RuleParser)]
    skip: Vec<probegate::policy::RuleId>,
    /// Replicas to simulate, at least 1 [default: spec.replicas, else 1].
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    replicas: Option<u32>,
    /// How long the dependency is down, in seconds.
    #[arg(long, default_value_t = 90)]
    outage: u32,
    /// When the outage starts, in seconds after the simulation starts.
    #[arg(long, default_value_t = 60)]
    outage_start: u32,
    /// Seconds from a container's start until it can serve [default: the startup probe's budget as
    /// written, else the liveness initialDelaySeconds, else 0].
    #[arg(long)]
    warmup: Option<u32>,
    /// Which probe checks the dependency that goes down: liveness (a failing check restarts the
    /// container), readiness (it only leaves the endpoints), or none. auto decides from the
    /// manifest: liveness when the liveness-dependency rule finds the liveness probe reaching
    /// outside the pod, readiness when that analysis finds the readiness probe doing so, else none.
    /// An HTTP endpoint of the pod itself is taken not to check the dependency (its code is not
    /// visible): say readiness when it does.
    #[arg(long, value_enum, default_value = "auto")]
    dependency_check: cli::explain::DependencyOverride,
    /// Output format.
    #[arg(long, short = 'o', value_enum, default_value = "text")]
    output: cli::explain::Format,
    /// Draw replicas serving over time, as written and as fixed, to this SVG file (FILE-2.svg, ...
    /// for further workloads; with -o text or json). Exit 2 when no workload has an outage to draw.
    #[arg(long)]
    svg: Option<PathBuf>,
    /// Files, directories (searched for *.yaml, *.yml, *.json) or - for standard input [default:
    /// the configuration file's paths].
    paths: Vec<PathBuf>,
}

#[derive(Args)]
struct FixArgs {
    /// Policy file (default: the embedded default).
    #[arg(long)]
    policy: Option<PathBuf>,
    /// Namespace for objects without metadata.namespace (selects the policy's overrides)
    /// [default: default].
    #[arg(long, short = 'n', value_parser = cli::config::parse_namespace)]
    namespace: Option<String>,
    /// Turn a rule off (repeat, or comma-separate; see `probegate rules`).
    #[arg(long, value_name = "RULE", value_delimiter = ',', value_parser = cli::config::RuleParser)]
    skip: Vec<probegate::policy::RuleId>,
    /// Write the fixed files back in place; refused (exit 2, the file not written) for a file
    /// with a document that could only be fixed by re-serializing it.
    #[arg(long, short = 'i', conflicts_with = "diff")]
    in_place: bool,
    /// Print a unified diff of the changes instead of the fixed files.
    #[arg(long)]
    diff: bool,
    /// Lowest level of a finding fix leaves (one it cannot change, at check's level) that makes
    /// the exit code 1: deny, warn, fix (as warn: fix leaves no fix) or info [default: deny, or
    /// the configuration file's failOn].
    #[arg(long, value_enum)]
    fail_on: Option<cli::input::Level>,
    /// Files, directories (searched for *.yaml, *.yml, *.json) or - for standard input [default:
    /// the configuration file's paths].
    paths: Vec<PathBuf>,
}

#[derive(Args)]
struct CheckArgs {
    /// Policy file (default: the embedded default).
    #[arg(long)]
    policy: Option<PathBuf>,
    /// Namespace for objects without metadata.namespace (selects the policy's overrides)
    /// [default: default].
    #[arg(long, short = 'n', value_parser = cli::config::parse_namespace)]
    namespace: Option<String>,
    /// Turn a rule off (repeat, or comma-separate; see `probegate rules`).
    #[arg(long, value_name = "RULE", value_delimiter = ',', value_parser = cli::config::RuleParser)]
    skip: Vec<probegate::policy::RuleId>,
    /// Output format [default: text].
    #[arg(long, short = 'o', value_enum)]
    output: Option<cli::check::Format>,
    /// Lowest finding level that makes the exit code 1: deny, warn, fix (anything `probegate fix`
    /// would change) or info (any finding) [default: deny].
    #[arg(long, value_enum)]
    fail_on: Option<cli::input::Level>,
    /// Files, directories (searched for *.yaml, *.yml, *.json) or - for standard input [default:
    /// the configuration file's paths].
    paths: Vec<PathBuf>,
}

#[derive(Subcommand)]
enum PolicyCommand {
    /// Check policy files: exit 0, or 2 with FILE:LINE:COL: what is wrong.
    Validate {
        /// Policy files.
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// Print the embedded default policy.
    Default,
    /// Print the JSON Schema of the policy file format.
    Schema,
    /// Print the effective policy for a namespace and which overrides made it.
    Explain {
        /// Policy file (default: the embedded default). The configuration file's `policy` when not
        /// given, as for check.
        #[arg(long)]
        policy: Option<PathBuf>,
        /// The namespace [default: the configuration file's `namespace`, else default].
        #[arg(long, short = 'n', value_parser = cli::config::parse_namespace)]
        namespace: Option<String>,
        /// The namespace's labels, KEY=VALUE,...
        #[arg(long)]
        labels: Option<String>,
    },
}

#[derive(Args)]
struct ServeArgs {
    /// Address to listen on, IP:PORT or HOST:PORT (a host name is resolved once, at start).
    #[arg(long, default_value = "0.0.0.0:8443", env = "PROBEGATE_ADDR", value_parser = listen_addr)]
    addr: SocketAddr,
    /// Policy file (YAML). Default: the policy compiled in from policies/default.yaml.
    #[arg(long, env = "PROBEGATE_POLICY")]
    policy: Option<PathBuf>,
    /// PEM certificate chain. Without it, a CA and a certificate for localhost are generated.
    #[arg(long, requires = "tls_key", env = "PROBEGATE_TLS_CERT")]
    tls_cert: Option<PathBuf>,
    /// PEM private key of --tls-cert.
    #[arg(long, requires = "tls_cert", env = "PROBEGATE_TLS_KEY")]
    tls_key: Option<PathBuf>,
    /// Manage the serving certificate in a Secret: create a CA and certificate on first start (one
    /// CA for all replicas), patch the caBundle of both webhook configurations, renew before expiry.
    #[arg(long, conflicts_with_all = ["tls_cert", "tls_key"])]
    self_managed_tls: bool,
    /// With --self-managed-tls: the Secret holding CA and certificate.
    #[arg(long, default_value = "probegate-tls")]
    tls_secret: String,
    /// With --self-managed-tls: the webhook Service the certificate is for.
    #[arg(long, default_value = "probegate")]
    service_name: String,
    /// With --self-managed-tls: the namespace of the Service and the Secret.
    #[arg(long, env = "POD_NAMESPACE", default_value = "probegate-system")]
    service_namespace: String,
    /// With --self-managed-tls: the MutatingWebhookConfiguration whose caBundle is kept current.
    #[arg(long, default_value = "probegate")]
    mutating_webhook_configuration: String,
    /// With --self-managed-tls: the ValidatingWebhookConfiguration whose caBundle is kept current.
    #[arg(long, default_value = "probegate")]
    validating_webhook_configuration: String,
    /// Where to write the generated CA certificate when no --tls-cert is given
    /// [default: $TMPDIR/probegate-ca.pem].
    #[arg(long)]
    write_ca: Option<PathBuf>,
    /// Plain-HTTP admin address serving /metrics, /healthz, /readyz and /policy (for Prometheus and
    /// kubelet probes), IP:PORT or HOST:PORT, e.g. 0.0.0.0:8080 or localhost:18448.
    #[arg(long, env = "PROBEGATE_ADMIN_ADDR", value_parser = listen_addr)]
    admin_addr: Option<SocketAddr>,
    /// Do not watch Namespaces (namespaceSelector overrides then never match).
    #[arg(long)]
    no_namespace_watch: bool,
    /// Read the ConfigMaps that exec liveness scripts (and env values) come from, from the API
    /// (needs RBAC get on configmaps), within 500 ms per request, never reused; what cannot be read
    /// in time is unresolved, never denied.
    #[arg(long, env = "PROBEGATE_RESOLVE_CONFIGMAPS")]
    resolve_configmaps: bool,
    /// On SIGTERM, seconds to keep serving after readiness turns false (endpoint removal propagates),
    /// before the listener closes and in-flight requests finish.
    #[arg(long, default_value_t = 5, env = "PROBEGATE_DRAIN_SECONDS")]
    drain_seconds: u64,
    /// Log format.
    #[arg(long, value_enum, default_value = "text", env = "PROBEGATE_LOG_FORMAT")]
    log_format: LogFormat,
}

/// A listen address: `IP:PORT`, `[IPv6]:PORT`, or `HOST:PORT` with the host name resolved (its
/// first address: `localhost` is usually 127.0.0.1).
fn listen_addr(text: &str) -> Result<SocketAddr, String> {
    use std::net::ToSocketAddrs;
    if let Ok(addr) = text.parse() {
        return Ok(addr);
    }
    if text.rsplit_once(':').is_none_or(|(host, port)| host.is_empty() || port.parse::<u16>().is_err()) {
        return Err(format!("{text:?} is not HOST:PORT (e.g. 0.0.0.0:8443 or localhost:18448)"));
    }
    let mut addrs = text.to_socket_addrs().map_err(|e| format!("cannot resolve {text:?}: {e}"))?;
    addrs.next().ok_or_else(|| format!("{text:?} resolves to no address"))
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum LogFormat {
    Text,
    Json,
}

fn main() -> ExitCode {
    // One process-wide crypto provider, installed before anything uses rustls.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let cli = Cli::parse();
    // Before any thread exists (the runtimes are built later): the Kubernetes client's commands.
    let no_proxy_warning = match cli.command {
        Command::Serve(_) | Command::Audit(_) => fix_no_proxy(),
        _ => None,
    };
    match cli.command {
        Command::Serve(args) => serve(*args, no_proxy_warning),
        Command::Check(args) => {
            use std::io::IsTerminal;
            let Some(run) = Shared::new(args.policy, args.namespace, args.skip, args.paths) else {
                return ExitCode::from(cli::EXIT_BAD_INPUT);
            };
            let color = std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none();
            let opts = cli::check::CheckOptions {
                policy: run.policy,
                namespace: Some(run.namespace),
                format: args.output.or(run.config.output).unwrap_or(cli::check::Format::Text),
                fail_on: args.fail_on.or(run.config.fail_on).unwrap_or(cli::input::Level::Deny),
                color,
            };
            let wrap = opts.format == cli::check::Format::Text;
            ExitCode::from(with_output_wrapped(wrap, |out, err| {
                cli::check::run_skipping(&opts, &run.skip, &run.paths, &mut std::io::stdin().lock(), out, err)
            }))
        }
        Command::Fix(args) => {
            let output = match (args.in_place, args.diff) {
                (true, _) => cli::fix::FixOutput::InPlace,
                (_, true) => cli::fix::FixOutput::Diff,
                _ => cli::fix::FixOutput::Stdout,
            };
            let Some(run) = Shared::new(args.policy, args.namespace, args.skip, args.paths) else {
                return ExitCode::from(cli::EXIT_BAD_INPUT);
            };
            let opts = cli::fix::FixOptions {
                policy: run.policy,
                namespace: Some(run.namespace),
                output,
                fail_on: args.fail_on.or(run.config.fail_on).unwrap_or(cli::input::Level::Deny),
            };
            ExitCode::from(with_output(|out, err| {
                cli::fix::run_skipping(&opts, &run.skip, &run.paths, &mut std::io::stdin().lock(), out, err)
            }))
        }
        Command::Explain(args) => {
            let Some(run) = Shared::new(args.policy, args.namespace, args.skip, args.paths) else {
                return ExitCode::from(cli::EXIT_BAD_INPUT);
            };
            let opts = cli::explain::ExplainOptions {
                policy: run.policy,
                namespace: Some(run.namespace),
                replicas: args.replicas,
                outage_seconds: args.outage,
                outage_start_seconds: args.outage_start,
                warmup_seconds: args.warmup,
                dependency: args.dependency_check,
                svg: args.svg,
                json: args.output == cli::explain::Format::Json,
            };
            let wrap = !opts.json;
            ExitCode::from(with_output_wrapped(wrap, |out, err| {
                cli::explain::run_skipping(
                    &opts,
                    &run.skip,
                    &run.paths,
                    &mut std::io::stdin().lock(),
                    out,
                    err,
                )
            }))
        }
        Command::Rules { output } => ExitCode::from(with_output(|out, _| cli::rules::run(output, out))),
        Command::Completions { shell } => {
            use clap::CommandFactory;
            ExitCode::from(with_output(|out, _| {
                clap_complete::generate(shell, &mut Cli::command(), "probegate", out);
                cli::EXIT_OK
            }))
        }
        Command::Audit(args) => audit(args, no_proxy_warning),
        Command::Policy(cmd) => {
            use std::io::Write as _;
            let (mut out, mut err) = (std::io::stdout().lock(), std::io::stderr().lock());
            ExitCode::from(match cmd {
                PolicyCommand::Validate { files } => cli::policy::validate(&files, &mut out, &mut err),
                PolicyCommand::Default => cli::policy::default(&mut out),
                PolicyCommand::Schema => cli::policy::schema(&mut out),
                PolicyCommand::Explain { policy, namespace, labels } => {
                    let cwd = std::env::current_dir().unwrap_or_default();
                    let env = std::env::var_os(cli::config::ENV_VAR).map(PathBuf::from);
                    match cli::config::load(env, &cwd) {
                        Ok(config) => {
                            let policy = policy.or(config.policy);
                            let namespace = namespace
                                .or(config.namespace)
                                .unwrap_or_else(|| cli::check::DEFAULT_NAMESPACE.to_string());
                            cli::policy::explain(
                                policy.as_deref(),
                                &namespace,
                                labels.as_deref(),
                                &mut out,
                                &mut err,
                            )
                        }
                        Err(e) => {
                            let _ = writeln!(err, "probegate: invalid configuration: {e}");
                            cli::EXIT_BAD_INPUT
                        }
                    }
                }
            })
        }
    }
}

/// What check, fix and explain share, the command line merged over the configuration file.
struct Shared {
    config: cli::config::Config,
    policy: Option<PathBuf>,
    namespace: String,
    skip: Vec<probegate::policy::RuleId>,
    paths: Vec<PathBuf>,
}

impl Shared {
    /// Loads the configuration file and merges the flags over it; `None` (after saying why on
    /// standard error) when the file is invalid or no path is given anywhere.
    fn new(
        policy: Option<PathBuf>,
        namespace: Option<String>,
        mut skip: Vec<probegate::policy::RuleId>,
        paths: Vec<PathBuf>,
    ) -> Option<Shared> {
        let cwd = std::env::current_dir().unwrap_or_default();
        let env = std::env::var_os(cli::config::ENV_VAR).map(PathBuf::from);
        let config = match cli::config::load(env, &cwd) {
            Ok(c) => c,
            Err(e) => {
                eprintln!("probegate: invalid configuration: {e}");
                return None;
            }
        };
        let paths = if paths.is_empty() { config.paths.clone() } else { paths };
        if paths.is_empty() {
            let hint = match &config.source {
                Some(s) => format!("(and {} lists no paths)", s.display()),
                None => format!("(or put paths: in a {} file)", cli::config::FILE_NAME),
            };
            eprintln!("probegate: name the files or directories to read, or - for standard input {hint}");
            return None;
        }
        for rule in &config.skip {
            if !skip.contains(rule) {
                skip.push(*rule);
            }
        }
        Some(Shared {
            policy: policy.or_else(|| config.policy.clone()),
            namespace: namespace
                .or_else(|| config.namespace.clone())
                .unwrap_or_else(|| cli::check::DEFAULT_NAMESPACE.to_string()),
            skip,
            paths,
            config,
        })
    }
}

/// Runs a command with buffered standard output (reports can be megabytes of short lines) and
/// flushes it; a failed flush (a closed pipe) is exit code 2.
fn with_output(run: impl FnOnce(&mut dyn std::io::Write, &mut dyn std::io::Write) -> u8) -> u8 {
    with_output_wrapped(false, run)
}

/// As [`with_output`]; with `wrap`, long lines are wrapped to the terminal's width when stdout is a
/// terminal (never when it is piped or redirected).
fn with_output_wrapped(
    wrap: bool,
    run: impl FnOnce(&mut dyn std::io::Write, &mut dyn std::io::Write) -> u8,
) -> u8 {
    use std::io::Write;
    let buffered = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    let mut out: Box<dyn Write> = match wrap.then(cli::wrap::terminal_width).flatten() {
        Some(width) => Box::new(cli::wrap::WrapWriter::new(buffered, width)),
        None => Box::new(buffered),
    };
    let mut err = std::io::stderr().lock();
    let code = run(&mut out, &mut err);
    match out.flush() {
        Ok(()) => code,
        // A reader that stopped early (`probegate check . | head`) wanted no more: the run's
        // verdict stands, with no error about the pipe.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => code,
        Err(e) => {
            let _ = writeln!(err, "probegate: cannot write the output: {e}");
            cli::EXIT_BAD_INPUT
        }
    }
}

/// Rewrites `NO_PROXY`/`no_proxy` so that kube can build its client (see
/// `probegate::server::kubeclient::no_proxy_env_fix`); returns the warning to log.
fn fix_no_proxy() -> Option<String> {
    let fix = probegate::server::kubeclient::no_proxy_env_fix(|name| std::env::var(name).ok())?;
    for (name, value) in &fix.set {
        // SAFETY: called from `main` before any runtime or thread is started: no other thread
        // can read or write the environment at the same time.
        unsafe { std::env::set_var(name, value) };
    }
    Some(fix.warning)
}

fn audit(args: AuditArgs, no_proxy_warning: Option<String>) -> ExitCode {
    use std::io::IsTerminal;
    let color = std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none();
    let exit_zero = args.exit_zero;
    let opts = probegate::audit::AuditOptions {
        policy: args.policy,
        cluster: probegate::audit::cluster::ClusterOptions {
            context: args.context,
            namespace: args.namespace,
            all_namespaces: args.all_namespaces,
            selector: args.selector,
            qps: args.qps,
            page_size: args.page_size,
            namespace_selector: args.namespace_selector,
            shard: args
                .shard_index
                .zip(args.shard_count)
                .map(|(index, count)| probegate::audit::cluster::Shard { index, count }),
            writes_in_flight: usize::from(args.writes_in_flight),
            report_writes: args.report_writes,
        },
        format: args.output,
        fail_on: args.fail_on,
        sort: args.sort,
        min_restarts: args.min_restarts,
        color,
        progress: std::io::stderr().is_terminal(),
        reports: (args.write_reports || args.watch).then_some(args.report_api),
    };
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("probegate: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    if args.watch {
        let _log = init_logging(args.log_format);
        if let Some(warning) = &no_proxy_warning {
            tracing::warn!("{warning}");
        }
        let identity = args.identity.unwrap_or_else(|| {
            std::fs::read_to_string("/proc/sys/kernel/hostname")
                .map(|h| h.trim().to_string())
                .unwrap_or_else(|_| format!("probegate-audit-{}", std::process::id()))
        });
        let lease = args.lease.unwrap_or_else(|| match args.shard_index.zip(args.shard_count) {
            Some((i, n)) => format!("probegate-audit-shard-{i}-of-{n}"),
            None => "probegate-audit".to_string(),
        });
        let watch = probegate::audit::watch::WatchOptions {
            lease,
            lease_namespace: args.lease_namespace,
            identity,
            debounce: std::time::Duration::from_millis(args.debounce_ms),
            min_interval: std::time::Duration::from_secs(args.min_interval_seconds),
            resync: std::time::Duration::from_secs(args.resync_seconds.max(1)),
            admin_addr: args.admin_addr,
        };
        return match runtime.block_on(probegate::audit::watch::run(opts, watch)) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("probegate: {}", probegate::server::kube_error_text(&format_args!("{e:#}")));
                ExitCode::from(EXIT_BAD_INPUT)
            }
        };
    }
    if let Some(warning) = &no_proxy_warning {
        eprintln!("probegate: warning: {warning}");
    }
    let code = with_output(|out, err| runtime.block_on(probegate::audit::run(&opts, out, err)));
    ExitCode::from(if exit_zero && code == cli::EXIT_FINDINGS { cli::EXIT_OK } else { code })
}

/// The log filter without `RUST_LOG` (tracing-subscriber's `EnvFilter` syntax).
const DEFAULT_LOG_FILTER: &str = "info,h2=error";

/// Installs the log subscriber; its lines go to stderr through a thread of their own
/// (`probegate::server::logsink`): keep the guard for the process's life.
#[must_use]
fn init_logging(format: LogFormat) -> probegate::server::logsink::LogGuard {
    // `h2=error`: the h2 crate logs a WARN line per connection for some client behaviours (a
    // client resetting streams before they are accepted, s20 break-it pass: 200 connections in
    // 0.8 s wrote 200 lines), outside the server's own rate-limited refusal log. `RUST_LOG`
    // replaces the whole default.
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(DEFAULT_LOG_FILTER));
    // Colour only on a terminal: escape codes in a log file or collector are noise.
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stderr());
    // `log_internal_errors(false)`: a log line that cannot be written (stderr a closed pipe, its
    // reader gone) is dropped. With the default, tracing-subscriber reports the write error with
    // `eprintln!`, which panics on that same closed stderr, and the panic hook's own log line
    // fails again: a panic while panicking, SIGABRT (s26 break-it pass: the server died at its
    // next log line after the log reader exited).
    // A stalled log reader drops lines instead of blocking the thread that answers a review
    // (s26 break-it pass: every review hung while /healthz stayed 200).
    let (writer, guard) = probegate::server::logsink::non_blocking_stderr();
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(writer)
        .with_ansi(ansi)
        .log_internal_errors(false);
    probegate::server::set_json_fields(matches!(format, LogFormat::Json));
    match format {
        LogFormat::Json => builder.json().flatten_event(true).init(),
        LogFormat::Text => builder.init(),
    }
    guard
}

/// Exit code for bad input: an invalid policy, an unreadable certificate, a bad address.
const EXIT_BAD_INPUT: u8 = cli::EXIT_BAD_INPUT;

fn serve(args: ServeArgs, no_proxy_warning: Option<String>) -> ExitCode {
    // Before any thread starts (the log writer's is the first).
    memory::limit_arenas();
    let _log = init_logging(args.log_format);
    memory::spawn_trim();
    probegate::server::log_panics_without_their_message();
    if let Some(warning) = &no_proxy_warning {
        tracing::warn!("{warning}");
    }
    let (policy, text, source) = match cli::load_policy(args.policy.as_deref()) {
        Ok(p) => p,
        Err(message) => {
            eprintln!("probegate: invalid policy: {message}");
            return ExitCode::from(EXIT_BAD_INPUT);
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("probegate: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let self_managed = args.self_managed_tls.then(|| {
        let mut cfg =
            selfmanaged::SelfManagedTls::new(args.service_namespace.clone(), args.service_name.clone());
        cfg.secret_name = args.tls_secret.clone();
        cfg.mutating_webhook_configuration = args.mutating_webhook_configuration.clone();
        cfg.validating_webhook_configuration = args.validating_webhook_configuration.clone();
        cfg
    });
    let material = match (&args.tls_cert, &args.tls_key) {
        _ if self_managed.is_some() => {
            let cfg = self_managed.clone().unwrap_or_else(|| selfmanaged::SelfManagedTls::new("", ""));
            let ensured = runtime.block_on(async {
                let client = probegate::server::kubeclient::client().await?;
                selfmanaged::ensure(&client, &cfg).await
            });
            match ensured {
                Ok((material, _ca)) => material,
                Err(e) => {
                    eprintln!(
                        "probegate: --self-managed-tls: {}",
                        probegate::server::kube_error_text(&format_args!("{e:#}"))
                    );
                    return ExitCode::FAILURE;
                }
            }
        }
        (Some(cert), Some(key)) => match tls::TlsMaterial::from_files(cert, key) {
            Ok(m) => m,
            Err(e) => {
                eprintln!("probegate: {e:#}");
                return ExitCode::from(EXIT_BAD_INPUT);
            }
        },
        _ => {
            let generated = match tls::generate_localhost() {
                Ok(g) => g,
                Err(e) => {
                    eprintln!("probegate: cannot generate a certificate: {e:#}");
                    return ExitCode::FAILURE;
                }
            };
            // A second `serve` on a port in use must fail before it replaces the CA file that
            // clients of the first one trust.
            if let Err(e) = std::net::TcpListener::bind(args.addr) {
                eprintln!("probegate: cannot listen on {}: {e}", args.addr);
                return ExitCode::from(EXIT_BAD_INPUT);
            }
            let path = args.write_ca.clone().unwrap_or_else(tls::default_ca_path);
            if let Err(e) = std::fs::write(&path, &generated.ca_pem) {
                eprintln!("probegate: cannot write the CA certificate to {}: {e}", path.display());
                return ExitCode::from(EXIT_BAD_INPUT);
            }
            tracing::info!(
                ca = %path.display(),
                "no --tls-cert given: serving a generated certificate for localhost and 127.0.0.1; \
                 trust it with curl --cacert {}",
                path.display()
            );
            generated.material
        }
    };
    let config = ServeConfig {
        addr: args.addr,
        policy: LoadedPolicy::new(policy, &text, source),
        policy_path: args.policy.clone(),
        tls: material,
        tls_files: args.tls_cert.clone().zip(args.tls_key.clone()),
        admin_addr: args.admin_addr,
        namespaces: None,
        max_connections: server::conn::MAX_CONNECTIONS,
    };
    let options = server::RunOptions {
        watch_namespaces: !args.no_namespace_watch,
        drain: std::time::Duration::from_secs(args.drain_seconds),
        self_managed,
        resolve_configmaps: args.resolve_configmaps,
    };
    let result = runtime.block_on(server::run(config, options));
    // Do not wait on a blocking task that cannot finish (a read stuck on a special file, say).
    runtime.shutdown_timeout(std::time::Duration::from_secs(2));
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("probegate: {}", probegate::server::kube_error_text(&format_args!("{e:#}")));
            ExitCode::from(EXIT_BAD_INPUT)
        }
    }
}
