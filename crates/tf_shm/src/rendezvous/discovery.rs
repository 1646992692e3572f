//! Where an arena's rendezvous lives: `<runtime dir>/<domain>/<name>.{lock,sock}`.
//!
//! Runtime dir: `$TF_SHM_RUNTIME_DIR`, else `$XDG_RUNTIME_DIR/tf_shm`, else `/run/tf_shm` if we
//! can write there, else `/tmp/tf_shm-<uid>`. Domain: `$TF_SHM_DOMAIN`, else `$ROS_DOMAIN_ID`,
//! else 0. Name: `$TF_SHM_NAME`, else `default`. An empty variable counts as unset (as rcl
//! treats `ROS_DOMAIN_ID=`); a set but invalid one is an error naming it, never a silent
//! fall-through to the next candidate. What goes wrong finding or checking it is a
//! [`LocationError`], which both roles' errors wrap.

use std::ffi::OsString;
use std::fmt;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// Longest arena name, bytes.
pub const MAX_ARENA_NAME_LEN: usize = 64;
/// Room in `sockaddr_un.sun_path` (108 bytes with the terminating NUL).
const MAX_SOCKET_PATH: usize = 107;

/// The resolved rendezvous of one arena.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Location {
    /// The runtime dir (holds one directory per domain).
    pub runtime_dir: PathBuf,
    /// The ROS domain.
    pub domain: u32,
    /// The arena name.
    pub name: String,
    /// `<runtime_dir>/<domain>`.
    pub domain_dir: PathBuf,
    /// `<domain_dir>/<name>.lock`.
    pub lock_path: PathBuf,
    /// `<domain_dir>/<name>.sock`.
    pub sock_path: PathBuf,
}

impl Location {
    /// Builds the paths; checks the name and that the socket path fits `sun_path`.
    pub fn new(runtime_dir: PathBuf, domain: u32, name: &str) -> Result<Location, LocationError> {
        check_name(name).map_err(|reason| LocationError::InvalidName {
            name: name.to_owned(),
            reason,
        })?;
        let domain_dir = runtime_dir.join(domain.to_string());
        let sock_path = domain_dir.join(format!("{name}.sock"));
        if sock_path.as_os_str().len() > MAX_SOCKET_PATH {
            return Err(LocationError::PathTooLong { path: sock_path });
        }
        Ok(Location {
            lock_path: domain_dir.join(format!("{name}.lock")),
            sock_path,
            domain_dir,
            runtime_dir,
            domain,
            name: name.to_owned(),
        })
    }
}

/// Why the rendezvous of an arena (`<runtime dir>/<domain>/<name>.{lock,sock}`) cannot be used.
#[derive(Debug)]
pub enum LocationError {
    /// A set environment variable (`TF_SHM_RUNTIME_DIR`, `TF_SHM_DOMAIN`, `ROS_DOMAIN_ID`,
    /// `TF_SHM_NAME`, `XDG_RUNTIME_DIR`) is invalid.
    InvalidEnv {
        /// The variable.
        var: &'static str,
        /// Its value.
        value: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// The arena name is invalid: empty, longer than 64 bytes, containing `/` or NUL, or `.`
    /// or `..`.
    InvalidName {
        /// The name.
        name: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// The socket path does not fit in a Unix socket address (107 bytes).
    PathTooLong {
        /// The path.
        path: PathBuf,
    },
    /// A rendezvous directory is not safe to use: not a directory, another user's, or
    /// writable by other users.
    UnsafeDir {
        /// The directory.
        path: PathBuf,
        /// Why.
        reason: &'static str,
    },
    /// Inspecting, creating or changing a rendezvous directory or file failed.
    Io {
        /// What was being done.
        op: &'static str,
        /// On which path.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
}

impl LocationError {
    pub(crate) fn io(op: &'static str, path: &Path, source: std::io::Error) -> LocationError {
        LocationError::Io {
            op,
            path: path.to_owned(),
            source,
        }
    }
}

impl fmt::Display for LocationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LocationError::InvalidEnv { var, value, reason } => write!(
                f,
                "environment variable {var}={value:?} is invalid: {reason}; fix or unset it"
            ),
            LocationError::InvalidName { name, reason } => {
                write!(f, "arena name {name:?} is invalid: it {reason}")
            }
            LocationError::PathTooLong { path } => write!(
                f,
                "socket path {} is longer than a Unix socket allows: set TF_SHM_RUNTIME_DIR to a \
                 shorter directory",
                path.display()
            ),
            LocationError::UnsafeDir { path, reason } => write!(
                f,
                "refusing {}: it {reason}; remove it or set TF_SHM_RUNTIME_DIR to a directory \
                 of your own",
                path.display()
            ),
            LocationError::Io { op, path, source } => {
                write!(f, "cannot {op} {}: {source}", path.display())
            }
        }
    }
}

