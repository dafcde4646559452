//! Test support: random Active Messages at the edges of every handler the
//! runtime registers. See
//! `testing::fuzz_handlers`.
//!
//! The trust boundary: every rank of the job is the same program and is
//! trusted. A handler refuses what is malformed (addresses outside its
//! range, unaligned, unknown slots, states and ranks, stale sequence
//! numbers); it cannot tell a well-formed message that is wrong in
//! intent (freeing another rank's live block or finished cell, a
//! fetch-and-add on a live deque word) from a real one, so the fuzz does
//! not send those.
//!
//! Unregistered handler indices and wrong argument counts are not sent:
//! `Gasnet::request` asserts, before anything leaves this rank, that the
//! index is registered with that arity (a panic here, not a message), and a
//! message that did reach GASNet's default handler for an unregistered
//! index would end the job (`gasneti_fatalerror`) — by design, not a
//! handler's to refuse. Reply handlers (FAD_REPLY) are reached only
//! through a reply: the fuzz names their slot and sequence number in the
//! requests whose replies echo them.

use std::time::{Duration, Instant};

use gasnet_sys::am::split_u64;

use crate::arena::{Layout, ARENA_BASE};
use crate::future::{CELL_FREE, CELL_SIZE};
use crate::lifeline::{KEEP_POLLING, LIFELINE_REGISTER, LIFELINE_WAKE, MAX_LIFELINES};
use crate::worker::Worker;
use rand::rngs::SmallRng;
use rand::{Rng as _, RngExt, SeedableRng};

/// The fuzz's generator: `rand`'s small seeded one (reproducible
/// payloads per seed), with the two draws the fuzz makes.
struct Rng(SmallRng);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0.next_u64()
    }

    /// One of `choices`.
    fn pick<T: Copy>(&mut self, choices: &[T]) -> T {
        choices[self.0.random_range(0..choices.len())]
    }
}

impl crate::layer::FuzzDraw for Rng {
    fn next(&mut self) -> u64 {
        Rng::next(self)
    }

    fn near(&mut self, lo: usize, hi: usize, step: usize) -> usize {
        near(self, lo, hi, step)
    }
}

/// An address near the range `[lo, hi)` whose elements are `step` bytes:
/// one element or byte below, the first element and just past its start,
/// the last element, one byte before and at the end, one element past it,
/// a random element or byte inside, the arena's base, 0, the top of the
/// address space, or random bits.
fn near(rng: &mut Rng, lo: usize, hi: usize, step: usize) -> usize {
    let span = (hi - lo).max(step);
    let r = rng.next() as usize;
    rng.pick(&[
        lo.wrapping_sub(step),
        lo.wrapping_sub(1),
        lo,
        lo + 8,
        lo + step - 1,
        hi.wrapping_sub(step),
        hi.wrapping_sub(step) + 8,
        hi.wrapping_sub(1),
        hi,
        hi + step,
        lo + r % span / step * step,
        lo + r % span / step * step,
        lo + r % span,
        ARENA_BASE,
        0,
        usize::MAX,
        usize::MAX - step + 1,
        r,
        r | 1 << 63,
    ])
}

