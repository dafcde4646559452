//! The lifeline graph: the paper's cyclic hypercube over the ranks (see
//! the module docs of `uni-threads`' lifeline module).

use super::MAX_LIFELINES;

/// The lifeline of dimension `d` of `rank` among `ranks`, in the cyclic
/// hypercube of radix `radix`: the next rank on its cycle, or None.
fn buddy(rank: u32, ranks: u32, radix: u64, d: u32) -> Option<u32> {
    let place = radix.checked_pow(d)?;
    let (rank, ranks) = (rank as u64, ranks as u64);
    let mut q = rank;
    loop {
        let digit = (q / place) % radix;
        q = q - digit * place + ((digit + 1) % radix) * place;
        if q == rank {
            return None;
        }
        if q < ranks {
            return Some(q as u32);
        }
    }
}

/// The smallest radix `h ≥ 2` with `h^dims ≥ ranks`.
fn radix(ranks: u32, dims: u32) -> u64 {
    let mut h = 2u64;
    while h.checked_pow(dims).is_some_and(|p| p < ranks as u64) {
        h += 1;
    }
    h
}

/// The default dimension: `⌈log2 P⌉` (a binary hypercube, radix 2).
pub fn default_dimensions(ranks: u32) -> u32 {
    (32 - ranks.saturating_sub(1).leading_zeros()).min(MAX_LIFELINES as u32)
}

/// The lifelines of `rank`: `(dimension, buddy)` for each dimension that
/// has one.
pub fn graph(rank: u32, ranks: u32, dims: u32) -> Vec<(u32, u32)> {
    if ranks < 2 || dims == 0 {
        return Vec::new();
    }
    let h = radix(ranks, dims);
    (0..dims.min(MAX_LIFELINES as u32))
        .filter_map(|d| buddy(rank, ranks, h, d).map(|b| (d, b)))
        .collect()
}

/// The lifelines that end at `rank`: `(dimension, the rank they start
/// from)` (each dimension has at most one: the slot's owner).
pub fn incoming(rank: u32, ranks: u32, dims: u32) -> Vec<(u32, u32)> {
    (0..ranks)
        .flat_map(|r| graph(r, ranks, dims).into_iter().map(move |(d, b)| (d, b, r)))
        .filter(|&(_, b, _)| b == rank)
        .map(|(d, _, r)| (d, r))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reach_all(ranks: u32, dims: u32) -> bool {
        let edges: Vec<Vec<u32>> = (0..ranks)
            .map(|r| graph(r, ranks, dims).into_iter().map(|(_, b)| b).collect())
            .collect();
        (0..ranks).all(|start| {
            let mut seen = vec![false; ranks as usize];
            let mut todo = vec![start];
            seen[start as usize] = true;
            while let Some(r) = todo.pop() {
                for &b in &edges[r as usize] {
                    if !seen[b as usize] {
                        seen[b as usize] = true;
                        todo.push(b);
                    }
                }
            }
            seen.iter().all(|&s| s)
        })
    }

    #[test]
    fn every_rank_reaches_every_other_through_lifelines() {
        for ranks in 2..=70 {
            for dims in [1, 2, 3, default_dimensions(ranks)] {
                assert!(reach_all(ranks, dims), "P={ranks} z={dims}");
            }
        }
    }

    #[test]
    fn a_slot_has_one_owner_and_no_rank_is_its_own_lifeline() {
        for ranks in 2..=70 {
            for dims in [1, 2, default_dimensions(ranks)] {
                let mut owner = std::collections::HashMap::new();
                for r in 0..ranks {
                    let lines = graph(r, ranks, dims);
                    assert!(!lines.is_empty(), "P={ranks} z={dims}: rank {r} has no lifeline");
                    for (d, b) in lines {
                        assert_ne!(b, r);
                        assert!(b < ranks);
                        assert_eq!(owner.insert((b, d), r), None, "P={ranks} z={dims}: slot {d} of {b}");
                    }
                }
            }
        }
    }

    #[test]
    fn a_slots_owner_is_the_rank_whose_lifeline_ends_there() {
        for ranks in [2, 3, 5, 16, 17, 64] {
            for dims in [1, 2, default_dimensions(ranks)] {
                for b in 0..ranks {
                    let inc = incoming(b, ranks, dims);
                    let mut seen = [false; MAX_LIFELINES];
                    for &(d, r) in &inc {
                        assert!(
                            !std::mem::replace(&mut seen[d as usize], true),
                            "P={ranks} z={dims}: slot {d} of {b}"
                        );
                        assert!(graph(r, ranks, dims).contains(&(d, b)));
                    }
                    let total: usize = (0..ranks)
                        .map(|r| graph(r, ranks, dims).iter().filter(|&&(_, x)| x == b).count())
                        .sum();
                    assert_eq!(inc.len(), total);
                }
            }
        }
    }

    #[test]
    fn the_binary_hypercube_of_sixteen_ranks_flips_one_bit_per_lifeline() {
        assert_eq!(default_dimensions(16), 4);
        assert_eq!(default_dimensions(17), 5);
        assert_eq!(default_dimensions(2), 1);
        assert_eq!(graph(5, 16, 4), vec![(0, 4), (1, 7), (2, 1), (3, 13)]);
        assert_eq!(graph(0, 1, 4), vec![]);
        // Radix 3 in two dimensions for 9 ranks: rows and columns are cycles.
        assert_eq!(graph(8, 9, 2), vec![(0, 6), (1, 2)]);
    }
}
