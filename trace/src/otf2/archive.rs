//! A safe writer over OTF2's C API ([`super::sys`]): an [`Archive`] written
//! serially by one thread, its per-location [`EvtWriter`]s (one at a time)
//! and its [`GlobalDefs`]. Every call's error code becomes an `Err` naming
//! the call and OTF2's description of the error.

use std::ffi::{CStr, CString};
use std::marker::PhantomData;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::ptr::{null_mut, NonNull};

use super::sys;

/// Bytes of a chunk of events, and of definitions.
const EVENT_CHUNK: u64 = 1 << 20;
const DEF_CHUNK: u64 = 4 << 20;

fn check(code: sys::OTF2_ErrorCode, what: &str) -> Result<(), String> {
    if code == sys::OTF2_SUCCESS {
        return Ok(());
    }
    // SAFETY: OTF2_Error_GetName and OTF2_Error_GetDescription accept any
    // code and return static NUL-terminated strings (never null: unknown
    // codes get a generic text), which we only read.
    let (name, description) = unsafe {
        (
            CStr::from_ptr(sys::OTF2_Error_GetName(code)).to_string_lossy(),
            CStr::from_ptr(sys::OTF2_Error_GetDescription(code)).to_string_lossy(),
        )
    };
    Err(format!("OTF2: {what}: {name}: {description}"))
}

fn c_string(s: &str, what: &str) -> Result<CString, String> {
    CString::new(s).map_err(|_| format!("OTF2: {what}: {s:?} holds a NUL byte"))
}

/// Every buffer is flushed to its file when full or closed.
extern "C" fn pre_flush(
    _user: *mut std::ffi::c_void,
    _file: sys::OTF2_FileType,
    _location: sys::OTF2_LocationRef,
    _caller: *mut std::ffi::c_void,
    _final: bool,
) -> sys::OTF2_FlushType {
    sys::OTF2_FLUSH as sys::OTF2_FlushType
}

/// The flush callbacks, in a static: OTF2 may keep the pointer. No
/// post-flush callback, so no BufferFlush records.
static FLUSH: sys::OTF2_FlushCallbacks = sys::OTF2_FlushCallbacks {
    otf2_pre_flush: Some(pre_flush),
    otf2_post_flush: None,
};

/// An archive open for writing: `DIR/NAME.otf2` (the anchor file),
/// `DIR/NAME.def` and `DIR/NAME/` (one event and one definition file per
/// location). Closed when dropped, if [`Archive::close`] was not called.
pub(super) struct Archive {
    raw: NonNull<sys::OTF2_Archive>,
}

impl Archive {
    /// Creates the archive `name` in `dir` (which must not hold one: OTF2
    /// refuses to overwrite), written serially by this process.
    pub(super) fn create(dir: &Path, name: &str, creator: &str, description: &str) -> Result<Archive, String> {
        let path = CString::new(dir.as_os_str().as_bytes())
            .map_err(|_| format!("OTF2: {} holds a NUL byte", dir.display()))?;
        let c_name = c_string(name, "the archive's name")?;
        // SAFETY: both strings are NUL-terminated and outlive the call (OTF2
        // copies them); the mode, substrate and compression are the
        // library's own constants.
        let raw = unsafe {
            sys::OTF2_Archive_Open(
                path.as_ptr(),
                c_name.as_ptr(),
                sys::OTF2_FILEMODE_WRITE as sys::OTF2_FileMode,
                EVENT_CHUNK,
                DEF_CHUNK,
                sys::OTF2_SUBSTRATE_POSIX as sys::OTF2_FileSubstrate,
                sys::OTF2_COMPRESSION_NONE as sys::OTF2_Compression,
            )
        };
        let raw = NonNull::new(raw)
            .ok_or_else(|| format!("OTF2: cannot create the archive {name:?} in {}", dir.display()))?;
        let archive = Archive { raw };
        check(
            // SAFETY: the archive is open; FLUSH is a static (it outlives the
            // archive) whose callback ignores its arguments, and the user data
            // pointer is never read.
            unsafe { sys::OTF2_Archive_SetFlushCallbacks(archive.raw.as_ptr(), &FLUSH, null_mut()) },
            "setting the flush callbacks",
        )?;
        check(
            // SAFETY: the archive is open; one process writes it.
            unsafe { sys::OTF2_Archive_SetSerialCollectiveCallbacks(archive.raw.as_ptr()) },
            "setting serial collectives",
        )?;
        let creator = c_string(creator, "the creator")?;
        check(
            // SAFETY: the archive is open; OTF2 copies the string.
            unsafe { sys::OTF2_Archive_SetCreator(archive.raw.as_ptr(), creator.as_ptr()) },
            "setting the creator",
        )?;
        let description = c_string(description, "the description")?;
        check(
            // SAFETY: as above.
            unsafe { sys::OTF2_Archive_SetDescription(archive.raw.as_ptr(), description.as_ptr()) },
            "setting the description",
        )?;
        Ok(archive)
    }

