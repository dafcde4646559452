//! The Active-Message fetch-and-add service of the `am` and `rdma-emulated`
//! modes (IPSJ 2016 §6.2): a requester sends FAD_REQUEST(address, operand)
//! to the target; the target's handler validates the address, applies a CPU
//! fetch-and-add to the word and replies with the old value.
//!
//! Who runs the handler is the difference between the modes: in `am` the
//! target's worker, whenever it polls (at spawn, in scheduler loops); in
//! `rdma-emulated` the target's communication-assisting thread
//! ([`crate::poller`]), which polls continuously, so the worker is never
//! interrupted.
//!
//! Only words registered with [`allow`] may be targeted: a request for any
//! other address is refused (reported on stderr and to the requester, and
//! never applied).

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};

use gasnet_sys::am::{join_u64, split_u64, Arg, Handler, Token};
use gasnet_sys::Gasnet;

use crate::refusals::Refusals;

/// Handler index (client range) of a fetch-and-add request.
pub const FAD_REQUEST: u8 = 200;
/// Handler index of its reply (the old value, or a refusal).
pub const FAD_REPLY: u8 = 201;

const REFUSED: u32 = 1;

/// The one word range of this process that requests may target: `[lo, hi)`
/// in this rank's segment, mapped locally at `local`.
static ALLOWED_LO: AtomicUsize = AtomicUsize::new(0);
static ALLOWED_HI: AtomicUsize = AtomicUsize::new(0);
static LOCAL_BASE: AtomicUsize = AtomicUsize::new(0);
/// Segment offset of every rank's sleep word (a sleeping target is woken to
/// serve a request in `am` mode; see [`crate::sleep`]).
static SLEEP_OFFSET: AtomicUsize = AtomicUsize::new(0);
/// TSC cycles spent in request handlers (the paper's Fig. 16 share).
static HANDLER_CYCLES: AtomicU64 = AtomicU64::new(0);
static HANDLED: AtomicU64 = AtomicU64::new(0);

/// Registers the service's handlers (every rank, before the segment is used).
pub fn handlers() -> [Handler; 3] {
    let req: for<'a> extern "C" fn(Token<'a>, Arg, Arg, Arg, Arg, Arg, Arg) = on_request;
    let rep: for<'a> extern "C" fn(Token<'a>, Arg, Arg, Arg, Arg, Arg) = on_reply;
    #[allow(clippy::type_complexity)]
    let global: for<'a> extern "C" fn(Token<'a>, Arg, Arg, Arg, Arg, Arg, Arg, Arg, Arg, Arg) = on_global_request;
    [
        Handler::request(FAD_REQUEST, c"am-fad request", req),
        Handler::reply(FAD_REPLY, c"am-fad reply", rep),
        Handler::request(GLOBAL_ATOMIC_REQUEST, c"am-fad global atomic", global),
    ]
}

/// Allows requests on the segment words `[lo, hi)` of this rank, which this
/// process sees at `local`; requests raise the target's attention word at
/// `attention_offset` in its segment and wake it if it sleeps (its sleep
/// word at `sleep_offset`) (`am` mode).
///
/// # Safety
/// `local` must be this process's view of segment address `lo`, with the
/// words of `[local, local + hi - lo)` and the attention and sleep words 8-aligned,
/// mapped for the rest of the process and accessed only atomically: the
/// request handler dereferences them.
pub unsafe fn allow(lo: usize, hi: usize, local: usize, attention_offset: usize, sleep_offset: usize) {
    LOCAL_BASE.store(local, Ordering::Relaxed);
    crate::attention::set_offset(attention_offset);
    SLEEP_OFFSET.store(sleep_offset, Ordering::Relaxed);
    ALLOWED_LO.store(lo, Ordering::Relaxed);
    ALLOWED_HI.store(hi, Ordering::Release);
}

/// (requests handled, TSC cycles spent handling them) by this rank so far.
pub fn handled() -> (u64, u64) {
    (HANDLED.load(Ordering::Relaxed), HANDLER_CYCLES.load(Ordering::Relaxed))
}

/// Where a requester waits for its reply. A request carries the slot's
/// index and sequence number (never a pointer); the reply handler accepts a
/// reply only for a slot that is waiting for exactly that sequence number
/// from exactly that rank, so a malformed or stale reply is refused instead
/// of writing anywhere.
struct ReplySlot {
    /// Claimed by a requester (any thread) until its reply has arrived.
    busy: AtomicBool,
    /// Incremented for every request made through this slot.
    seq: AtomicU32,
    /// The rank the request went to.
    target: AtomicU32,
    done: AtomicBool,
    refused: AtomicBool,
    value: AtomicU64,
}

