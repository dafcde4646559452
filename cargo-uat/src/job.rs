//! Starting a job on N ranks the conduit's way, and watching it end.
//!
//! | conduit | how the ranks start |
//! |---|---|
//! | smp | `GASNET_PSHM_NODES=N prog`: GASNet forks the ranks |
//! | udp | `GASNET_SPAWNFN=L prog N`: local spawn (`--real-udp`: no shared memory, `GASNET_SUPERNODE_MAXSIZE=1`) |
//! | mpi | `mpirun -np N --oversubscribe [-x VAR]... prog` |
//! | ibv | `gasnetrun_ibv -n N -E VAR,... prog` (clusters) |
//!
//! `--hosts H` (udp, mpi) runs the ranks as H emulated hosts: GASNet's
//! supernodes of ⌈N/H⌉ consecutive ranks (`GASNET_SUPERNODE_MAXSIZE`), and
//! `UAT_LAUNCHED_HOSTS=H`, which the runtime checks (`uat_rules::hosts`).
//!
//! `gasnetrun_ibv` is the one installed with the GASNet-EX the build used
//! (`GASNET_PREFIX`, pkg-config's prefix, or the bundled build's in the
//! cache: `uat_rules::gasnet`). `--launcher CMD` replaces
//! `mpirun`/`gasnetrun_ibv` (e.g. a site's wrapper, same arguments). Every rank gets the `GASNET_*` and `UAT_*`
//! variables of the launcher's environment, and `UAT_LAUNCHED` (programs of
//! the multi-process conduits refuse to start without a launcher). The job
//! runs in its own process group: `--timeout` and a signal to the launcher
//! reach every rank.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus};
use std::sync::atomic::{AtomicI32, Ordering};
use std::time::{Duration, Instant};

use uat_rules::gasnet::Source;

use crate::variant::Conduit;

/// How to start a job.
#[derive(Clone, Debug)]
pub struct JobSpec {
    /// The conduit the program was built for.
    pub conduit: Conduit,
    /// How many ranks.
    pub ranks: u32,
    /// udp, mpi: emulated hosts (`--hosts`; `--real-udp` is one per rank).
    pub hosts: Option<u32>,
    /// mpi, ibv: the command that starts the ranks instead of the default.
    pub launcher: Option<String>,
    /// Kill the whole job after this long.
    pub timeout: Option<Duration>,
    /// The program's executable.
    pub program: PathBuf,
    /// Its arguments.
    pub args: Vec<OsString>,
    /// Write a trace into this directory (`UAT_TRACE`).
    pub trace: Option<PathBuf>,
}

/// How a job ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ending {
    /// Every rank exited; the job's exit code.
    Exited(i32),
    /// The launcher (or smp's rank 0) died of a signal.
    Signal(i32),
    /// Killed after `--timeout`.
    TimedOut,
}

impl Ending {
    /// The launcher's exit code for it (the shell's convention).
    pub fn code(self) -> i32 {
        match self {
            Ending::Exited(c) => c,
            Ending::Signal(s) => 128 + s,
            Ending::TimedOut => 124,
        }
    }

    /// What to tell the user, if anything.
    pub fn describe(self, conduit: Conduit, timeout: Option<Duration>) -> Option<String> {
        match self {
            Ending::TimedOut => Some(format!(
                "the job ran over --timeout {} s and was killed",
                timeout.map_or(0, |t| t.as_secs())
            )),
            Ending::Signal(s) => Some(format!(
                "the job ended by signal {s} ({}): a rank crashed or was killed",
                signal_name(s)
            )),
            // GASNet reports a rank killed by a signal as 128 + the signal.
            Ending::Exited(c) if c > 128 && c < 160 => Some(format!(
                "the job ended with code {c}: a rank ended by signal {} ({}), crashed or was killed",
                c - 128,
                signal_name(c - 128)
            )),
            Ending::Exited(255) => Some(format!(
                "the job ended with code 255: a rank died or the {} launcher failed",
                conduit.name()
            )),
            Ending::Exited(_) => None,
        }
    }
}

