//! The process's GASNet-EX client: init, ranks, the segment, exit.

use std::ffi::{c_char, c_int, CStr, CString};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering};
use std::sync::OnceLock;

use crate::hosts::Hosts;
use crate::{launch, raw, Error, CONDUIT};

/// Proof that GASNet-EX is initialised in this process: every operation is a
/// method on it. Zero-sized and `Copy`, so keeping it costs nothing.
#[derive(Clone, Copy, Debug)]
pub struct Gasnet {
    _initialised: (),
}

/// A rank's segment: the memory remote operations may target.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment {
    /// Start address in the owning rank's address space (what RMA and
    /// atomics name).
    pub base: usize,
    /// Length in bytes.
    pub size: usize,
    /// Where the segment is mapped in *this* process through PSHM, if it is.
    pub local: Option<usize>,
}

impl Segment {
    /// Whether `[addr, addr + len)` lies inside the segment.
    #[inline]
    pub fn contains(&self, addr: usize, len: usize) -> bool {
        addr >= self.base && len <= self.size && addr - self.base <= self.size - len
    }
}

static INITIALISED: AtomicBool = AtomicBool::new(false);
// Read on hot paths; set once by init (Relaxed suffices: published before
// any other thread of ours exists, and fixed afterwards).
static RANK: AtomicU32 = AtomicU32::new(0);
static SIZE: AtomicU32 = AtomicU32::new(0);
static SEGMENTS: OnceLock<Vec<Segment>> = OnceLock::new();

fn error_name(code: c_int) -> String {
    // SAFETY: gasnet_ErrorName returns a static string for any code.
    unsafe { CStr::from_ptr(raw::gasnet_ErrorName(code)) }
        .to_string_lossy()
        .into_owned()
}

impl Gasnet {
    /// Starts GASNet-EX (`gex_Client_Init`) with the process's full argument
    /// list (`std::env::args()`), after checking that a multi-process conduit
    /// was started by its launcher. Returns the handle and the arguments left
    /// after GASNet took its own (parse the program's options from these).
    ///
    /// On smp with `GASNET_PSHM_NODES=N` this is where the N ranks are forked.
    /// Call it from `main` before any other thread exists, and never inside a
    /// libtest test.
    pub fn init(args: Vec<String>, client_name: &str) -> Result<(Gasnet, Vec<String>), Error> {
        launch::check(CONDUIT, &args, |k| std::env::var(k).ok())?;
        if INITIALISED.load(Ordering::SeqCst) {
            return Err(Error::AlreadyInitialized);
        }
        // The environment is written below: no other thread may exist.
        let threads = std::fs::read_dir("/proc/self/task").map_or(1, |d| d.count());
        if threads > 1 {
            return Err(Error::ThreadsRunning { threads });
        }
        if INITIALISED.swap(true, Ordering::SeqCst) {
            return Err(Error::AlreadyInitialized);
        }
        if CONDUIT == crate::Conduit::Smp && std::env::var_os("GASNET_EXITTIMEOUT").is_none() {
            // smp-conduit's exit on one rank (a failure) waits this long for
            // the other ranks before signalling them, and escalates in steps
            // of 1 + this (SIGTERM, then SIGKILL) when one does not go. The
            // default (1 s + 0.1 s per rank, up to 5 s) made a failing 2-rank
            // job end in 1.4 s, and once, under 3 CPU-bound loads on 2 cores,
            // in 5.6 s; the smallest GASNet accepts, 1 s, bounds that chain
            // by 5 s. Ranks of one host that exit together meet well within
            // it. An explicit setting wins.
            // SAFETY: no other thread exists (checked above), and this one
            // reads no environment meanwhile.
            unsafe { std::env::set_var("GASNET_EXITTIMEOUT", "1") };
        }
        if CONDUIT == crate::Conduit::Smp && std::env::var_os("GASNET_PSHM_NODES").is_none() {
            // A directly started smp program is one rank; say so, instead of
            // letting GASNet warn about it.
            // SAFETY: no other thread exists (checked above).
            unsafe { std::env::set_var("GASNET_PSHM_NODES", "1") };
        }
        // GASNet may keep and rewrite argv: hand it a leaked, NULL-terminated
        // copy that lives as long as the process.
        let owned: Vec<CString> = args.into_iter().map(|a| CString::new(a).unwrap_or_default()).collect();
        let mut ptrs: Vec<*mut c_char> = owned.into_iter().map(CString::into_raw).collect();
        ptrs.push(std::ptr::null_mut());
        let mut argc = (ptrs.len() - 1) as c_int;
        let mut argv = Box::leak(ptrs.into_boxed_slice()).as_mut_ptr();
        let name = CString::new(client_name).unwrap_or_default();
        // SAFETY: argc/argv describe a valid NULL-terminated array of C
        // strings that outlives the process; init runs once (checked above).
        let code = unsafe { raw::uat_init(&mut argc, &mut argv, name.as_ptr()) };
        if code != raw::UAT_OK as c_int {
            return Err(Error::Init {
                code,
                name: error_name(code),
            });
        }
        // SAFETY: GASNet returned an argv of `argc` valid C strings.
        let rest = (0..argc as usize)
            .map(|i| unsafe { CStr::from_ptr(*argv.add(i)) }.to_string_lossy().into_owned())
            .collect();
        // SAFETY: init succeeded.
        unsafe {
            RANK.store(raw::uat_rank(), Ordering::Relaxed);
            SIZE.store(raw::uat_size(), Ordering::Relaxed);
        }
        let gasnet = Gasnet { _initialised: () };
        crate::hosts::learn(
            gasnet.rank(),
            gasnet.size(),
            |slots| gasnet.max_over_ranks_each(slots),
            gasnet.neighbourhood(),
        )?;
        Ok((gasnet, rest))
    }

