//! Moving a value of any `Copy + Send + 'static` type between tasks: in a
//! join's result when it fits (48 bytes, the task model's limit), else
//! through a slot of global memory.
//!
//! Both are what the runtime itself does with a task's result — copy its
//! bytes, possibly to another rank — so they ask of the type exactly what
//! a task's result must be: plain data whose bytes mean the same value in
//! every process of the job (no pointers to process-local memory).

use std::mem::{align_of, size_of, MaybeUninit};

use crate::GlobalSlice;

/// Bytes a join result may hold.
const CARRIER: usize = 48;

/// A value of at most 48 bytes (alignment at most 16) as a join result.
#[derive(Clone, Copy)]
#[repr(C, align(16))]
pub(crate) struct Carrier([MaybeUninit<u8>; CARRIER]);

impl Carrier {
    /// An empty carrier (the value went through a slot).
    pub(crate) const EMPTY: Carrier = Carrier([MaybeUninit::uninit(); CARRIER]);

    /// `a`'s bytes (`fits::<A>()`).
    pub(crate) fn pack<A: Copy>(a: A) -> Carrier {
        assert!(fits::<A>());
        let mut c = Carrier::EMPTY;
        // SAFETY: A fits the 48 bytes and their alignment (16).
        unsafe { c.0.as_mut_ptr().cast::<A>().write(a) };
        c
    }

    /// The value [`Carrier::pack`] packed.
    ///
    /// # Safety
    /// This carrier was packed from an `A`.
    pub(crate) unsafe fn unpack<A: Copy>(&self) -> A {
        // SAFETY: the caller's contract: these are an A's bytes, aligned.
        unsafe { self.0.as_ptr().cast::<A>().read() }
    }
}

/// Whether an `A` travels in a join's result.
pub(crate) const fn fits<A>() -> bool {
    size_of::<A>() <= CARRIER && align_of::<A>() <= 16
}

/// Words of global memory a slot for an `A` takes.
pub(crate) const fn slot_words<A>() -> usize {
    let w = size_of::<A>().div_ceil(8);
    if w == 0 {
        1
    } else {
        w
    }
}

/// Stores `a` in slot `k` of `slots`.
pub(crate) fn store<A: Copy>(slots: GlobalSlice<u64>, k: usize, a: A) {
    let w = slot_words::<A>();
    slots.slice(k * w..(k + 1) * w).write(|words| {
        // SAFETY: the slot holds size_of::<A>() bytes; an unaligned write
        // (words are 8-aligned, A may want 16). The bytes are only ever
        // copied back as bytes by `load`.
        unsafe { words.as_mut_ptr().cast::<A>().write_unaligned(a) }
    })
}

/// The value [`store`] left in slot `k`.
///
/// # Safety
/// Slot `k` holds an `A` stored by [`store`].
pub(crate) unsafe fn load<A: Copy>(slots: GlobalSlice<u64>, k: usize) -> A {
    let w = slot_words::<A>();
    slots
        .slice(k * w..(k + 1) * w)
        // SAFETY: the caller's contract; unaligned as in `store`.
        .read(|words| unsafe { words.as_ptr().cast::<A>().read_unaligned() })
}

/// Scratch for `n` slots of `A` (none when `A` fits a join's result):
/// distributed over the ranks when there are several.
pub(crate) fn slots_for<A>(n: usize) -> Option<GlobalSlice<u64>> {
    (!fits::<A>()).then(|| alloc_like_input(n * slot_words::<A>()))
}

/// `n` zeroed elements: block-distributed when the job has several ranks
/// (so scratch spreads like a distributed input), else here.
pub(crate) fn alloc_like_input<T: crate::Pod>(n: usize) -> GlobalSlice<T> {
    if uni_threads::ranks() > 1 {
        GlobalSlice::alloc_distributed(n)
    } else {
        GlobalSlice::alloc(n)
    }
}

#[cfg(test)]
mod tests {
    use super::{fits, slot_words, Carrier};

    #[test]
    fn small_values_round_trip_through_a_carrier() {
        let v = (1u64, Some(7u32), [3u8; 5]);
        // SAFETY: packed from this type.
        assert_eq!(unsafe { Carrier::pack(v).unpack::<(u64, Option<u32>, [u8; 5])>() }, v);
        let w = [9u128; 3];
        // SAFETY: as above.
        assert_eq!(unsafe { Carrier::pack(w).unpack::<[u128; 3]>() }, w);
        assert!(fits::<[u64; 6]>() && !fits::<[u64; 7]>());
        assert_eq!(
            (slot_words::<u8>(), slot_words::<[u64; 7]>(), slot_words::<()>()),
            (1, 7, 1)
        );
    }
}
