//! Opt-in phase timings of inference, for finding where a run spends its time on a new
//! machine (a GPU, many cores) without a profiler. Off unless
//! `induce_models::timing::set_enabled` turns it on (the `induce` binary and the GPU check do
//! when the environment variable `INDUCE_PROFILE` is set to anything but `0` or empty); when
//! off, every call is one relaxed load of a flag.
//!
//! Phases measured at the batch level are wall-clock seconds; [`Phase::Verdict`] is summed
//! over the host threads that step episodes (thread-seconds, so it can exceed the wall time).
//!
//! ```
//! use induce_rl::profile::{self, Phase};
//! let x = profile::time(Phase::Step, || 2 + 2);
//! assert_eq!(x, 4);
//! // Unless profiling is switched on, nothing is recorded and there is no report.
//! if !profile::enabled() {
//!     assert!(profile::report().is_none());
//! }
//! ```

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// A timed part of inference.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Building a batch's episodes (neighbourhood extraction, the black box's first verdicts,
    /// candidates), on all threads (wall clock).
    Build,
    /// `Actor::prepare` for every episode (the Burn kernel's per-episode feature product).
    Prepare,
    /// The policy's whole scoring call for a batch of states (`Actor::log_probs_batch`).
    Policy,
    /// Burn kernel: building the block-diagonal batch on the host (messages, candidates).
    Pack,
    /// Burn kernel: the batch's tensors created on the device (host-side conversions and
    /// copies; the transfer itself may complete asynchronously).
    Upload,
    /// Burn kernel: the forward pass and the download of the scores (waits for the device).
    Device,
    /// Burn kernel, part of [`Phase::Device`]: the GAT embedding (the device is synchronised
    /// after it only while profiling).
    Embed,
    /// Burn kernel: the per-state log-softmax on the host.
    Softmax,
    /// Stepping every episode of a round (wall clock, all threads).
    Step,
    /// The black box's verdicts inside the steps (thread-seconds).
    Verdict,
    /// Finishing the counterfactuals found (the minimality pass), on all threads (wall clock).
    Finish,
}

const PHASES: [(Phase, &str); 11] = [
    (Phase::Build, "build the episodes (wall)"),
    (Phase::Prepare, "prepare (per-episode cache)"),
    (Phase::Policy, "policy scoring, total"),
    (Phase::Pack, "  pack block-diagonal batch (host)"),
    (Phase::Upload, "  create tensors (upload)"),
    (Phase::Device, "  forward + download"),
    (Phase::Embed, "    of which GAT embedding"),
    (Phase::Softmax, "  log-softmax (host)"),
    (Phase::Step, "episode steps (wall)"),
    (Phase::Verdict, "  black-box verdicts (thread-s)"),
    (Phase::Finish, "finish: minimality pass (wall)"),
];

/// A quantity summed over a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Count {
    /// Rounds of the lockstep loop (one policy call each).
    Rounds,
    /// States scored (episodes × steps).
    States,
    /// Nodes in the scored batches.
    Nodes,
    /// Messages (directed edges and self loops) in the scored batches.
    Messages,
    /// Candidate actions scored.
    Candidates,
    /// Values (4 bytes each) the Burn kernel's batches uploaded to the device.
    Uploaded,
    /// Rounds whose batch was packed on the host and uploaded whole.
    Packs,
}

const COUNTS: [(Count, &str); 7] = [
    (Count::Rounds, "rounds"),
    (Count::States, "states scored"),
    (Count::Nodes, "nodes scored"),
    (Count::Messages, "messages scored"),
    (Count::Candidates, "candidates scored"),
    (Count::Uploaded, "values uploaded (4 B)"),
    (Count::Packs, "batches packed whole"),
];

static NANOS: [AtomicU64; PHASES.len()] = [const { AtomicU64::new(0) }; PHASES.len()];
static CALLS: [AtomicU64; PHASES.len()] = [const { AtomicU64::new(0) }; PHASES.len()];
static TOTALS: [AtomicU64; COUNTS.len()] = [const { AtomicU64::new(0) }; COUNTS.len()];

/// Whether timings are recorded: the one switch of [`induce_models::timing::enabled`]
/// (`induce_models::timing::set_enabled`; binaries read `INDUCE_PROFILE` with
/// `induce_models::timing::enable_from_env`).
pub fn enabled() -> bool {
    induce_models::timing::enabled()
}

