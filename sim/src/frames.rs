//! Frames of the simulated tasks and the segments deque entries name: a
//! spawn parks the running thread's frames from its last spawned frame up
//! as a segment, whose index (plus one) is the entry's `ctx`; a thief that
//! claims the entry takes the segment.

use crate::workload::Step;

/// A frame: a task in progress.
#[derive(Clone)]
pub(crate) struct Frame {
    /// What the task does after its own work.
    pub(crate) step: Step,
    /// 0: before its first child; then one per child started.
    pub(crate) phase: u8,
    pub(crate) parent: Option<usize>,
    /// Children not yet done.
    pub(crate) pending: u32,
    /// The rank its segment is on now.
    pub(crate) rank: u32,
    /// A join found children pending: the segment waits.
    pub(crate) waiting: bool,
    /// This frame is a spawned child (its parent's continuation was pushed
    /// just before it started), not an inline call.
    pub(crate) spawned: bool,
    /// The segment this frame waits with (while waiting).
    pub(crate) segment: Vec<usize>,
}

impl Frame {
    /// A frame on `rank` about to start its task (its step is set when it
    /// starts), a child of `parent` (None: the root), `spawned` or called
    /// inline.
    pub(crate) fn new(parent: Option<usize>, rank: u32, spawned: bool) -> Frame {
        Frame {
            step: Step::Leaf,
            phase: 0,
            parent,
            pending: 0,
            rank,
            waiting: false,
            spawned,
            segment: Vec::new(),
        }
    }
}

/// Every frame of the job (frames move between ranks with their segment).
#[derive(Default)]
pub(crate) struct Frames {
    pub(crate) slab: Vec<Option<Frame>>,
    free: Vec<usize>,
    /// Segments named by deque entries (`ctx - 1`).
    pub(crate) segments: Vec<Option<Vec<usize>>>,
    free_segments: Vec<usize>,
}

impl Frames {
    pub(crate) fn add(&mut self, f: Frame) -> usize {
        match self.free.pop() {
            Some(i) => {
                self.slab[i] = Some(f);
                i
            }
            None => {
                self.slab.push(Some(f));
                self.slab.len() - 1
            }
        }
    }

    pub(crate) fn get(&mut self, i: usize) -> &mut Frame {
        self.slab[i].as_mut().expect("a live frame")
    }

    pub(crate) fn remove(&mut self, i: usize) -> Frame {
        let f = self.slab[i].take().expect("a live frame");
        self.free.push(i);
        f
    }

    pub(crate) fn park_segment(&mut self, s: Vec<usize>) -> u64 {
        let i = match self.free_segments.pop() {
            Some(i) => {
                self.segments[i] = Some(s);
                i
            }
            None => {
                self.segments.push(Some(s));
                self.segments.len() - 1
            }
        };
        i as u64 + 1
    }

    /// The segment entry `ctx` names, taken: `None` when it was taken
    /// already (an entry handed out twice).
    pub(crate) fn take_segment(&mut self, ctx: u64) -> Option<Vec<usize>> {
        let i = (ctx as usize).checked_sub(1)?;
        let s = self.segments.get_mut(i)?.take()?;
        self.free_segments.push(i);
        Some(s)
    }
}