    /// Opens the event files; then [`Archive::events`] per location.
    pub(super) fn open_events(&mut self) -> Result<(), String> {
        check(
            // SAFETY: the archive is open, in writing mode.
            unsafe { sys::OTF2_Archive_OpenEvtFiles(self.raw.as_ptr()) },
            "opening the event files",
        )
    }

    /// Closes the event files, after every [`EvtWriter`] is closed.
    pub(super) fn close_events(&mut self) -> Result<(), String> {
        check(
            // SAFETY: the archive is open; no event writer is (each borrowed the
            // archive mutably and is gone).
            unsafe { sys::OTF2_Archive_CloseEvtFiles(self.raw.as_ptr()) },
            "closing the event files",
        )
    }

    /// The event writer of `location`.
    pub(super) fn events(&mut self, location: u64) -> Result<EvtWriter<'_>, String> {
        // SAFETY: the archive is open with its event files.
        let raw = unsafe { sys::OTF2_Archive_GetEvtWriter(self.raw.as_ptr(), location) };
        let raw = NonNull::new(raw).ok_or_else(|| format!("OTF2: no event writer for location {location}"))?;
        Ok(EvtWriter {
            archive: self,
            raw: Some(raw),
            last: 0,
        })
    }

    /// Writes every location's (empty) local definition file, which
    /// readers expect next to its events.
    pub(super) fn local_defs(&mut self, locations: impl Iterator<Item = u64>) -> Result<(), String> {
        check(
            // SAFETY: the archive is open, its event files closed.
            unsafe { sys::OTF2_Archive_OpenDefFiles(self.raw.as_ptr()) },
            "opening the definition files",
        )?;
        for location in locations {
            // SAFETY: the definition files are open.
            let writer = unsafe { sys::OTF2_Archive_GetDefWriter(self.raw.as_ptr(), location) };
            if writer.is_null() {
                return Err(format!("OTF2: no definition writer for location {location}"));
            }
            check(
                // SAFETY: `writer` was just returned for this archive and is
                // closed once.
                unsafe { sys::OTF2_Archive_CloseDefWriter(self.raw.as_ptr(), writer) },
                "closing a definition writer",
            )?;
        }
        check(
            // SAFETY: the definition files are open, every writer closed.
            unsafe { sys::OTF2_Archive_CloseDefFiles(self.raw.as_ptr()) },
            "closing the definition files",
        )
    }

    /// The global definition writer (closed with the archive).
    pub(super) fn global_defs(&mut self) -> Result<GlobalDefs<'_>, String> {
        // SAFETY: the archive is open and primary (serial collectives).
        let raw = unsafe { sys::OTF2_Archive_GetGlobalDefWriter(self.raw.as_ptr()) };
        let raw = NonNull::new(raw).ok_or("OTF2: no global definition writer")?;
        Ok(GlobalDefs {
            raw,
            _archive: PhantomData,
        })
    }

    /// Closes the archive, writing the anchor file and the global
    /// definitions.
    pub(super) fn close(self) -> Result<(), String> {
        let raw = self.raw;
        std::mem::forget(self);
        // SAFETY: the archive is open and closed once (`self` is forgotten,
        // so Drop does not close it again); its writers are closed or
        // belong to it.
        check(unsafe { sys::OTF2_Archive_Close(raw.as_ptr()) }, "closing the archive")
    }
}

impl Drop for Archive {
    fn drop(&mut self) {
        // SAFETY: the archive is open (close() forgets it) and closed once.
        unsafe {
            sys::OTF2_Archive_Close(self.raw.as_ptr());
        }
    }
}

/// One location's events, written in time order.
pub(super) struct EvtWriter<'a> {
    archive: &'a mut Archive,
    raw: Option<NonNull<sys::OTF2_EvtWriter>>,
    last: u64,
}