/// Requests in flight at once, per process (the worker has one at a time;
/// a few more for other threads).
const REPLY_SLOTS: usize = 16;

static SLOTS: [ReplySlot; REPLY_SLOTS] = [const {
    ReplySlot {
        busy: AtomicBool::new(false),
        seq: AtomicU32::new(0),
        target: AtomicU32::new(0),
        done: AtomicBool::new(false),
        refused: AtomicBool::new(false),
        value: AtomicU64::new(0),
    }
}; REPLY_SLOTS];

/// Messages refused by this rank's handlers (requests for unregistered
/// words, replies that match no waiting request).
static REFUSED_MESSAGES: AtomicU64 = AtomicU64::new(0);

/// How many fetch-and-add replies this rank has refused so far (the fuzz
/// waits for its own).
pub fn replies_refused() -> u64 {
    REFUSED_REPLIES.count()
}

/// How many malformed fetch-and-add messages this rank has refused so far.
pub fn refused() -> u64 {
    REFUSED_MESSAGES.load(Ordering::Relaxed)
}

/// The refusals of each handler, reported without flooding stderr.
static REFUSED_REQUESTS: Refusals = Refusals::new("fetch-and-add requests");
static REFUSED_REPLIES: Refusals = Refusals::new("fetch-and-add replies");
static REFUSED_GLOBAL: Refusals = Refusals::new("global atomic requests");

fn refuse(kind: &Refusals, what: std::fmt::Arguments) {
    REFUSED_MESSAGES.fetch_add(1, Ordering::Relaxed);
    kind.refuse(format_args!("am-fad refused {what}"));
}

extern "C" fn on_request(token: Token, addr_lo: Arg, addr_hi: Arg, v_lo: Arg, v_hi: Arg, index: Arg, seq: Arg) {
    // SAFETY: rdtsc has no preconditions.
    let start = unsafe { core::arch::x86_64::_rdtsc() };
    let addr = join_u64(addr_lo, addr_hi) as usize;
    let (lo, hi) = (ALLOWED_LO.load(Ordering::Acquire), ALLOWED_HI.load(Ordering::Acquire));
    let [old_lo, old_hi, flags] = if addr.is_multiple_of(8) && addr >= lo && addr < hi && hi - addr >= 8 {
        let local = LOCAL_BASE.load(Ordering::Relaxed) + (addr - lo);
        // SAFETY: an aligned word of the registered range, which the owner
        // and this handler access only atomically.
        let word = unsafe { &*(local as *const AtomicU64) };
        let old = word.fetch_add(join_u64(v_lo, v_hi), Ordering::AcqRel);
        let [a, b] = split_u64(old);
        [a, b, 0]
    } else {
        refuse(
            &REFUSED_REQUESTS,
            format_args!(
                "a fetch-and-add from rank {} on {addr:#x}: outside the registered words [{lo:#x}, {hi:#x})",
                token.source()
            ),
        );
        [0, 0, REFUSED]
    };
    // The index and sequence number go back as they came: the requester's
    // reply handler checks them.
    token.reply(FAD_REPLY, &[old_lo, old_hi, flags, index, seq]);
    // SAFETY: as above.
    let end = unsafe { core::arch::x86_64::_rdtsc() };
    HANDLER_CYCLES.fetch_add(end.wrapping_sub(start), Ordering::Relaxed);
    HANDLED.fetch_add(1, Ordering::Relaxed);
}

extern "C" fn on_reply(token: Token, old_lo: Arg, old_hi: Arg, flags: Arg, index: Arg, seq: Arg) {
    let from = token.source();
    let Some(slot) = SLOTS.get(index as usize) else {
        return refuse(
            &REFUSED_REPLIES,
            format_args!("a fetch-and-add reply from rank {from} for slot {index}: there are {REPLY_SLOTS} slots"),
        );
    };
    let waiting = slot.busy.load(Ordering::Acquire)
        && !slot.done.load(Ordering::Acquire)
        && slot.seq.load(Ordering::Acquire) == seq
        && slot.target.load(Ordering::Relaxed) == from;
    if !waiting || flags & !REFUSED != 0 {
        return refuse(
            &REFUSED_REPLIES,
            format_args!(
                "a fetch-and-add reply from rank {from} for slot {index}, request {seq}: no such request is waiting"
            ),
        );
    }
    slot.value.store(join_u64(old_lo, old_hi), Ordering::Relaxed);
    slot.refused.store(flags & REFUSED != 0, Ordering::Relaxed);
    slot.done.store(true, Ordering::Release);
}

