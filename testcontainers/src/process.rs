//! Child processes tied to the lifetime of the test process.
//!
//! Every JVM (and RabbitMQ VM) the harness starts is spawned by one
//! long-lived "spawner" thread with `PR_SET_PDEATHSIG = SIGKILL`. The kernel
//! delivers that signal when the thread that forked the child exits, which is
//! why a dedicated thread that never exits does the forking: tokio tests run
//! each test on its own short-lived runtime thread, which would otherwise kill
//! the brokers as soon as the spawning test thread finished. When the whole
//! test binary dies (even by SIGKILL), the spawner thread dies with it and the
//! kernel kills every child. Explicit drops kill and reap children as well.

use crate::Result;
use crate::error::HarnessError;
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use std::process::{Child, Command, ExitStatus};
use std::sync::mpsc;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

type SpawnReply = mpsc::Sender<std::io::Result<Child>>;

static SPAWNER: OnceLock<Mutex<mpsc::Sender<(Command, SpawnReply)>>> = OnceLock::new();

fn spawner() -> &'static Mutex<mpsc::Sender<(Command, SpawnReply)>> {
    SPAWNER.get_or_init(|| {
        let (tx, rx) = mpsc::channel::<(Command, SpawnReply)>();
        std::thread::Builder::new()
            .name("kafka-harness-spawner".into())
            .spawn(move || {
                // The sender lives in a static and is never dropped, so this
                // thread runs until the process exits.
                while let Ok((mut cmd, reply)) = rx.recv() {
                    let _ = reply.send(cmd.spawn());
                }
            })
            .expect("cannot start the harness spawner thread");
        Mutex::new(tx)
    })
}

/// Arranges for the child to receive SIGKILL when its parent (the spawner
/// thread, hence the test process) dies.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
fn die_with_parent(cmd: &mut Command) {
    use std::os::unix::process::CommandExt;
    let parent = Pid::this();
    // SAFETY: the closure runs in the forked child before exec. It only makes
    // the prctl(2) and getppid(2) system calls and possibly _exit(2), all
    // async-signal-safe; it allocates nothing and takes no locks.
    unsafe {
        cmd.pre_exec(move || {
            nix::sys::prctl::set_pdeathsig(Some(Signal::SIGKILL))?;
            // The parent may have died between fork and prctl.
            if nix::unistd::getppid() != parent {
                nix::libc::_exit(137);
            }
            Ok(())
        });
    }
}

#[cfg(not(target_os = "linux"))]
fn die_with_parent(_cmd: &mut Command) {}

/// Spawns `cmd` from the spawner thread, tied to this process's lifetime.
pub(crate) fn spawn_tied(name: &str, mut cmd: Command) -> Result<ManagedChild> {
    die_with_parent(&mut cmd);
    let (reply_tx, reply_rx) = mpsc::channel();
    spawner()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .send((cmd, reply_tx))
        .map_err(|_| HarnessError::Process {
            what: name.to_string(),
            message: "spawner thread is gone".into(),
        })?;
    let child = reply_rx
        .recv()
        .map_err(|_| HarnessError::Process {
            what: name.to_string(),
            message: "spawner thread is gone".into(),
        })?
        .map_err(|e| HarnessError::io(format!("spawning {name}"), e))?;
    Ok(ManagedChild {
        child: Some(child),
        name: name.to_string(),
    })
}

/// A child process killed (SIGKILL) and reaped on drop.
#[derive(Debug)]
pub(crate) struct ManagedChild {
    child: Option<Child>,
    name: String,
}

impl ManagedChild {
    /// The process id.
    pub(crate) fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(|c| c.id())
    }

    /// Exit status if the process has exited (reaping it).
    pub(crate) fn try_wait(&mut self) -> Option<ExitStatus> {
        self.child
            .as_mut()
            .and_then(|c| c.try_wait().ok().flatten())
    }

    /// Sends `sig` to the process (no-op if it already exited).
    pub(crate) fn signal(&mut self, sig: Signal) -> Result<()> {
        if self.try_wait().is_some() {
            return Ok(());
        }
        if let Some(pid) = self.pid() {
            kill(Pid::from_raw(pid as i32), sig).map_err(|e| HarnessError::Process {
                what: self.name.clone(),
                message: format!("kill({sig}): {e}"),
            })?;
        }
        Ok(())
    }

    /// Polls until the process exits or `timeout` passes.
    pub(crate) async fn wait_timeout(&mut self, timeout: Duration) -> Option<ExitStatus> {
        let deadline = Instant::now() + timeout;
        let mut backoff = Duration::from_millis(5);
        loop {
            if let Some(status) = self.try_wait() {
                return Some(status);
            }
            if Instant::now() >= deadline {
                return None;
            }
            tokio::time::sleep(backoff).await;
            backoff = (backoff * 2).min(Duration::from_millis(100));
        }
    }

    /// SIGKILL and reap; blocks only until the kernel has torn it down.
    pub(crate) fn kill_now(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// SIGTERM, then waits (blocking the thread) up to `grace` for the
    /// process to exit; whether it did. The caller kills it otherwise.
    pub(crate) fn terminate_blocking(&mut self, grace: Duration) -> bool {
        if self.signal(Signal::SIGTERM).is_err() {
            return false;
        }
        let deadline = Instant::now() + grace;
        let mut backoff = Duration::from_millis(5);
        while Instant::now() < deadline {
            if self.try_wait().is_some() {
                return true;
            }
            std::thread::sleep(backoff);
            backoff = (backoff * 2).min(Duration::from_millis(100));
        }
        false
    }

    /// SIGTERM, wait up to `grace`, then SIGKILL. Returns the exit status.
    pub(crate) async fn terminate(&mut self, grace: Duration) -> Option<ExitStatus> {
        let _ = self.signal(Signal::SIGTERM);
        if let Some(status) = self.wait_timeout(grace).await {
            self.child = None;
            return Some(status);
        }
        tracing::warn!(name = %self.name, "did not exit after SIGTERM; killing");
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            return child.wait().ok();
        }
        None
    }
}

impl Drop for ManagedChild {
    fn drop(&mut self) {
        self.kill_now();
    }
}

/// Whether a process with this pid exists (its `/proc` entry).
pub(crate) fn process_exists(pid: u32) -> bool {
    std::path::Path::new(&format!("/proc/{pid}")).exists()
}
