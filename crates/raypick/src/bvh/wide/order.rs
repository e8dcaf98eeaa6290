//! The order in which a walk takes a node's hit children: nearest first for closest-hit walks,
//! whose `t_max` shrinks with each hit. Sorting networks over integer keys (the entry distance's
//! ordered bits above the lane), so the comparisons compile to conditional moves and nothing
//! branches on the distances, which are unpredictable for incoherent rays.

/// The nearer and the farther hit lane of `mask`, which holds at most two lanes (`nearest_first`;
/// else the first and the second in the node's order): a lone lane is both, and an empty mask
/// gives lane 0 twice. No branch on the distances: `&`, not `&&`, and a select (with `&&` the
/// comparison can compile to a branch, which would be unpredictable for incoherent rays).
#[inline(always)]
pub(super) fn nearer_of_two<const W: usize>(
    mask: u32,
    t_near: &[f32; W],
    nearest_first: bool,
) -> (usize, usize) {
    debug_assert!(mask.count_ones() <= 2);
    let first_lane = mask.trailing_zeros() as usize % W;
    let rest = mask & mask.wrapping_sub(1);
    let second_lane = if rest == 0 {
        first_lane
    } else {
        rest.trailing_zeros() as usize
    };
    let second_nearer = (t_near[second_lane] < t_near[first_lane]) & nearest_first;
    let near = std::hint::select_unpredictable(second_nearer, second_lane, first_lane);
    (near, first_lane ^ second_lane ^ near)
}

/// The sort key of hit lane `lane`: its entry distance as ordered bits above the lane (reversed:
/// of equal distances the lower lane sorts first, is pushed first, so the higher one is popped
/// first). Entry distances are `>= 0`, so a key is never 0, which [`far_first4`] and
/// [`far_first`] use for missing lanes. [`key_lane`] reads the lane back.
#[inline(always)]
fn lane_key<const W: usize>(t_near: &[f32; W], lane: usize) -> u64 {
    u64::from(ordered_bits(t_near[lane])) << 32 | (W - 1 - lane) as u64
}

/// Sorts `keys` in decreasing order with the sorting network `[(i, j), ...]`: each compare-exchange
/// a max into `i` and a min into `j`, which compile to conditional moves, so nothing branches on
/// the keys. A macro so that the exchanges are written out (a loop over a table of pairs may be
/// left rolled, paying its indexing and loop branch on every exchange).
macro_rules! sort_decreasing {
    ($keys:expr, [$(($i:literal, $j:literal)),* $(,)?]) => {{
        let mut k = $keys;
        $(
            let (a, b) = (k[$i], k[$j]);
            k[$i] = a.max(b);
            k[$j] = a.min(b);
        )*
        k
    }};
}

/// Four keys in decreasing order: the optimal network, five compare-exchanges (Knuth, TAOCP vol. 3,
/// 5.3.4).
#[inline(always)]
pub(super) fn sort4(keys: [u64; 4]) -> [u64; 4] {
    sort_decreasing!(keys, [(0, 1), (2, 3), (0, 2), (1, 3), (1, 2)])
}

/// Eight keys in decreasing order: the optimal network, 19 compare-exchanges in six rounds (Knuth,
/// TAOCP vol. 3, 5.3.4).
#[inline(always)]
pub(super) fn sort8(keys: [u64; 8]) -> [u64; 8] {
    sort_decreasing!(
        keys,
        [
            (0, 2),
            (1, 3),
            (4, 6),
            (5, 7),
            (0, 4),
            (1, 5),
            (2, 6),
            (3, 7),
            (0, 1),
            (2, 3),
            (4, 5),
            (6, 7),
            (2, 4),
            (3, 5),
            (1, 4),
            (3, 6),
            (1, 2),
            (3, 4),
            (5, 6),
        ]
    )
}

/// The keys of the lanes of `mask` (at most eight lanes) farthest first: the first
/// `mask.count_ones()` entries, the rest 0. Shared by the single-ray loop and the packet loop for
/// nodes with five or more hit children; a network rather than an insertion sort, whose branches
/// on the distances would be unpredictable for incoherent rays.
#[inline(always)]
pub(super) fn far_first<const W: usize>(mask: u32, t_near: &[f32; W]) -> [u64; 8] {
    // Lanes outside `mask` (and beyond `W`) masked to 0 without a branch.
    sort8(std::array::from_fn(|lane| {
        lane_key(t_near, lane % W) & 0u64.wrapping_sub(u64::from(mask >> lane & 1))
    }))
}

/// [`far_first`] for three or four lanes in `mask` (both loops' nodes with three or four hit
/// children): the keys farthest first, a missing fourth key 0 (sorted last). Gathers the set lanes
/// into four keys first, so the network is the small one.
#[inline(always)]
pub(super) fn far_first4<const W: usize>(mask: u32, t_near: &[f32; W]) -> [u64; 4] {
    let mut rest = mask;
    let mut next = || {
        let lane = rest.trailing_zeros() as usize % W;
        let key = if rest == 0 { 0 } else { lane_key(t_near, lane) };
        rest &= rest.wrapping_sub(1);
        key
    };
    sort4([next(), next(), next(), next()])
}

/// The lane of a [`far_first`] key.
#[inline(always)]
pub(super) fn key_lane<const W: usize>(key: u64) -> usize {
    W - 1 - key as u32 as usize
}

/// `t`'s bits mapped so that unsigned order is float order (negative values flipped, positive ones
/// above them). Entry distances of hit children are never NaN (the hit test is false for NaN).
#[inline(always)]
pub(super) fn ordered_bits(t: f32) -> u32 {
    let bits = t.to_bits();
    bits ^ (((bits as i32 >> 31) as u32) | 0x8000_0000)
}
