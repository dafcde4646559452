//! The orders a sort runs by ([`Order`]: natural, by a key, by a
//! comparison) with their serial kernels, and primitive integers as radix
//! keys.

use std::any::TypeId;
use std::cmp::Ordering;

use crate::Pod;

/// An order and its serial kernels.
pub(crate) trait Order<T>: Copy + Send + 'static {
    fn less(&self, a: &T, b: &T) -> bool;
    /// The three-way comparison whose `Less` is [`Order::less`]: one call
    /// tells both order and equality.
    fn cmp(&self, a: &T, b: &T) -> Ordering;
    fn sort_leaf(&self, x: &mut [T]);
    fn merge_leaf(&self, a: &[T], b: &[T], d: &mut [T]);
    /// Whether keys sort by [`Order::radix_key`] (the distribution sort's
    /// radix path).
    fn radix(&self) -> bool {
        false
    }
    /// A u64 in this order (only where [`Order::radix`]).
    fn radix_key(&self, _x: &T) -> u64 {
        unreachable!("radix_key of an order without radix keys")
    }
    /// The key whose [`Order::radix_key`] is `k`.
    fn radix_value(&self, _k: u64) -> T {
        unreachable!("radix_value of an order without radix keys")
    }
}

fn is_u64<T: 'static>() -> bool {
    TypeId::of::<T>() == TypeId::of::<u64>()
}

/// `T`'s own order (`Ord`), with the u64 kernels when `T` is `u64`.
#[derive(Clone, Copy)]
pub(crate) struct Natural;

impl<T: Pod + Ord> Order<T> for Natural {
    #[inline]
    fn less(&self, a: &T, b: &T) -> bool {
        a < b
    }
    #[inline]
    fn cmp(&self, a: &T, b: &T) -> Ordering {
        a.cmp(b)
    }
    fn sort_leaf(&self, x: &mut [T]) {
        if is_u64::<T>() {
            super::leaf::sort_leaf(bytemuck::cast_slice_mut(x))
        } else {
            x.sort_unstable()
        }
    }
    fn merge_leaf(&self, a: &[T], b: &[T], d: &mut [T]) {
        if is_u64::<T>() {
            super::merge::merge_serial(
                bytemuck::cast_slice(a),
                bytemuck::cast_slice(b),
                bytemuck::cast_slice_mut(d),
            )
        } else {
            merge_by(a, b, d, |x, y| x < y)
        }
    }
    fn radix(&self) -> bool {
        is_int::<T>()
    }
    #[inline(always)]
    fn radix_key(&self, x: &T) -> u64 {
        int_key(x)
    }
    fn radix_value(&self, k: u64) -> T {
        int_from_key(k)
    }
}

/// By a key.
#[derive(Clone, Copy)]
pub(crate) struct ByKey<K>(pub(crate) K);

impl<T: Pod, U: Ord, K: Fn(&T) -> U + Copy + Send + 'static> Order<T> for ByKey<K> {
    #[inline]
    fn less(&self, a: &T, b: &T) -> bool {
        (self.0)(a) < (self.0)(b)
    }
    #[inline]
    fn cmp(&self, a: &T, b: &T) -> Ordering {
        (self.0)(a).cmp(&(self.0)(b))
    }
    fn sort_leaf(&self, x: &mut [T]) {
        x.sort_unstable_by_key(self.0)
    }
    fn merge_leaf(&self, a: &[T], b: &[T], d: &mut [T]) {
        merge_by(a, b, d, |x, y| self.less(x, y))
    }
}

/// By a comparison.
#[derive(Clone, Copy)]
pub(crate) struct By<C>(pub(crate) C);

impl<T: Pod, C: Fn(&T, &T) -> Ordering + Copy + Send + 'static> Order<T> for By<C> {
    #[inline]
    fn less(&self, a: &T, b: &T) -> bool {
        (self.0)(a, b) == Ordering::Less
    }
    #[inline]
    fn cmp(&self, a: &T, b: &T) -> Ordering {
        (self.0)(a, b)
    }
    fn sort_leaf(&self, x: &mut [T]) {
        x.sort_unstable_by(self.0)
    }
    fn merge_leaf(&self, a: &[T], b: &[T], d: &mut [T]) {
        merge_by(a, b, d, |x, y| self.less(x, y))
    }
}

/// The serial merge of sorted `a` and `b` into `d` (ties: `a` first).
pub(crate) fn merge_by<T: Copy>(a: &[T], b: &[T], d: &mut [T], less: impl Fn(&T, &T) -> bool) {
    debug_assert_eq!(a.len() + b.len(), d.len());
    let (mut i, mut j) = (0, 0);
    for o in d.iter_mut() {
        if j >= b.len() || (i < a.len() && !less(&b[j], &a[i])) {
            *o = a[i];
            i += 1;
        } else {
            *o = b[j];
            j += 1;
        }
    }
}

// ---------------------------------------------------------------------
// Primitive integers as radix keys.

/// Whether `T` is a primitive integer of at most 64 bits (the radix path).
pub(crate) fn is_int<T: 'static>() -> bool {
    let id = TypeId::of::<T>();
    [
        TypeId::of::<u64>(),
        TypeId::of::<u32>(),
        TypeId::of::<u16>(),
        TypeId::of::<u8>(),
        TypeId::of::<usize>(),
        TypeId::of::<i64>(),
        TypeId::of::<i32>(),
        TypeId::of::<i16>(),
        TypeId::of::<i8>(),
        TypeId::of::<isize>(),
    ]
    .contains(&id)
}

/// `x` as a u64 in the same order (signed: the sign bit flipped). For the
/// types of [`is_int`]; the type tests fold away in each instance.
#[inline(always)]
pub(crate) fn int_key<T: Pod>(x: &T) -> u64 {
    macro_rules! unsigned {
        ($($t:ty),*) => {$(
            if TypeId::of::<T>() == TypeId::of::<$t>() {
                return *bytemuck::cast_ref::<T, $t>(x) as u64;
            }
        )*};
    }
    macro_rules! signed {
        ($($t:ty),*) => {$(
            if TypeId::of::<T>() == TypeId::of::<$t>() {
                return (*bytemuck::cast_ref::<T, $t>(x) as i64 as u64) ^ (1 << 63);
            }
        )*};
    }
    unsigned!(u64, u32, u16, u8, usize);
    signed!(i64, i32, i16, i8, isize);
    unreachable!("int_key of a type that is no primitive integer")
}

/// The value whose [`int_key`] is `k`.
#[inline]
pub(crate) fn int_from_key<T: Pod>(k: u64) -> T {
    macro_rules! unsigned {
        ($($t:ty),*) => {$(
            if TypeId::of::<T>() == TypeId::of::<$t>() {
                return *bytemuck::cast_ref::<$t, T>(&(k as $t));
            }
        )*};
    }
    macro_rules! signed {
        ($($t:ty),*) => {$(
            if TypeId::of::<T>() == TypeId::of::<$t>() {
                return *bytemuck::cast_ref::<$t, T>(&((k ^ (1 << 63)) as i64 as $t));
            }
        )*};
    }
    unsigned!(u64, u32, u16, u8, usize);
    signed!(i64, i32, i16, i8, isize);
    unreachable!("int_from_key of a type that is no primitive integer")
}
