//! One sort for the whole crate, to keep the WebAssembly module small.
//!
//! Every `sort_by`, `sort_by_key` or `sort_unstable` on a new element type or comparator
//! instantiates the standard library's driftsort or ipnsort again: 3 to 10 KB of wasm each,
//! and the crate's dozen call sites made about 100 KB of the release module (twiggy
//! `monos`). Here the standard stable sort is instantiated once, on `usize` indexes with the
//! comparison behind a `dyn`, and the elements are then moved into place by swaps driven
//! through another `dyn`. The generic wrappers only build the two closures.
//!
//! The result is exactly that of the standard stable sort (equal elements keep their input
//! order), so it also stands in for `sort_unstable`: on integers, strings and tuples of them,
//! equal elements cannot be told apart. The extra cost is an index vector and an indirect
//! call per comparison; no call site sorts on a per-byte hot path.

use std::cmp::Ordering;

/// Sorts `items` by `compare`, stably (like [`slice::sort_by`]).
pub(crate) fn sort_by<T>(items: &mut [T], mut compare: impl FnMut(&T, &T) -> Ordering) {
    if items.len() < 2 {
        return;
    }
    let order = sorted_indexes(items.len(), &mut |a, b| compare(&items[a], &items[b]));
    permute(order, &mut |a, b| items.swap(a, b));
}

/// Sorts `items` by the key `key` extracts, stably (like [`slice::sort_by_key`]).
pub(crate) fn sort_by_key<T, K: Ord>(items: &mut [T], mut key: impl FnMut(&T) -> K) {
    sort_by(items, |a, b| key(a).cmp(&key(b)));
}

/// Sorts `items` in ascending order (like [`slice::sort`]; see the module docs for
/// `sort_unstable`).
pub(crate) fn sort<T: Ord>(items: &mut [T]) {
    sort_by(items, T::cmp);
}

/// The positions `0..len` in the order `compare` puts them (ties in input order).
#[inline(never)]
fn sorted_indexes(len: usize, compare: &mut dyn FnMut(usize, usize) -> Ordering) -> Vec<usize> {
    let mut order: Vec<usize> = (0..len).collect();
    order.sort_by(|&a, &b| compare(a, b));
    order
}

/// Rearranges a sequence so that position `i` holds what was at `order[i]`, following each
/// cycle of the permutation with `swap`.
#[inline(never)]
fn permute(mut order: Vec<usize>, swap: &mut dyn FnMut(usize, usize)) {
    for start in 0..order.len() {
        let mut at = start;
        // Positions already in place (or placed by an earlier cycle) map to themselves.
        while order[at] != at {
            let from = order[at];
            order[at] = at;
            if from == start {
                break;
            }
            swap(at, from);
            at = from;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lcg(seed: &mut u64) -> u64 {
        *seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        *seed >> 33
    }

    #[test]
    fn matches_std_stable_sort() {
        let mut seed = 7;
        for len in [0, 1, 2, 3, 5, 17, 100, 1000] {
            for modulus in [1, 3, 50, 1 << 30] {
                let items: Vec<(u64, usize)> =
                    (0..len).map(|i| (lcg(&mut seed) % modulus, i)).collect();
                let mut ours = items.clone();
                sort_by_key(&mut ours, |x| x.0);
                let mut std_sorted = items.clone();
                std_sorted.sort_by_key(|x| x.0);
                assert_eq!(ours, std_sorted, "len {len} modulus {modulus}");
            }
        }
    }

    #[test]
    fn sorts_strings_and_by_comparator() {
        let mut words = vec!["pear", "apple", "fig", "apple", "date"];
        sort(&mut words);
        assert_eq!(words, ["apple", "apple", "date", "fig", "pear"]);
        sort_by(&mut words, |a, b| b.len().cmp(&a.len()));
        assert_eq!(words, ["apple", "apple", "date", "pear", "fig"]);
    }
}