    /// The handle, if [`Gasnet::init`] has succeeded in this process.
    ///
    /// # Safety
    ///
    /// The handle's RMA and atomic operations write any byte of any rank's
    /// segment. A layer that keeps Rust state in the segments (the
    /// uni-threads runtime keeps task stacks there) depends on nobody
    /// conjuring a handle behind its back: the caller must not use the
    /// handle's segment operations on memory such a layer owns.
    pub unsafe fn current() -> Option<Gasnet> {
        INITIALISED
            .load(Ordering::Acquire)
            .then_some(Gasnet { _initialised: () })
    }

    /// This process's rank, if [`Gasnet::init`] has succeeded here.
    pub fn current_rank() -> Option<u32> {
        INITIALISED
            .load(Ordering::Acquire)
            .then(|| RANK.load(Ordering::Relaxed))
    }

    /// This process's rank in `0..size()`.
    #[inline]
    pub fn rank(self) -> u32 {
        RANK.load(Ordering::Relaxed)
    }

    /// The number of ranks in the job.
    #[inline]
    pub fn size(self) -> u32 {
        SIZE.load(Ordering::Relaxed)
    }

    /// Whether this GASNet build uses PSHM (shared memory between the ranks
    /// of a host).
    pub fn pshm(self) -> bool {
        // SAFETY: reads a compile-time constant.
        unsafe { raw::uat_pshm_enabled() != 0 }
    }

    /// The ranks that share memory with this one (PSHM neighbourhood), this
    /// one included.
    pub fn neighbourhood(self) -> Vec<u32> {
        rank_table(raw::gex_System_QueryNbrhdInfo)
    }

    /// The ranks on this host, this one included: the neighbourhood, or more
    /// where shared memory between ranks is off (`GASNET_SUPERNODE_MAXSIZE`)
    /// — what counts when asking whether threads outnumber cores.
    pub fn host_ranks(self) -> Vec<u32> {
        rank_table(raw::gex_System_QueryHostInfo)
    }