fn signal_name(sig: i32) -> &'static str {
    match sig {
        libc::SIGHUP => "HUP",
        libc::SIGINT => "INT",
        libc::SIGQUIT => "QUIT",
        libc::SIGILL => "ILL",
        libc::SIGABRT => "ABRT",
        libc::SIGBUS => "BUS",
        libc::SIGFPE => "FPE",
        libc::SIGKILL => "KILL",
        libc::SIGSEGV => "SEGV",
        libc::SIGPIPE => "PIPE",
        libc::SIGTERM => "TERM",
        _ => "?",
    }
}

/// The command line that starts `spec` (without the environment the
/// launcher adds: see [`environment`]).
pub fn command_line(spec: &JobSpec) -> Result<Vec<OsString>, String> {
    let mut line: Vec<OsString> = Vec::new();
    let vars = || passed_variables(spec).join(",");
    match spec.conduit {
        Conduit::Smp => line.push(spec.program.clone().into()),
        Conduit::Udp => {
            line.push(spec.program.clone().into());
            line.push(spec.ranks.to_string().into());
        }
        Conduit::Mpi => {
            let mpirun = spec.launcher.clone().unwrap_or_else(|| "mpirun".into());
            require_on_path(&mpirun, "install openmpi-bin (cargo uat setup does)")?;
            line.extend([
                mpirun.into(),
                "-np".into(),
                spec.ranks.to_string().into(),
                "--oversubscribe".into(),
            ]);
            // SAFETY: geteuid has no preconditions.
            if unsafe { libc::geteuid() } == 0 {
                line.push("--allow-run-as-root".into());
            }
            for var in passed_variables(spec) {
                line.extend(["-x".into(), var.into()]);
            }
            line.push(spec.program.clone().into());
        }
        Conduit::Ibv => {
            let runner = match &spec.launcher {
                Some(l) => {
                    require_on_path(l, "check --launcher")?;
                    l.clone()
                }
                None => {
                    // The gasnetrun_ibv of the GASNet-EX the build used: the
                    // build's rule, read from the same environment.
                    let source = uat_rules::gasnet::choose_from_env(Conduit::Ibv)?.source;
                    let runner = gasnetrun_ibv_of(&source).to_string_lossy().into_owned();
                    require_on_path(&runner, &gasnetrun_ibv_hint(&source))?;
                    runner
                }
            };
            line.extend([
                runner.into(),
                "-n".into(),
                spec.ranks.to_string().into(),
                "-E".into(),
                vars().into(),
            ]);
            line.push(spec.program.clone().into());
        }
    }
    line.extend(spec.args.iter().cloned());
    Ok(line)
}

/// Variables the launcher sets for the job (on top of its own environment,
/// which every rank gets: `GASNET_*` and `UAT_*` explicitly where the
/// launcher needs to be told).
pub fn environment(spec: &JobSpec) -> Vec<(&'static str, String)> {
    let mut env = vec![("UAT_LAUNCHED", spec.conduit.name().to_string())];
    match spec.conduit {
        Conduit::Smp => env.push(("GASNET_PSHM_NODES", spec.ranks.to_string())),
        Conduit::Udp => env.push(("GASNET_SPAWNFN", "L".into())),
        Conduit::Mpi | Conduit::Ibv => {}
    }
    if let (Conduit::Udp | Conduit::Mpi, Some(hosts)) = (spec.conduit, spec.hosts) {
        // Checked by the command line (`check_run`): a refusal there names
        // the host counts that work.
        if let Ok(size) = uat_rules::hosts::ranks_per_host(spec.ranks, hosts) {
            env.push((uat_rules::hosts::SUPERNODE_MAXSIZE_ENV, size.to_string()));
            env.push((uat_rules::hosts::LAUNCHED_HOSTS_ENV, hosts.to_string()));
        }
    }
    if let Some(dir) = &spec.trace {
        env.push(("UAT_TRACE", dir.display().to_string()));
    }
    env
}

