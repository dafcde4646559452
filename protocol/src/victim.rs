//! Victim choice (`UAT_VICTIMS`): the `rand` crate's small fast generator
//! per rank, seeded from the run's seed and the rank, so ranks do not all
//! probe the same victims in the same order (and `UAT_SEED` repeats a job's
//! choices).
//!
//! - `random` (the paper's, and the default): any other rank, uniformly.
//! - `host-first`: hosts are GASNet neighbourhoods ([`gasnet_sys::Hosts`]):
//!   ranks that share memory, where a steal is a few loads and a copy,
//!   while a steal from another host crosses the network. A thief probes
//!   the other ranks of its own host at random; in a run of failures, every
//!   `p`-th attempt goes to a rank of another host, also at random, where
//!   `p = min(k + 1, max(W, 2))`: `k` is the host's other ranks (so about every
//!   local rank is probed once in between) and `W` the failures after
//!   which lifelines put the thief to sleep (`UAT_LIFELINE_W`; so that a
//!   thief on a large host still tries another host before it sleeps). A
//!   success, a run's start and waking from quiescence start the count
//!   again. With one rank per host every attempt crosses hosts; with one
//!   host it is `random`.
//!
//! Lifelines come first in either policy: a rank woken through one steals
//! from its waker (`uni-threads`' `steal::try_steal`).

use std::cell::{Cell, RefCell};

use rand::rngs::SmallRng;
use rand::{RngExt, SeedableRng};

/// How a thief chooses whom to steal from (`UAT_VICTIMS`; the same on
/// every rank). This module states both rules.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VictimPolicy {
    /// Any other rank, uniformly at random (IPSJ 2016; the default).
    Random,
    /// Another rank of this host at random; after as many failed attempts
    /// in a row as the host has other ranks, one rank of another host.
    HostFirst,
}

impl VictimPolicy {
    /// Every policy, in the order `--help` lists them.
    pub const ALL: [VictimPolicy; 2] = [VictimPolicy::Random, VictimPolicy::HostFirst];

    /// The name in `UAT_VICTIMS` and the JSON.
    pub const fn name(self) -> &'static str {
        match self {
            VictimPolicy::Random => "random",
            VictimPolicy::HostFirst => "host-first",
        }
    }

    /// The policy named `text`.
    pub fn parse(text: &str) -> Option<VictimPolicy> {
        VictimPolicy::ALL.into_iter().find(|p| p.name() == text)
    }
}

/// A rank's sequence of victims (worker thread only).
pub struct Victims {
    rng: RefCell<SmallRng>,
    policy: VictimPolicy,
    me: u32,
    ranks: u32,
    /// The other ranks of this rank's host (host-first).
    local: Vec<u32>,
    /// The ranks of other hosts (host-first).
    remote: Vec<u32>,
    /// Every this many attempts in a run of failures, one crosses hosts
    /// (host-first).
    period: u32,
    /// Attempts failed in a row (host-first).
    failures: Cell<u32>,
}

