//! The mutation-fuzzing harness shared by the reader campaigns of `induce-graph`,
//! `induce-models` and `induce-explain` (the other crates include this file with `#[path]`).
//!
//! A [`Campaign`] runs one reader on a stream of mutated inputs. Every input runs on its own
//! thread inside `catch_unwind`, bounded in time: a panic or an input that does not finish
//! within the time limit fails the campaign with the input's number and description, so it
//! reproduces with `INDUCE_FUZZ_ONLY=<number>` (the same `INDUCE_FUZZ_SEED`). The reader must
//! return `Ok` or its crate's typed error (the closures return `Result<_, GraphError>`, ...).
//!
//! Environment:
//! * `INDUCE_FUZZ_ITERS` — inputs per campaign (each campaign has a short default for CI);
//! * `INDUCE_FUZZ_SECONDS` — instead, run each campaign for this many seconds (long campaign);
//! * `INDUCE_FUZZ_SEED` — base seed (default 0x1d0ce); input `i` draws from
//!   `StdRng::seed_from_u64(seed ^ i · φ)`;
//! * `INDUCE_FUZZ_ONLY` — run only input number `i` (to reproduce a failure);
//! * `INDUCE_FUZZ_TIMEOUT` — seconds one input may take (default 30);
//! * `INDUCE_FUZZ_VERBOSE` — print every input's description before running it (to find the
//!   input that was running when the process died, e.g. of an allocation failure);
//! * `INDUCE_FUZZ_LOG` — append the campaign's result line to this file;
//! * `INDUCE_FUZZ_MAX_RSS_MB` — peak resident memory (Linux `VmHWM`) above which the input that
//!   raised it fails the campaign as an over-allocation (default 3072; the peak is reset after
//!   each such input). Campaigns of one test binary share the process, so the first input seen
//!   above the limit is reported.

#![allow(dead_code)]

use std::fmt::Display;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// Peak resident memory of this process in MiB (`VmHWM`), where `/proc` has it.
pub fn peak_rss_mb() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024)
}

/// Resets the peak (`VmHWM`) to the current resident size (Linux `clear_refs` 5).
fn reset_peak_rss() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

fn env_u64(name: &str) -> Option<u64> {
    std::env::var(name).ok().and_then(|v| v.trim().parse().ok())
}

/// One fuzz campaign: a target name, a budget of inputs or seconds, and the tally.
pub struct Campaign {
    name: String,
    iters: u64,
    deadline: Option<Instant>,
    seed: u64,
    only: Option<u64>,
    timeout: Duration,
    verbose: bool,
    max_rss_mb: u64,
    peak_mb: u64,
    next: u64,
    started: Instant,
    /// Inputs run.
    pub inputs: u64,
    /// Inputs the reader accepted.
    pub accepted: u64,
    /// Inputs refused with a typed error.
    pub refused: u64,
    panics: Vec<String>,
    panic_count: u64,
}

impl Campaign {
    /// A campaign of `default_iters` inputs unless the environment says otherwise.
    pub fn new(name: &str, default_iters: u64) -> Self {
        let seconds = env_u64("INDUCE_FUZZ_SECONDS");
        Self {
            name: name.to_string(),
            iters: env_u64("INDUCE_FUZZ_ITERS").unwrap_or(if seconds.is_some() {
                u64::MAX
            } else {
                default_iters
            }),
            deadline: seconds.map(|s| Instant::now() + Duration::from_secs(s)),
            seed: env_u64("INDUCE_FUZZ_SEED").unwrap_or(0x1d0ce),
            only: env_u64("INDUCE_FUZZ_ONLY"),
            timeout: Duration::from_secs(env_u64("INDUCE_FUZZ_TIMEOUT").unwrap_or(30)),
            verbose: std::env::var_os("INDUCE_FUZZ_VERBOSE").is_some(),
            max_rss_mb: env_u64("INDUCE_FUZZ_MAX_RSS_MB").unwrap_or(3072),
            peak_mb: 0,
            next: 0,
            started: Instant::now(),
            inputs: 0,
            accepted: 0,
            refused: 0,
            panics: Vec::new(),
            panic_count: 0,
        }
    }

