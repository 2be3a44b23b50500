//! `probegate`: the command line. A thin shell: parse arguments, set up logging, dispatch.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};
use probegate::cli;
use probegate::server::{self, LoadedPolicy, ServeConfig, selfmanaged, tls};

/// Kubernetes admission webhook that enforces health-probe standards.
#[derive(Parser)]
#[command(name = "probegate", version, about)]
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
    /// output, back to the files, or as a diff. Exit 0, or 2 for unreadable input.
    Fix(FixArgs),
    /// Explain the probes of manifest files in seconds, and simulate a dependency outage as written
    /// and as fixed.
    Explain(ExplainArgs),
}

#[derive(Args)]
struct ExplainArgs {
    /// Policy file (default: the embedded default): what "as fixed" applies.
    #[arg(long)]
    policy: Option<PathBuf>,
    /// Namespace for objects without metadata.namespace (selects the policy's overrides).
    #[arg(long, short = 'n', default_value = cli::check::DEFAULT_NAMESPACE)]
    namespace: String,
    /// Replicas to simulate [default: spec.replicas, else 1].
    #[arg(long)]
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
    /// Which probe checks the dependency that goes down [default: auto, from the manifest].
    #[arg(long, value_enum, default_value = "auto")]
    dependency_check: cli::explain::DependencyOverride,
    /// Draw replicas serving over time, as written and as fixed, to this SVG file (FILE-2.svg, ...
    /// for further workloads).
    #[arg(long)]
    svg: Option<PathBuf>,
    /// Files, directories (searched for *.yaml, *.yml, *.json) or - for standard input.
    #[arg(required = true)]
    paths: Vec<PathBuf>,
}

#[derive(Args)]
struct FixArgs {
    /// Policy file (default: the embedded default).
    #[arg(long)]
    policy: Option<PathBuf>,
    /// Namespace for objects without metadata.namespace (selects the policy's overrides).
    #[arg(long, short = 'n', default_value = cli::check::DEFAULT_NAMESPACE)]
    namespace: String,
    /// Write the fixed files back in place.
    #[arg(long, short = 'i', conflicts_with = "diff")]
    in_place: bool,
    /// Print a unified diff of the changes instead of the fixed files.
    #[arg(long)]
    diff: bool,
    /// Files, directories (searched for *.yaml, *.yml, *.json) or - for standard input.
    #[arg(required = true)]
    paths: Vec<PathBuf>,
}

#[derive(Args)]
struct CheckArgs {
    /// Policy file (default: the embedded default).
    #[arg(long)]
    policy: Option<PathBuf>,
    /// Namespace for objects without metadata.namespace (selects the policy's overrides).
    #[arg(long, short = 'n', default_value = cli::check::DEFAULT_NAMESPACE)]
    namespace: String,
    /// Output format.
    #[arg(long, short = 'o', value_enum, default_value = "text")]
    output: cli::check::Format,
    /// Lowest finding level that makes the exit code 1: deny, warn, or fix (anything `probegate
    /// fix` would change).
    #[arg(long, value_enum, default_value = "deny")]
    fail_on: cli::input::Level,
    /// Files, directories (searched for *.yaml, *.yml, *.json) or - for standard input.
    #[arg(required = true)]
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
        /// Policy file (default: the embedded default).
        #[arg(long)]
        policy: Option<PathBuf>,
        /// The namespace.
        #[arg(long)]
        namespace: String,
        /// The namespace's labels, KEY=VALUE,...
        #[arg(long)]
        labels: Option<String>,
    },
}