    /// The largest segment this process may attach.
    pub fn max_segment_size(self) -> usize {
        // SAFETY: init succeeded.
        unsafe { raw::uat_max_local_segment() }
    }

    /// Collectively attaches this rank's segment of `bytes` bytes and learns
    /// every rank's segment bounds. Every rank must call it once. An error
    /// leaves the job in an undefined state: report it and [`Gasnet::exit`].
    pub fn attach_segment(self, bytes: usize) -> Result<Segment, Error> {
        let max = self.max_segment_size();
        if bytes > max {
            return Err(Error::SegmentTooLarge { requested: bytes, max });
        }
        assert!(SEGMENTS.get().is_none(), "attach_segment called twice");
        // SAFETY: init succeeded; attach is called once (SEGMENTS is unset).
        let code = unsafe { raw::uat_segment_attach(bytes as _) };
        if code != raw::UAT_OK as c_int {
            return Err(Error::Attach {
                code,
                name: error_name(code),
                requested: bytes,
            });
        }
        let segments = (0..self.size())
            .map(|rank| {
                let (mut owner, mut local, mut size) = (std::ptr::null_mut(), std::ptr::null_mut(), 0);
                // SAFETY: the segment is attached on every rank (collective).
                let code = unsafe { raw::uat_segment_query(rank, &mut owner, &mut local, &mut size) };
                assert_eq!(
                    code,
                    raw::UAT_OK as c_int,
                    "gex_Segment_QueryBound failed for rank {rank}"
                );
                Segment {
                    base: owner as usize,
                    size,
                    local: (!local.is_null()).then_some(local as usize),
                }
            })
            .collect();
        let segments = SEGMENTS.get_or_init(|| segments);
        Ok(segments[self.rank() as usize])
    }

    /// `rank`'s segment. Panics before [`Gasnet::attach_segment`].
    #[inline]
    pub fn segment(self, rank: u32) -> Segment {
        let segments = SEGMENTS.get().expect("the GASNet segment is not attached yet");
        segments[rank as usize]
    }

    /// Ends the whole job with `code` (`gasnet_exit`): every rank exits.
    /// The hooks registered with [`Gasnet::at_exit`] run first (once), so
    /// helper threads (a polling thread) stop before GASNet shuts down.
    pub fn exit(self, code: i32) -> ! {
        use std::io::Write;
        run_exit_hooks();
        let _ = std::io::stdout().flush();
        let _ = std::io::stderr().flush();
        // SAFETY: init succeeded; gasnet_exit may be called from any thread.
        unsafe { raw::uat_exit(code) }
    }

