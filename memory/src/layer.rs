//! Global memory as the scheduler's layer ([`uni_threads::layer`]): what
//! it registers at start and what it does at each ordering point.

use std::any::Any;

use uni_threads::layer::{Acquire, FuzzDraw, FuzzRequest, Here, Layer, Release};
use uni_threads::settings::Settings;

use crate::config::Config;
use crate::heap;
use crate::net::net;
use crate::state::{mem, Memory};

/// Global memory as a layer above the scheduler, with its settings: the
/// layer the runtime calls at its ordering points (`uat::Runtime::start`
/// makes one and passes it to `uni_threads::Runtime::start_with_layer`).
pub struct GlobalMemory {
    config: Config,
}

impl GlobalMemory {
    /// The layer with the settings `config` (the scheduler validates them
    /// at start).
    pub fn new(config: Config) -> GlobalMemory {
        GlobalMemory { config }
    }
}

impl Layer for GlobalMemory {
    fn handlers(&self) -> Vec<gasnet_sys::am::Handler> {
        heap::handlers().into()
    }

    fn settings(&self) -> Option<&dyn Settings> {
        Some(&self.config)
    }

    fn zone_bytes(&self) -> usize {
        self.config.global_heap
    }

    fn attach(&self, w: Here) -> Box<dyn Any> {
        let g = *net(w);
        let (heap_lo, heap_size) = w.zone();
        let atomics = am_fad::GlobalAtomics::new(g);
        // SAFETY: the zone is mapped at heap_lo for the rest of the process
        // (the arena is never unmapped), is this rank's segment range
        // [lo, hi), and its atomic words are only accessed atomically
        // (Memory's rule: headers and the symmetric control word).
        unsafe {
            atomics.init(
                w.remote(w.rank(), heap_lo),
                w.remote(w.rank(), heap_lo + heap_size),
                heap_lo,
            )
        };
        // One heap per process, for the rest of it: the GLOBAL_FREE handler
        // reaches it from then on.
        let local: &'static heap::LocalHeap =
            Box::leak(Box::new(heap::LocalHeap::new(heap::Zones::new(heap_lo, heap_size))));
        local.publish();
        let heap = heap::Heap {
            atomics,
            local,
            setting: self.config.global_heap,
        };
        let memory = Memory::new(heap, &self.config, heap_lo, heap_size, w.ranks());
        Box::new(memory)
    }

    fn release(&self, w: Here, at: Release) {
        let m = mem(w);
        match at {
            Release::Spawn => m.at_attention(w, true),
            Release::Poll => m.at_attention(w, false),
            Release::TaskEnd | Release::Collective => m.release(w),
        }
    }

    fn acquire(&self, w: Here, at: Acquire) {
        let m = mem(w);
        match at {
            Acquire::Join => {
                m.refuse_join_in_checkout();
                m.acquire(w)
            }
            Acquire::Steal | Acquire::RunStart => m.acquire(w),
            Acquire::Collective => m.acquire_point(w),
            Acquire::RunEnd => m.end_of_run(w),
        }
    }

    fn before_suspend(&self, w: Here) {
        mem(w).before_wait();
    }

    fn fuzz(&self, w: Here, target: u32, count: u32, draw: &mut dyn FuzzDraw, request: &mut FuzzRequest) {
        mem(w).heap.fuzz(w, target, count, draw, request);
    }
}
