//! Generic HTTP and TCP clients: curl, wget, httpie/xh, netcat, telnet, socat, openssl s_client,
//! gRPC health clients, httping, ssh, ping, wait-for-it, Beats' `test output`. What they reach is a "network service" unless the port or path says
//! more (5432 is a database, `/_cluster/health` a search cluster: [`super::super::hosts::net_category`]).

use super::super::DependencyCategory::Database;
use super::super::flags::{
    CURL_LONG, CURL_SHORT, GRPC_HP_VALS, GRPCURL_VALS, HTTPIE_LONG, NC_LONG, OPENSSL_VALS, WGET_LONG,
};
use super::{BASE, Client, HostFormat, Positional, Shape, Syntax};

const NC_SYNTAX: Syntax = Syntax::opts("IiMmOPpqsTVWwXxceGgo", NC_LONG);
const NO_URL: &str = "none: a URL is required";

/// Why the status of a Beat's `test output` on an outage is known only at run time
/// ([`super::Shape::StatusUnknown`]): the output is in its config file, which admission cannot
/// read. With one on this Pod (a Logstash or Elasticsearch sidecar on localhost) no other Pod's
/// outage fails it, and outputs without a test (Kafka, file, console: "output doesn't
/// support testing", libbeat/cmd/test/output.go) exit 1 every time.
pub(in super::super) const BEATS_OUTPUT: &str = "which output its config file names (one on localhost is this Pod; Kafka, file and console outputs cannot be tested and exit 1 every time)";