fn slot(phase: Phase) -> usize {
    PHASES
        .iter()
        .position(|&(p, _)| p == phase)
        .expect("every phase is listed")
}

/// Runs `f`, adding its wall time to `phase` when profiling is on.
pub fn time<T>(phase: Phase, f: impl FnOnce() -> T) -> T {
    if !enabled() {
        return f();
    }
    let start = Instant::now();
    let out = f();
    add_time(phase, start.elapsed());
    out
}

/// Adds `elapsed` to `phase` (one call) when profiling is on.
pub fn add_time(phase: Phase, elapsed: std::time::Duration) {
    if enabled() {
        let i = slot(phase);
        let ns = u64::try_from(elapsed.as_nanos()).unwrap_or(u64::MAX);
        NANOS[i].fetch_add(ns, Ordering::Relaxed);
        CALLS[i].fetch_add(1, Ordering::Relaxed);
    }
}

/// Adds `n` to `count` when profiling is on.
pub fn add(count: Count, n: usize) {
    if enabled() {
        let i = COUNTS
            .iter()
            .position(|&(c, _)| c == count)
            .expect("every count is listed");
        TOTALS[i].fetch_add(n as u64, Ordering::Relaxed);
    }
}

/// A one-line summary of the timings so far (cumulative seconds per phase), offered after
/// every round of the lockstep loop when profiling is on, so a run stopped by a timeout still
/// shows where its time went: `Some` at most once per second (the host kernel plays one round
/// per target, thousands of them).
pub fn progress_line() -> Option<String> {
    if !enabled() {
        return None;
    }
    static LAST: std::sync::Mutex<Option<Instant>> = std::sync::Mutex::new(None);
    {
        let mut last = LAST.lock().unwrap_or_else(|e| e.into_inner());
        if last.is_some_and(|t| t.elapsed().as_secs_f64() < 1.0) {
            return None;
        }
        *last = Some(Instant::now());
    }
    Some(summary_line())
}

/// The cumulative one-line summary behind [`progress_line`].
fn summary_line() -> String {
    let secs = |p: Phase| NANOS[slot(p)].load(Ordering::Relaxed) as f64 * 1e-9;
    let total = |c: Count| {
        let i = COUNTS.iter().position(|&(k, _)| k == c).expect("listed");
        TOTALS[i].load(Ordering::Relaxed)
    };
    format!(
        "profile: round {} states {} | build {:.2} s, prepare {:.2} s, policy {:.2} s (pack {:.2}, \
         upload {:.2}, device {:.2} (embed {:.2}), softmax {:.2}), steps {:.2} s (verdicts {:.2} \
         thread-s), finish {:.2} s",
        total(Count::Rounds),
        total(Count::States),
        secs(Phase::Build),
        secs(Phase::Prepare),
        secs(Phase::Policy),
        secs(Phase::Pack),
        secs(Phase::Upload),
        secs(Phase::Device),
        secs(Phase::Embed),
        secs(Phase::Softmax),
        secs(Phase::Step),
        secs(Phase::Verdict),
        secs(Phase::Finish),
    )
}

/// The timings so far as a table (phase, seconds, calls; then the counts), or `None` when
/// profiling is off.
pub fn report() -> Option<String> {
    if !enabled() {
        return None;
    }
    let mut s = format!("{}\nprofile (INDUCE_PROFILE)\n", summary_line());
    for (i, (_, name)) in PHASES.iter().enumerate() {
        let secs = NANOS[i].load(Ordering::Relaxed) as f64 * 1e-9;
        let calls = CALLS[i].load(Ordering::Relaxed);
        s.push_str(&format!("  {name:<38} {secs:>10.3} s {calls:>9} calls\n"));
    }
    let spans = induce_models::timing::report();
    if !spans.is_empty() {
        s.push_str("  device spans (synchronised while profiling):\n");
    }
    for (name, secs, calls) in spans {
        s.push_str(&format!("    {name:<58} {secs:>8.3} s {calls:>7} calls\n"));
    }
    for (i, (_, name)) in COUNTS.iter().enumerate() {
        let n = TOTALS[i].load(Ordering::Relaxed);
        s.push_str(&format!("  {name:<38} {n:>12}\n"));
    }
    Some(s)
}
