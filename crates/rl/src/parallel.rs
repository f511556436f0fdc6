//! Explaining independent targets on several CPU cores.

use crate::error::Result;

/// Number of worker threads to use by default: the machine's available parallelism.
pub fn default_threads() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
}

/// Applies `f` to every item on up to `threads` scoped threads and returns the results in input
/// order. Items are split into contiguous chunks, one per thread; `f` must be deterministic for
/// the output to be (greedy explanation is). The first error (in input order) is returned.
///
/// ```
/// let squares = induce_rl::parallel::map(&[1u32, 2, 3, 4, 5], 2, |&x| Ok(x * x)).unwrap();
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
    let chunk = items.len().div_ceil(threads);
    let f = &f;
    let parts: Vec<Result<Vec<R>>> = std::thread::scope(|s| {
        let handles: Vec<_> = items
            .chunks(chunk)
            .map(|part| s.spawn(move || part.iter().map(f).collect::<Result<Vec<R>>>()))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("explainer thread panicked"))
            .collect()
    });
    let mut out = Vec::with_capacity(items.len());
    for p in parts {
        out.extend(p?);
    }
    Ok(out)
}

/// [`map`] over mutable items: applies `f` to every item on up to `threads` scoped threads and
/// returns the results in input order.
///
/// ```
/// let mut v = vec![1u32, 2, 3];
/// let old = induce_rl::parallel::map_mut(&mut v, 2, |x| { *x += 1; Ok(*x - 1) }).unwrap();
/// assert_eq!((old, v), (vec![1, 2, 3], vec![2, 3, 4]));
/// ```
pub fn map_mut<T: Send, R: Send>(
    items: &mut [T],
    threads: usize,
    f: impl Fn(&mut T) -> Result<R> + Sync,
) -> Result<Vec<R>> {
    let threads = threads.clamp(1, items.len().max(1));
    if threads == 1 {
        return items.iter_mut().map(&f).collect();
    }
    let chunk = items.len().div_ceil(threads);
    let f = &f;
    let parts: Vec<Result<Vec<R>>> = std::thread::scope(|s| {
        let handles: Vec<_> = items
            .chunks_mut(chunk)
            .map(|part| s.spawn(move || part.iter_mut().map(f).collect::<Result<Vec<R>>>()))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("worker thread panicked"))
            .collect()
    });
    let mut out = Vec::with_capacity(items.len());
    for p in parts {
        out.extend(p?);
    }
    Ok(out)
}
