//! Explaining independent targets on several CPU cores.

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::error::Result;

/// Number of worker threads to use by default: the machine's available parallelism.
pub fn default_threads() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
}

/// Applies `f` to every item on up to `threads` scoped threads and returns the results in input
/// order. Items are handed out one at a time (a thread that finishes early takes the next
/// item), so uneven items balance; since each result depends only on its item, the output does
/// not depend on the number of threads when `f` is deterministic (greedy explanation is). The
/// first error (in input order) is returned.
///
/// ```
/// let squares = induce_explain::parallel::map(&[1u32, 2, 3, 4, 5], 2, |&x| Ok(x * x)).unwrap();
/// assert_eq!(squares, vec![1, 4, 9, 16, 25]);
/// ```
pub fn map<T: Sync, R: Send>(
    items: &[T],
    threads: usize,
    f: impl Fn(&T) -> Result<R> + Sync,
) -> Result<Vec<R>> {
    let threads = threads.clamp(1, items.len().max(1));
    if threads == 1 {
        return items.iter().map(&f).collect();
    }
    let next = AtomicUsize::new(0);
    let (next, f) = (&next, &f);
    // Each worker's black-box evaluations are added to this thread's count (crate::oracle).
    let mut spent = 0u64;
    let mut done: Vec<(usize, Result<R>)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(move || {
                    crate::oracle::counted(|| {
                        let mut out = Vec::new();
                        loop {
                            let i = next.fetch_add(1, Ordering::Relaxed);
                            let Some(item) = items.get(i) else { break };
                            out.push((i, f(item)));
                        }
                        out
                    })
                })
            })
            .collect();
        let mut all = Vec::new();
        for h in handles {
            let (out, n) = h.join().expect("worker thread panicked");
            spent += n;
            all.extend(out);
        }
        all
    });
    crate::oracle::count(spent);
    done.sort_by_key(|(i, _)| *i);
    done.into_iter().map(|(_, r)| r).collect()
}

/// [`map`] over mutable items: applies `f` to every item on up to `threads` scoped threads
/// (handed out one at a time) and returns the results in input order.
///
/// ```
/// let mut v = vec![1u32, 2, 3];
/// let old = induce_explain::parallel::map_mut(&mut v, 2, |x| { *x += 1; Ok(*x - 1) }).unwrap();
/// assert_eq!((old, v), (vec![1, 2, 3], vec![2, 3, 4]));
/// ```
pub fn map_mut<T: Send, R: Send>(
    items: &mut [T],
    threads: usize,
    f: impl Fn(&mut T) -> Result<R> + Sync,
) -> Result<Vec<R>> {
    let cells: Vec<Mutex<&mut T>> = items.iter_mut().map(Mutex::new).collect();
    map(&cells, threads, |cell| {
        let mut item = cell.lock().expect("each item is taken by one thread");
        f(&mut item)
    })
}
