//! Another rank's sleep word (`crate::arena::SLEEP_WORD`, the states of
//! [`am_fad::sleep`]): whether it sleeps, and making it poll or wake. The
//! lifelines put a rank to sleep (`crate::lifeline`); a message's sender
//! has a sleeping target serve it (future cells, the layer above, the
//! lifelines' own messages).

use am_fad::sleep::{self, Wake};

use crate::arena::SLEEP_WORD;

/// Whether `rank` sleeps, where one load tells (shared memory).
#[inline]
pub(crate) fn sleeping(gasnet: gasnet_sys::Gasnet, rank: u32) -> bool {
    sleep::is_sleeping(gasnet, rank, SLEEP_WORD.segment_offset()) == Some(true)
}

/// Has `rank` poll once for a message just sent to it, if it sleeps in
/// shared memory with this rank (across the network it polls on its own
/// schedule).
#[inline]
pub(crate) fn serve(gasnet: gasnet_sys::Gasnet, rank: u32) {
    sleep::wake(gasnet, rank, SLEEP_WORD.segment_offset(), Wake::Service);
}

/// Wakes `rank` for work, if it sleeps in shared memory with this rank
/// (across the network it polls and sees for itself: the end of a run).
pub(crate) fn wake(gasnet: gasnet_sys::Gasnet, rank: u32) {
    sleep::wake(gasnet, rank, SLEEP_WORD.segment_offset(), Wake::Work);
}
