//! What the process sets up before anything else: its open-file limit, and what a closed
//! standard output does to it.

/// Raises the soft limit on open files to the hard limit, as Go's runtime does at start for
/// kube-apiserver and k3s: a login or systemd default of 1,024 would otherwise let a few
/// hundred idle connections lock every other client out.
#[cfg(unix)]
pub fn raise_open_file_limit() {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit and setrlimit read and write the struct this function owns.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) != 0 {
            return;
        }
        if limit.rlim_cur < limit.rlim_max {
            limit.rlim_cur = limit.rlim_max;
            if libc::setrlimit(libc::RLIMIT_NOFILE, &limit) != 0 {
                tracing::debug!("the open-file limit could not be raised");
            }
        }
    }
}

#[cfg(not(unix))]
pub fn raise_open_file_limit() {}

/// A command whose standard output is closed (piped into `head`) ends quietly, as Unix tools
/// do, instead of panicking on its next write: the default action of SIGPIPE is restored.
/// Servers keep ignoring it: they talk to Git's SSH client through pipes, and a peer that
/// went away is an error to handle there, not a reason to die.
#[cfg(unix)]
pub fn end_quietly_on_closed_output() {
    // SAFETY: setting a signal's disposition to its default, before any other thread exists.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

#[cfg(not(unix))]
pub fn end_quietly_on_closed_output() {}

/// Whether an error is a write to a closed standard output (for the servers, which keep
/// SIGPIPE ignored): reported by exiting quietly rather than as a failure.
pub fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
