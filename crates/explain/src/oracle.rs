//! Counting black-box evaluations: the oracle-call cost of an explanation method.
//!
//! Every verdict a [`Judge`](crate::Judge) takes (an incremental update, a whole evaluation of
//! its node set, a read of the target from the black box's graph binding, or rows handed in by a
//! batched caller) counts one evaluation, as does every forward pass of a gradient step or a
//! search's candidate. Counts are per thread; [`counted`] measures what a closure spent, and
//! [`parallel::map`](crate::parallel::map) adds its workers' counts to the calling thread's, so
//! a method that fans out over threads is counted whole.
//!
//! ```
//! use induce_explain::oracle::{count, counted};
//! let ((), n) = counted(|| {
//!     count(2);
//!     let ((), inner) = counted(|| count(3));
//!     assert_eq!(inner, 3);
//! });
//! assert_eq!(n, 5);
//! ```

use std::cell::Cell;

thread_local! {
    static EVALUATIONS: Cell<u64> = const { Cell::new(0) };
}

/// Records `n` black-box evaluations on this thread.
pub fn count(n: u64) {
    EVALUATIONS.with(|c| c.set(c.get().saturating_add(n)));
}

/// Runs `f` and returns its result with the evaluations it recorded on this thread (and on the
/// workers of any [`parallel::map`](crate::parallel::map) inside it). Nested calls see their
/// own share; the enclosing count includes it.
pub fn counted<R>(f: impl FnOnce() -> R) -> (R, u64) {
    let before = EVALUATIONS.with(|c| c.replace(0));
    let r = f();
    let spent = EVALUATIONS.with(|c| c.replace(before.saturating_add(c.get())));
    // `replace` returned the count before restoring: the closure's share.
    (r, spent)
}
