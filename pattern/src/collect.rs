//! Results whose length is not known in advance: [`GlobalVec`] (a list of
//! global chunks behind a small `Copy` handle), the concatenation monoid
//! [`Concat`], the collect reducer [`Collect`], and [`filter`] /
//! [`filter_map`] built on them.
//!
//! # GlobalVec
//!
//! A `GlobalVec<T>` is a singly linked list of chunks in global memory.
//! Each chunk is a `GlobalSlice<T>` allocated where it was made, plus a
//! small node (a `GlobalSlice` of one element) holding the chunk's handle
//! and the next node's; the *head* node also holds the list's length,
//! chunk count and last node. The handle itself is the head node's raw
//! handle (24 bytes with its `Option`): it is a join's result, so
//! concatenation is a monoid that travels up a reduction's tree as any
//! small accumulator. Every handle, the list's own and the nodes' links,
//! is kept raw and read back checked (`GlobalSlice::from_raw_checked`: a
//! live allocation of that size and generation), so a list used after
//! `free`, `into_slice` or `append` consumed it ends the job with a
//! message even where its memory was allocated again.
//!
//! Costs: [`GlobalVec::from_slice`] allocates and writes one chunk and one
//! node; [`GlobalVec::append`] reads two nodes and writes at most two
//! (constant, whatever the lengths); [`GlobalVec::into_slice`] walks the
//! list serially (one element read per chunk), then copies the chunks into
//! one new slice in parallel (one task per chunk, bounded checkouts) and
//! frees them. A reduction with [`Collect`] makes one chunk per leaf that
//! keeps an item, so `n / grain` chunks at most.
//!
//! The order is index order: a reduction combines left before right.

use std::marker::PhantomData;

use crate::bytes::alloc_like_input;
use crate::policy::{chunks, par_blocks, Policy};
use crate::reduce::{LeafItems, Monoid, Reducer};
use crate::source::{slice_part_end, IntoSource, Source};
use crate::{GlobalSlice, Pod, Zeroable};

/// A whole one-rank allocation's words, as a node stores them
/// ([`GlobalSlice::to_raw`]).
type Handle = [u64; 2];

/// A node of the list (one element of a global allocation of its own).
#[derive(Clone, Copy, Pod, Zeroable)]
#[repr(C)]
struct Node {
    /// This chunk's `GlobalSlice<T>`.
    data: Handle,
    /// The next node's `GlobalSlice<Node>` (when `has_next`).
    next: Handle,
    /// Head only: the last node.
    tail: Handle,
    has_next: u64,
    /// Head only: elements and chunks of the whole list.
    len: u64,
    chunks: u64,
}

/// `s`'s words (a whole allocation of this rank: `alloc`'s).
fn encode<X: Pod>(s: GlobalSlice<X>) -> Handle {
    s.to_raw()
}

/// The slice `encode` gave `h`, checked to be a live allocation: a list's
/// handle is `Copy`, and one used after `free`, `into_slice` or `append`
/// consumed it reads words that may since have been freed or rewritten.
fn decode<X: Pod>(h: Handle) -> GlobalSlice<X> {
    GlobalSlice::from_raw_checked(h).unwrap_or_else(|| {
        panic!(
            "GlobalVec: a list was used after free, into_slice or append consumed it (its nodes are freed or \
             reused): use only the list append returns"
        )
    })
}

/// A growable result in global memory: a list of chunks behind a `Copy`
/// handle of 24 bytes (see the module's docs for the representation and
/// costs). Build one per leaf with [`GlobalVec::from_slice`], concatenate
/// with [`GlobalVec::append`] (or reduce with [`Concat`] / [`Collect`]),
/// and flatten with [`GlobalVec::into_slice`]. A `GlobalVec` is freed by
/// `into_slice` or [`GlobalVec::free`]; appending consumes both lists
/// into one (use only the result afterwards).
pub struct GlobalVec<T> {
    /// The head node's raw handle (decoded, checked, at every use).
    head: Option<Handle>,
    _t: PhantomData<fn() -> T>,
}

impl<T> Clone for GlobalVec<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for GlobalVec<T> {}

impl<T> std::fmt::Debug for GlobalVec<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GlobalVec").field("head", &self.head).finish()
    }
}

impl<T: Pod> Default for GlobalVec<T> {
    fn default() -> Self {
        GlobalVec::new()
    }
}

