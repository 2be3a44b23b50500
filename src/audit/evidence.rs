//! Runtime evidence for liveness findings: what the Pods of a workload say about restarts (pure: no
//! I/O, no clock; the caller passes "now").
//!
//! Sources (Kubernetes API reference, `ContainerStatus` and `Event` v1):
//! - `status.containerStatuses[]` (and `initContainerStatuses[]` for native sidecars): `restartCount`
//!   (restarts since the Pod was created, whatever the cause) and `lastState.terminated` (`reason`,
//!   `exitCode`, `finishedAt`) of the previous run;
//! - kubelet events on the Pod (`involvedObject.fieldPath` `spec.containers{NAME}`): `Unhealthy`
//!   with a message starting `Liveness probe failed` (or `errored`), and `Killing` with
//!   `Container NAME failed liveness probe, will be restarted`. Events expire (one hour by default,
//!   the API server's `--event-ttl`) and may not be readable at all: they only ever add to the
//!   evidence.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Event, PodStatus};
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use serde::Serialize;

/// The window liveness events are counted in: 24 hours, in seconds.
pub const EVENT_WINDOW_SECONDS: i64 = 24 * 3600;

/// One container's restarts in one Pod, from its status.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ContainerRestarts {
    /// The container's name.
    pub container: String,
    /// `restartCount`.
    pub restart_count: u32,
    /// `lastState.terminated.reason` (`Error`, `OOMKilled`, ...), when there was a previous run.
    pub last_reason: Option<String>,
    /// `lastState.terminated.exitCode`.
    pub last_exit_code: Option<i32>,
    /// `lastState.terminated.finishedAt`.
    pub last_finished: Option<Timestamp>,
}

/// The restarts of every container of one Pod (app containers and init containers alike; only
/// containers with findings are ever looked up).
pub fn pod_restarts(status: &PodStatus) -> Vec<ContainerRestarts> {
    let statuses =
        status.container_statuses.iter().flatten().chain(status.init_container_statuses.iter().flatten());
    statuses
        .map(|s| {
            let terminated = s.last_state.as_ref().and_then(|l| l.terminated.as_ref());
            ContainerRestarts {
                container: s.name.clone(),
                restart_count: u32::try_from(s.restart_count).unwrap_or(0),
                last_reason: terminated.and_then(|t| t.reason.clone()),
                last_exit_code: terminated.map(|t| t.exit_code),
                last_finished: terminated.and_then(|t| t.finished_at.as_ref()).map(|t| t.0),
            }
        })
        .collect()
}

/// A kubelet event that names a container's liveness probe.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LivenessEvent {
    /// The Pod's name.
    pub pod: String,
    /// The container, from `involvedObject.fieldPath`.
    pub container: String,
    /// `Unhealthy` (a failed check) or `Killing` (a restart because of it).
    pub reason: String,
    /// `count` (or `series.count`), at least 1.
    pub count: u32,
    /// When it last happened: `lastTimestamp`, else `series.lastObservedTime`, else `eventTime`.
    pub last: Option<Timestamp>,
}

/// The liveness event an Event is, or `None` for any other event.
pub fn liveness_event(event: &Event) -> Option<LivenessEvent> {
    let reason = event.reason.as_deref()?;
    let message = event.message.as_deref().unwrap_or("");
    let liveness = match reason {
        "Unhealthy" => {
            message.starts_with("Liveness probe failed") || message.starts_with("Liveness probe errored")
        }
        "Killing" => message.contains("failed liveness probe"),
        _ => false,
    };
    let involved = &event.involved_object;
    if !liveness || involved.kind.as_deref() != Some("Pod") {
        return None;
    }
    let container = container_of_field_path(involved.field_path.as_deref()?)?;
    let count = event
        .series
        .as_ref()
        .and_then(|s| s.count)
        .or(event.count)
        .and_then(|c| u32::try_from(c).ok())
        .unwrap_or(1)
        .max(1);
    let last = event
        .last_timestamp
        .as_ref()
        .map(|t| t.0)
        .or_else(|| event.series.as_ref().and_then(|s| s.last_observed_time.as_ref()).map(|t| t.0))
        .or_else(|| event.event_time.as_ref().map(|t| t.0));
    Some(LivenessEvent {
        pod: involved.name.clone()?,
        container: container.to_string(),
        reason: reason.to_string(),
        count,
        last,
    })
}