impl Victims {
    /// `host_of[r]`: rank `r`'s host; `sleep_after`: the failed attempts
    /// after which lifelines put a thief to sleep (None: lifelines off).
    pub fn new(policy: VictimPolicy, seed: u64, me: u32, host_of: &[u32], sleep_after: Option<u32>) -> Victims {
        let mixed = seed ^ (me as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let ranks = host_of.len() as u32;
        let (mut local, mut remote) = (Vec::new(), Vec::new());
        if policy == VictimPolicy::HostFirst {
            for r in (0..ranks).filter(|&r| r != me) {
                if host_of[r as usize] == host_of[me as usize] {
                    local.push(r);
                } else {
                    remote.push(r);
                }
            }
        }
        // At least every other attempt once lifelines would stop a thief
        // after one failure, so that the own host is still tried first.
        let period = (local.len() as u32 + 1).min(sleep_after.map_or(u32::MAX, |w| w.max(2)));
        Victims {
            rng: RefCell::new(SmallRng::seed_from_u64(mixed)),
            policy,
            me,
            ranks,
            local,
            remote,
            period,
            failures: Cell::new(0),
        }
    }

    /// The next victim: a rank other than this one (ranks ≥ 2).
    pub fn pick(&self) -> u32 {
        match self.policy {
            VictimPolicy::Random => self.any_other(),
            VictimPolicy::HostFirst => {
                let cross = self.local.is_empty()
                    || (!self.remote.is_empty() && (self.failures.get() + 1).is_multiple_of(self.period));
                let list = if cross { &self.remote } else { &self.local };
                list[self.rng.borrow_mut().random_range(0..list.len())]
            }
        }
    }

    /// The attempt on the last victim picked succeeded or failed.
    #[inline]
    pub fn outcome(&self, stole: bool) {
        self.failures.set(if stole {
            0
        } else {
            self.failures.get().saturating_add(1)
        });
    }

    /// Starts the count of failures again (a run's start; woken from
    /// quiescence).
    #[inline]
    pub fn reset(&self) {
        self.failures.set(0);
    }

    fn any_other(&self) -> u32 {
        let r = self.rng.borrow_mut().random_range(0..self.ranks - 1);
        if r >= self.me {
            r + 1
        } else {
            r
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn random(seed: u64, me: u32, ranks: u32) -> Victims {
        Victims::new(VictimPolicy::Random, seed, me, &vec![0; ranks as usize], Some(8))
    }

    #[test]
    fn victims_are_never_self_and_cover_every_other_rank() {
        for ranks in [2u32, 3, 7] {
            for me in 0..ranks {
                let v = random(42, me, ranks);
                let mut seen = vec![0u32; ranks as usize];
                for _ in 0..10_000 {
                    let r = v.pick();
                    assert_ne!(r, me);
                    seen[r as usize] += 1;
                }
                for (r, n) in seen.iter().enumerate() {
                    assert!(
                        r as u32 == me || *n > 10_000 / ranks / 2,
                        "ranks={ranks} me={me}: {seen:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn ranks_draw_different_sequences() {
        let (a, b) = (random(7, 5, 16), random(7, 6, 16));
        let sa: Vec<u32> = (0..32).map(|_| a.pick()).collect();
        let sb: Vec<u32> = (0..32).map(|_| b.pick()).collect();
        assert_ne!(sa, sb);
    }

    /// Host-first on hosts {0,1,2} {3,4,5} {6,7}, from rank 1: two local
    /// attempts, then one remote, in every run of failures; a success starts
    /// again locally; every other rank is reached.
    #[test]
    fn host_first_probes_k_local_ranks_then_one_remote() {
        let hosts = [0, 0, 0, 1, 1, 1, 2, 2];
        let v = Victims::new(VictimPolicy::HostFirst, 3, 1, &hosts, Some(8));
        let mut seen = [0u32; 8];
        for i in 0..3000u32 {
            let r = v.pick();
            seen[r as usize] += 1;
            assert_ne!(r, 1);
            let remote = hosts[r as usize] != 0;
            let in_run = i % 7;
            // The pattern L L R L L R (failures), then a success: 7 picks.
            assert_eq!(remote, in_run == 2 || in_run == 5, "pick {i}: rank {r}");
            v.outcome(in_run == 6);
        }
        assert!(seen.iter().enumerate().all(|(r, &n)| r == 1 || n > 100), "{seen:?}");
    }

    #[test]
    fn host_first_degenerates_to_one_side_where_the_other_is_empty() {
        // One rank per host: always another host.
        let v = Victims::new(VictimPolicy::HostFirst, 1, 0, &[0, 1, 2], None);
        for _ in 0..100 {
            assert_ne!(v.pick(), 0);
            v.outcome(false);
        }
        // One host: always a local rank, never self.
        let v = Victims::new(VictimPolicy::HostFirst, 1, 2, &[0, 0, 0, 0], None);
        for _ in 0..100 {
            assert_ne!(v.pick(), 2);
            v.outcome(false);
        }
    }

    /// A host of 12 ranks with lifelines sleeping after 4 failures: every
    /// 4th attempt crosses hosts (not every 12th), and a reset starts the
    /// count again.
    #[test]
    fn host_first_crosses_before_lifelines_would_sleep() {
        let mut hosts = vec![0u32; 12];
        hosts.extend([1, 1]);
        let v = Victims::new(VictimPolicy::HostFirst, 5, 0, &hosts, Some(4));
        for i in 0..40u32 {
            let remote = hosts[v.pick() as usize] != 0;
            assert_eq!(remote, i % 4 == 3, "pick {i}");
            v.outcome(false);
        }
        v.reset();
        assert_eq!(hosts[v.pick() as usize], 0, "after a reset the own host comes first");
    }
}