impl EvtWriter<'_> {
    fn writer(&mut self, time: u64) -> Result<*mut sys::OTF2_EvtWriter, String> {
        if time < self.last {
            return Err(format!(
                "OTF2: an event at {time} after one at {}: events must be in time order",
                self.last
            ));
        }
        self.last = time;
        Ok(self.raw.expect("open until closed").as_ptr())
    }

    /// Enters `region` at `time`.
    pub(super) fn enter(&mut self, time: u64, region: u32) -> Result<(), String> {
        let w = self.writer(time)?;
        check(
            // SAFETY: `w` is this archive's open event writer; no attributes.
            unsafe { sys::OTF2_EvtWriter_Enter(w, null_mut(), time, region) },
            "an Enter event",
        )
    }

    /// Leaves `region` at `time`.
    pub(super) fn leave(&mut self, time: u64, region: u32) -> Result<(), String> {
        let w = self.writer(time)?;
        check(
            // SAFETY: as in enter.
            unsafe { sys::OTF2_EvtWriter_Leave(w, null_mut(), time, region) },
            "a Leave event",
        )
    }

    /// Sends a message to `receiver` (a rank of `comm`'s group).
    pub(super) fn send(&mut self, time: u64, receiver: u32, comm: u32, tag: u32, bytes: u64) -> Result<(), String> {
        let w = self.writer(time)?;
        check(
            // SAFETY: as in enter.
            unsafe { sys::OTF2_EvtWriter_MpiSend(w, null_mut(), time, receiver, comm, tag, bytes) },
            "an MpiSend event",
        )
    }

    /// Receives a message from `sender` (a rank of `comm`'s group).
    pub(super) fn recv(&mut self, time: u64, sender: u32, comm: u32, tag: u32, bytes: u64) -> Result<(), String> {
        let w = self.writer(time)?;
        check(
            // SAFETY: as in enter.
            unsafe { sys::OTF2_EvtWriter_MpiRecv(w, null_mut(), time, sender, comm, tag, bytes) },
            "an MpiRecv event",
        )
    }

    /// Closes the writer, flushing its events.
    pub(super) fn close(mut self) -> Result<(), String> {
        let raw = self.raw.take().expect("open until closed");
        check(
            // SAFETY: `raw` is this archive's open event writer, closed once
            // (taken, so Drop skips it).
            unsafe { sys::OTF2_Archive_CloseEvtWriter(self.archive.raw.as_ptr(), raw.as_ptr()) },
            "closing an event writer",
        )
    }
}

impl Drop for EvtWriter<'_> {
    fn drop(&mut self) {
        if let Some(raw) = self.raw.take() {
            // SAFETY: as in close.
            unsafe {
                sys::OTF2_Archive_CloseEvtWriter(self.archive.raw.as_ptr(), raw.as_ptr());
            }
        }
    }
}

/// The domains of the system tree that the writer names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Domain {
    /// Every computing node (the job's node).
    Machine,
    /// A node whose processes share memory (a host).
    SharedMemory,
}

/// The archive's global definitions.
pub(super) struct GlobalDefs<'a> {
    raw: NonNull<sys::OTF2_GlobalDefWriter>,
    _archive: PhantomData<&'a mut Archive>,
}

