//! The UTS tree shared by `uts` and `uts-mem` (included by both as a
//! module): its parameters, the SHA-1 node generation of the
//! specification (shared/reference/UTS.md), the number of children, and
//! the plain count of a tree (nodes, leaves, depth) generic over who runs
//! the children.

use uat_bench::Fork;

#[path = "uts_nodes.rs"]
mod uts_nodes;
pub(crate) use uts_nodes::*;

/// Nodes, leaves and the deepest height seen in a subtree.
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
pub(crate) struct Counts {
    pub(crate) nodes: u64,
    pub(crate) leaves: u64,
    pub(crate) depth: u64,
}

impl Counts {
    pub(crate) fn add(self, o: Counts) -> Counts {
        Counts {
            nodes: self.nodes + o.nodes,
            leaves: self.leaves + o.leaves,
            depth: self.depth.max(o.depth),
        }
    }
}

/// Visits `node` and its subtree.
pub(crate) fn visit<F: Fork>(t: Tree, node: Node) -> Counts {
    let n = t.children(&node);
    if n == 0 {
        return Counts {
            nodes: 1,
            leaves: 1,
            depth: node.height as u64,
        };
    }
    let below = visit_children::<F>(t, node, 0, n);
    Counts {
        nodes: below.nodes + 1,
        leaves: below.leaves,
        depth: below.depth.max(node.height as u64),
    }
}

/// Visits children `lo..hi` of `parent`, splitting the range in halves.
pub(crate) fn visit_children<F: Fork>(t: Tree, parent: Node, lo: u32, hi: u32) -> Counts {
    if hi - lo == 1 {
        return visit::<F>(t, child(&parent, lo));
    }
    let mid = lo + (hi - lo) / 2;
    let (a, b) = F::join(
        move || visit_children::<F>(t, parent, lo, mid),
        move || visit_children::<F>(t, parent, mid, hi),
    );
    a.add(b)
}