/// Sends `count` requests with random payloads to each of the handlers the
/// runtime registers on `target` (see `testing::fuzz_handlers`); returns
/// how many it sent.
pub(crate) fn send(w: &Worker, target: u32, count: u32, seed: u64) -> u64 {
    let g = w.gasnet;
    let mut rng = Rng(SmallRng::seed_from_u64(
        seed ^ (u64::from(w.rank) << 32) ^ u64::from(target),
    ));
    let mut sent = 0u64;
    let request = |handler: gasnet_sys::am::HandlerId, args: &[u32], sent: &mut u64| {
        g.request(target, handler, args);
        *sent += 1;
        // A target that sleeps in shared memory polls for its queue now
        // (else a full queue makes this rank's next request wait for the
        // target's next periodic poll).
        if sent.is_multiple_of(32) {
            crate::sleep_word::serve(g, target);
        }
    };

    // CELL_FREE(address): around the target's cells. A cell's exact start
    // goes out only while the cell is handed back (FREE: refused as
    // "already handed back"); a finished one (DONE) would be taken back
    // for real (the message cannot tell its sender is not the joiner: any
    // rank may join), and a pending one may finish before the message is
    // handled. Those become an address inside the cell (refused).
    let cells = Layout::addr(w.layout.cells);
    let cells_end = cells + w.layout.cell_count * CELL_SIZE;
    for _ in 0..count {
        let mut addr = near(&mut rng, cells, cells_end, CELL_SIZE);
        let start = addr >= cells && addr < cells_end && (addr - cells).is_multiple_of(CELL_SIZE);
        if start && !crate::future::handed_back_remote(g, target, addr) {
            addr += 8;
        }
        let [lo, hi] = split_u64(addr as u64);
        request(CELL_FREE, &[lo, hi], &mut sent);
    }

    // LIFELINE_REGISTER(dimension): every slot, the slot count and past it,
    // ranks, random. A registration in a slot this rank owns (the target is
    // its buddy in that dimension) is accepted: the target will wake this
    // rank later, a spurious wake-up like a racing waker's.
    for _ in 0..count {
        let r = rng.next() as u32;
        let dim = rng.pick(&[
            r % (MAX_LIFELINES as u32 + 2),
            r % 4,
            MAX_LIFELINES as u32,
            MAX_LIFELINES as u32 - 1,
            MAX_LIFELINES as u32 + 1,
            u32::MAX,
            w.rank,
            target,
            w.ranks,
            r,
        ]);
        request(LIFELINE_REGISTER, &[dim], &mut sent);
    }

    // LIFELINE_WAKE(tag): the tag's low 20 bits must name the sender (plus
    // one). About one in six names this rank, with random high bits: the
    // target is woken (it steals from this rank first; its wake latency
    // statistic may read garbage); the rest name other ranks, rank 0's
    // "no waker", the target itself, or all ones.
    let me = u64::from(w.rank) + 1;
    for _ in 0..count {
        let high = rng.next() << 20;
        let r = rng.next();
        let tag = rng.pick(&[
            high | me,
            high | (r & 0xf_ffff),
            high,
            high | (u64::from(target) + 1),
            high | (u64::from(w.ranks) + 1),
            me + 1,
            me.wrapping_sub(1) | 1 << 20,
            u64::MAX,
            0,
            r,
            me | 1 << 63,
            0xf_ffff,
        ]);
        let [lo, hi] = split_u64(tag);
        request(LIFELINE_WAKE, &[lo, hi], &mut sent);
    }

    // KEEP_POLLING(µs): none, one, the bound and past it, random, all
    // ones. Each is honoured (clamped to the bound): the target polls
    // without sleeping for up to a second while it sleeps, as a rank
    // using its memory would have it do.
    let bound = crate::lifeline::keep_polling::MAX_WINDOW.as_micros() as u32;
    for _ in 0..count {
        let r = rng.next() as u32;
        let micros = rng.pick(&[0, 1, bound, bound + 1, r % 20_000, r, u32::MAX]);
        request(KEEP_POLLING, &[micros], &mut sent);
    }

    // The layer's handlers (global memory's GLOBAL_FREE), as it fuzzes
    // them.
    {
        let mut layer_request = |handler: gasnet_sys::am::HandlerId, args: &[u32]| request(handler, args, &mut sent);
        crate::layer::installed().fuzz(
            crate::layer::Here::of(crate::worker::worker()),
            target,
            count,
            &mut rng,
            &mut layer_request,
        );
    }

    // CLOCK_REQUEST (no arguments): answered with the target's clock into
    // CLOCK_REPLY's one word, which only a trace's start-up alignment reads
    // (harmless at any other time).
    for _ in 0..count {
        request(crate::trace::clock::CLOCK_REQUEST, &[], &mut sent);
    }

    // FAD_REQUEST and GLOBAL_ATOMIC_REQUEST (AM modes), and through their
    // replies this rank's FAD_REPLY.
    let before = am_fad::fuzz_replies_refused();
    let service = am_fad::fuzz_service(g, target, count, &mut || rng.next());
    sent += service;
    crate::sleep_word::serve(g, target);
    // Every fuzzed reply is refused here (none matches a waiting request):
    // wait for them all, so that the fuzz is over when this returns.
    let until = Instant::now() + Duration::from_secs(30);
    while am_fad::fuzz_replies_refused() < before + service && Instant::now() < until {
        w.attend(false);
        g.poll();
        crate::sleep_word::serve(g, target);
    }
    let until = Instant::now() + Duration::from_millis(20);
    while Instant::now() < until {
        g.poll();
    }
    sent
}
