//! A toy simulation of a dependency outage: how many restarts, and how long until the fleet
//! serves again, for a given probe design.
//!
//! Pure and deterministic: no I/O, no clock, no globals, no panics on any input.
//!
//! # The model
//!
//! It is the model of the Python program in the article "Liveness, Readiness, Startup: The Probe
//! That Restarts Your Healthy Pods" (the seed `004`, section "What it costs: a simulation"),
//! reproduced step for step and generalised only where the CLI needs knobs (separate liveness and
//! readiness timing, the stagger, the back-off bounds, which probe checks the dependency):
//!
//! - Time advances in whole seconds, `t = 0, 1, ..., horizon - 1`. Every replica starts warm and
//!   Ready at `t = 0` (its container started `warmup_seconds` earlier).
//! - The dependency is down for `outage_start_seconds <= t < outage_start_seconds + outage_seconds`.
//! - Replica `p` (0-based) probes at the seconds where `(t + p * stagger_seconds) % period == 0`.
//!   The phase is fixed to the clock: a restarted container keeps its replica's probe grid, it does
//!   not restart the grid at its own start (as in the article). Probes run from the container's
//!   first second on: there is no startup probe and no `initialDelaySeconds` in the model; the
//!   warm-up stands for what a startup probe would cover.
//! - On a liveness tick the liveness check passes unless it checks the dependency and the
//!   dependency is down. A pass resets the consecutive-failure count; at `failure_threshold`
//!   consecutive failures the kubelet kills the container: one restart, the replica is not Ready,
//!   its failure counts reset, and the new container starts after the current back-off. The back-off
//!   starts at `backoff_initial_seconds` and doubles after every restart up to
//!   `backoff_max_seconds` (the kubelet's CrashLoopBackOff: 10 s doubling to 300 s, Kubernetes docs,
//!   "Pod Lifecycle", "Container restarts"). As in the article it is never reset (the kubelet resets
//!   it after 10 minutes of running without trouble, which a container killed by the outage reaches
//!   only if `period * failure_threshold` exceeds 10 minutes). While the container waits out its
//!   back-off the replica does nothing: no probes, not Ready.
//! - On a readiness tick (after liveness, if both fall on the same second and the container was not
//!   just killed) the readiness check passes when the container has finished its warm-up and, if
//!   readiness checks the dependency, the dependency is up. A pass makes the replica Ready
//!   (successThreshold 1); `readiness_failure_threshold` consecutive failures make it not Ready. In
//!   the article liveness and readiness share one tick (same period) and a single failed readiness
//!   check removes the replica (threshold 1); [`Scenario::article`] sets exactly that.
//! - A replica is **serving** at second `t` when it is Ready (as of its latest readiness result) and
//!   warmed up (`t - container start >= warmup_seconds`). In this model serving means Ready: "in the
//!   Service's endpoints". With no probe watching the dependency ([`DependencyCheck::None`]) replicas
//!   stay Ready through the outage although their requests fail. A replica is **answering** when it
//!   is serving and the dependency is up: that is the article's `timeline` exactly.
//! - After the outage (from `outage_start_seconds + outage_seconds` to the horizon):
//!   *full capacity after recovery* is the first second, counted from the dependency's return, at
//!   which all replicas answer; *lost pod-seconds after recovery* is the sum over those seconds of
//!   `replicas - answering`. The dependency is up then, so serving and answering agree there.
//!
//! Under the article's assumptions ([`Scenario::article`]) this gives its table exactly: liveness
//! checking the database, 12 restarts, full capacity 39 s after recovery, 215 pod-seconds lost;
//! readiness checking it, 0 restarts, 9 s, 35 pod-seconds.
//!
//! # Limits
//!
//! - The horizon is capped at [`MAX_HORIZON_SECONDS`] (24 h).
//! - A period or failure threshold of 0 means "unset" and takes the Kubernetes default (period 10 s,
//!   failure threshold 3), as the API server's defaulting does.
//! - A back-off start above the back-off cap is clamped to the cap; a back-off of 0 restarts at once.
//! - Replicas whose probe phases coincide behave identically, so each distinct phase is simulated
//!   once and counted with its multiplicity: any replica count is exact when the probe phases repeat
//!   (with a stagger of 1 s they repeat every `lcm(liveness period, readiness period)` replicas).
//!   When more than [`MAX_DISTINCT_PODS`] distinct phases would be needed, the replica count is
//!   clamped to [`MAX_DISTINCT_PODS`]; [`Outcome::replicas`] says how many were simulated.
//! - Counts saturate instead of overflowing.