/// Remote fetch-and-add by Active Message: returns the old value, or None
/// when the target refused the address. Polls while waiting.
pub fn fetch_add(gasnet: Gasnet, rank: u32, addr: usize, value: u64) -> Option<u64> {
    let [a0, a1] = split_u64(addr as u64);
    let [v0, v1] = split_u64(value);
    call(gasnet, rank, FAD_REQUEST, [a0, a1, v0, v1])
}

/// Sends `handler` the arguments `args` followed by a reply slot's index
/// and sequence number, and waits (polling) for the FAD_REPLY: the old
/// value, or None when the target refused.
fn call<const N: usize>(gasnet: Gasnet, rank: u32, handler: u8, args: [Arg; N]) -> Option<u64> {
    let (index, slot) = claim_slot(gasnet);
    let seq = slot.seq.load(Ordering::Relaxed).wrapping_add(1);
    slot.target.store(rank, Ordering::Relaxed);
    slot.done.store(false, Ordering::Relaxed);
    // Release: a reply handler that sees the new sequence number sees the
    // target and `done == false` too.
    slot.seq.store(seq, Ordering::Release);
    let mut all = [0 as Arg; 16];
    all[..N].copy_from_slice(&args);
    all[N] = index as Arg;
    all[N + 1] = seq;
    gasnet.request(rank, handler, &all[..N + 2]);
    gasnet_sys::ops::count_round_trip_request();
    if crate::mode::MODE == crate::mode::Mode::Am && rank != gasnet.rank() {
        // The target's worker serves requests when it polls; make it look
        // at its next spawn. (After the request: in shared memory the
        // message is in the target's queue before this store.)
        crate::attention::raise_attention(gasnet, rank, crate::attention::offset());
        // A quiescent target polls once for it (shared memory; across the
        // network it polls on its own back-off schedule while it sleeps).
        crate::sleep::wake(
            gasnet,
            rank,
            SLEEP_OFFSET.load(Ordering::Relaxed),
            crate::sleep::Wake::Service,
        );
    }
    // The reply arrives when the target polls: wait with the caller's
    // patience (gasnet_sys::wait).
    gasnet_sys::wait::until(gasnet, || slot.done.load(Ordering::Acquire));
    let result = (!slot.refused.load(Ordering::Relaxed)).then(|| slot.value.load(Ordering::Relaxed));
    slot.busy.store(false, Ordering::Release);
    result
}

/// Handler index of GLOBAL_ATOMIC(address, operation, operand, operand,
/// slot, sequence number): an atomic on a word of the target's global heap,
/// answered with FAD_REPLY.
pub const GLOBAL_ATOMIC_REQUEST: u8 = 202;

/// The target's global heap `[lo, hi)` (segment addresses), seen at `local`
/// here: the only words GLOBAL_ATOMIC requests may target.
static GLOBAL_LO: AtomicUsize = AtomicUsize::new(0);
static GLOBAL_HI: AtomicUsize = AtomicUsize::new(0);
static GLOBAL_LOCAL: AtomicUsize = AtomicUsize::new(0);

/// Allows GLOBAL_ATOMIC requests on the words of `[lo, hi)` in this rank's
/// segment, which this process sees at `local`.
///
/// # Safety
/// `local` must be this process's view of segment address `lo`, with the
/// words of `[local, local + hi - lo)` mapped for the rest of the process;
/// the request handler dereferences the words that requests name, so those
/// must be accessed only atomically.
pub unsafe fn allow_global(lo: usize, hi: usize, local: usize) {
    GLOBAL_LOCAL.store(local, Ordering::Relaxed);
    GLOBAL_LO.store(lo, Ordering::Relaxed);
    GLOBAL_HI.store(hi, Ordering::Release);
}