    /// Registers `hook` to run before [`Gasnet::exit`] ends the job, on
    /// whichever thread calls it (at most [`MAX_EXIT_HOOKS`] hooks). A hook
    /// must not call `exit` itself.
    pub fn at_exit(self, hook: fn()) {
        for slot in &EXIT_HOOKS {
            if slot
                .compare_exchange(0, hook as usize, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
            {
                return;
            }
        }
        panic!("more than {MAX_EXIT_HOOKS} exit hooks registered");
    }

    /// Prints `[rank R] error: msg` as one line and ends the whole job with
    /// exit code 1.
    pub fn fail(self, msg: impl std::fmt::Display) -> ! {
        report(format_args!("error: {msg}"));
        self.exit(1)
    }

    /// Makes any panic on this process end the whole job: the message is
    /// printed with the rank (one write, so ranks' messages do not
    /// interleave), then `gasnet_exit(101)`. Without this a panicking rank
    /// would leave its peers waiting for it forever. Installing it again
    /// does nothing.
    pub fn exit_job_on_panic(self) {
        static INSTALLED: AtomicBool = AtomicBool::new(false);
        if INSTALLED.swap(true, Ordering::SeqCst) {
            return;
        }
        std::panic::set_hook(Box::new(move |info| {
            let thread = std::thread::current();
            let name = thread.name().unwrap_or("<unnamed>");
            let backtrace = match std::env::var("RUST_BACKTRACE").as_deref() {
                Ok("0") | Err(_) => "\nnote: run with `RUST_BACKTRACE=1` to display a backtrace".to_string(),
                Ok(_) => format!("\nstack backtrace:\n{}", std::backtrace::Backtrace::force_capture()),
            };
            report(format_args!("thread '{name}' {info}{backtrace}"));
            self.exit(101);
        }));
    }
}

/// Most hooks [`Gasnet::at_exit`] takes.
pub const MAX_EXIT_HOOKS: usize = 4;
static EXIT_HOOKS: [AtomicUsize; MAX_EXIT_HOOKS] = [const { AtomicUsize::new(0) }; MAX_EXIT_HOOKS];

fn run_exit_hooks() {
    for slot in &EXIT_HOOKS {
        let hook = slot.swap(0, Ordering::AcqRel);
        if hook != 0 {
            // SAFETY: only `fn()` pointers are stored (at_exit).
            let hook: fn() = unsafe { std::mem::transmute::<usize, fn()>(hook) };
            hook();
        }
    }
}

/// Writes `[rank R] <msg>` and a newline to stderr with one `write(2)`, so
/// that messages of several ranks sharing a terminal or a pipe never
/// interleave mid-line (Rust's `eprintln!` writes a formatted line in
/// pieces). Before GASNet starts the prefix is omitted.
pub fn report(msg: std::fmt::Arguments) {
    let line = if INITIALISED.load(Ordering::Acquire) {
        format!("[rank {}] {msg}\n", RANK.load(Ordering::Relaxed))
    } else {
        format!("{msg}\n")
    };
    write_stderr(line.as_bytes());
}

/// One `write(2)` of `bytes` to stderr (retried only for the part a short
/// write left); usable where Rust's stderr lock must be avoided.
pub fn write_stderr(mut bytes: &[u8]) {
    while !bytes.is_empty() {
        // SAFETY: writes from a valid buffer of bytes.len() bytes.
        let n = unsafe { libc::write(2, bytes.as_ptr().cast(), bytes.len()) };
        if n <= 0 {
            if n < 0 && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return;
        }
        bytes = &bytes[n as usize..];
    }
}

/// The job ranks of one of GASNet's rank tables (neighbourhood, host).
/// Only called through a `Gasnet` handle, i.e. after init.
fn rank_table(
    query: unsafe extern "C" fn(*mut *const raw::gex_RankInfo_t, *mut raw::gex_Rank_t, *mut raw::gex_Rank_t),
) -> Vec<u32> {
    let mut info: *const raw::gex_RankInfo_t = std::ptr::null_mut();
    let (mut count, mut me) = (0, 0);
    // SAFETY: init succeeded (we hold a `Gasnet`); GASNet fills a table it owns.
    unsafe { query(&mut info, &mut count, &mut me) };
    // SAFETY: the table has `count` entries and lives as long as GASNet.
    (0..count as usize)
        .map(|i| unsafe { (*info.add(i)).gex_jobrank })
        .collect()
}

/// The hosts' map and the emulated delay (their state is `hosts`').
impl Gasnet {
    /// Every rank's host: the GASNet neighbourhoods (ranks sharing memory),
    /// learnt at init.
    pub fn hosts(self) -> &'static Hosts {
        crate::hosts::map()
    }

    /// Makes every operation to another host wait `delay` before it is
    /// issued (zero: off). Set it on every rank, before the ranks
    /// communicate, to the same value (the emulated delay: [`Hosts`]' module).
    pub fn set_cross_host_delay(self, delay: std::time::Duration) {
        crate::hosts::set_delay(delay)
    }

    /// Operations this process has delayed so far (all threads): a check
    /// that the delay applies where it should.
    pub fn delayed_ops(self) -> u64 {
        crate::hosts::delayed_ops()
    }

    /// The delay set by [`Gasnet::set_cross_host_delay`].
    pub fn cross_host_delay(self) -> std::time::Duration {
        crate::hosts::delay()
    }
}
