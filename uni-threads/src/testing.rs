//! Test support, behind the `testing` cargo feature (the workspace's own
//! builds enable it: its tests, examples and benchmarks; a user's crate
//! does not see these): certain steals, malformed and random Active
//! Messages, and the fetch-and-add micro-benchmarks' words.

use crate::{attention, deque, future, fuzz, worker};

/// Waits (polling) until another rank has stolen the continuation of the
/// calling task's parent, so that a test's steal is certain rather than
/// likely. Call it first thing in a spawned child, before it spawns;
/// returns at once on one rank.
pub fn wait_until_parent_stolen() {
    crate::runtime::wait_until_parent_stolen()
}

/// Test support: whether another rank has stolen the continuation of the
/// calling task's parent — looked at without polling or serving requests
/// (a task that neither spawns nor polls). False on one rank.
pub fn parent_stolen() -> bool {
    let w = worker::worker_for_task("uat::parent_stolen");
    w.ranks > 1 && w.deque.newest_pushed().is_some_and(|parent| w.deque.stolen(parent))
}

/// Test support: sends Active Messages that their handlers must refuse (and
/// report), and returns how many: CELL_FREEs to `rank` of an address outside
/// the cells, of a misaligned one and of a free cell, and to this rank of a
/// cell whose task has not finished; in the
/// AM fetch-and-add modes also a fetch-and-add request on an unregistered
/// address whose reply names a slot no request is waiting on (refused by
/// this rank's reply handler). Polls a while for the replies.
pub fn send_malformed_messages(rank: u32) -> u32 {
    let w = worker::worker_for_task("uat::send_malformed_messages");
    let mut sent = future::send_malformed_cell_frees(w.gasnet, rank, &w.layout, &w.cells);
    if am_fad::send_malformed_request(w.gasnet, rank) {
        sent += 2;
    }
    let until = std::time::Instant::now() + std::time::Duration::from_millis(50);
    while std::time::Instant::now() < until {
        w.gasnet.poll();
    }
    sent
}

/// Test support: the fuzzer. Sends `count` requests with random
/// payloads (from `seed` and the two ranks) to each Active Message handler
/// the runtime registers on `target` (another rank), and returns how many
/// it sent: CELL_FREE, LIFELINE_REGISTER, LIFELINE_WAKE, KEEP_POLLING,
/// GLOBAL_FREE and, in the AM fetch-and-add modes, FAD_REQUEST and
/// GLOBAL_ATOMIC_REQUEST
/// (whose replies, naming random reply slots and sequence numbers, fuzz
/// this rank's FAD_REPLY). The payloads sit at the handlers' edges:
/// addresses around the cells, the registered atomic words and both zones
/// of the global heap (one below, unaligned, the last element, the end,
/// past it, random ones inside, 0, the top of the address space), slot
/// counts and dimensions ±1, stale and random sequence numbers, tags naming
/// this rank, the target and ranks that do not exist. Every message is
/// refused by its handler or harmless: the few a handler must act on (a
/// lifeline registration in a slot this rank owns, a wake-up naming this
/// rank, an atomic that leaves a valid word unchanged) do what a racing
/// peer's would; exact addresses of a finished cell or a live block (which
/// any rank may hand back) are never sent. Call it inside a task while the
/// target neither spawns nor allocates global memory. Waits (polling) until
/// the fetch-and-add replies are back.
pub fn fuzz_handlers(target: u32, count: u32, seed: u64) -> u64 {
    let w = worker::worker_for_task("uat::fuzz_handlers");
    if target >= w.ranks || target == w.rank {
        return 0;
    }
    fuzz::send(w, target, count, seed)
}

/// Remote fetch-and-add, in this build's mode, on `rank`'s spare atomic
/// word (for micro-benchmarks). None: the target refused it.
pub fn bench_fetch_add(rank: u32, value: u64) -> Option<u64> {
    let w = worker::worker_for_thread("uat::bench_fetch_add");
    let word = deque::words::FAD_BENCH.on(w.gasnet, rank);
    w.deque.words().atomics().fetch_add(rank, word, value)
}

/// The value of this rank's spare atomic word (what `bench_fetch_add`s
/// added up to).
pub fn bench_word() -> u64 {
    let w = worker::worker_for_thread("uat::bench_word");
    let word = deque::words::FAD_BENCH;
    // SAFETY: FAD_BENCH is one of the deque's atomic words, given to
    // init_own (ArenaOwnWords::new), seen at its arena address here.
    unsafe {
        w.deque
            .words()
            .atomics()
            .own_load(word.on(w.gasnet, w.rank), word.addr() as *const u64)
    }
}

/// A fetch-and-add on `rank`'s deque *head* word, which is not registered
/// for atomics: the AM modes must refuse it (tests the handler's check).
pub fn bench_fetch_add_unregistered(rank: u32) -> Option<u64> {
    let w = worker::worker_for_thread("uat::bench_fetch_add_unregistered");
    let word = deque::words::HEAD.on(w.gasnet, rank);
    w.deque.words().atomics().fetch_add(rank, word, 0)
}

/// Test support: whether this rank's attention word is set (a thief or a
/// fetch-and-add request is waiting for the next spawn).
pub fn attention_raised() -> bool {
    let _ = worker::worker_for_thread("uat::attention_raised");
    attention::Attention::raised()
}

/// Test support: fetch-and-add requests this rank has served so far (AM
/// modes; 0 in `native` mode).
pub fn fetch_adds_served() -> u64 {
    am_fad::requests_served()
}

/// splitmix64 of (`seed`, `i`): the pseudo-random numbers of the benchmarks
/// and of the tests, the same on every rank and in every run (the `i`-th
/// number of the stream `seed`).
pub fn splitmix(seed: u64, i: u64) -> u64 {
    let mut z = seed
        .wrapping_mul(0x9e37_79b9_7f4a_7c15)
        .wrapping_add(i.wrapping_add(1).wrapping_mul(0xbf58_476d_1ce4_e5b9));
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}
