//! The conduit this build was made for.

pub use uat_rules::Conduit;

/// The conduit selected by this build's cargo feature.
#[cfg(feature = "smp")]
pub const CONDUIT: Conduit = Conduit::Smp;
/// The conduit selected by this build's cargo feature.
#[cfg(feature = "udp")]
pub const CONDUIT: Conduit = Conduit::Udp;
/// The conduit selected by this build's cargo feature.
#[cfg(feature = "mpi")]
pub const CONDUIT: Conduit = Conduit::Mpi;
/// The conduit selected by this build's cargo feature.
#[cfg(feature = "ibv")]
pub const CONDUIT: Conduit = Conduit::Ibv;
