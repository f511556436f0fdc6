//! Opt-in timings of the networks' device work, for finding which operation a GPU spends its
//! time in without a profiler. Off unless the environment variable `INDUCE_PROFILE` is set to
//! anything but `0` or empty (the same switch as `induce_rl::profile`); when off, [`span`] is
//! one relaxed load and a call. When on, every span synchronises the device before and after
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

use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use burn::tensor::Device;

/// Whether `INDUCE_PROFILE` asks for timings (read once).
pub fn enabled() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| std::env::var("INDUCE_PROFILE").is_ok_and(|v| !v.is_empty() && v != "0"))
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