    /// The next input's number and its random source, or `None` when the budget is spent.
    pub fn next_case(&mut self) -> Option<(u64, StdRng)> {
        let i = match self.only {
            Some(only) if self.next > only => return None,
            Some(only) => {
                self.next = only + 1;
                only
            }
            None => {
                if self.next >= self.iters || self.deadline.is_some_and(|d| Instant::now() >= d) {
                    return None;
                }
                self.next += 1;
                self.next - 1
            }
        };
        let rng = StdRng::seed_from_u64(self.seed ^ i.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        Some((i, rng))
    }

    /// Runs `reader` on input `case` (described by `desc`): `Ok` and typed errors are counted;
    /// a panic is recorded (the campaign fails at [`Campaign::finish`]); an input that runs
    /// longer than the time limit fails the campaign at once. `check_err` may reject an error
    /// that does not say enough (returns why).
    pub fn run<T, E, F>(
        &mut self,
        case: u64,
        desc: &str,
        reader: F,
        check_err: impl Fn(&E) -> Option<String>,
    ) where
        F: FnOnce() -> Result<T, E> + Send + 'static,
        E: Display + Send + 'static,
        T: Send + 'static,
    {
        if self.verbose {
            eprintln!("[{}] input {case}: {desc}", self.name);
        }
        let (tx, rx) = mpsc::channel();
        let handle = std::thread::Builder::new()
            .name(format!("fuzz-{}-{case}", self.name))
            .spawn(move || {
                let r = catch_unwind(AssertUnwindSafe(reader));
                let _ = tx.send(match r {
                    Ok(Ok(_)) => Ok(None),
                    Ok(Err(e)) => Ok(Some(e)),
                    Err(p) => Err(p
                        .downcast_ref::<String>()
                        .cloned()
                        .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                        .unwrap_or_else(|| "non-string panic".into())),
                });
            })
            .expect("spawn a fuzz thread");
        self.inputs += 1;
        match rx.recv_timeout(self.timeout) {
            Ok(Ok(None)) => self.accepted += 1,
            Ok(Ok(Some(e))) => {
                self.refused += 1;
                if self.verbose {
                    eprintln!("[{}] input {case}: refused: {e}", self.name);
                }
                if let Some(why) = check_err(&e) {
                    self.panics.push(format!(
                        "input {case} ({desc}): untyped or vague error: {why}: {e}"
                    ));
                }
            }
            Ok(Err(msg)) => {
                self.panic_count += 1;
                self.panics
                    .push(format!("input {case} ({desc}): PANIC: {msg}"));
            }
            Err(_) => panic!(
                "[{}] input {case} ({desc}): HANG: no result after {:?} (seed {:#x})",
                self.name, self.timeout, self.seed
            ),
        }
        let _ = handle.join();
        if let Some(mb) = peak_rss_mb() {
            self.peak_mb = self.peak_mb.max(mb);
            if mb > self.max_rss_mb {
                self.panics.push(format!(
                    "input {case} ({desc}): OVER-ALLOCATION: peak resident memory {mb} MiB > {} MiB",
                    self.max_rss_mb
                ));
                reset_peak_rss();
            }
        }
    }

    /// Prints (and logs) the tally; fails if any input panicked.
    pub fn finish(self) {
        let line = format!(
            "fuzz {}: {} inputs in {:.1} s (seed {:#x}): {} accepted, {} refused with typed \
             errors, {} panics, 0 hangs, {} other failures, peak RSS {} MiB",
            self.name,
            self.inputs,
            self.started.elapsed().as_secs_f64(),
            self.seed,
            self.accepted,
            self.refused,
            self.panic_count,
            self.panics.len() as u64 - self.panic_count,
            self.peak_mb
        );
        println!("{line}");
        if let Some(log) = std::env::var_os("INDUCE_FUZZ_LOG") {
            use std::io::Write;
            if let Ok(mut f) = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(log)
            {
                let _ = writeln!(f, "{line}");
            }
        }
        if !self.panics.is_empty() {
            let shown: Vec<&String> = self.panics.iter().take(20).collect();
            panic!(
                "[{}] {} failing inputs (reproduce one with INDUCE_FUZZ_ONLY=<input>):\n{}",
                self.name,
                self.panics.len(),
                shown
                    .iter()
                    .map(|s| s.as_str())
                    .collect::<Vec<_>>()
                    .join("\n")
            );
        }
    }
}

/// Integers that break readers: signs, type limits, around common sizes.
pub const INTERESTING_INTS: [i64; 18] = [
    -1,
    0,
    1,
    2,
    7,
    255,
    65535,
    -2_147_483_648,
    2_147_483_647,
    2_147_483_648,
    4_000_000_000,
    4_294_967_295,
    4_294_967_296,
    1_000_000_000_000,
    i64::MAX,
    i64::MIN,
    -1_000_000_000_000,
    1 << 40,
];

/// A random interesting integer, or a small random one.
pub fn interesting_int(rng: &mut StdRng) -> i64 {
    if rng.random_bool(0.8) {
        INTERESTING_INTS[rng.random_range(0..INTERESTING_INTS.len())]
    } else {
        rng.random_range(-10..10_000)
    }
}

/// Float values that break readers.
pub const INTERESTING_FLOATS: [f64; 8] = [
    f64::NAN,
    f64::INFINITY,
    f64::NEG_INFINITY,
    1e38,
    -1e300,
    f64::MIN_POSITIVE,
    -0.0,
    3.4e38,
];

/// One byte-level mutation of `data` (truncation, flips, interesting values, insertion,
/// deletion, duplication, a 32- or 64-bit field overwritten); returns its description.
pub fn mutate_bytes(rng: &mut StdRng, data: &mut Vec<u8>) -> String {
    let len = data.len();
    let at = |rng: &mut StdRng| {
        if len == 0 {
            0
        } else {
            rng.random_range(0..len)
        }
    };
    match rng.random_range(0..8) {
        0 => {
            let cut = if len == 0 {
                0
            } else {
                rng.random_range(0..len)
            };
            data.truncate(cut);
            format!("truncated to {cut} of {len} bytes")
        }
        1 if len > 0 => {
            let k = rng.random_range(1..=8);
            for _ in 0..k {
                let i = at(rng);
                data[i] ^= 1 << rng.random_range(0..8);
            }
            format!("{k} bit flips")
        }
        2 if len > 0 => {
            let i = at(rng);
            let v = [
                0u8, 0xff, 0x7f, 0x80, b'(', b',', b'9', b'-', b'"', b'{', b'\n',
            ][rng.random_range(0..11)];
            data[i] = v;
            format!("byte {i} set to {v:#x}")
        }
        3 => {
            let i = at(rng);
            let k = rng.random_range(1..64);
            let junk: Vec<u8> = (0..k).map(|_| rng.random()).collect();
            data.splice(i..i, junk);
            format!("{k} random bytes inserted at {i}")
        }
        4 if len > 1 => {
            let i = at(rng);
            let k = rng.random_range(1..=(len - i).min(256));
            data.drain(i..i + k);
            format!("{k} bytes deleted at {i}")
        }
        5 if len > 1 => {
            let i = at(rng);
            let k = rng.random_range(1..=(len - i).min(256));
            let copy = data[i..i + k].to_vec();
            data.splice(i..i, copy);
            format!("{k} bytes at {i} duplicated")
        }
        6 if len >= 8 => {
            let i = rng.random_range(0..=len - 4);
            let v = interesting_int(rng) as u32;
            data[i..i + 4].copy_from_slice(&v.to_le_bytes());
            format!("u32 at {i} set to {v}")
        }
        7 if len >= 8 => {
            let i = rng.random_range(0..=len - 8);
            let v = interesting_int(rng) as u64;
            data[i..i + 8].copy_from_slice(&v.to_le_bytes());
            format!("u64 at {i} set to {v}")
        }
        _ => {
            let i = at(rng);
            data.truncate(i);
            format!("truncated to {i} of {len} bytes")
        }
    }
}

/// One line-level mutation of a text file (a line deleted, duplicated, swapped, a field
/// replaced by a hostile value, a field added or removed); returns its description.
pub fn mutate_lines(rng: &mut StdRng, text: &mut String) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    if lines.is_empty() {
        lines.push(String::new());
    }
    let i = rng.random_range(0..lines.len());
    let desc = match rng.random_range(0..6) {
        0 => {
            lines.remove(i);
            format!("line {} deleted", i + 1)
        }
        1 => {
            let l = lines[i].clone();
            lines.insert(i, l);
            format!("line {} duplicated", i + 1)
        }
        2 => {
            let j = rng.random_range(0..lines.len());
            lines.swap(i, j);
            format!("lines {} and {} swapped", i + 1, j + 1)
        }
        3 | 4 => {
            let mut fields: Vec<String> = lines[i].split(',').map(str::to_string).collect();
            let f = rng.random_range(0..fields.len());
            let v = hostile_field(rng);
            fields[f] = v.clone();
            lines[i] = fields.join(",");
            format!("line {} field {} set to `{v}`", i + 1, f + 1)
        }
        _ => {
            if rng.random_bool(0.5) {
                lines[i].push_str(",1");
                format!("line {} got an extra field", i + 1)
            } else {
                let l = &mut lines[i];
                let cut = l.rfind(',').unwrap_or(0);
                l.truncate(cut);
                format!("line {} lost its last field", i + 1)
            }
        }
    };
    *text = lines.join("\n");
    if rng.random_bool(0.9) {
        text.push('\n');
    }
    desc
}

/// A CSV field that a reader must refuse or handle.
pub fn hostile_field(rng: &mut StdRng) -> String {
    match rng.random_range(0..4) {
        0 | 1 => interesting_int(rng).to_string(),
        2 => {
            let f = INTERESTING_FLOATS[rng.random_range(0..INTERESTING_FLOATS.len())];
            format!("{f}")
        }
        _ => [
            "",
            " ",
            "nan",
            "inf",
            "-inf",
            "1e999",
            "abc",
            "0x10",
            "1.5",
            "\"7\"",
            "\u{fffd}",
            "99999999999999999999999",
        ][rng.random_range(0..12)]
        .to_string(),
    }
}

/// True when `msg` names `file` (its file name or its whole path).
pub fn names(msg: &str, file: &std::path::Path) -> bool {
    let name = file
        .file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    msg.contains(&name) || msg.contains(&file.display().to_string())
}