extern "C" fn on_global_request(
    token: Token,
    addr_lo: Arg,
    addr_hi: Arg,
    op: Arg,
    a_lo: Arg,
    a_hi: Arg,
    b_lo: Arg,
    b_hi: Arg,
    index: Arg,
    seq: Arg,
) {
    let addr = join_u64(addr_lo, addr_hi) as usize;
    let (lo, hi) = (GLOBAL_LO.load(Ordering::Acquire), GLOBAL_HI.load(Ordering::Acquire));
    let op = crate::op::AtomicOp::from_code(op);
    let [old_lo, old_hi, flags] = match op {
        Some(op) if addr.is_multiple_of(8) && addr >= lo && addr < hi && hi - addr >= 8 => {
            let local = GLOBAL_LOCAL.load(Ordering::Relaxed) + (addr - lo);
            // SAFETY: an aligned word of this rank's global heap, which in
            // the AM modes everyone accesses atomically with CPU atomics
            // (the `GlobalAtomicU64` rule).
            let word = unsafe { &*(local as *const AtomicU64) };
            let old = op.apply(word, join_u64(a_lo, a_hi), join_u64(b_lo, b_hi));
            let [a, b] = split_u64(old);
            [a, b, 0]
        }
        _ => {
            refuse(
                &REFUSED_GLOBAL,
                format_args!(
                "a global atomic (operation {op:?}) from rank {} on {addr:#x}: not an aligned word of the global heap \
                 [{lo:#x}, {hi:#x}), or an unknown operation",
                token.source()
            ),
            );
            [0, 0, REFUSED]
        }
    };
    token.reply(FAD_REPLY, &[old_lo, old_hi, flags, index, seq]);
}

/// An atomic on a word of `rank`'s global heap by Active Message (the
/// target is outside this process's shared memory): the old value, or None
/// when the target refused it. Polls while waiting.
pub fn global_atomic(gasnet: Gasnet, rank: u32, addr: usize, op: crate::op::AtomicOp, a: u64, b: u64) -> Option<u64> {
    let [a0, a1] = split_u64(addr as u64);
    let [x0, x1] = split_u64(a);
    let [y0, y1] = split_u64(b);
    call(gasnet, rank, GLOBAL_ATOMIC_REQUEST, [a0, a1, op.code(), x0, x1, y0, y1])
}

/// A free reply slot (polling while all are in use).
fn claim_slot(gasnet: Gasnet) -> (usize, &'static ReplySlot) {
    loop {
        for (i, slot) in SLOTS.iter().enumerate() {
            if !slot.busy.load(Ordering::Relaxed)
                && slot
                    .busy
                    .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
                    .is_ok()
            {
                return (i, slot);
            }
        }
        gasnet.poll();
    }
}

/// Test support: sends `rank` a fetch-and-add request on segment address 0
/// (never registered: its request handler must refuse it) naming reply slot
/// `index`, request `seq`, for which no request of ours is waiting: the
/// reply that comes back must be refused by our reply handler. Poll after
/// it for the reply to arrive.
#[doc(hidden)]
pub fn send_malformed_request(gasnet: Gasnet, rank: u32, index: u32, seq: u32) {
    gasnet.request(rank, FAD_REQUEST, &[0, 0, 0, 0, index, seq]);
}

