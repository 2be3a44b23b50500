//! The Kubernetes API and cloud providers' CLIs: a dependency whatever the arguments (the API is
//! a remote service shared by every replica).

use super::super::DependencyCategory::{CloudApi, ControlPlane};
use super::{BASE, Client, Shape, Syntax};

const CLOUD_SYNTAX: Syntax =
    Syntax::opts("", &["region", "profile", "endpoint-url", "output", "project", "query"]);

pub(in super::super) const CLIENTS: &[Client] = &[
    // kubectl: `--server`, else the kubeconfig's or the in-cluster API server;
    // `kubectl version --client` reaches nothing.
    Client {
        names: &["kubectl"],
        category: ControlPlane,
        syntax: Syntax::opts(
            "sno",
            &["server", "namespace", "context", "kubeconfig", "cluster", "user", "output"],
        ),
        host_opts: &["s", "server"],
        default: "Kubernetes API server",
        default_local: false,
        shape: Shape::Kubectl,
        source: "https://kubernetes.io/docs/reference/kubectl/",
        outage: "\"The connection to the server ... was refused\" (or a timeout), exit 1",
        ..BASE
    },
    Client {
        names: &["aws"],
        category: CloudApi,
        syntax: CLOUD_SYNTAX,
        host_opts: &["endpoint-url"],
        default: "the AWS service's regional endpoint",
        default_local: false,
        shape: Shape::Cloud,
        source: "https://docs.aws.amazon.com/cli/latest/reference/",
        outage: "exit 255 when the command fails, a network error included (AWS CLI docs, \"Return codes\")",
        ..BASE
    },
    Client {
        names: &["gcloud", "gsutil"],
        category: CloudApi,
        syntax: CLOUD_SYNTAX,
        host_opts: &["endpoint-url"],
        default: "the Google Cloud API",
        default_local: false,
        shape: Shape::Cloud,
        source: "https://cloud.google.com/sdk/gcloud/reference",
        outage: "exit 1 when the request fails (a network error included)",
        ..BASE
    },
    Client {
        names: &["az"],
        category: CloudApi,
        syntax: CLOUD_SYNTAX,
        host_opts: &["endpoint-url"],
        default: "the Azure Resource Manager API",
        default_local: false,
        shape: Shape::Cloud,
        source: "https://learn.microsoft.com/en-us/cli/azure/reference-index",
        outage: "a non-zero exit when the request fails (Azure CLI docs, \"Error handling\")",
        ..BASE
    },
    Client {
        names: &["mc"],
        category: CloudApi,
        syntax: CLOUD_SYNTAX,
        host_opts: &["endpoint-url"],
        default: "the S3 endpoint of the alias given",
        default_local: false,
        shape: Shape::Cloud,
        source: "https://min.io/docs/minio/linux/reference/minio-mc.html",
        outage: "exit 1 when the S3 endpoint cannot be reached (\"Unable to ... dial tcp\")",
        ..BASE
    },
];