/// `NAME` from `spec.containers{NAME}` or `spec.initContainers{NAME}`.
fn container_of_field_path(path: &str) -> Option<&str> {
    let rest = path.strip_prefix("spec.containers{").or_else(|| path.strip_prefix("spec.initContainers{"))?;
    rest.strip_suffix('}')
}

/// What the cluster says about one container of one workload: restarts across its Pods and the
/// liveness events within [`EVENT_WINDOW_SECONDS`].
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Evidence {
    /// The container.
    pub container: String,
    /// Pods of the workload that run the container.
    pub pods: usize,
    /// Of those, Pods where it restarted at least once.
    pub pods_restarted: usize,
    /// The sum of `restartCount` over those Pods (any cause).
    pub restarts: u64,
    /// The evidence in one line for people (see [`Evidence::describe`]).
    pub summary: String,
    /// The latest `lastState.terminated`: when (RFC 3339), why and the exit code.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_restart: Option<LastRestart>,
    /// `Killing` events for a failed liveness probe in the window (a restart each), when events
    /// were readable; `None` when they were not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub liveness_kills: Option<u64>,
    /// `Unhealthy` liveness-failure events in the window, when events were readable.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub liveness_failures: Option<u64>,
}

/// The previous run's end.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LastRestart {
    /// `finishedAt`, RFC 3339.
    pub at: String,
    /// `reason`, e.g. `Error`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// `exitCode` (137: killed, as the kubelet does after failed liveness checks).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
}

impl Evidence {
    /// Restarts, or liveness kills when events saw more of them: the number to sort by.
    pub fn weight(&self) -> u64 {
        self.restarts.max(self.liveness_kills.unwrap_or(0))
    }

    /// One line for people, e.g. `14 restarts across 6 of 6 Pods, last 2026-12-01T09:58:00Z
    /// (Error, exit 137); 9 liveness kills and 31 liveness failures in events, last 24 h`. No
    /// relative times: the same cluster state gives the same line (reports are rewritten only when
    /// their content changes). `of_pod`: the audited object is the Pod itself (`14 restarts, last
    /// ...`; `the Pod has no status for this container yet` instead of `no Pods of it are running`).
    pub fn describe(&self, of_pod: bool) -> String {
        let restarts = if self.restarts == 1 { "restart" } else { "restarts" };
        let mut s = match (self.pods, of_pod) {
            (0, false) => return "no Pods of it are running".to_string(),
            (0, true) => return "the Pod has no status for this container yet (not started)".to_string(),
            (_, true) => format!("{} {restarts}", self.restarts),
            (_, false) => format!(
                "{} {restarts} across {} of {} {}",
                self.restarts,
                self.pods_restarted,
                self.pods,
                if self.pods == 1 { "Pod" } else { "Pods" }
            ),
        };
        if let Some(last) = &self.last_restart {
            let mut why = Vec::new();
            if let Some(r) = &last.reason {
                why.push(r.clone());
            }
            if let Some(c) = last.exit_code {
                why.push(format!("exit {c}"));
            }
            s.push_str(&format!(", last {} ({})", last.at, why.join(", ")));
        }
        match (self.liveness_kills, self.liveness_failures) {
            (Some(k), Some(f)) => s.push_str(&format!(
                "; {k} liveness {} and {f} liveness {} in events, last 24 h",
                if k == 1 { "kill" } else { "kills" },
                if f == 1 { "failure" } else { "failures" }
            )),
            _ => s.push_str("; events not readable"),
        }
        s
    }
}

