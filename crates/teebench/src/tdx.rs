//! Intel TDX quote generation through the Linux configfs-tsm report
//! interface (`/sys/kernel/config/tsm/report/`, kernel 6.7+).
//!
//! One generation is: `mkdir` a report entry, write the 64-byte report data
//! to `inblob`, read the quote from `outblob`, `rmdir` the entry. The kernel
//! bumps `generation` on every write, so reading it before and after
//! `outblob` detects another writer racing on the same entry. On a host that
//! is not a TDX guest the interface is absent and [`TsmReport::open`] says so.

use std::path::{Path, PathBuf};

/// Where the kernel exposes configfs-tsm reports.
pub const DEFAULT_TSM_ROOT: &str = "/sys/kernel/config/tsm/report";
/// Largest quote we read back (TDX quotes are ~5-8 KiB).
const MAX_OUTBLOB: u64 = 1 << 20;

#[derive(Debug, thiserror::Error)]
pub enum TdxError {
    #[error(
        "this host is not a TDX guest: {root} does not exist ({detail}). Quote generation \
         needs a TDX guest kernel with CONFIG_TSM_REPORTS, the tdx_guest driver and configfs \
         mounted at /sys/kernel/config"
    )]
    NotTdxGuest { root: String, detail: String },
    #[error("configfs-tsm provider is {0:?}, not tdx_guest: this is not a TDX guest")]
    WrongProvider(String),
    #[error("configfs-tsm {op} {path}: {source}")]
    Io {
        op: &'static str,
        path: String,
        source: std::io::Error,
    },
    #[error("report entry {0} changed generation while reading the quote (concurrent writer)")]
    Race(String),
    #[error("configfs-tsm returned an empty or oversized quote ({0} bytes)")]
    BadOutblob(usize),
}

/// A handle on the configfs-tsm report directory.
#[derive(Debug, Clone)]
pub struct TsmReport {
    root: PathBuf,
}

/// Removes the report entry even when generation fails half-way.
struct EntryGuard<'a>(&'a Path);
impl Drop for EntryGuard<'_> {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir(self.0);
    }
}

impl TsmReport {
    /// Open the interface at [`DEFAULT_TSM_ROOT`].
    pub fn open_default() -> Result<Self, TdxError> {
        Self::open(Path::new(DEFAULT_TSM_ROOT))
    }

    /// Open the interface at `root`, failing plainly when it is absent.
    pub fn open(root: &Path) -> Result<Self, TdxError> {
        if root.is_dir() {
            return Ok(Self {
                root: root.to_path_buf(),
            });
        }
        let configfs = Path::new("/sys/kernel/config");
        let detail = if !configfs.join("tsm").exists() {
            let mounted = std::fs::read_to_string("/proc/mounts")
                .map(|m| m.lines().any(|l| l.contains(" configfs ")))
                .unwrap_or(false);
            let dev = Path::new("/dev/tdx_guest").exists();
            format!(
                "configfs {}, no tsm subsystem, /dev/tdx_guest {}",
                if mounted {
                    "is mounted"
                } else {
                    "is not mounted"
                },
                if dev { "present" } else { "absent" }
            )
        } else {
            "tsm subsystem present but no report directory".into()
        };
        Err(TdxError::NotTdxGuest {
            root: root.display().to_string(),
            detail,
        })
    }

    /// Generate one quote over `report_data` using entry `name`.
    pub fn generate(&self, name: &str, report_data: &[u8; 64]) -> Result<Vec<u8>, TdxError> {
        let entry = self.root.join(name);
        let io = |op: &'static str, path: &Path| {
            let path = path.display().to_string();
            move |source| TdxError::Io { op, path, source }
        };
        std::fs::create_dir(&entry).map_err(io("mkdir", &entry))?;
        let _guard = EntryGuard(&entry);
        let provider_path = entry.join("provider");
        let provider =
            std::fs::read_to_string(&provider_path).map_err(io("read", &provider_path))?;
        if provider.trim() != "tdx_guest" {
            return Err(TdxError::WrongProvider(provider.trim().to_string()));
        }
        let inblob = entry.join("inblob");
        std::fs::write(&inblob, report_data).map_err(io("write", &inblob))?;
        let gen_path = entry.join("generation");
        let gen_before = std::fs::read_to_string(&gen_path).map_err(io("read", &gen_path))?;
        let outblob = entry.join("outblob");
        let quote = read_limited(&outblob).map_err(io("read", &outblob))?;
        let gen_after = std::fs::read_to_string(&gen_path).map_err(io("read", &gen_path))?;
        if gen_before != gen_after {
            return Err(TdxError::Race(entry.display().to_string()));
        }
        if quote.is_empty() || quote.len() as u64 >= MAX_OUTBLOB {
            return Err(TdxError::BadOutblob(quote.len()));
        }
        Ok(quote)
    }
}

fn read_limited(path: &Path) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut out = Vec::new();
    std::fs::File::open(path)?
        .take(MAX_OUTBLOB)
        .read_to_end(&mut out)?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_interface_is_reported_plainly() {
        let err = TsmReport::open(Path::new("/nonexistent/tsm/report")).unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("not a TDX guest"), "{msg}");
    }

    #[test]
    fn this_host_is_not_a_tdx_guest() {
        // The development and CI machines are not TDX guests; if this test is
        // ever run inside one, opening must succeed instead.
        match TsmReport::open_default() {
            Err(TdxError::NotTdxGuest { .. }) => {}
            Ok(_) => assert!(Path::new(DEFAULT_TSM_ROOT).is_dir()),
            Err(e) => panic!("unexpected error {e}"),
        }
    }

    #[test]
    fn generation_on_a_plain_directory_fails_cleanly() {
        // A plain directory is not configfs: mkdir works but no provider file
        // appears, which must be an error and leave nothing behind.
        let root = std::env::temp_dir().join(format!("webproof-tsm-{}", std::process::id()));
        std::fs::create_dir_all(&root).unwrap();
        let tsm = TsmReport::open(&root).unwrap();
        let err = tsm.generate("e1", &[0u8; 64]).unwrap_err();
        assert!(matches!(err, TdxError::Io { op: "read", .. }), "{err}");
        assert!(!root.join("e1").exists());
        std::fs::remove_dir_all(&root).unwrap();
    }
}
