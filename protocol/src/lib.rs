//! The scheduler's protocol steps of uni-address threads, written once and
//! generic over where their words live.
//!
//! - [`deque`]: the work-stealing deque of ready continuations (the split
//!   protocol and the IPSJ 2016 paper's THE protocol), the owner's push,
//!   pop and expose, a thief's empty check, claim and release;
//! - [`lifeline`]: the lifeline graph and the steps of quiescing, serving
//!   and waking (Saraswat et al., PPoPP'11);
//! - [`victim`]: victim choice (`UAT_VICTIMS`);
//! - [`mutation`]: deliberate breakages of these steps, for the checks'
//!   tests (feature `mutations` only; no cost without it).
//!
//! Three programs run these steps: the runtime (`uni-threads`), over the
//! arena's control words on GASNet-EX; the model tests, over in-process
//! atomics with a scheduler that interleaves ranks between any two word
//! accesses; and the simulator (`uat-sim`), over simulated ranks whose
//! remote accesses take simulated time. Each implements the words traits
//! ([`deque::OwnWords`], [`deque::VictimWords`], [`lifeline::Words`]); none
//! holds a second copy of a protocol.

pub mod deque;
pub mod lifeline;
pub mod mutation;
pub mod victim;
