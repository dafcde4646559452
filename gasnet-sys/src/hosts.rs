//! Hosts: which ranks share memory, and the emulated network between them.
//!
//! A *host* here is a GASNet neighbourhood: the ranks that map each other's
//! segments through shared memory (PSHM). On a cluster that is a node; on
//! one machine the launcher makes several with `GASNET_SUPERNODE_MAXSIZE`
//! (`cargo uat run --hosts H`), so a loopback job has a cluster's shape:
//! shared memory inside a host, the network (real UDP, or MPI) between.
//!
//! Every rank learns every rank's host at [`crate::Gasnet::init`], with one
//! collective (an element-wise maximum over one slot per rank, i.e. an
//! all-gather of `N` words), so the map costs `8 N` bytes per rank and
//! nothing afterwards.
//!
//! # The emulated delay
//! [`crate::Gasnet::set_cross_host_delay`] makes every blocking get and put,
//! remote atomic and Active Message request this crate issues to another
//! host first wait that long, polling on the issuing thread; a batch of
//! non-blocking gets and puts that crossed hosts completes (`wait_nbi`) no
//! sooner than that long after its first such operation, since a network
//! overlaps them with each other and with the issuer's work. A
//! loopback job then sees a cluster's ratio of local to remote cost, the
//! latency charged to the rank that communicates, once per round trip
//! (replies are not delayed). Operations inside a host, barriers and other
//! collectives are not delayed. Off (zero) unless set.

use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use crate::{raw, Error};

/// Every rank's host (a GASNet neighbourhood), as seen by this rank.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hosts {
    host_of: Vec<u32>,
    count: u32,
    mine: u32,
}

impl Hosts {
    /// A map from each rank's host index (`host_of[rank]`); `me` is this
    /// rank. Host indices must be `0..count` with every index used.
    #[cfg(test)]
    fn from_table(host_of: Vec<u32>, me: u32) -> Hosts {
        let count = host_of.iter().copied().max().map_or(0, |m| m + 1);
        let mine = host_of[me as usize];
        Hosts { host_of, count, mine }
    }

    /// The number of hosts in the job.
    #[inline]
    pub fn count(&self) -> u32 {
        self.count
    }

    /// This rank's host, in `0..count()`.
    #[inline]
    pub fn mine(&self) -> u32 {
        self.mine
    }

    /// `rank`'s host, in `0..count()`.
    #[inline]
    pub fn of(&self, rank: u32) -> u32 {
        self.host_of[rank as usize]
    }

    /// Whether `rank` is on this rank's host.
    #[inline]
    pub fn is_local(&self, rank: u32) -> bool {
        self.host_of[rank as usize] == self.mine
    }

    /// Whether ranks `a` and `b` are on one host.
    #[inline]
    pub fn is_local_to(&self, a: u32, b: u32) -> bool {
        self.host_of[a as usize] == self.host_of[b as usize]
    }

    /// The ranks of `host`, in increasing order.
    pub fn ranks_of(&self, host: u32) -> impl Iterator<Item = u32> + '_ {
        (0..self.host_of.len() as u32).filter(move |&r| self.host_of[r as usize] == host)
    }

    /// Every rank's host, indexed by rank.
    pub fn table(&self) -> &[u32] {
        &self.host_of
    }
}

static HOSTS: OnceLock<Hosts> = OnceLock::new();

/// Nanoseconds every cross-host operation waits before it is issued.
/// Relaxed: a plain setting, written once before the ranks communicate
/// (the runtime sets it in `start`, before its closing barrier).
static CROSS_HOST_DELAY_NS: AtomicU64 = AtomicU64::new(0);

/// Operations delayed so far by this process (every thread).
static DELAYED_OPS: AtomicU64 = AtomicU64::new(0);

/// Learns every rank's host (collective; called once by `init`), and checks
/// that GASNet made the hosts the launcher asked for, if it asked.
/// `gather` is the collective maximum over ranks of each slot
/// (`Gasnet::max_over_ranks_each`), `neighbourhood` this rank's
/// neighbours (`Gasnet::neighbourhood`): the client passes them, so that
/// this module sits below it.
pub(crate) fn learn(
    rank: u32,
    size: u32,
    gather: impl FnOnce(&[u64]) -> Vec<u64>,
    mut neighbours: Vec<u32>,
) -> Result<(), Error> {
    let (mut count, mut mine) = (0, 0);
    // SAFETY: init succeeded; GASNet writes two integers.
    unsafe { raw::uat_my_position(&mut count, &mut mine) };
    let ranks = size as usize;
    let mut slots = vec![0u64; ranks];
    // One more than the index, so that a zero is "not this rank's slot".
    slots[rank as usize] = mine as u64 + 1;
    let gathered = gather(&slots);
    let host_of: Vec<u32> = gathered.iter().map(|&h| h.saturating_sub(1) as u32).collect();
    // Every slot written (1 + a host below the count), and this rank's
    // host holds exactly its neighbourhood; else GASNet's view is not what
    // this module assumes. Every rank saw the same gather, so a rank that
    // refuses is not alone: the job stops, it does not hang.
    let written = gathered.iter().all(|&h| h >= 1 && h <= count as u64);
    let mine_listed = (0..ranks as u32).filter(|&r| host_of[r as usize] == mine);
    neighbours.sort_unstable();
    if !written || !mine_listed.eq(neighbours) {
        return Err(Error::HostMap { neighbourhoods: count });
    }
    let hosts = Hosts { host_of, count, mine };
    // init runs once per process (checked there).
    let _ = HOSTS.set(hosts);
    let var = uat_rules::hosts::LAUNCHED_HOSTS_ENV;
    match std::env::var(var).ok().filter(|a| !a.trim().is_empty()) {
        None => Ok(()),
        Some(text) => match text.trim().parse::<u32>() {
            Ok(asked) if asked == count => Ok(()),
            Ok(asked) => Err(Error::Hosts { asked, made: count }),
            Err(_) => Err(Error::LaunchedHosts { text }),
        },
    }
}

