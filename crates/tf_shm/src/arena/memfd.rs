//! The arena's file: a sealed memfd, mapped read-write by its creator and read-only by
//! everyone else.

use std::fs::File;
use std::io;
use std::os::fd::{AsFd, OwnedFd};

use rustix::fs::{MemfdFlags, SealFlags};

/// Creates a memfd of `size` bytes named `name` (visible in `/proc/<pid>/fd`), sealed so its
/// size can never change (no reader can take SIGBUS) and no seal can be added or removed.
/// Returns the file and its read-write mapping.
pub(crate) fn create(name: &str, size: usize) -> io::Result<(File, memmap2::MmapRaw)> {
    let fd = rustix::fs::memfd_create(name, MemfdFlags::CLOEXEC | MemfdFlags::ALLOW_SEALING)?;
    rustix::fs::ftruncate(&fd, size as u64)?;
    let file = File::from(fd);
    let map = memmap2::MmapOptions::new().len(size).map_raw(&file)?;
    // FUTURE_WRITE: the mapping above stays writable, but no later mapping of this file (a
    // consumer's, even through /proc/<pid>/fd) can be writable.
    let seals = SealFlags::SHRINK | SealFlags::GROW | SealFlags::FUTURE_WRITE;
    match rustix::fs::fcntl_add_seals(&file, seals) {
        Ok(()) => {}
        // Kernels older than 5.1 lack FUTURE_WRITE; consumers still get a read-only fd.
        Err(rustix::io::Errno::INVAL) => {
            rustix::fs::fcntl_add_seals(&file, SealFlags::SHRINK | SealFlags::GROW)?
        }
        Err(e) => return Err(e.into()),
    }
    rustix::fs::fcntl_add_seals(&file, SealFlags::SEAL)?;
    Ok((file, map))
}

/// A new read-only file description of the same memfd, for handing to consumers: a write
/// mapping of it fails with `EACCES` whatever the seals.
pub(crate) fn reopen_read_only(file: &File) -> io::Result<OwnedFd> {
    let path = format!("/proc/self/fd/{}", std::os::fd::AsRawFd::as_raw_fd(file));
    let fd = rustix::fs::open(
        path.as_str(),
        rustix::fs::OFlags::RDONLY | rustix::fs::OFlags::CLOEXEC,
        rustix::fs::Mode::empty(),
    )?;
    Ok(fd)
}

/// Checks that `fd` is a memfd sealed against shrinking (so mapping it cannot SIGBUS), and
/// returns its size.
pub(crate) fn check_sealed(fd: impl AsFd) -> io::Result<u64> {
    let seals = rustix::fs::fcntl_get_seals(&fd)?;
    if !seals.contains(SealFlags::SHRINK | SealFlags::GROW) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "arena file is not sealed against resizing",
        ));
    }
    Ok(rustix::fs::fstat(&fd)?.st_size as u64)
}

/// Maps `fd` read-only, `size` bytes.
pub(crate) fn map_read_only(fd: impl AsFd, size: usize) -> io::Result<memmap2::MmapRaw> {
    memmap2::MmapOptions::new()
        .len(size)
        .map_raw_read_only(&fd.as_fd())
}