/// The `GASNET_*` and `UAT_*` variables to hand to launchers that need a
/// list (mpirun, gasnetrun_ibv), including the ones we set.
fn passed_variables(spec: &JobSpec) -> Vec<String> {
    let mut vars: Vec<String> = std::env::vars_os()
        .filter_map(|(k, _)| k.into_string().ok())
        .filter(|k| k.starts_with("GASNET_") || k.starts_with("UAT_"))
        // Only this launch says how many hosts it asked for (run removes
        // a value inherited from the shell).
        .filter(|k| k != uat_rules::hosts::LAUNCHED_HOSTS_ENV)
        .collect();
    for (k, _) in environment(spec) {
        if !vars.iter().any(|v| v == k) {
            vars.push(k.into());
        }
    }
    vars.sort();
    vars
}

/// Where GASNet-EX installs `gasnetrun_ibv` for a build from `source`
/// (`GASNET_PREFIX`, pkg-config's prefix, or the bundled build's in the
/// cache).
fn gasnetrun_ibv_of(source: &Source) -> PathBuf {
    let prefix = match source.prefix() {
        Some(prefix) => prefix.to_path_buf(),
        None => crate::setup::gasnet_cache().join("ibv").join("install"),
    };
    prefix.join("bin").join("gasnetrun_ibv")
}

/// What to do when `gasnetrun_ibv` is not where `source` puts it.
fn gasnetrun_ibv_hint(source: &Source) -> String {
    match source {
        Source::Bundled => {
            "build the ibv variant first (the bundled GASNet-EX installs it), or name the site's launcher with --launcher"
                .into()
        }
        installed => format!(
            "the GASNet-EX of {} has no bin/gasnetrun_ibv (is it configured with ibv?): name the site's launcher with --launcher",
            installed.describe()
        ),
    }
}

fn require_on_path(program: &str, hint: &str) -> Result<(), String> {
    let found = if program.contains('/') {
        Path::new(program).is_file()
    } else {
        std::env::var_os("PATH")
            .map(|p| std::env::split_paths(&p).any(|d| d.join(program).is_file()))
            .unwrap_or(false)
    };
    if found {
        Ok(())
    } else {
        Err(format!("{program} not found: {hint}"))
    }
}

/// The signal the launcher itself got (0: none yet).
static RECEIVED: AtomicI32 = AtomicI32::new(0);

extern "C" fn on_signal(sig: libc::c_int) {
    RECEIVED.store(sig, Ordering::Relaxed);
}