/// Test support: sends `rank` `count` FAD_REQUESTs and `count`
/// GLOBAL_ATOMIC_REQUESTs with payloads at the handlers' edges, drawn with
/// `next` (a random u64 per call), and returns how many it sent. The
/// replies come back to this rank's FAD_REPLY handler: poll after it.
///
/// Each request is refused by its handler or harmless:
/// - addresses: around both ends of the target's registered words and of
///   its global heap (one below, unaligned, the last word, one past,
///   straddling the end), 0, the top of the address space, random words;
///   an aligned word inside a range gets only operations that leave it as
///   it is (a fetch-and-add of 0; a load, a fetch-max of 0 or a fetch-min of
///   `u64::MAX`), anything else a random operand;
/// - global atomic operation codes: every valid one, one past the last,
///   `u32::MAX`, random (an invalid code is refused even on a valid word);
/// - the reply slot and sequence number echoed back to this rank: every
///   slot index, the slot count and one past it, `u32::MAX`, random; this
///   slot's current sequence number only while the slot waits for nothing,
///   else a stale one, 0, `u32::MAX` or a random one — never the next
///   numbers a request of this process could wait for, so no real request
///   is answered by the fuzz.
#[doc(hidden)]
pub fn fuzz(gasnet: Gasnet, rank: u32, count: u32, next: &mut dyn FnMut() -> u64) -> u64 {
    use crate::op::AtomicOp;
    // The ranges are this rank's segment addresses: the target's are at the
    // same offsets in its segment (every rank's arena has the same layout).
    let (own, theirs) = (gasnet.segment(gasnet.rank()).base, gasnet.segment(rank).base);
    let there = |a: usize| {
        if a == 0 {
            0
        } else {
            a.wrapping_sub(own).wrapping_add(theirs)
        }
    };
    let words = (
        there(ALLOWED_LO.load(Ordering::Acquire)),
        there(ALLOWED_HI.load(Ordering::Acquire)),
    );
    let heap = (
        there(GLOBAL_LO.load(Ordering::Acquire)),
        there(GLOBAL_HI.load(Ordering::Acquire)),
    );
    let inside = |(lo, hi): (usize, usize), a: usize| a.is_multiple_of(8) && a >= lo && a < hi && hi - a >= 8;
    let slot_and_seq = |next: &mut dyn FnMut() -> u64| -> [Arg; 2] {
        let r = next();
        let index = match r % 8 {
            0 => REPLY_SLOTS as u32,
            1 => REPLY_SLOTS as u32 + 1,
            2 => u32::MAX,
            3 => (r >> 32) as u32,
            _ => ((r >> 8) % REPLY_SLOTS as u64) as u32,
        };
        let current = SLOTS.get(index as usize).map(|s| {
            let busy = s.busy.load(Ordering::Acquire);
            (busy, s.seq.load(Ordering::Acquire))
        });
        let (busy, cur) = current.unwrap_or((false, (r >> 40) as u32));
        let mut seq = match (r >> 3) % 6 {
            0 if !busy => cur,
            0 | 1 => cur.wrapping_sub(1),
            2 => cur.wrapping_sub(1 + (r >> 48) as u32),
            3 => 0,
            4 => u32::MAX,
            _ => (r >> 16) as u32,
        };
        // Never a number a request of this process may wait for: the
        // current one while the slot is busy, or one of the next ones.
        let ahead = seq.wrapping_sub(cur);
        if (ahead == 0 && busy) || (1..=1 << 16).contains(&ahead) {
            seq = cur.wrapping_sub(2);
        }
        [index, seq]
    };
    let address = |(lo, hi): (usize, usize), r: u64| -> usize {
        let pick = [
            lo.wrapping_sub(8),
            lo.wrapping_sub(1),
            lo,
            lo + 1,
            lo + 4,
            hi.wrapping_sub(8),
            hi.wrapping_sub(7),
            hi.wrapping_sub(4),
            hi.wrapping_sub(1),
            hi,
            hi + 8,
            0,
            usize::MAX - 7,
            usize::MAX,
            (r >> 8) as usize,
            // Inside the range: a random word, aligned or not.
            lo + ((r >> 8) as usize) % (hi - lo).max(1),
            lo + ((((r >> 8) as usize) % (hi - lo).max(8)) & !7),
        ];
        pick[(r % pick.len() as u64) as usize]
    };
    let mut sent = 0;
    for _ in 0..count {
        let r = next();
        let addr = address(words, r);
        let value = if inside(words, addr) { 0 } else { next() };
        let [a0, a1] = split_u64(addr as u64);
        let [v0, v1] = split_u64(value);
        let [index, seq] = slot_and_seq(next);
        gasnet.request(rank, FAD_REQUEST, &[a0, a1, v0, v1, index, seq]);
        sent += 1;
    }
    for _ in 0..count {
        let r = next();
        let addr = address(heap, r);
        let (op, a, b) = if inside(heap, addr) {
            match (r >> 5) % 5 {
                0 => (AtomicOp::FetchAdd.code(), 0, next()),
                1 => (AtomicOp::Load.code(), next(), next()),
                2 => (AtomicOp::FetchMax.code(), 0, next()),
                3 => (AtomicOp::FetchMin.code(), u64::MAX, next()),
                // Not an operation: refused on a valid word too.
                _ => (
                    [6, 7, u32::MAX, (r >> 32) as u32 | 8][(r >> 8) as usize % 4],
                    next(),
                    next(),
                ),
            }
        } else {
            let op = match (r >> 5) % 4 {
                0 => 6,
                1 => u32::MAX,
                2 => (r >> 32) as u32,
                _ => ((r >> 8) % 6) as u32,
            };
            (op, next(), next())
        };
        let [x0, x1] = split_u64(addr as u64);
        let [a0, a1] = split_u64(a);
        let [b0, b1] = split_u64(b);
        let [index, seq] = slot_and_seq(next);
        gasnet.request(rank, GLOBAL_ATOMIC_REQUEST, &[x0, x1, op, a0, a1, b0, b1, index, seq]);
        sent += 1;
    }
    sent
}