impl std::error::Error for LocationError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            LocationError::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// What the caller fixed explicitly; the rest comes from the environment.
#[derive(Clone, Debug, Default)]
pub(crate) struct Overrides {
    /// Runtime dir.
    pub runtime_dir: Option<PathBuf>,
    /// Domain.
    pub domain: Option<u32>,
    /// Name.
    pub name: Option<String>,
}

/// Resolves a location from `o` and the process environment.
pub(crate) fn resolve(o: &Overrides) -> Result<Location, LocationError> {
    resolve_with(o, |k| std::env::var_os(k))
}

/// [`resolve`] with an explicit environment (for tests).
pub(crate) fn resolve_with(
    o: &Overrides,
    env: impl Fn(&str) -> Option<OsString>,
) -> Result<Location, LocationError> {
    let var = |k: &str| env(k).filter(|v| !v.is_empty());
    let invalid =
        |var: &'static str, value: &OsString, reason: &'static str| LocationError::InvalidEnv {
            var,
            value: value.to_string_lossy().into_owned(),
            reason,
        };
    let absolute = |k: &'static str| -> Result<Option<PathBuf>, LocationError> {
        match var(k) {
            None => Ok(None),
            Some(v) if Path::new(&v).is_absolute() => Ok(Some(PathBuf::from(v))),
            Some(v) => Err(invalid(k, &v, "must be an absolute path")),
        }
    };
    let runtime_dir = match &o.runtime_dir {
        Some(d) => d.clone(),
        None => match absolute("TF_SHM_RUNTIME_DIR")? {
            Some(d) => d,
            None => match absolute("XDG_RUNTIME_DIR")? {
                Some(d) => d.join("tf_shm"),
                None if run_writable() => PathBuf::from("/run/tf_shm"),
                None => PathBuf::from(format!(
                    "/tmp/tf_shm-{}",
                    rustix::process::geteuid().as_raw()
                )),
            },
        },
    };
    let domain = match o.domain {
        Some(d) => d,
        None => {
            let parse = |k: &'static str| -> Result<Option<u32>, LocationError> {
                var(k)
                    .map(|v| {
                        v.to_str()
                            .and_then(|s| s.trim().parse::<u32>().ok())
                            .ok_or_else(|| invalid(k, &v, "must be a non-negative integer"))
                    })
                    .transpose()
            };
            match parse("TF_SHM_DOMAIN")? {
                Some(d) => d,
                None => parse("ROS_DOMAIN_ID")?.unwrap_or(0),
            }
        }
    };
    let name = match &o.name {
        Some(n) => n.clone(),
        None => match var("TF_SHM_NAME") {
            None => "default".to_owned(),
            Some(v) => {
                let s = v
                    .to_str()
                    .ok_or_else(|| invalid("TF_SHM_NAME", &v, "must be UTF-8"))?;
                check_name(s).map_err(|reason| invalid("TF_SHM_NAME", &v, reason))?;
                s.to_owned()
            }
        },
    };
    Location::new(runtime_dir, domain, &name)
}

fn check_name(name: &str) -> Result<(), &'static str> {
    if name.is_empty() {
        return Err("must not be empty");
    }
    if name.len() > MAX_ARENA_NAME_LEN {
        return Err("must be at most 64 bytes");
    }
    if name.contains(['/', '\0']) || name == "." || name == ".." {
        return Err("must not contain '/' or NUL, nor be '.' or '..'");
    }
    Ok(())
}

/// `/run/tf_shm` is usable if it is writable, or absent with `/run` writable.
fn run_writable() -> bool {
    use rustix::fs::{access, Access};
    match access("/run/tf_shm", Access::WRITE_OK | Access::EXEC_OK) {
        Ok(()) => true,
        Err(rustix::io::Errno::NOENT) => access("/run", Access::WRITE_OK | Access::EXEC_OK).is_ok(),
        Err(_) => false,
    }
}

/// Checks an existing directory: ours (or, with `group`, that group's and not world-writable),
/// and not writable by anyone else. `Ok(false)` if it does not exist.
pub fn check_dir(path: &Path, group: Option<u32>) -> Result<bool, LocationError> {
    let meta = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(LocationError::io("inspect", path, e)),
    };
    let unsafe_dir = |reason: &'static str| LocationError::UnsafeDir {
        path: path.to_owned(),
        reason,
    };
    if !meta.is_dir() {
        return Err(unsafe_dir("is not a directory"));
    }
    let me = rustix::process::geteuid().as_raw();
    let mode = meta.permissions().mode();
    if meta.uid() == me {
        let writable_by_others = if group.is_some_and(|g| g == meta.gid()) {
            0o002
        } else {
            0o022
        };
        if mode & writable_by_others != 0 {
            return Err(unsafe_dir("is writable by other users"));
        }
        return Ok(true);
    }
    if group.is_some_and(|g| g == meta.gid()) && mode & 0o002 == 0 {
        return Ok(true);
    }
    Err(unsafe_dir("belongs to another user"))
}