#[derive(Args)]
struct ServeArgs {
    /// Address to listen on.
    #[arg(long, default_value = "0.0.0.0:8443", env = "PROBEGATE_ADDR")]
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
    /// kubelet probes), e.g. 0.0.0.0:8080.
    #[arg(long, env = "PROBEGATE_ADMIN_ADDR")]
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

#[derive(Clone, Copy, clap::ValueEnum)]
enum LogFormat {
    Text,
    Json,
}

fn main() -> ExitCode {
    // One process-wide crypto provider, installed before anything uses rustls.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let cli = Cli::parse();
    match cli.command {
        Command::Serve(args) => serve(*args),
        Command::Check(args) => {
            use std::io::IsTerminal;
            let color = std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none();
            let opts = cli::check::CheckOptions {
                policy: args.policy,
                namespace: Some(args.namespace),
                format: args.output,
                fail_on: args.fail_on,
                color,
            };
            ExitCode::from(with_output(|out, err| {
                cli::check::run(&opts, &args.paths, &mut std::io::stdin().lock(), out, err)
            }))
        }
        Command::Fix(args) => {
            let output = match (args.in_place, args.diff) {
                (true, _) => cli::fix::FixOutput::InPlace,
                (_, true) => cli::fix::FixOutput::Diff,
                _ => cli::fix::FixOutput::Stdout,
            };
            let opts = cli::fix::FixOptions { policy: args.policy, namespace: Some(args.namespace), output };
            ExitCode::from(with_output(|out, err| {
                cli::fix::run(&opts, &args.paths, &mut std::io::stdin().lock(), out, err)
            }))
        }
        Command::Explain(args) => {
            let opts = cli::explain::ExplainOptions {
                policy: args.policy,
                namespace: Some(args.namespace),
                replicas: args.replicas,
                outage_seconds: args.outage,
                outage_start_seconds: args.outage_start,
                warmup_seconds: args.warmup,
                dependency: args.dependency_check,
                svg: args.svg,
            };
            ExitCode::from(with_output(|out, err| {
                cli::explain::run(&opts, &args.paths, &mut std::io::stdin().lock(), out, err)
            }))
        }
        Command::Policy(cmd) => {
            let (mut out, mut err) = (std::io::stdout().lock(), std::io::stderr().lock());
            ExitCode::from(match cmd {
                PolicyCommand::Validate { files } => cli::policy::validate(&files, &mut out, &mut err),
                PolicyCommand::Default => cli::policy::default(&mut out),
                PolicyCommand::Schema => cli::policy::schema(&mut out),
                PolicyCommand::Explain { policy, namespace, labels } => {
                    cli::policy::explain(policy.as_deref(), &namespace, labels.as_deref(), &mut out, &mut err)
                }
            })
        }
    }
}

/// Runs a command with buffered standard output (reports can be megabytes of short lines) and
/// flushes it; a failed flush (a closed pipe) is exit code 2.
fn with_output(run: impl FnOnce(&mut dyn std::io::Write, &mut dyn std::io::Write) -> u8) -> u8 {
    use std::io::Write;
    let mut out = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    let mut err = std::io::stderr().lock();
    let code = run(&mut out, &mut err);
    match out.flush() {
        Ok(()) => code,
        Err(e) => {
            let _ = writeln!(err, "probegate: cannot write the output: {e}");
            cli::EXIT_BAD_INPUT
        }
    }
}

fn init_logging(format: LogFormat) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    // Colour only on a terminal: escape codes in a log file or collector are noise.
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let builder =
        tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).with_ansi(ansi);
    match format {
        LogFormat::Json => builder.json().flatten_event(true).init(),
        LogFormat::Text => builder.init(),
    }
}

/// Exit code for bad input: an invalid policy, an unreadable certificate, a bad address.
const EXIT_BAD_INPUT: u8 = cli::EXIT_BAD_INPUT;

fn serve(args: ServeArgs) -> ExitCode {
    init_logging(args.log_format);
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
                let client = kube::Client::try_default().await?;
                selfmanaged::ensure(&client, &cfg).await
            });
            match ensured {
                Ok((material, _ca)) => material,
                Err(e) => {
                    eprintln!("probegate: --self-managed-tls: {e:#}");
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
            eprintln!("probegate: {e:#}");
            ExitCode::from(EXIT_BAD_INPUT)
        }
    }
}
