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

/// Handler indices (client range).
pub const FAD_REQUEST: u8 = 200;
pub const FAD_REPLY: u8 = 201;

const REFUSED: u32 = 1;

/// The one word range of this process that requests may target: `[lo, hi)`
/// in this rank's segment, mapped locally at `local`.
static ALLOWED_LO: AtomicUsize = AtomicUsize::new(0);
static ALLOWED_HI: AtomicUsize = AtomicUsize::new(0);
static LOCAL_BASE: AtomicUsize = AtomicUsize::new(0);
/// Segment offset of every rank's attention word (raised after a request in
/// `am` mode; 0 before `allow`).
static ATTENTION_OFFSET: AtomicUsize = AtomicUsize::new(0);
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
    ATTENTION_OFFSET.store(attention_offset, Ordering::Relaxed);
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

/// How many malformed fetch-and-add messages this rank has refused so far.
pub fn refused() -> u64 {
    REFUSED_MESSAGES.load(Ordering::Relaxed)
}

fn refuse(what: std::fmt::Arguments) {
    REFUSED_MESSAGES.fetch_add(1, Ordering::Relaxed);
    gasnet_sys::report(format_args!("warning: am-fad refused {what}"));
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
        refuse(format_args!(
            "a fetch-and-add from rank {} on {addr:#x}: outside the registered words [{lo:#x}, {hi:#x})",
            token.source()
        ));
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
        return refuse(format_args!(
            "a fetch-and-add reply from rank {from} for slot {index}: there are {REPLY_SLOTS} slots"
        ));
    };
    let waiting = slot.busy.load(Ordering::Acquire)
        && !slot.done.load(Ordering::Acquire)
        && slot.seq.load(Ordering::Acquire) == seq
        && slot.target.load(Ordering::Relaxed) == from;
    if !waiting || flags & !REFUSED != 0 {
        return refuse(format_args!(
            "a fetch-and-add reply from rank {from} for slot {index}, request {seq}: no such request is waiting"
        ));
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
    if crate::MODE == crate::Mode::Am && rank != gasnet.rank() {
        // The target's worker serves requests when it polls; make it look
        // at its next spawn. (After the request: in shared memory the
        // message is in the target's queue before this store.)
        crate::raise_attention(gasnet, rank, ATTENTION_OFFSET.load(Ordering::Relaxed));
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
    let op = crate::global::AtomicOp::from_code(op);
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
            refuse(format_args!(
                "a global atomic (operation {op:?}) from rank {} on {addr:#x}: not an aligned word of the global heap \
                 [{lo:#x}, {hi:#x}), or an unknown operation",
                token.source()
            ));
            [0, 0, REFUSED]
        }
    };
    token.reply(FAD_REPLY, &[old_lo, old_hi, flags, index, seq]);
}

/// An atomic on a word of `rank`'s global heap by Active Message (the
/// target is outside this process's shared memory): the old value, or None
/// when the target refused it. Polls while waiting.
pub fn global_atomic(
    gasnet: Gasnet,
    rank: u32,
    addr: usize,
    op: crate::global::AtomicOp,
    a: u64,
    b: u64,
) -> Option<u64> {
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