impl GlobalDefs<'_> {
    fn w(&self) -> *mut sys::OTF2_GlobalDefWriter {
        self.raw.as_ptr()
    }

    /// Timestamps: `per_s` ticks per second, from `offset` for `length`.
    pub(super) fn clock(&mut self, per_s: u64, offset: u64, length: u64) -> Result<(), String> {
        // SAFETY: the writer belongs to the open archive borrowed by self;
        // the realtime timestamp is undefined (the job's clock is not a
        // calendar).
        check(
            unsafe {
                sys::OTF2_GlobalDefWriter_WriteClockProperties(
                    self.w(),
                    per_s,
                    offset,
                    length,
                    sys::UNDEFINED_TIMESTAMP,
                )
            },
            "the clock properties",
        )
    }

    /// String `id`.
    pub(super) fn string(&mut self, id: u32, s: &str) -> Result<(), String> {
        let c = c_string(s, "a string")?;
        check(
            // SAFETY: the writer is open; OTF2 copies the NUL-terminated string.
            unsafe { sys::OTF2_GlobalDefWriter_WriteString(self.w(), id, c.as_ptr()) },
            "a String",
        )
    }

    /// System tree node `id` (a root when `parent` is undefined).
    pub(super) fn system_tree_node(&mut self, id: u32, name: u32, class: u32, parent: u32) -> Result<(), String> {
        check(
            // SAFETY: the writer is open; plain values.
            unsafe { sys::OTF2_GlobalDefWriter_WriteSystemTreeNode(self.w(), id, name, class, parent) },
            "a SystemTreeNode",
        )
    }

    /// Says that system tree node `node` is (a part of) `domain`: what
    /// kind of hardware it stands for, which readers may group by.
    pub(super) fn system_tree_node_domain(&mut self, node: u32, domain: Domain) -> Result<(), String> {
        let domain = match domain {
            Domain::Machine => sys::OTF2_SYSTEM_TREE_DOMAIN_MACHINE,
            Domain::SharedMemory => sys::OTF2_SYSTEM_TREE_DOMAIN_SHARED_MEMORY,
        };
        check(
            // SAFETY: the writer is open; plain values.
            unsafe {
                sys::OTF2_GlobalDefWriter_WriteSystemTreeNodeDomain(
                    self.w(),
                    node,
                    domain as sys::OTF2_SystemTreeDomain,
                )
            },
            "a SystemTreeNodeDomain",
        )
    }

    /// A process: location group `id` under system tree node `node`.
    pub(super) fn process(&mut self, id: u32, name: u32, node: u32) -> Result<(), String> {
        // SAFETY: the writer is open; plain values.
        check(
            unsafe {
                sys::OTF2_GlobalDefWriter_WriteLocationGroup(
                    self.w(),
                    id,
                    name,
                    sys::OTF2_LOCATION_GROUP_TYPE_PROCESS as sys::OTF2_LocationGroupType,
                    node,
                    sys::UNDEFINED_REF,
                )
            },
            "a LocationGroup",
        )
    }

    /// A CPU thread: location `id` of location group `group`, holding
    /// `events` events.
    pub(super) fn cpu_thread(&mut self, id: u64, name: u32, events: u64, group: u32) -> Result<(), String> {
        // SAFETY: the writer is open; plain values.
        check(
            unsafe {
                sys::OTF2_GlobalDefWriter_WriteLocation(
                    self.w(),
                    id,
                    name,
                    sys::OTF2_LOCATION_TYPE_CPU_THREAD as sys::OTF2_LocationType,
                    events,
                    group,
                )
            },
            "a Location",
        )
    }

    /// Region `id`, of the user's paradigm, a function or (`artificial`) a
    /// marker.
    pub(super) fn region(&mut self, id: u32, name: u32, description: u32, artificial: bool) -> Result<(), String> {
        let role = if artificial {
            sys::OTF2_REGION_ROLE_ARTIFICIAL
        } else {
            sys::OTF2_REGION_ROLE_FUNCTION
        };
        // SAFETY: the writer is open; plain values.
        check(
            unsafe {
                sys::OTF2_GlobalDefWriter_WriteRegion(
                    self.w(),
                    id,
                    name,
                    name,
                    description,
                    role as sys::OTF2_RegionRole,
                    sys::OTF2_PARADIGM_USER as sys::OTF2_Paradigm,
                    sys::OTF2_REGION_FLAG_NONE as sys::OTF2_RegionFlag,
                    sys::UNDEFINED_REF,
                    0,
                    0,
                )
            },
            "a Region",
        )
    }

    /// Group `id` of the message-passing paradigm: the locations of its
    /// ranks in rank order (`locations`), or a communicator's ranks.
    pub(super) fn group(&mut self, id: u32, name: u32, locations: bool, members: &[u64]) -> Result<(), String> {
        let kind = if locations {
            sys::OTF2_GROUP_TYPE_COMM_LOCATIONS
        } else {
            sys::OTF2_GROUP_TYPE_COMM_GROUP
        };
        let n = u32::try_from(members.len()).map_err(|_| "OTF2: a group of more than 2^32 members".to_string())?;
        // SAFETY: the writer is open; `members` holds `n` values and OTF2
        // copies them.
        check(
            unsafe {
                sys::OTF2_GlobalDefWriter_WriteGroup(
                    self.w(),
                    id,
                    name,
                    kind as sys::OTF2_GroupType,
                    sys::OTF2_PARADIGM_MPI as sys::OTF2_Paradigm,
                    sys::OTF2_GROUP_FLAG_NONE as sys::OTF2_GroupFlag,
                    n,
                    members.as_ptr(),
                )
            },
            "a Group",
        )
    }

    /// Communicator `id` over `group`.
    pub(super) fn comm(&mut self, id: u32, name: u32, group: u32) -> Result<(), String> {
        // SAFETY: the writer is open; plain values.
        check(
            unsafe {
                sys::OTF2_GlobalDefWriter_WriteComm(
                    self.w(),
                    id,
                    name,
                    group,
                    sys::UNDEFINED_REF,
                    sys::OTF2_COMM_FLAG_NONE as sys::OTF2_CommFlag,
                )
            },
            "a Comm",
        )
    }
}