/// Builds the evidence of each container named in `containers` from the workload's Pods (name and
/// restarts) and, when events could be read (`Some`), their liveness events. Events of Pods not in
/// `pods` are ignored; events older than [`EVENT_WINDOW_SECONDS`] before `now` are not counted.
/// `of_pod`: the workload is a Pod itself (its summary speaks of the Pod, see [`Evidence::describe`]).
pub fn evidence(
    containers: &[&str],
    pods: &[(String, Vec<ContainerRestarts>)],
    events: Option<&[LivenessEvent]>,
    now: Timestamp,
    of_pod: bool,
) -> BTreeMap<String, Evidence> {
    let since = now - SignedDuration::from_secs(EVENT_WINDOW_SECONDS);
    let mut out = BTreeMap::new();
    for &container in containers {
        let mut e = Evidence { container: container.to_string(), ..Evidence::default() };
        let mut latest: Option<(Timestamp, &ContainerRestarts)> = None;
        for (_, statuses) in pods {
            let Some(s) = statuses.iter().find(|s| s.container == container) else { continue };
            e.pods += 1;
            if s.restart_count > 0 {
                e.pods_restarted += 1;
                e.restarts += u64::from(s.restart_count);
            }
            if let Some(at) = s.last_finished
                && latest.is_none_or(|(t, _)| at > t)
            {
                latest = Some((at, s));
            }
        }
        e.last_restart = latest.map(|(at, s)| LastRestart {
            at: at.to_string(),
            reason: s.last_reason.clone(),
            exit_code: s.last_exit_code,
        });
        if let Some(events) = events {
            let ours = events.iter().filter(|ev| {
                ev.container == container
                    && pods.iter().any(|(p, _)| *p == ev.pod)
                    && ev.last.is_none_or(|t| t >= since)
            });
            let (mut kills, mut failures) = (0, 0);
            for ev in ours {
                match ev.reason.as_str() {
                    "Killing" => kills += u64::from(ev.count),
                    _ => failures += u64::from(ev.count),
                }
            }
            e.liveness_kills = Some(kills);
            e.liveness_failures = Some(failures);
        }
        e.summary = e.describe(of_pod);
        out.insert(container.to_string(), e);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ts(s: &str) -> Timestamp {
        s.parse().unwrap()
    }

    fn restarts(c: &str, n: u32, at: Option<&str>) -> ContainerRestarts {
        ContainerRestarts {
            container: c.into(),
            restart_count: n,
            last_reason: at.map(|_| "Error".into()),
            last_exit_code: at.map(|_| 137),
            last_finished: at.map(ts),
        }
    }

    fn event(v: serde_json::Value) -> Event {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn liveness_events_are_recognised_and_others_are_not() {
        let kill = event(serde_json::json!({
            "metadata": {"name": "e1"}, "reason": "Killing", "count": 3,
            "message": "Container api failed liveness probe, will be restarted",
            "lastTimestamp": "2026-12-01T10:00:00Z",
            "involvedObject": {"kind": "Pod", "name": "api-1", "fieldPath": "spec.containers{api}"}
        }));
        let e = liveness_event(&kill).unwrap();
        assert_eq!((e.pod.as_str(), e.container.as_str(), e.count), ("api-1", "api", 3));
        assert_eq!(e.last, Some(ts("2026-12-01T10:00:00Z")));
        let unhealthy = event(serde_json::json!({
            "metadata": {"name": "e2"}, "reason": "Unhealthy",
            "message": "Liveness probe failed: HTTP probe failed with statuscode: 500",
            "involvedObject": {"kind": "Pod", "name": "api-1", "fieldPath": "spec.initContainers{proxy}"}
        }));
        let e = liveness_event(&unhealthy).unwrap();
        assert_eq!((e.container.as_str(), e.count, e.reason.as_str()), ("proxy", 1, "Unhealthy"));
        // Readiness failures, a preemption kill and a Deployment's event are not liveness evidence.
        for (reason, message, kind) in [
            ("Unhealthy", "Readiness probe failed: connection refused", "Pod"),
            ("Killing", "Stopping container api", "Pod"),
            ("Killing", "Container api failed liveness probe, will be restarted", "Deployment"),
        ] {
            let ev = event(serde_json::json!({
                "metadata": {"name": "x"}, "reason": reason, "message": message,
                "involvedObject": {"kind": kind, "name": "api-1", "fieldPath": "spec.containers{api}"}
            }));
            assert_eq!(liveness_event(&ev), None, "{reason}: {message}");
        }
    }

    #[test]
    fn restarts_are_summed_per_container_across_pods() {
        let pods = vec![
            (
                "a".to_string(),
                vec![restarts("api", 5, Some("2026-12-01T08:00:00Z")), restarts("side", 9, None)],
            ),
            ("b".to_string(), vec![restarts("api", 0, None)]),
            ("c".to_string(), vec![restarts("api", 9, Some("2026-12-01T09:00:00Z"))]),
        ];
        let now = ts("2026-12-01T11:00:00Z");
        let ev = evidence(&["api"], &pods, None, now, false);
        assert_eq!(evidence(&["api"], &[], None, now, false)["api"].summary, "no Pods of it are running");
        // A bare Pod is the one Pod: not "no Pods of it", not "across 1 of 1 Pod".
        assert_eq!(
            evidence(&["api"], &[], None, now, true)["api"].summary,
            "the Pod has no status for this container yet (not started)"
        );
        assert_eq!(
            evidence(&["api"], &pods[2..], None, now, true)["api"].summary,
            "9 restarts, last 2026-12-01T09:00:00Z (Error, exit 137); events not readable"
        );
        let api = &ev["api"];
        assert_eq!((api.pods, api.pods_restarted, api.restarts), (3, 2, 14));
        assert_eq!(api.last_restart.as_ref().unwrap().at, "2026-12-01T09:00:00Z");
        assert_eq!(api.liveness_kills, None);
        assert_eq!(
            api.describe(false),
            "14 restarts across 2 of 3 Pods, last 2026-12-01T09:00:00Z (Error, exit 137); events not readable"
        );
    }

    #[test]
    fn events_count_only_this_workloads_pods_within_the_window() {
        let pods = vec![("a".to_string(), vec![restarts("api", 1, None)])];
        let ev = |pod: &str, reason: &str, count, last: &str| LivenessEvent {
            pod: pod.into(),
            container: "api".into(),
            reason: reason.into(),
            count,
            last: Some(ts(last)),
        };
        let events = vec![
            ev("a", "Killing", 2, "2026-12-01T10:00:00Z"),
            ev("a", "Unhealthy", 6, "2026-12-01T10:00:00Z"),
            ev("other", "Killing", 50, "2026-12-01T10:00:00Z"),
            ev("a", "Killing", 70, "2026-11-29T10:00:00Z"),
        ];
        let now = ts("2026-12-01T11:00:00Z");
        let e = &evidence(&["api"], &pods, Some(&events), now, false)["api"];
        assert_eq!((e.liveness_kills, e.liveness_failures), (Some(2), Some(6)));
        assert_eq!(e.weight(), 2);
        assert!(
            e.describe(false).ends_with("; 2 liveness kills and 6 liveness failures in events, last 24 h")
        );
    }

    #[test]
    fn pod_status_is_read_for_apps_and_sidecars() {
        let status: PodStatus = serde_json::from_value(serde_json::json!({
            "containerStatuses": [{"name": "api", "restartCount": 4, "ready": true, "image": "i", "imageID": "",
                "lastState": {"terminated": {"exitCode": 137, "reason": "Error", "finishedAt": "2026-12-01T10:00:00Z"}}}],
            "initContainerStatuses": [{"name": "proxy", "restartCount": 1, "ready": true, "image": "i", "imageID": ""}]
        }))
        .unwrap();
        let r = pod_restarts(&status);
        assert_eq!(r.len(), 2);
        assert_eq!(r[0], restarts("api", 4, Some("2026-12-01T10:00:00Z")));
        assert_eq!((r[1].container.as_str(), r[1].restart_count, r[1].last_finished), ("proxy", 1, None));
    }
}