/// The longest horizon simulated, in seconds (24 h). Longer horizons are cut to it.
pub const MAX_HORIZON_SECONDS: u32 = 86_400;

/// The most replicas with distinct probe phases simulated one by one (bounds the work at
/// `MAX_DISTINCT_PODS * MAX_HORIZON_SECONDS` steps).
pub const MAX_DISTINCT_PODS: u32 = 1_000;

/// Kubernetes' default `periodSeconds`, used for a period of 0.
pub const DEFAULT_PERIOD_SECONDS: u32 = super::defaults::PERIOD_SECONDS as u32;

/// Kubernetes' default `failureThreshold`, used for a threshold of 0.
pub const DEFAULT_FAILURE_THRESHOLD: u32 = super::defaults::FAILURE_THRESHOLD as u32;

/// Which probe checks the dependency that goes down.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub enum DependencyCheck {
    /// The liveness probe checks it, and so does readiness (the article's design A: one endpoint
    /// that both probes call). The outage fails liveness and restarts containers.
    Liveness,
    /// Only readiness checks it; liveness checks the process alone (the article's design B, and
    /// what `fix` leaves). The outage removes replicas from the endpoints and restarts nothing.
    Readiness,
    /// Neither probe checks it (local-only liveness and readiness): replicas stay Ready, and so
    /// count as serving, through the outage although their requests fail.
    None,
}

impl DependencyCheck {
    fn liveness_checks(self) -> bool {
        matches!(self, DependencyCheck::Liveness)
    }

    fn readiness_checks(self) -> bool {
        matches!(self, DependencyCheck::Liveness | DependencyCheck::Readiness)
    }
}

/// The inputs of a simulation. All durations are whole seconds.
#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Scenario {
    /// Number of replicas (Pods). Article: 6.
    pub replicas: u32,
    /// Probe phase offset between consecutive replicas, in seconds: replica `p` probes when
    /// `(t + p * stagger_seconds) % period == 0`. Article: 1.
    pub stagger_seconds: u32,
    /// Seconds from a container's start until it can serve (JIT, caches, connection pools; the
    /// startup budget in the CLI). Article: 45.
    pub warmup_seconds: u32,
    /// Liveness `periodSeconds`, in seconds (0 = Kubernetes default 10). Article: 10.
    pub liveness_period_seconds: u32,
    /// Liveness `failureThreshold`: consecutive failures before a restart (0 = default 3).
    /// Article: 3.
    pub liveness_failure_threshold: u32,
    /// Readiness `periodSeconds`, in seconds (0 = Kubernetes default 10). Article: 10, the same
    /// ticks as liveness.
    pub readiness_period_seconds: u32,
    /// Readiness `failureThreshold`: consecutive failures before the replica leaves the endpoints
    /// (0 = default 3). Article: 1 (its program flips Ready on a single failed check).
    pub readiness_failure_threshold: u32,
    /// Second at which the dependency goes down. Article: 60.
    pub outage_start_seconds: u32,
    /// How long the dependency stays down, in seconds. Article: 90 (down for `60 <= t < 150`).
    pub outage_seconds: u32,
    /// First restart back-off, in seconds (kubelet CrashLoopBackOff: 10; Kubernetes docs, "Pod
    /// Lifecycle", "Container restarts"). Article: 10.
    pub backoff_initial_seconds: u32,
    /// Back-off cap, in seconds (kubelet: 300, five minutes). Article: 300.
    pub backoff_max_seconds: u32,
    /// Seconds simulated, from 0 (capped at [`MAX_HORIZON_SECONDS`]). Article: 300.
    pub horizon_seconds: u32,
    /// Which probe checks the dependency.
    pub dependency_check: DependencyCheck,
}