impl<T: Pod> GlobalVec<T> {
    /// The empty list (allocates nothing).
    pub const fn new() -> Self {
        GlobalVec {
            head: None,
            _t: PhantomData,
        }
    }

    /// A list of one chunk holding a copy of `items`, allocated on this
    /// task's rank (written in checkouts of at most the default checkout
    /// bound). Empty `items` make the empty list.
    pub fn from_slice(items: &[T]) -> Self {
        if items.is_empty() {
            return GlobalVec::new();
        }
        let data = GlobalSlice::<T>::alloc(items.len());
        let max = Policy::default().chunk_items(std::mem::size_of::<T>());
        for (k, part) in items.chunks(max).enumerate() {
            data.slice(k * max..k * max + part.len()).copy_from_slice(part);
        }
        let node = GlobalSlice::<Node>::alloc(1);
        node.set(
            0,
            Node {
                data: encode(data),
                next: [0; 2],
                tail: encode(node),
                has_next: 0,
                len: items.len() as u64,
                chunks: 1,
            },
        );
        GlobalVec {
            head: Some(encode(node)),
            _t: PhantomData,
        }
    }

    /// The head node, checked live (a list used after it was consumed ends
    /// the job, see `decode`).
    fn head_node(&self) -> Option<GlobalSlice<Node>> {
        self.head.map(decode::<Node>)
    }

    /// Elements in the list (reads the head node).
    pub fn len(&self) -> usize {
        self.head_node().map_or(0, |h| h.get(0).len as usize)
    }

    /// Whether the list is empty.
    pub fn is_empty(&self) -> bool {
        self.head.is_none()
    }

    /// Chunks in the list.
    pub fn chunks(&self) -> usize {
        self.head_node().map_or(0, |h| h.get(0).chunks as usize)
    }

    /// This list followed by `other`, in constant time: links `other`'s
    /// head after this list's last node. Both handles are consumed.
    pub fn append(self, other: GlobalVec<T>) -> GlobalVec<T> {
        let (Some(h), Some(o)) = (self.head_node(), other.head_node()) else {
            return if self.head.is_some() { self } else { other };
        };
        let mut head = h.get(0);
        let theirs = o.get(0);
        assert!(
            encode(h) != encode(o),
            "GlobalVec::append of a list to itself (append consumes both lists)"
        );
        if head.tail == encode(h) {
            head.next = encode(o);
            head.has_next = 1;
        } else {
            let tail = decode::<Node>(head.tail);
            let mut last = tail.get(0);
            last.next = encode(o);
            last.has_next = 1;
            tail.set(0, last);
        }
        head.tail = theirs.tail;
        head.len += theirs.len;
        head.chunks += theirs.chunks;
        h.set(0, head);
        self
    }

    /// The chunks in order (node, data): a serial walk.
    fn walk(&self, mut f: impl FnMut(GlobalSlice<Node>, GlobalSlice<T>)) {
        let mut at = self.head_node();
        while let Some(n) = at {
            let node = n.get(0);
            let data = decode::<T>(node.data);
            at = (node.has_next != 0).then(|| decode::<Node>(node.next));
            f(n, data);
        }
    }

    /// Frees every chunk and node.
    pub fn free(self) {
        self.walk(|n, d| {
            d.free();
            n.free();
        })
    }

    /// The elements, in order, in one new slice (distributed when the job
    /// has several ranks); the list is freed. See the module's docs for
    /// the cost.
    pub fn into_slice(self) -> GlobalSlice<T> {
        Policy::new().into_slice(self)
    }
}

impl Policy {
    /// [`GlobalVec::into_slice`] under this policy (its checkout bound; one
    /// task per chunk).
    pub fn into_slice<T: Pod>(self, v: GlobalVec<T>) -> GlobalSlice<T> {
        let policy = self;
        let out = alloc_like_input::<T>(v.len());
        let mut table: Vec<[u64; 3]> = Vec::with_capacity(v.chunks());
        let mut at = 0u64;
        v.walk(|n, d| {
            let e = encode(d);
            table.push([e[0], e[1], at]);
            at += d.len() as u64;
            n.free();
        });
        if table.is_empty() {
            return out;
        }
        let t = GlobalSlice::<[u64; 3]>::alloc(table.len());
        let max = policy.chunk_items(24);
        for (k, part) in table.chunks(max).enumerate() {
            t.slice(k * max..k * max + part.len()).copy_from_slice(part);
        }
        // Process-local memory must not live across the spawns below (the
        // task may continue on another rank).
        let entries = table.len();
        drop(table);
        let size = std::mem::size_of::<T>();
        let step = policy.chunk_items(2 * size);
        par_blocks(policy.with_grain(1), entries, move |k, _, _| {
            let e = t.get(k);
            let data = decode::<T>([e[0], e[1]]);
            let dst = out.slice(e[2] as usize..e[2] as usize + data.len());
            chunks(
                0,
                data.len(),
                step,
                |a, b| slice_part_end(&dst, a, slice_part_end(&data, a, b)),
                |a, b| {
                    data.slice(a..b)
                        .read(|x| dst.slice(a..b).write(|d| d.copy_from_slice(x)))
                },
            );
            data.free();
        });
        t.free();
        out
    }
}