/// Every rank's host, learnt at init (`Gasnet::hosts`).
pub(crate) fn map() -> &'static Hosts {
    HOSTS.get().expect("the host map is learnt in Gasnet::init")
}

/// Sets the emulated delay (`Gasnet::set_cross_host_delay`).
pub(crate) fn set_delay(delay: Duration) {
    CROSS_HOST_DELAY_NS.store(delay.as_nanos().min(u64::MAX as u128) as u64, Ordering::Relaxed);
}

/// Operations this process has delayed so far (`Gasnet::delayed_ops`).
pub(crate) fn delayed_ops() -> u64 {
    DELAYED_OPS.load(Ordering::Relaxed)
}

/// The delay set (`Gasnet::cross_host_delay`).
pub(crate) fn delay() -> Duration {
    Duration::from_nanos(CROSS_HOST_DELAY_NS.load(Ordering::Relaxed))
}

/// Before a blocking operation or an Active Message request to `rank`:
/// waits the emulated delay if `rank` is on another host and a delay is set
/// (one relaxed load otherwise). The thread polls meanwhile, as it would
/// while waiting for a real network: a rank that stopped serving for the
/// delay would stall its peers (over udp, a round trip that follows a
/// silent spell costs about twice the spell more). Replies are not
/// delayed: a request-reply round trip pays the delay once, like a get,
/// and like GASNet's own Active-Message atomics behind `native`.
#[inline(always)]
pub(crate) fn before_op_to(rank: u32) {
    let ns = CROSS_HOST_DELAY_NS.load(Ordering::Relaxed);
    if ns != 0 {
        delay_if_remote(rank, ns);
    }
}

thread_local! {
    /// When this thread issued the first non-blocking operation to
    /// another host since its last `wait_nbi`, if it has.
    static NBI_CROSSED_AT: Cell<Option<Instant>> = const { Cell::new(None) };
}

/// A non-blocking get or put to `rank` was issued: notes when the batch
/// first crossed hosts. The batch pays the delay when it is waited for
/// ([`before_nbi_wait`]): a network overlaps a batch's operations with each
/// other and with the issuer's work, and a put nobody waits for costs its
/// issuer nothing.
#[inline(always)]
pub(crate) fn note_nbi_op_to(rank: u32) {
    if CROSS_HOST_DELAY_NS.load(Ordering::Relaxed) != 0 && NBI_CROSSED_AT.with(Cell::get).is_none() && is_remote(rank) {
        NBI_CROSSED_AT.with(|t| t.set(Some(Instant::now())));
    }
}

/// `wait_nbi`: a batch that crossed hosts completes no sooner than the
/// delay after its first such operation.
#[inline(always)]
pub(crate) fn before_nbi_wait() {
    let ns = CROSS_HOST_DELAY_NS.load(Ordering::Relaxed);
    if ns != 0 {
        if let Some(start) = NBI_CROSSED_AT.with(Cell::take) {
            DELAYED_OPS.fetch_add(1, Ordering::Relaxed);
            wait_until(start, Duration::from_nanos(ns));
        }
    }
}

/// The end of a delay during which the thread no longer polls.
const POLL_MARGIN: Duration = Duration::from_micros(5);

#[cold]
#[inline(never)]
fn is_remote(rank: u32) -> bool {
    HOSTS.get().is_some_and(|h| !h.is_local(rank))
}

/// Waits the delay if `rank` is on another host.
#[cold]
#[inline(never)]
fn delay_if_remote(rank: u32, ns: u64) {
    if is_remote(rank) {
        DELAYED_OPS.fetch_add(1, Ordering::Relaxed);
        wait_until(Instant::now(), Duration::from_nanos(ns));
    }
}

/// Spins until `wait` after `start`, polling but in the last
/// [`POLL_MARGIN`].
fn wait_until(start: Instant, wait: Duration) {
    loop {
        let elapsed = start.elapsed();
        if elapsed >= wait {
            break;
        }
        // A poll costs up to a few µs (over udp a recvfrom): none in the
        // last POLL_MARGIN, so that the delay ends on time.
        if wait - elapsed > POLL_MARGIN {
            // SAFETY: init succeeded (the host map exists). Every caller
            // issues a request or a blocking operation, or waits for
            // non-blocking ones, none of which a handler may do, so this
            // is not a handler either; GASNet may poll inside those calls
            // itself.
            unsafe { raw::uat_poll() };
        }
        std::hint::spin_loop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_table_names_each_rank_host() {
        let h = Hosts::from_table(vec![0, 0, 1, 1, 1], 3);
        assert_eq!((h.count(), h.mine()), (2, 1));
        assert!(h.is_local(2) && h.is_local(4) && !h.is_local(0));
        assert_eq!(h.ranks_of(0).collect::<Vec<_>>(), vec![0, 1]);
        assert_eq!(h.ranks_of(1).collect::<Vec<_>>(), vec![2, 3, 4]);
        assert_eq!(h.of(1), 0);
    }
}