impl Scenario {
    /// The article's assumptions: 6 replicas probed one second apart, 45 s warm-up, period 10 and
    /// failure threshold 3 (readiness on the same ticks, removed after one failure), a 90 s outage
    /// from t = 60, back-off 10 s doubling to 300 s, a 300 s horizon.
    pub fn article(dependency_check: DependencyCheck) -> Scenario {
        Scenario {
            replicas: 6,
            stagger_seconds: 1,
            warmup_seconds: 45,
            liveness_period_seconds: 10,
            liveness_failure_threshold: 3,
            readiness_period_seconds: 10,
            readiness_failure_threshold: 1,
            outage_start_seconds: 60,
            outage_seconds: 90,
            backoff_initial_seconds: super::defaults::RESTART_BACKOFF_INITIAL_SECONDS,
            backoff_max_seconds: super::defaults::RESTART_BACKOFF_MAX_SECONDS,
            horizon_seconds: 300,
            dependency_check,
        }
    }
}

/// What happened.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Outcome {
    /// Replicas simulated: the scenario's, unless clamped (see [`MAX_DISTINCT_PODS`]).
    pub replicas: u32,
    /// Container restarts across all replicas (saturating).
    pub restarts: u32,
    /// Serving (Ready and warmed up, so in the endpoints) replicas at each second
    /// `0..min(horizon, MAX_HORIZON_SECONDS)`; its length is the horizon simulated.
    pub serving: Vec<u32>,
    /// Serving replicas while the dependency is up (0 during the outage), at each second: the ones
    /// whose requests succeed. The article's `timeline`.
    pub answering: Vec<u32>,
    /// Seconds from the dependency's return until all replicas answer again; `None` if that does
    /// not happen within the horizon (or the outage does not end within it).
    pub full_capacity_after_recovery_seconds: Option<u32>,
    /// Sum over the seconds from the dependency's return to the horizon of the replicas not
    /// answering, in pod-seconds.
    pub lost_pod_seconds_after_recovery: u64,
}

/// Runs the simulation (see the module documentation for the model).
pub fn simulate(s: &Scenario) -> Outcome {
    run(s, false).0
}

/// One replica's state, as in the article's program.
struct Pod {
    /// Second its current container started (negative: before the simulation).
    started: i64,
    /// Consecutive failed liveness checks.
    liveness_failures: u32,
    /// Consecutive failed readiness checks.
    readiness_failures: u32,
    /// The back-off before the next restart, in seconds.
    backoff: u64,
    /// The Ready condition.
    ready: bool,
}