/// The concatenation monoid on [`GlobalVec`]; as a reducer of `T` it
/// gathers a leaf's items into one chunk.
pub struct Concat<T>(PhantomData<fn() -> T>);

impl<T> Concat<T> {
    /// The monoid.
    pub const fn new() -> Self {
        Concat(PhantomData)
    }
}

impl<T> Default for Concat<T> {
    fn default() -> Self {
        Concat::new()
    }
}

impl<T> Clone for Concat<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Concat<T> {}

impl<T: Pod> Monoid for Concat<T> {
    type Acc = GlobalVec<T>;
    fn identity(&self) -> GlobalVec<T> {
        GlobalVec::new()
    }
    fn combine(&self, a: GlobalVec<T>, b: GlobalVec<T>) -> GlobalVec<T> {
        a.append(b)
    }
}

impl<T: Pod> Reducer<T> for Concat<T> {
    fn fold(&self, acc: &mut GlobalVec<T>, x: T) {
        *acc = acc.append(GlobalVec::from_slice(&[x]))
    }
    fn fold_leaf<I: LeafItems<T>>(&self, items: I) -> GlobalVec<T> {
        let mut buf = Vec::with_capacity(items.len());
        items.for_each(|x| buf.push(x));
        GlobalVec::from_slice(&buf)
    }
}

/// The collect reducer: keeps `f(item)` where it is `Some`, in index
/// order, in a [`GlobalVec`] (one chunk per leaf that keeps something):
/// `reduce(a, Collect::new(|x: u64| (x % 3 == 0).then_some(x)))`.
pub struct Collect<U, F> {
    f: F,
    _u: PhantomData<fn() -> U>,
}

impl<U, F: Copy> Clone for Collect<U, F> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<U, F: Copy> Copy for Collect<U, F> {}

impl<U, F> Collect<U, F> {
    /// Collects `f(item)` where it is `Some`.
    pub const fn new(f: F) -> Self {
        Collect { f, _u: PhantomData }
    }
}

impl<U: Pod, F: Copy + Send + 'static> Monoid for Collect<U, F> {
    type Acc = GlobalVec<U>;
    fn identity(&self) -> GlobalVec<U> {
        GlobalVec::new()
    }
    fn combine(&self, a: GlobalVec<U>, b: GlobalVec<U>) -> GlobalVec<U> {
        a.append(b)
    }
}

impl<In, U: Pod, F: Fn(In) -> Option<U> + Copy + Send + 'static> Reducer<In> for Collect<U, F> {
    fn fold(&self, acc: &mut GlobalVec<U>, x: In) {
        if let Some(y) = (self.f)(x) {
            *acc = acc.append(GlobalVec::from_slice(&[y]))
        }
    }
    fn fold_leaf<I: LeafItems<In>>(&self, items: I) -> GlobalVec<U> {
        let mut buf = Vec::new();
        let f = self.f;
        items.for_each(|x| {
            if let Some(y) = f(x) {
                buf.push(y)
            }
        });
        GlobalVec::from_slice(&buf)
    }
}

/// The elements of `s` for which `pred` is true, in order, in a new slice
/// (distributed when the job has several ranks; free it when done).
pub fn filter<T: Pod, P>(s: GlobalSlice<T>, pred: P) -> GlobalSlice<T>
where
    P: Fn(&T) -> bool + Copy + Send + 'static,
{
    Policy::new().filter(s, pred)
}

