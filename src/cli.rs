//! What the command line and the examples share (feature `cli`): terminal progress bars (the
//! pipeline's [`Progress`] with `indicatif`) and one-line error messages.

use std::sync::Mutex;

use indicatif::{ProgressBar, ProgressStyle};
use induce_explain::pipeline::Progress;

/// Progress bars on stderr; hidden when `show` is false.
#[derive(Debug)]
pub struct Bars {
    show: bool,
    bar: Mutex<Option<ProgressBar>>,
}

impl Bars {
    /// Bars that draw when `show` is true.
    pub fn new(show: bool) -> Self {
        Self {
            show,
            bar: Mutex::new(None),
        }
    }
}

impl Progress for Bars {
    fn begin(&self, task: &str, total: usize) {
        if !self.show {
            return;
        }
        let pb = ProgressBar::new(total as u64);
        pb.set_style(
            ProgressStyle::with_template("{prefix:>28} [{bar:30}] {pos}/{len} {elapsed} {msg}")
                .expect("valid template")
                .progress_chars("=> "),
        );
        pb.set_prefix(task.to_string());
        *self.bar.lock().expect("progress lock") = Some(pb);
    }

    fn advance(&self, n: usize) {
        if let Some(pb) = &*self.bar.lock().expect("progress lock") {
            pb.inc(n as u64);
        }
    }

    fn message(&self, message: &str) {
        if !self.show {
            return;
        }
        match &*self.bar.lock().expect("progress lock") {
            Some(pb) => pb.set_message(message.to_string()),
            None => eprintln!("{message}"),
        }
    }

    fn end(&self) {
        if let Some(pb) = self.bar.lock().expect("progress lock").take() {
            pb.finish_and_clear();
        }
    }
}

/// An error and its causes on one line (`error: ...` in the binaries), leaving out a cause
/// already quoted by its parent.
pub fn error_line(e: &anyhow::Error) -> String {
    let mut out = e.to_string();
    for cause in e.chain().skip(1) {
        let c = cause.to_string();
        if !out.contains(&c) {
            out = format!("{out}: {c}");
        }
    }
    out
}
