//! [`Active`]: a checkout in progress on this thread, as the registry
//! (`state`) and the cache (`cache`) both see it.

/// An active checkout: `[lo, hi)` of `rank`'s heap (arena addresses).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Active {
    pub rank: u32,
    pub lo: usize,
    pub hi: usize,
    pub write: bool,
}