/// `f(item)` for every item of `src` (one slice or a zip) where it is
/// `Some`, in order, in a new slice: `filter_map((a, b), |(x, y)| (x >
/// y).then_some(x - y))`.
///
/// Two passes over `src`, as a parallel filter into one array must make:
/// each leaf counts what it keeps, the counts' exclusive scan places every
/// leaf's items, and each leaf writes them at their place. `f` is called
/// twice per item and must answer the same both times (a pure function:
/// a leaf that keeps a different number of items the second time ends the
/// job with a message naming `filter_map`, before it writes out of its
/// place; an `f` that only changes which items it keeps goes unseen). The
/// output is allocated once, at its exact length; nothing else is. (The
/// [`Collect`] reducer gathers in one pass into a [`GlobalVec`] instead,
/// for sources that are not slices, such as a tree's nodes.)
pub fn filter_map<S, U, F>(src: S, f: F) -> GlobalSlice<U>
where
    S: IntoSource,
    U: Pod,
    F: Fn(S::Item) -> Option<U> + Copy + Send + 'static,
{
    Policy::new().filter_map(src, f)
}

impl Policy {
    /// [`filter`] under this policy.
    pub fn filter<T: Pod, P>(self, s: GlobalSlice<T>, pred: P) -> GlobalSlice<T>
    where
        P: Fn(&T) -> bool + Copy + Send + 'static,
    {
        self.filter_map(s, move |x: T| pred(&x).then_some(x))
    }

    /// [`filter_map`] under this policy.
    pub fn filter_map<S, U, F>(self, src: S, f: F) -> GlobalSlice<U>
    where
        S: IntoSource,
        U: Pod,
        F: Fn(S::Item) -> Option<U> + Copy + Send + 'static,
    {
        let src = src.into_source();
        let n = src.length("filter_map");
        let blocks = self.blocks(n);
        // Small (a word per leaf), and freed while the output lives: on this
        // rank, where the free list reclaims it (the symmetric zone would keep
        // it until every distributed allocation is freed).
        let counts = GlobalSlice::<u64>::alloc(blocks);
        let max = self.chunk_items(S::Source::item_bytes());
        // 1. How many items each leaf keeps.
        par_blocks(self, n, move |k, lo, hi| {
            let mut kept = 0u64;
            chunks(
                lo,
                hi,
                max,
                |a, b| src.part_end(a, b),
                |a, b| {
                    kept = src.sub(a, b).read(|c| {
                        let mut t = kept;
                        S::Source::items(c, |x| t += u64::from(f(x).is_some()));
                        t
                    })
                },
            );
            counts.set(k, kept);
        });
        // 2. Where each leaf's items start (a serial exclusive scan of the
        // counts, in bounded checkouts), and the output, of exactly that length.
        let mut total = 0u64;
        let per = self.chunk_items(8);
        chunks(
            0,
            blocks,
            per,
            |a, b| slice_part_end(&counts, a, b),
            |a, b| {
                counts.slice(a..b).update(|c| {
                    for e in c {
                        let kept = *e;
                        *e = total;
                        total += kept;
                    }
                })
            },
        );
        let out = alloc_like_input::<U>(total as usize);
        // 3. Each leaf again: its kept items, a checkout's worth at a time
        // through a buffer (process-local, and alive only inside the leaf, which
        // neither spawns nor joins), written at its offset.
        let size = std::mem::size_of::<U>();
        let out_max = self.chunk_items(size);
        par_blocks(self, n, move |k, lo, hi| {
            let mut at = counts.get(k) as usize;
            // Where the next leaf's items start: this leaf keeps exactly what it
            // counted, or it would write into the next leaf's place while that
            // leaf runs.
            let end = if k + 1 < blocks { counts.get(k + 1) } else { total } as usize;
            let changed = || -> ! {
                panic!("filter_map: f answered differently for the same item on its two calls (it must be a pure function)")
            };
            let mut buf: Vec<U> = Vec::with_capacity(max.min(hi - lo));
            chunks(
                lo,
                hi,
                max,
                |a, b| src.part_end(a, b),
                |a, b| {
                    buf.clear();
                    src.sub(a, b).read(|c| {
                        S::Source::items(c, |x| {
                            if let Some(y) = f(x) {
                                buf.push(y)
                            }
                        })
                    });
                    if at + buf.len() > end {
                        changed()
                    }
                    let dst = out.slice(at..at + buf.len());
                    chunks(
                        0,
                        buf.len(),
                        out_max,
                        |a, b| slice_part_end(&dst, a, b),
                        |a, b| dst.slice(a..b).write(|d| d.copy_from_slice(&buf[a..b])),
                    );
                    at += buf.len();
                },
            );
            if at != end {
                changed()
            }
        });
        counts.free();
        out
    }
}
