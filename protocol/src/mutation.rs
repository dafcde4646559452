//! Deliberate breakages of the protocol steps, to show that the checks
//! which guard them can fail: the model tests (`deque::tests`, the
//! lifeline model in `uni-threads`) and the simulator (`uat-sim`'s
//! `tests/mutations.rs`) turn one on and must report the error
//! (`docs/design/simulator.md`, "Mutations").
//!
//! Only with the cargo feature `mutations` (test builds; the runtime's
//! builds never enable it) can a mutation be turned on; without it
//! [`active`] is the constant `false` and every mutated branch compiles
//! away. The setting is per thread: model tests run in parallel and set
//! it in each thread they start; the simulator runs on one thread.

/// One deliberate breakage of a protocol step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mutation {
    /// No breakage: the protocol as written.
    None,
    /// A thief's claim loads the packed word instead of adding 1 to it
    /// (split), or proceeds without the victim's lock (paper's
    /// `try_lock` skipped): an entry can be handed out twice.
    ClaimSkipsFetchAdd,
    /// A split thief never releases the entry it copied: the owner waits
    /// for it forever.
    ReleaseSkipped,
    /// A paper thief never unlocks the victim after a steal: the owner and
    /// every later thief wait for the lock forever.
    UnlockSkipped,
    /// The empty check answers the opposite: thieves give up on victims
    /// with work and claim from empty ones.
    EmptyCheckInverted,
    /// A lifeline buddy with work clears a sleeper's registration without
    /// waking it.
    WakeDropped,
    /// A child's completion is counted twice at its parent: a join goes
    /// on before all its children are done. Termination is the
    /// scheduler's, not a step of this crate: only the simulator applies
    /// it.
    TerminationCountedTwice,
    /// A child's completion sent to its parent on another rank is lost:
    /// the parent's join never ends and the run never finishes. The
    /// scheduler's, like the one above: only the simulator applies it.
    CompletionLost,
}

#[cfg(feature = "mutations")]
thread_local! {
    static CURRENT: std::cell::Cell<Mutation> = const { std::cell::Cell::new(Mutation::None) };
}

/// Turns `m` on for this thread ([`Mutation::None`]: off).
#[cfg(feature = "mutations")]
pub fn set(m: Mutation) {
    CURRENT.with(|c| c.set(m));
}

/// The mutation this thread runs with.
#[cfg(feature = "mutations")]
pub fn current() -> Mutation {
    CURRENT.with(|c| c.get())
}

/// Whether `m` is on for this thread: always false without the feature
/// `mutations`.
#[inline(always)]
pub fn active(m: Mutation) -> bool {
    #[cfg(feature = "mutations")]
    {
        current() == m
    }
    #[cfg(not(feature = "mutations"))]
    {
        let _ = m;
        false
    }
}