pub(in super::super) const CLIENTS: &[Client] = &[
    // `gitlab-runner verify` "checks if the registered runners can connect to GitLab" (GitLab
    // Runner docs, "GitLab Runner commands", `gitlab-runner verify`): the GitLab URL of
    // config.toml, or `--url` (`CI_SERVER_URL`: commands/verify.go's RunnerCredentials). A
    // GitLab outage leaves it exit 0 ([`Shape::StatusUnknown`]): a warning, never a denial.
    Client {
        names: &["gitlab-runner"],
        subcommand: Some("verify"),
        syntax: Syntax::opts("cntu", &["config", "name", "token", "url"]),
        host_opts: &["u", "url"],
        env: &["CI_SERVER_URL"],
        default: "the GitLab server of config.toml",
        default_local: false,
        shape: Shape::StatusUnknown,
        source: "https://docs.gitlab.com/runner/commands/#gitlab-runner-verify",
        outage: "exit 0 while GitLab cannot be reached, logging \"client error\" instead of \"is alive\" (network/gitlab.go VerifyRunner); a probe that reads that output, or a hang past timeoutSeconds, fails",
        ..BASE
    },
    // Beats' `test output`: "Test <beat> can connect to the output by using the current settings"
    // (libbeat/cmd/test/output.go, the command's help). It dials each host of the output its
    // config file names and talks to it (the Elasticsearch client's `Test`: "dial up", "talk to
    // server"), each step a `Fatal` that exits 1 (pkg/testing/console.go). Which output, and whether it is this Pod, is in the config file:
    // a warning ([`BEATS_OUTPUT`]), never a denial. `test config` reaches nothing; `test modules`
    // (metricbeat) reaches the modules' hosts, not the output: not read.
    Client {
        names: &[
            "filebeat",
            "metricbeat",
            "heartbeat",
            "auditbeat",
            "packetbeat",
            "winlogbeat",
            "functionbeat",
            "journalbeat",
        ],
        subcommand: Some("test"),
        syntax: Syntax::opts("cEdM", &["path.config", "path.data", "path.home", "path.logs"]),
        skip_subcommands: &["config", "modules"],
        default: "the output its config file names",
        default_local: false,
        shape: Shape::StatusUnknown,
        source: "https://github.com/elastic/beats/blob/main/libbeat/cmd/test/output.go",
        outage: "exit 1: the output's \"dial up\" or \"talk to server\" step fails and `ConsoleDriver.Fatal` calls os.Exit(1) (libbeat/cmd/test/output.go, pkg/testing/console.go)",
        outage_status: &[1],
        ..BASE
    },
    // wait-for-it (vishnubob/wait-for-it.sh): `wait-for-it host:port [-s] [-t timeout] [--
    // command args]`, or `-h HOST | --host=HOST`, `-p PORT | --port=PORT` (its usage text). It
    // exits with the wait's status, unless a command follows `--`: that command then runs
    // whatever the wait gave, unless `-s` ("Only execute subcommand if the test succeeds")
    // ([`super::super::wait_for`]).
    Client {
        names: &["wait-for-it"],
        default: "none: \"you need to provide a host and port to test\", exit 1",
        shape: Shape::WaitFor,
        source: "https://github.com/vishnubob/wait-for-it/blob/master/wait-for-it.sh",
        outage: "the wait times out (-t, 15 s by default, 0 never) and exits non-zero (`timeout` gives 124); with -s it then refuses to run its command (\"strict mode, refusing to execute subprocess\", the wait's status)",
        ..BASE
    },
    // eficode's wait-for: `wait-for host:port [-t timeout] [-- command args]` (its usage text);
    // the command runs only once the port answers (`nc -z`), else "Operation timed out", exit 1.
    Client {
        names: &["wait-for"],
        default: "none: \"you need to provide a host and port to test\", exit 2",
        shape: Shape::WaitFor,
        source: "https://github.com/eficode/wait-for/blob/master/wait-for",
        outage: "\"Operation timed out\" and exit 1 after -t tries a second apart (15 by default), without running the command",
        outage_status: &[1],
        ..BASE
    },
    // curl(1): URLs (positional or `--url`), proxies (`-x`, `--preproxy`, `--socks5`, ...; `--noproxy
    // '*'` turns them off), `--unix-socket`, `--resolve`, `--connect-to`.
    Client {
        names: &["curl"],
        syntax: Syntax::opts(CURL_SHORT, CURL_LONG),
        proxy_opts: &["x", "proxy", "preproxy", "socks4", "socks4a", "socks5", "socks5-hostname"],
        local_opts: &["unix-socket", "abstract-unix-socket"],
        default: NO_URL,
        shape: Shape::Curl,
        source: "https://curl.se/docs/manpage.html",
        outage: "exit 7 (failed to connect), 6 (could not resolve host) or 28 (timeout) (curl(1), EXIT CODES); an HTTP error status fails it only with -f",
        outage_status: &[6, 7],
        ..BASE
    },
    // GNU Wget: URLs, proxies from `-e http_proxy=...`.
    Client {
        names: &["wget"],
        syntax: Syntax::opts("OoaeitTwPUQlARDIXBY", WGET_LONG),
        default: NO_URL,
        shape: Shape::Wget,
        source: "https://www.gnu.org/software/wget/manual/wget.html",
        outage: "\"4 Network failure\", \"8 Server issued an error response\" (wget manual, \"Exit Status\"); on Fedora 40+ `wget` is wget2, which exits 0 once its --tries are spent (a warning with --tries: `net::WGET_MAY_BE_WGET2`)",
        ..BASE
    },
    // HTTPie and xh: `[METHOD] URL [ITEM...]`, `:PORT/path` for localhost, `--proxy
    // PROTOCOL:URL`, `--unix-socket`.
    Client {
        names: &["http", "https", "xh", "xhs"],
        syntax: Syntax::opts("paAos", HTTPIE_LONG),
        local_opts: &["unix-socket"],
        default: NO_URL,
        shape: Shape::Httpie,
        source: "https://httpie.io/docs/cli",
        outage: "exit 1 on a connection error; with --check-status 3, 4 or 5 on a 3xx, 4xx or 5xx (HTTPie docs, \"Scripting\")",
        ..BASE
    },
    // OpenBSD netcat: `nc [options] destination [port]`, `-x proxy`, `-l`, `-U`.
    Client {
        // (Debian's netcat-openbsd installs it as `nc.openbsd` too.)
        names: &["nc", "netcat", "nc.openbsd"],
        syntax: NC_SYNTAX,
        positional: Positional::HostPort,
        proxy_opts: &["proxy", "x"],
        local_opts: &["l", "listen", "U", "unixsock"],
        default: "none: the destination is required",
        source: "https://man.openbsd.org/nc.1",
        outage: "-z: exit 1 when the connection is refused or times out (nc(1))",
        outage_status: &[1],
        ..BASE
    },
    // Nmap's ncat: `ncat [options] host [port]`, `--proxy`, `-l`, `-U` (its `-x` is a hex dump).
    Client {
        names: &["ncat"],
        syntax: NC_SYNTAX,
        positional: Positional::HostPort,
        proxy_opts: &["proxy"],
        local_opts: &["l", "listen", "U", "unixsock"],
        default: "none: the host is required",
        source: "https://nmap.org/ncat/guide/ncat-usage.html",
        outage: "exit 1 when the connection fails",
        outage_status: &[1],
        ..BASE
    },
    // Debian's netcat-traditional (Hobbit's nc 1.10): `nc.traditional [-options] hostname port`,
    // `-l` to listen; its value letters (`-e -g -G -i -o -p -q -s -w -c`) are within NC_SYNTAX's.
    Client {
        names: &["nc.traditional"],
        syntax: NC_SYNTAX,
        positional: Positional::HostPort,
        local_opts: &["l"],
        default: "none: the hostname is required",
        source: "https://manpages.debian.org/bookworm/netcat-traditional/nc.traditional.1.en.html",
        outage: "exit 1 when the connection is refused or the name does not resolve (netcat-traditional 1.10-47, measured with and without -z: the manual page gives no exit status)",
        outage_status: &[1],
        ..BASE
    },
    // GNU Wget2: URLs and proxies as wget's (options kept compatible).
    Client {
        names: &["wget2"],
        syntax: Syntax::opts("OoaeitTwPUQlARDIXBY", WGET_LONG),
        default: NO_URL,
        shape: Shape::Wget,
        source: "https://gitlab.com/gnuwget/wget2/-/blob/master/docs/wget2.md",
        outage: "measured (wget2 1.99.1, Debian 12): a refused connection or a name that does not resolve exits 0 after its tries (rockdaboot/wget2#309); with the default 20 tries a refused port took 190 s, past any real timeoutSeconds, so only that fails the probe (`--tries` set: a warning, `net::wget2_tries_bounded`)",
        ..BASE
    },
    // OpenLDAP ldapsearch(1): `-H ldapuri` (a space- or comma-separated list: not followed past the
    // first URI's host), without it ldap.conf's URI (not read: no finding).
    Client {
        names: &["ldapsearch", "ldapwhoami"],
        syntax: Syntax::opts("HhpbsaAlLzfDwyUXYRIOgoeEMT", &[]),
        host_opts: &["H", "h"],
        default: "ldap.conf's URI, else ldap://localhost",
        source: "https://www.openldap.org/software/man.cgi?query=ldapsearch",
        outage: "\"Exit status is zero if no errors occur. Errors result in a non-zero exit status\" (ldapsearch(1), DIAGNOSTICS): \"Can't contact LDAP server\"",
        ..BASE
    },
    // fping(8): `fping [options] [targets...]`.
    Client {
        names: &["fping", "fping6"],
        syntax: Syntax::opts("BcCHiIOpQrStbf", &[]),
        positional: Positional::Host,
        default: "none: targets (or -f FILE) are required",
        source: "https://fping.org/fping.8.html",
        outage: "\"Exit status is 0 if all the hosts are reachable, 1 if some hosts were unreachable\" (fping(8), RETURN VALUES)",
        outage_status: &[1],
        ..BASE
    },
    // telnet(1): `telnet [options] [host [port]]`.
    Client {
        names: &["telnet"],
        syntax: Syntax::opts("lnebSXk", &[]),
        positional: Positional::HostPort,
        default: "none: without a host it starts in command mode",
        source: "https://manpages.debian.org/bookworm/inetutils-telnet/telnet.1.en.html",
        outage: "\"Unable to connect to remote host\" and exit 1",
        outage_status: &[1],
        ..BASE
    },
    // socat: two addresses; `TCP:host:port`, `OPENSSL:host:port`, `UDP:...`, `SOCKS4:...`.
    Client {
        names: &["socat"],
        default: "none: the addresses are required",
        shape: Shape::Socat,
        source: "http://www.dest-unreach.org/socat/doc/socat.html",
        outage: "exit 1 when an address cannot be opened (socat(1), DIAGNOSTICS)",
        outage_status: &[1],
        ..BASE
    },
    // openssl s_client: `-connect host:port` (default localhost:4433), `-host`, `-proxy`, `-unix`.
    Client {
        names: &["openssl"],
        subcommand: Some("s_client"),
        syntax: Syntax::Go(OPENSSL_VALS),
        host_opts: &["connect", "host"],
        positional: Positional::Host,
        proxy_opts: &["proxy"],
        local_opts: &["unix"],
        default: "localhost:4433",
        source: "https://docs.openssl.org/master/man1/openssl-s_client/",
        outage: "\"connect:errno=...\" and exit 1",
        ..BASE
    },
    // dockerize: `dockerize [options] [command]`, Go flags; `-wait URL` (repeatable: tcp, tcp4,
    // tcp6, http, https, unix, file), `-timeout` (default 10s). The command after it is not read.
    Client {
        names: &["dockerize"],
        syntax: Syntax::Go(&[
            "template",
            "stdout",
            "stderr",
            "delims",
            "wait-http-header",
            "wait",
            "timeout",
            "wait-retry-interval",
        ]),
        host_opts: &["wait"],
        default: "none: without -wait it waits for nothing",
        source: "https://github.com/jwilder/dockerize/blob/master/main.go",
        outage: "\"Timeout after 10s waiting on dependencies to become available\" by log.Fatalf, exit 1 (main.go, waitForDependencies; -timeout, default 10s)",
        outage_status: &[1],
        ..BASE
    },
    // grpc_health_probe: `-addr host:port` (required).
    Client {
        names: &["grpc_health_probe"],
        syntax: Syntax::Go(GRPC_HP_VALS),
        host_opts: &["addr"],
        host_format: HostFormat::GrpcTarget,
        default: "none: -addr is required",
        source: "https://github.com/grpc-ecosystem/grpc-health-probe#readme",
        outage: "\"failed to connect service ...\", exit status 2 (README, exit codes: 2 connection failure, 3 RPC failure, 4 not SERVING)",
        outage_status: &[2],
        ..BASE
    },
    // grpcurl: `grpcurl [flags] [address] [list|describe|method]`; `-unix`.
    Client {
        names: &["grpcurl"],
        syntax: Syntax::Go(GRPCURL_VALS),
        positional: Positional::Host,
        local_opts: &["unix"],
        skip_subcommands: &["list", "describe"],
        default: "none: the address is required to call a method",
        source: "https://github.com/fullstorydev/grpcurl#readme",
        outage: "\"Failed to dial target host\", exit 1",
        ..BASE
    },
    // httping(1) (HTTPing 2.x, main.c): the URL from `-g URL`, `-h HOST` (`http://HOST/`) or the
    // first argument (which wins); `-x proxy[:port]`; `--divert-connect HOST` connects to HOST
    // instead of the URL's host ([`Shape::Httping`]).
    Client {
        names: &["httping"],
        syntax: Syntax::opts(
            "TyLghpcixtoeIRnNPUC",
            &[
                "url",
                "hostname",
                "port",
                "proxy",
                "count",
                "interval",
                "timeout",
                "data-limit",
                "ok-result-codes",
                "result-string",
                "user-agent",
                "referer",
                "nagios-mode-1",
                "nagios-mode-2",
                "bind-to",
                "username",
                "password",
                "cookie",
                "aggregate",
                "proxy-buster",
                "proxy-user",
                "proxy-password",
                "proxy-password-file",
                "graph-limit",
                "max-mtu",
                "divert-connect",
                "recv-buffer",
                "tx-buffer",
                "priority",
                "tos",
                "header",
                "ca-path",
            ],
        ),
        host_opts: &["g", "url", "h", "hostname"],
        proxy_opts: &["x", "proxy"],
        positional: Positional::Host,
        default: "none: \"No URL/host to ping given\", exit 1",
        shape: Shape::Httping,
        source: "https://github.com/folkertvanheusden/HTTPing/blob/master/httping.1",
        outage: "exit 127 when no ping got an answer (main.c: `if (ok) return 0; return 127;`); with -N X, X",
        ..BASE
    },
    // OpenSSH ssh(1): `ssh [options] destination [command [argument ...]]`, the destination being
    // `[user@]hostname` or `ssh://[user@]hostname[:port]` (port 22 by default). What the command
    // does runs on the destination; reaching the destination is the dependency.
    Client {
        names: &["ssh"],
        syntax: Syntax::opts("bceilmopBDEFIJLOPQRSwW", &[]),
        positional: Positional::Host,
        default: "none: the destination is required",
        source: "https://man.openbsd.org/ssh.1",
        outage: "\"ssh exits with the exit status of the remote command or with 255 if an error occurred\" (ssh(1), EXIT STATUS): a destination that cannot be reached exits 255",
        ..BASE
    },
    // ping(8): `ping [options] destination`.
    Client {
        names: &["ping", "ping6"],
        syntax: Syntax::opts("cWwiIlmMpQsStTF", &[]),
        positional: Positional::Host,
        default: "none: the destination is required",
        source: "https://man7.org/linux/man-pages/man8/ping.8.html",
        outage: "\"If ping does not receive any reply packets at all it will exit with code 1\" (ping(8))",
        ..BASE
    },
];