/// Creates (if missing) the runtime and domain directories, 0700 or 0750 with `group` (then
/// owned by that group), and checks them.
pub(crate) fn prepare_dirs(loc: &Location, group: Option<u32>) -> Result<(), LocationError> {
    for dir in [&loc.runtime_dir, &loc.domain_dir] {
        if !check_dir(dir, group)? {
            let mode = if group.is_some() { 0o750 } else { 0o700 };
            match std::fs::DirBuilder::new()
                .recursive(true)
                .mode(mode)
                .create(dir)
            {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(LocationError::io("create", dir, e)),
            }
            if let Some(g) = group {
                std::os::unix::fs::chown(dir, None, Some(g))
                    .map_err(|e| LocationError::io("chown", dir, e))?;
                // chown may clear nothing here, but the mode must not depend on the umask.
                std::fs::set_permissions(dir, std::fs::Permissions::from_mode(mode))
                    .map_err(|e| LocationError::io("chmod", dir, e))?;
            }
            check_dir(dir, group)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<OsString> + 'a {
        move |k| {
            vars.iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| OsString::from(v))
        }
    }

    #[test]
    fn chain_prefers_tf_shm_then_xdg() {
        let o = Overrides::default();
        let l = resolve_with(
            &o,
            env(&[("TF_SHM_RUNTIME_DIR", "/a"), ("XDG_RUNTIME_DIR", "/b")]),
        )
        .unwrap();
        assert_eq!(l.runtime_dir, PathBuf::from("/a"));
        assert_eq!(l.sock_path, PathBuf::from("/a/0/default.sock"));
        let l = resolve_with(&o, env(&[("XDG_RUNTIME_DIR", "/run/user/7")])).unwrap();
        assert_eq!(
            l.lock_path,
            PathBuf::from("/run/user/7/tf_shm/0/default.lock")
        );
    }

    #[test]
    fn domain_and_name_from_env() {
        let o = Overrides::default();
        let vars = [
            ("TF_SHM_RUNTIME_DIR", "/a"),
            ("ROS_DOMAIN_ID", "7"),
            ("TF_SHM_NAME", "sim"),
        ];
        let l = resolve_with(&o, env(&vars)).unwrap();
        assert_eq!((l.domain, l.name.as_str()), (7, "sim"));
        let vars = [
            ("TF_SHM_RUNTIME_DIR", "/a"),
            ("ROS_DOMAIN_ID", "7"),
            ("TF_SHM_DOMAIN", "3"),
        ];
        assert_eq!(resolve_with(&o, env(&vars)).unwrap().domain, 3);
        let vars = [("TF_SHM_RUNTIME_DIR", "/a"), ("ROS_DOMAIN_ID", "")];
        assert_eq!(resolve_with(&o, env(&vars)).unwrap().domain, 0);
    }

    #[test]
    fn invalid_variables_are_named() {
        let o = Overrides::default();
        let cases = [
            ("TF_SHM_RUNTIME_DIR", "relative/dir"),
            ("XDG_RUNTIME_DIR", "relative"),
            ("TF_SHM_DOMAIN", "-1"),
            ("ROS_DOMAIN_ID", "seven"),
            ("TF_SHM_NAME", "a/b"),
        ];
        for (k, v) in cases {
            let mut vars = vec![(k, v)];
            if k != "TF_SHM_RUNTIME_DIR" && k != "XDG_RUNTIME_DIR" {
                vars.push(("TF_SHM_RUNTIME_DIR", "/a"));
            }
            let e = resolve_with(&o, env(&vars)).unwrap_err();
            assert!(
                matches!(e, LocationError::InvalidEnv { var, .. } if var == k),
                "{k}: {e}"
            );
            assert!(e.to_string().contains(k));
        }
    }

    #[test]
    fn long_socket_paths_are_refused() {
        let o = Overrides {
            runtime_dir: Some(PathBuf::from(format!("/{}", "x".repeat(100)))),
            ..Overrides::default()
        };
        assert!(matches!(
            resolve_with(&o, env(&[])),
            Err(LocationError::PathTooLong { .. })
        ));
    }
}