/// Runs the job to its end. TERM, INT and HUP sent to the launcher are
/// passed to the whole job; `spec.timeout` kills it (TERM, then KILL 5 s
/// later).
pub fn run(spec: &JobSpec) -> Result<Ending, String> {
    if !spec.program.is_file() {
        return Err(format!("no program {} (not a file)", spec.program.display()));
    }
    let line = command_line(spec)?;
    let mut cmd = Command::new(&line[0]);
    // A UAT_LAUNCHED_HOSTS left in the shell would make GASNet's init check
    // hosts this launch did not ask for: only `environment` sets it.
    cmd.args(&line[1..])
        .env_remove(uat_rules::hosts::LAUNCHED_HOSTS_ENV)
        .envs(environment(spec));
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    // SAFETY: installs a handler that only stores into an atomic.
    unsafe {
        for sig in [libc::SIGTERM, libc::SIGINT, libc::SIGHUP] {
            libc::signal(sig, on_signal as *const () as libc::sighandler_t);
        }
    }
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", line[0].to_string_lossy()))?;
    let group = child.id() as i32;
    let start = Instant::now();
    let mut killed_at: Option<Instant> = None;
    loop {
        if let Some(status) = child.try_wait().map_err(|e| e.to_string())? {
            return Ok(if killed_at.is_some() && RECEIVED.load(Ordering::Relaxed) == 0 {
                Ending::TimedOut
            } else {
                ending_of(status)
            });
        }
        let sig = RECEIVED.swap(0, Ordering::Relaxed);
        if sig != 0 {
            // SAFETY: signals our child's process group.
            unsafe { libc::kill(-group, sig) };
            RECEIVED.store(sig, Ordering::Relaxed);
        }
        if let Some(limit) = spec.timeout {
            if killed_at.is_none() && start.elapsed() > limit {
                // SAFETY: as above.
                unsafe { libc::kill(-group, libc::SIGTERM) };
                killed_at = Some(Instant::now());
            }
        }
        if killed_at.is_some_and(|t| t.elapsed() > Duration::from_secs(5)) {
            // SAFETY: as above.
            unsafe { libc::kill(-group, libc::SIGKILL) };
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn ending_of(status: ExitStatus) -> Ending {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(c), _) => Ending::Exited(c),
        (None, Some(s)) => Ending::Signal(s),
        (None, None) => Ending::Exited(1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(conduit: Conduit) -> JobSpec {
        JobSpec {
            conduit,
            ranks: 4,
            hosts: Some(4),
            launcher: None,
            timeout: None,
            program: "/bin/prog".into(),
            args: vec!["--x".into()],
            trace: None,
        }
    }

    #[test]
    fn each_conduit_starts_its_own_way() {
        let line = command_line(&spec(Conduit::Smp)).unwrap();
        assert_eq!(line, ["/bin/prog", "--x"]);
        let line = command_line(&spec(Conduit::Udp)).unwrap();
        assert_eq!(
            line,
            ["/bin/prog", "4", "--x"],
            "udp's master reads the rank count first"
        );
        let env = environment(&spec(Conduit::Udp));
        assert!(env.contains(&("GASNET_SUPERNODE_MAXSIZE", "1".into())));
        assert!(env.contains(&("GASNET_SPAWNFN", "L".into())));
        let env = environment(&spec(Conduit::Smp));
        assert!(env.contains(&("GASNET_PSHM_NODES", "4".into())));
        assert!(env.contains(&("UAT_LAUNCHED", "smp".into())));
        assert!(!env.iter().any(|(k, _)| *k == "GASNET_SUPERNODE_MAXSIZE"));
        let mut two = spec(Conduit::Mpi);
        two.hosts = Some(2);
        let env = environment(&two);
        assert!(env.contains(&("GASNET_SUPERNODE_MAXSIZE", "2".into())));
        assert!(env.contains(&("UAT_LAUNCHED_HOSTS", "2".into())));
    }

    #[test]
    fn gasnetrun_ibv_comes_from_the_gasnet_the_build_used() {
        let site = gasnetrun_ibv_of(&Source::Prefix("/opt/gasnet".into()));
        assert_eq!(site, Path::new("/opt/gasnet/bin/gasnetrun_ibv"));
        let found = gasnetrun_ibv_of(&Source::PkgConfig {
            prefix: "/site/gasnet-2024".into(),
            pc_file: "/site/gasnet-2024/lib/pkgconfig/gasnet-ibv-par.pc".into(),
        });
        assert_eq!(found, Path::new("/site/gasnet-2024/bin/gasnetrun_ibv"));
        let bundled = gasnetrun_ibv_of(&Source::Bundled);
        assert!(
            bundled.ends_with("2021.3.0/ibv/install/bin/gasnetrun_ibv"),
            "{}",
            bundled.display()
        );
        // Its absence names where it was looked for, and what to do.
        let hint = gasnetrun_ibv_hint(&Source::Prefix("/opt/gasnet".into()));
        assert!(
            hint.contains("GASNET_PREFIX=/opt/gasnet") && hint.contains("--launcher"),
            "{hint}"
        );
        assert!(gasnetrun_ibv_hint(&Source::Bundled).contains("build the ibv variant first"));
    }

    #[test]
    fn a_missing_launcher_is_named() {
        let mut s = spec(Conduit::Mpi);
        s.launcher = Some("no-such-mpirun".into());
        let e = command_line(&s).unwrap_err();
        assert!(e.contains("no-such-mpirun not found"), "{e}");
    }

    #[test]
    fn endings_say_what_happened() {
        assert_eq!(Ending::Signal(9).code(), 137);
        assert!(Ending::Signal(6)
            .describe(Conduit::Smp, None)
            .unwrap()
            .contains("signal 6 (ABRT)"));
        assert_eq!(Ending::TimedOut.code(), 124);
        assert_eq!(Ending::Exited(3).describe(Conduit::Udp, None), None);
    }
}