/// PowerShell cmdlets, looked up by lowercase name in PowerShell scripts only
/// ([`super::super::powershell`]).
pub(in super::super) const POWERSHELL: &[Client] = &[
    // Invoke-WebRequest and Invoke-RestMethod (PowerShell 7.5 and Windows PowerShell 5.1):
    // `[-Uri] <Uri>` is position 0; `-Proxy`, `-NoProxy`, `-UnixSocket`.
    Client {
        names: &["invoke-webrequest", "iwr", "invoke-restmethod", "irm"],
        syntax: Syntax::PowerShell {
            values: &[
                "uri",
                "method",
                "custommethod",
                "body",
                "headers",
                "contenttype",
                "infile",
                "outfile",
                "timeoutsec",
                "connectiontimeoutseconds",
                "operationtimeoutseconds",
                "maximumredirection",
                "maximumretrycount",
                "retryintervalsec",
                "useragent",
                "websession",
                "sessionvariable",
                "credential",
                "certificate",
                "certificatethumbprint",
                "proxy",
                "proxycredential",
                "transferencoding",
                "authentication",
                "token",
                "form",
                "sslprotocol",
                "httpversion",
                "unixsocket",
                "responseheaderstvariable",
                "statuscodevariable",
            ],
            switches: &[
                "usebasicparsing",
                "usedefaultcredentials",
                "disablekeepalive",
                "skipcertificatecheck",
                "passthru",
                "resume",
                "skiphttperrorcheck",
                "noproxy",
                "preserveauthorizationonredirect",
                "allowunencryptedauthentication",
                "skipheadervalidation",
                "allowinsecureredirect",
                "preservehttpmethodonredirect",
                "proxyusedefaultcredentials",
                "followrellink",
            ],
        },
        host_opts: &["uri"],
        proxy_opts: &["proxy"],
        local_opts: &["unixsocket"],
        default: NO_URL,
        source: "https://learn.microsoft.com/en-us/powershell/module/microsoft.powershell.utility/invoke-webrequest",
        outage: "a failed request or an error status is an error ($? false): with -Command the exit code is 1 when it is the last statement (PowerShell/PowerShell#13501 describes the mapping), and a try/catch turns it into the script's exit",
        ..BASE
    },
    // Test-NetConnection: `[[-ComputerName] <String>]` (aliases RemoteAddress, cn) at position
    // 1, `[-CommonTCPPort] <String>` at position 2, `-Port <Int32>` (alias RemotePort); without a
    // target it tests internetbeacon.msedge.net.
    Client {
        names: &["test-netconnection", "tnc"],
        syntax: Syntax::PowerShell {
            values: &[
                "computername",
                "remoteaddress",
                "cn",
                "port",
                "remoteport",
                "commontcpport",
                "informationlevel",
                "hops",
                "constrainsourceaddress",
                "constraininterface",
            ],
            switches: &["traceroute", "diagnoserouting", "detailed"],
        },
        host_opts: &["computername", "remoteaddress", "cn"],
        default: "internetbeacon.msedge.net",
        default_local: false,
        source: "https://learn.microsoft.com/en-us/powershell/module/nettcpip/test-netconnection",
        outage: "only a warning and TcpTestSucceeded False, exit 0: a dependency only where the script turns that into exit/throw (powershell.rs checks)",
        ..BASE
    },
    // Test-Connection (ICMP echo; `-TcpPort` in PowerShell 7): `[-TargetName] <String[]>`
    // (7; alias ComputerName) or `[-ComputerName] <String[]>` (5.1; aliases CN, IPAddress,
    // __SERVER, Server, Destination) at position 0. Mandatory: no default target.
    Client {
        names: &["test-connection"],
        syntax: Syntax::PowerShell {
            values: &[
                "targetname",
                "computername",
                "cn",
                "ipaddress",
                "__server",
                "server",
                "destination",
                "source",
                "count",
                "delay",
                "buffersize",
                "size",
                "bytes",
                "bs",
                "timetolive",
                "ttl",
                "maxhops",
                "hops",
                "timeoutseconds",
                "tcpport",
                "throttlelimit",
                "impersonation",
                "dcomauthentication",
                "authentication",
                "wsmanauthentication",
                "protocol",
                "credential",
            ],
            switches: &[
                "asjob",
                "quiet",
                "ping",
                "ipv4",
                "ipv6",
                "resolvedestination",
                "dontfragment",
                "repeat",
                "continuous",
                "traceroute",
                "mtusize",
                "mtusizedetect",
                "detailed",
            ],
        },
        host_opts: &["targetname", "computername", "cn", "ipaddress", "__server", "server", "destination"],
        default: "none: the target is mandatory",
        default_local: false,
        source: "https://learn.microsoft.com/en-us/powershell/module/microsoft.powershell.management/test-connection",
        outage: "returns PingStatus objects (Status TimedOut) or, with -Quiet, False: like Test-NetConnection, a dependency only where the script turns that into exit/throw (powershell.rs checks)",
        ..BASE
    },
    // Invoke-Sqlcmd (SqlServer module; a database client kept here because powershell.rs reads
    // the cmdlet rows): `-ServerInstance` (`host[\instance][,port]`, `tcp:`/`np:`/`lpc:`), or
    // `-ConnectionString` (`Server=`/`Data Source=`); `[-Query]` is position 0.
    Client {
        names: &["invoke-sqlcmd"],
        category: Database,
        syntax: Syntax::PowerShell {
            values: &[
                "query",
                "serverinstance",
                "database",
                "encrypt",
                "username",
                "accesstoken",
                "password",
                "credential",
                "querytimeout",
                "connectiontimeout",
                "errorlevel",
                "severitylevel",
                "maxcharlength",
                "maxbinarylength",
                "hostname",
                "applicationname",
                "applicationintent",
                "failoverpartner",
                "hostnameincertificate",
                "newpassword",
                "variable",
                "inputfile",
                "outputsqlerrors",
                "outputas",
                "statisticsvariable",
                "connectionstring",
                "keyvaultaccesstoken",
            ],
            switches: &[
                "encryptconnection",
                "abortonerror",
                "dedicatedadministratorconnection",
                "disablevariables",
                "disablecommands",
                "multisubnetfailover",
                "trustservercertificate",
                "includesqlusererrors",
                "suppressprovidercontextwarning",
                "ignoreprovidercontext",
            ],
        },
        host_opts: &["serverinstance"],
        host_format: HostFormat::SqlServer,
        default: "the default instance on this machine (or the SQLSERVER: provider path's)",
        source: "https://learn.microsoft.com/en-us/powershell/module/sqlserver/invoke-sqlcmd",
        outage: "a server that cannot be reached is an error (\"A network-related or instance-specific error occurred while establishing a connection to SQL Server\"): $? false, so with -Command the exit code is 1 when it is the last statement, and a try/catch turns it into the script's exit",
        ..BASE
    },
];
