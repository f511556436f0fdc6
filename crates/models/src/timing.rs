//! Opt-in timings of the networks' device work, for finding which operation a GPU spends its
//! time in without a profiler. Off unless [`set_enabled`] turns it on for the process (the same
//! switch as `induce_rl::profile`); the `induce` binary and the GPU check do when the
//! environment variable `INDUCE_PROFILE` ([`PROFILE_ENV`]) is set to anything but `0` or empty
//! ([`enable_from_env`]: the library itself reads no environment). When off, [`span`] is one
//! relaxed load and a call. When on, every span synchronises the device before and after
//! its work (so the numbers are the device's time, and the run is slower).
//!
//! ```
//! use induce_models::device::default_device;
//! use induce_models::timing;
//! let dev = default_device().unwrap();
//! let x = timing::span("example", &dev, || 2 + 2);
//! assert_eq!(x, 4);
//! if !timing::enabled() {
//!     assert!(timing::report().is_empty());
//! }
//! ```

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use burn::tensor::Device;

/// The environment variable a binary reads to turn profiling on ([`enable_from_env`]).
pub const PROFILE_ENV: &str = "INDUCE_PROFILE";

static ON: AtomicBool = AtomicBool::new(false);

/// Whether timings are recorded (off unless [`set_enabled`] turned them on).
pub fn enabled() -> bool {
    ON.load(Ordering::Relaxed)
}

/// Turns the timings of this module and of `induce_rl::profile` on or off for the process.
pub fn set_enabled(on: bool) {
    ON.store(on, Ordering::Relaxed);
}

/// What a binary calls at start: turns profiling on when [`PROFILE_ENV`] is set to anything but
/// `0` or empty; returns whether it did.
pub fn enable_from_env() -> bool {
    let on = std::env::var(PROFILE_ENV).is_ok_and(|v| !v.is_empty() && v != "0");
    if on {
        set_enabled(true);
    }
    on
}

static SPANS: Mutex<Vec<(&'static str, Duration, u64)>> = Mutex::new(Vec::new());

/// Runs `f` and, when profiling is on, adds the device time of its work to `name` (the device
/// is synchronised before and after).
pub fn span<T>(name: &'static str, device: &Device, f: impl FnOnce() -> T) -> T {
    if !enabled() {
        return f();
    }
    let _ = device.sync();
    let start = Instant::now();
    let out = f();
    let _ = device.sync();
    let elapsed = start.elapsed();
    let mut spans = SPANS.lock().unwrap_or_else(|e| e.into_inner());
    match spans.iter_mut().find(|(n, ..)| *n == name) {
        Some((_, total, calls)) => {
            *total += elapsed;
            *calls += 1;
        }
        None => spans.push((name, elapsed, 1)),
    }
    out
}

/// Every span so far: name, seconds, calls (in first-seen order); empty when profiling is off.
pub fn report() -> Vec<(&'static str, f64, u64)> {
    let spans = SPANS.lock().unwrap_or_else(|e| e.into_inner());
    spans
        .iter()
        .map(|&(n, d, c)| (n, d.as_secs_f64(), c))
        .collect()
}