/// Distinct replicas to simulate: `(liveness phase, readiness phase, multiplicity)`, and the
/// replica count they add up to.
fn replica_classes(replicas: u32, stagger: u32, lp: u32, rp: u32) -> (Vec<(u64, u64, u32)>, u32) {
    let (stagger, lp, rp) = (u64::from(stagger), u64::from(lp), u64::from(rp));
    // Replica p's phases are (p * stagger mod lp, p * stagger mod rp): periodic in p with period
    // lcm(lp / gcd(stagger, lp), rp / gcd(stagger, rp)), all distinct within one period.
    let a = lp / gcd(stagger, lp);
    let b = rp / gcd(stagger, rp);
    let cycle = a / gcd(a, b) * b; // <= lp * rp < 2^64
    let mut replicas = replicas;
    if u64::from(replicas).min(cycle) > u64::from(MAX_DISTINCT_PODS) {
        replicas = MAX_DISTINCT_PODS;
    }
    let distinct = u64::from(replicas).min(cycle);
    let (full, rest) = (u64::from(replicas) / cycle, u64::from(replicas) % cycle);
    let classes = (0..distinct)
        .map(|p| {
            let weight = full + u64::from(p < rest);
            let offset = p * stagger; // p < 2^32, stagger < 2^32
            (offset % lp, offset % rp, u32::try_from(weight).unwrap_or(u32::MAX))
        })
        .collect();
    (classes, replicas)
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

fn or_default(value: u32, default: u32) -> u32 {
    if value == 0 { default } else { value }
}

/// The simulation; with `trace`, also each distinct replica's kill times (in class order, replica
/// `p` first for `p` below the number of distinct phases).
fn run(s: &Scenario, trace: bool) -> (Outcome, Vec<Vec<u32>>) {
    let horizon = s.horizon_seconds.min(MAX_HORIZON_SECONDS);
    let lp = or_default(s.liveness_period_seconds, DEFAULT_PERIOD_SECONDS);
    let lt = or_default(s.liveness_failure_threshold, DEFAULT_FAILURE_THRESHOLD);
    let rp = or_default(s.readiness_period_seconds, DEFAULT_PERIOD_SECONDS);
    let rt = or_default(s.readiness_failure_threshold, DEFAULT_FAILURE_THRESHOLD);
    let warmup = i64::from(s.warmup_seconds);
    let outage_start = u64::from(s.outage_start_seconds);
    let outage_end = outage_start + u64::from(s.outage_seconds);
    let backoff_max = u64::from(s.backoff_max_seconds);
    let backoff_initial = u64::from(s.backoff_initial_seconds).min(backoff_max);
    let (liveness_checks, readiness_checks) =
        (s.dependency_check.liveness_checks(), s.dependency_check.readiness_checks());

    let (classes, replicas) = replica_classes(s.replicas, s.stagger_seconds, lp, rp);
    let mut serving = vec![0u32; horizon as usize];
    let mut answering = vec![0u32; horizon as usize];
    let mut restarts = 0u32;
    let mut kills = Vec::new();

    for &(l_offset, r_offset, weight) in &classes {
        let mut pod = Pod {
            started: -warmup,
            liveness_failures: 0,
            readiness_failures: 0,
            backoff: backoff_initial,
            ready: true,
        };
        let mut killed_at = Vec::new();
        for t in 0..horizon {
            let now = i64::from(t);
            if now < pod.started {
                continue; // waiting out the restart back-off
            }
            let warm = now - pod.started >= warmup;
            let t64 = u64::from(t);
            let dependency_up = !(outage_start <= t64 && t64 < outage_end);
            if (t64 + l_offset) % u64::from(lp) == 0 {
                let ok = dependency_up || !liveness_checks;
                pod.liveness_failures = if ok { 0 } else { pod.liveness_failures.saturating_add(1) };
                if pod.liveness_failures >= lt {
                    // The kubelet kills the container; the next one starts after the back-off.
                    pod.started = now.saturating_add(i64::try_from(pod.backoff).unwrap_or(i64::MAX));
                    pod.backoff = pod.backoff.saturating_mul(2).min(backoff_max);
                    pod.liveness_failures = 0;
                    pod.readiness_failures = 0;
                    pod.ready = false;
                    restarts = restarts.saturating_add(weight);
                    if trace {
                        killed_at.push(t);
                    }
                    continue;
                }
            }
            if (t64 + r_offset) % u64::from(rp) == 0 {
                if warm && (dependency_up || !readiness_checks) {
                    pod.readiness_failures = 0;
                    pod.ready = true;
                } else {
                    pod.readiness_failures = pod.readiness_failures.saturating_add(1);
                    if pod.readiness_failures >= rt {
                        pod.ready = false;
                    }
                }
            }
            if pod.ready && warm {
                let i = t as usize;
                serving[i] = serving[i].saturating_add(weight);
                if dependency_up {
                    answering[i] = answering[i].saturating_add(weight);
                }
            }
        }
        if trace {
            kills.push(killed_at);
        }
    }

    let after = answering.get(usize::try_from(outage_end).unwrap_or(usize::MAX)..).unwrap_or(&[]);
    let full_capacity_after_recovery_seconds =
        after.iter().position(|&n| n >= replicas).and_then(|i| u32::try_from(i).ok());
    let lost_pod_seconds_after_recovery = after.iter().map(|&n| u64::from(replicas.saturating_sub(n))).sum();
    let outcome = Outcome {
        replicas,
        restarts,
        serving,
        answering,
        full_capacity_after_recovery_seconds,
        lost_pod_seconds_after_recovery,
    };
    (outcome, kills)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outage(check: DependencyCheck, replicas: u32, outage_seconds: u32, horizon: u32) -> Scenario {
        Scenario { replicas, outage_seconds, horizon_seconds: horizon, ..Scenario::article(check) }
    }

    /// The article's program, transcribed line by line with one state vector per replica and no
    /// grouping, generalised the same way as [`run`]. The reference the grouped version is
    /// checked against.
    fn reference(s: &Scenario) -> (u32, Vec<u32>) {
        let h = s.horizon_seconds.min(MAX_HORIZON_SECONDS) as i64;
        let lp = or_default(s.liveness_period_seconds, 10) as i64;
        let lt = or_default(s.liveness_failure_threshold, 3);
        let rp = or_default(s.readiness_period_seconds, 10) as i64;
        let rt = or_default(s.readiness_failure_threshold, 3);
        let warmup = s.warmup_seconds as i64;
        let down = s.outage_start_seconds as i64..s.outage_start_seconds as i64 + s.outage_seconds as i64;
        let pods = s.replicas as usize;
        let mut started = vec![-warmup; pods];
        let (mut fails, mut rfails) = (vec![0u32; pods], vec![0u32; pods]);
        let mut backoff = vec![(s.backoff_initial_seconds.min(s.backoff_max_seconds)) as i64; pods];
        let mut ready = vec![true; pods];
        let (mut restarts, mut timeline) = (0, vec![]);
        for t in 0..h {
            let db_up = !down.contains(&t);
            for p in 0..pods {
                if t < started[p] {
                    continue;
                }
                let warm = t - started[p] >= warmup;
                let phase = p as i64 * s.stagger_seconds as i64;
                if (t + phase) % lp == 0 {
                    let live_ok = db_up || s.dependency_check != DependencyCheck::Liveness;
                    fails[p] = if live_ok { 0 } else { fails[p] + 1 };
                    if fails[p] >= lt {
                        started[p] = t + backoff[p];
                        fails[p] = 0;
                        rfails[p] = 0;
                        backoff[p] = (backoff[p] * 2).min(s.backoff_max_seconds as i64);
                        restarts += 1;
                        ready[p] = false;
                        continue;
                    }
                }
                if (t + phase) % rp == 0 {
                    if warm && (db_up || s.dependency_check == DependencyCheck::None) {
                        rfails[p] = 0;
                        ready[p] = true;
                    } else {
                        rfails[p] += 1;
                        if rfails[p] >= rt {
                            ready[p] = false;
                        }
                    }
                }
            }
            timeline
                .push((0..pods).filter(|&p| ready[p] && t - started[p] >= warmup && db_up).count() as u32);
        }
        (restarts, timeline)
    }

    #[test]
    fn article_table_liveness_checks_database() {
        let o = simulate(&Scenario::article(DependencyCheck::Liveness));
        assert_eq!(o.restarts, 12);
        assert_eq!(o.full_capacity_after_recovery_seconds, Some(39));
        assert_eq!(o.lost_pod_seconds_after_recovery, 215);
        assert_eq!(o.replicas, 6);
        assert_eq!(o.serving.len(), 300);
    }

    #[test]
    fn article_table_readiness_checks_database() {
        let o = simulate(&Scenario::article(DependencyCheck::Readiness));
        assert_eq!(o.restarts, 0);
        assert_eq!(o.full_capacity_after_recovery_seconds, Some(9));
        assert_eq!(o.lost_pod_seconds_after_recovery, 35);
    }

    #[test]
    fn article_sampled_series_is_answering() {
        // "serving pods, sampled every 15s from t=45" in the article's output.
        let a = [6, 0, 0, 0, 0, 0, 0, 0, 0, 1, 6, 6, 6, 6, 6, 6, 6];
        let b = [6, 0, 0, 0, 0, 0, 0, 1, 6, 6, 6, 6, 6, 6, 6, 6, 6];
        for (check, expected) in [(DependencyCheck::Liveness, a), (DependencyCheck::Readiness, b)] {
            let o = simulate(&Scenario::article(check));
            let sampled: Vec<u32> = (45..300).step_by(15).map(|t| o.answering[t]).collect();
            assert_eq!(sampled, expected, "{check:?}");
        }
    }

    #[test]
    fn article_serving_at_instants() {
        for check in [DependencyCheck::Liveness, DependencyCheck::Readiness] {
            let o = simulate(&Scenario::article(check));
            // Before the outage all six serve.
            assert!(o.serving[..60].iter().all(|&n| n == 6), "{check:?}");
            assert!(o.answering[..60].iter().all(|&n| n == 6), "{check:?}");
            // Replica 0 probes at t = 60 and leaves; replica 1 (phase 1) is the last, at t = 69.
            assert_eq!(o.serving[60], 5, "{check:?}");
            assert_eq!(o.serving[69], 0, "{check:?}");
            // Once every replica has failed a probe, none serve until the dependency is back.
            assert!(o.serving[69..150].iter().all(|&n| n == 0), "{check:?}");
            // Nothing answers during the outage, in either design.
            assert!(o.answering[60..150].iter().all(|&n| n == 0), "{check:?}");
            // After the outage the dependency is up: serving and answering agree.
            assert_eq!(o.serving[150..], o.answering[150..], "{check:?}");
        }
        let b = simulate(&Scenario::article(DependencyCheck::Readiness));
        // Design B: replica 0 is back at its t = 150 probe, the last (replica 1) at t = 159.
        assert_eq!((b.serving[150], b.serving[158], b.serving[159]), (1, 5, 6));
        let a = simulate(&Scenario::article(DependencyCheck::Liveness));
        // Design A: full capacity at t = 189 (39 s after recovery), not a second earlier.
        assert_eq!((a.serving[188], a.serving[189]), (5, 6));
    }

    #[test]
    fn matches_line_by_line_reference() {
        let mut count = 0;
        for check in [DependencyCheck::Liveness, DependencyCheck::Readiness, DependencyCheck::None] {
            for replicas in [0, 1, 6, 13] {
                for stagger in [0, 1, 3, 7] {
                    for (lp, rp) in [(10, 10), (10, 5), (7, 3), (1, 1), (0, 4)] {
                        for (lt, rt) in [(3, 1), (1, 3), (0, 0), (5, 2)] {
                            for (warmup, outage, backoff) in
                                [(45, 90, (10, 300)), (0, 400, (1, 7)), (120, 30, (0, 0))]
                            {
                                let s = Scenario {
                                    replicas,
                                    stagger_seconds: stagger,
                                    warmup_seconds: warmup,
                                    liveness_period_seconds: lp,
                                    liveness_failure_threshold: lt,
                                    readiness_period_seconds: rp,
                                    readiness_failure_threshold: rt,
                                    outage_seconds: outage,
                                    backoff_initial_seconds: backoff.0,
                                    backoff_max_seconds: backoff.1,
                                    horizon_seconds: 600,
                                    ..Scenario::article(check)
                                };
                                let o = simulate(&s);
                                let (restarts, timeline) = reference(&s);
                                assert_eq!((o.restarts, &o.answering), (restarts, &timeline), "{s:?}");
                                count += 1;
                            }
                        }
                    }
                }
            }
        }
        assert_eq!(count, 3 * 4 * 4 * 5 * 4 * 3);
    }

    #[test]
    fn liveness_check_restarts_during_outage_others_do_not() {
        let (a, kills) = run(&Scenario::article(DependencyCheck::Liveness), true);
        assert!(a.restarts > 0);
        // Every kill happens while the database is down (three failed checks into the outage).
        assert!(kills.iter().flatten().all(|&t| (60..150).contains(&t)), "{kills:?}");
        assert_eq!(kills.iter().map(Vec::len).sum::<usize>(), 12);
        for check in [DependencyCheck::Readiness, DependencyCheck::None] {
            for outage_seconds in [90, 1200, 86_400] {
                let o = simulate(&outage(check, 6, outage_seconds, u32::MAX));
                assert_eq!(o.restarts, 0, "{check:?} {outage_seconds}");
            }
        }
    }

    #[test]
    fn nobody_checking_the_dependency_keeps_everyone_ready() {
        let o = simulate(&Scenario::article(DependencyCheck::None));
        assert_eq!(o.restarts, 0);
        // Serving means Ready: with no probe watching the database the replicas stay in the
        // endpoints for the whole outage...
        assert!(o.serving.iter().all(|&n| n == 6));
        // ...although their requests fail.
        assert!(o.answering[60..150].iter().all(|&n| n == 0));
        assert_eq!(o.full_capacity_after_recovery_seconds, Some(0));
        assert_eq!(o.lost_pod_seconds_after_recovery, 0);
    }

    #[test]
    fn backoff_doubles_and_caps_at_300() {
        // One replica, a 1200 s outage from t = 60: kills every time the back-off ends and three
        // more checks (20 s on the probe grid) have failed.
        let s = outage(DependencyCheck::Liveness, 1, 1200, 3000);
        let (o, kills) = run(&s, true);
        assert_eq!(kills, [vec![80, 110, 150, 210, 310, 490, 810, 1130]]);
        let backoffs: Vec<u32> = kills[0].windows(2).map(|w| w[1] - w[0] - 20).collect();
        assert_eq!(backoffs, [10, 20, 40, 80, 160, 300, 300]);
        assert_eq!(o.restarts, 8);
        // Last start at 1130 + 300 = 1430, warm at 1475, Ready at the 1480 probe: 220 s after the
        // database returned at t = 1260 (the article's program, run with these inputs, agrees).
        assert_eq!(o.full_capacity_after_recovery_seconds, Some(220));
        assert_eq!(o.lost_pod_seconds_after_recovery, 220);
        // Six replicas: the same pattern shifted by their phases (the article's program: 48
        // restarts, 229 s, 1355 pod-seconds).
        let o = simulate(&outage(DependencyCheck::Liveness, 6, 1200, 3000));
        assert_eq!(o.restarts, 48);
        assert_eq!(o.full_capacity_after_recovery_seconds, Some(229));
        assert_eq!(o.lost_pod_seconds_after_recovery, 1355);
    }

    #[test]
    fn backoff_start_above_cap_is_clamped() {
        let s = Scenario {
            backoff_initial_seconds: 500,
            backoff_max_seconds: 100,
            ..outage(DependencyCheck::Liveness, 1, 1200, 3000)
        };
        let (_, kills) = run(&s, true);
        let gaps: Vec<u32> = kills[0].windows(2).map(|w| w[1] - w[0] - 20).collect();
        assert!(!gaps.is_empty() && gaps.iter().all(|&g| g == 100), "{gaps:?}");
    }

    #[test]
    fn many_replicas_are_grouped_by_phase_exactly() {
        // Period 10, stagger 1: 60 replicas are 10 phases, 6 replicas each.
        let s = Scenario { replicas: 60, ..Scenario::article(DependencyCheck::Liveness) };
        let o = simulate(&s);
        let (restarts, timeline) = reference(&s);
        assert_eq!((o.restarts, &o.answering), (restarts, &timeline));
        assert_eq!(o.replicas, 60);
        // Four billion replicas still take ten phases.
        let big = Scenario { replicas: u32::MAX, ..Scenario::article(DependencyCheck::Liveness) };
        let o = simulate(&big);
        assert_eq!(o.replicas, u32::MAX);
        assert_eq!(o.serving[0], u32::MAX);
        assert_eq!(o.restarts, u32::MAX); // saturated
        assert!(o.full_capacity_after_recovery_seconds.is_some());
    }

    #[test]
    fn too_many_distinct_phases_clamp_replicas() {
        let s = Scenario {
            replicas: 5000,
            liveness_period_seconds: 9973,
            readiness_period_seconds: 9967,
            horizon_seconds: 200,
            ..Scenario::article(DependencyCheck::Liveness)
        };
        let o = simulate(&s);
        assert_eq!(o.replicas, MAX_DISTINCT_PODS);
        assert_eq!(o.serving[0], MAX_DISTINCT_PODS);
        // Below the cap the count is kept as given.
        let o = simulate(&Scenario { replicas: 999, ..s });
        assert_eq!(o.replicas, 999);
    }

    #[test]
    fn zero_replicas() {
        let o = simulate(&Scenario { replicas: 0, ..Scenario::article(DependencyCheck::Liveness) });
        assert_eq!(o.restarts, 0);
        assert!(o.serving.iter().all(|&n| n == 0));
        assert_eq!(o.serving.len(), 300);
        // Nothing to bring back: trivially at full capacity.
        assert_eq!(o.full_capacity_after_recovery_seconds, Some(0));
        assert_eq!(o.lost_pod_seconds_after_recovery, 0);
    }

    #[test]
    fn zero_period_and_threshold_take_kubernetes_defaults() {
        let article = simulate(&Scenario::article(DependencyCheck::Liveness));
        let defaulted = Scenario {
            liveness_period_seconds: 0,
            liveness_failure_threshold: 0,
            readiness_period_seconds: 0,
            ..Scenario::article(DependencyCheck::Liveness)
        };
        assert_eq!(simulate(&defaulted), article);
        // Readiness threshold 0 means 3: replicas stay in the endpoints until their third failed
        // check (replica 0 at t = 80, replica 1 at t = 89), restarts unchanged.
        let o = simulate(&Scenario { readiness_failure_threshold: 0, ..defaulted });
        assert_eq!(o.restarts, 12);
        assert_eq!((o.serving[75], o.serving[80], o.serving[88], o.serving[89]), (6, 5, 1, 0));
        assert!(o.answering[60..150].iter().all(|&n| n == 0));
    }

    #[test]
    fn zero_outage_changes_nothing() {
        for check in [DependencyCheck::Liveness, DependencyCheck::Readiness, DependencyCheck::None] {
            let o = simulate(&outage(check, 6, 0, 300));
            assert_eq!(o.restarts, 0);
            assert!(o.serving.iter().chain(&o.answering).all(|&n| n == 6));
            assert_eq!(o.full_capacity_after_recovery_seconds, Some(0));
            assert_eq!(o.lost_pod_seconds_after_recovery, 0);
        }
    }

    #[test]
    fn zero_horizon() {
        let o = simulate(&outage(DependencyCheck::Liveness, 6, 90, 0));
        assert_eq!(o.restarts, 0);
        assert!(o.serving.is_empty() && o.answering.is_empty());
        assert_eq!(o.full_capacity_after_recovery_seconds, None);
        assert_eq!(o.lost_pod_seconds_after_recovery, 0);
    }

    #[test]
    fn outage_outlasting_the_horizon_never_recovers() {
        let o = simulate(&outage(DependencyCheck::Readiness, 6, 1000, 300));
        assert_eq!(o.full_capacity_after_recovery_seconds, None);
        assert_eq!(o.lost_pod_seconds_after_recovery, 0);
    }

    #[test]
    fn huge_horizon_is_capped_at_a_day() {
        let o = simulate(&outage(DependencyCheck::Liveness, 6, 90, u32::MAX));
        assert_eq!(o.serving.len(), MAX_HORIZON_SECONDS as usize);
        // Nothing happens after the article's 300 s: same table.
        assert_eq!(o.restarts, 12);
        assert_eq!(o.full_capacity_after_recovery_seconds, Some(39));
        assert_eq!(o.lost_pod_seconds_after_recovery, 215);
    }

    #[test]
    fn extreme_inputs_do_not_panic() {
        let all_max = Scenario {
            replicas: u32::MAX,
            stagger_seconds: u32::MAX,
            warmup_seconds: u32::MAX,
            liveness_period_seconds: u32::MAX,
            liveness_failure_threshold: u32::MAX,
            readiness_period_seconds: u32::MAX,
            readiness_failure_threshold: u32::MAX,
            outage_start_seconds: u32::MAX,
            outage_seconds: u32::MAX,
            backoff_initial_seconds: u32::MAX,
            backoff_max_seconds: u32::MAX,
            horizon_seconds: u32::MAX,
            dependency_check: DependencyCheck::Liveness,
        };
        let o = simulate(&all_max);
        assert_eq!(o.serving.len(), MAX_HORIZON_SECONDS as usize);
        assert_eq!(o.restarts, 0);
        assert_eq!(o.full_capacity_after_recovery_seconds, None);

        // Outage from 0 for ever, threshold 1, no back-off, period 1: a restart every second.
        let storm = Scenario {
            replicas: 3,
            stagger_seconds: 0,
            warmup_seconds: 0,
            liveness_period_seconds: 1,
            liveness_failure_threshold: 1,
            readiness_period_seconds: 1,
            readiness_failure_threshold: 1,
            outage_start_seconds: 0,
            outage_seconds: u32::MAX,
            backoff_initial_seconds: 0,
            backoff_max_seconds: 0,
            horizon_seconds: u32::MAX,
            dependency_check: DependencyCheck::Liveness,
        };
        let o = simulate(&storm);
        assert_eq!(o.restarts, 3 * MAX_HORIZON_SECONDS);
        assert!(o.serving.iter().all(|&n| n == 0));

        // Warm-up longer than the horizon: restarted replicas never come back.
        let slow = Scenario { warmup_seconds: u32::MAX, ..Scenario::article(DependencyCheck::Liveness) };
        let o = simulate(&slow);
        assert_eq!(o.full_capacity_after_recovery_seconds, None);
        assert_eq!(o.lost_pod_seconds_after_recovery, 6 * 150);

        // Stagger and periods at the extremes with many replicas and every check.
        for check in [DependencyCheck::Liveness, DependencyCheck::Readiness, DependencyCheck::None] {
            for (stagger, period) in [(u32::MAX, 1), (u32::MAX - 1, u32::MAX), (1, u32::MAX)] {
                let s = Scenario {
                    replicas: u32::MAX,
                    stagger_seconds: stagger,
                    liveness_period_seconds: period,
                    readiness_period_seconds: period,
                    horizon_seconds: 400,
                    ..Scenario::article(check)
                };
                let o = simulate(&s);
                assert_eq!(o.serving.len(), 400);
                assert!(o.replicas == u32::MAX || o.replicas == MAX_DISTINCT_PODS);
            }
        }
    }
}
