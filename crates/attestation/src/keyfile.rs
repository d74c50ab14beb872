//! Signing-key files, the `WEBPROOF_SIGNING_KEY` environment variable, and
//! key generation from the operating system's RNG.
//!
//! The only module that touches the file system (feature `fs`, on by
//! default; browser builds turn it off). A key file holds one line, the
//! secret text form of [`SigningKey::to_secret_text`]; it is created with
//! mode 0600 and never overwritten, and loading refuses a file that group or
//! others can access. Nothing here prints or logs a secret.

use std::fs::OpenOptions;
use std::io::Write;
use std::path::{Path, PathBuf};

use zeroize::Zeroizing;

use crate::keys::{Scheme, SigningKey};

/// Environment variable that may hold a signing key's secret text.
pub const SIGNING_KEY_ENV: &str = "WEBPROOF_SIGNING_KEY";

#[derive(Debug, thiserror::Error)]
pub enum KeyFileError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path} is accessible by group or others (mode {mode:o}); run chmod 600 on it")]
    Permissions { path: PathBuf, mode: u32 },
    #[error("no signing key: give a key file or set {SIGNING_KEY_ENV}")]
    Missing,
    #[error("{origin}: {source}")]
    Parse {
        origin: String,
        source: crate::Error,
    },
}

/// A fresh signing key from the operating system's RNG.
pub fn generate_signing_key(scheme: Scheme) -> SigningKey {
    SigningKey::generate(scheme, &mut rand_core::OsRng)
}

/// Writes `key` to a new file at `path` with mode 0600 (refuses to
/// overwrite an existing file).
pub fn write_signing_key(path: &Path, key: &SigningKey) -> Result<(), KeyFileError> {
    let io = |source| KeyFileError::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut opts = OpenOptions::new();
    opts.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.mode(0o600);
    }
    let mut f = opts.open(path).map_err(io)?;
    let mut text = Zeroizing::new(key.to_secret_text().to_string());
    text.push('\n');
    f.write_all(text.as_bytes()).map_err(io)?;
    f.sync_all().map_err(io)
}

/// Reads a signing key from `path`.
pub fn read_signing_key(path: &Path) -> Result<SigningKey, KeyFileError> {
    let io = |source| KeyFileError::Io {
        path: path.to_path_buf(),
        source,
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(path).map_err(io)?.permissions().mode();
        if mode & 0o077 != 0 {
            return Err(KeyFileError::Permissions {
                path: path.to_path_buf(),
                mode: mode & 0o777,
            });
        }
    }
    let text = Zeroizing::new(std::fs::read_to_string(path).map_err(io)?);
    SigningKey::from_secret_text(&text).map_err(|source| KeyFileError::Parse {
        origin: path.display().to_string(),
        source,
    })
}

/// Loads the signing key from `path` if given, else from
/// [`SIGNING_KEY_ENV`].
pub fn load_signing_key(path: Option<&Path>) -> Result<SigningKey, KeyFileError> {
    if let Some(path) = path {
        return read_signing_key(path);
    }
    let text = Zeroizing::new(std::env::var(SIGNING_KEY_ENV).map_err(|_| KeyFileError::Missing)?);
    SigningKey::from_secret_text(&text).map_err(|source| KeyFileError::Parse {
        origin: SIGNING_KEY_ENV.to_string(),
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn write_then_read_with_mode_0600_and_no_overwrite() {
        let dir = std::env::temp_dir().join(format!("webproof-keyfile-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("k.key");
        let _ = std::fs::remove_file(&path);
        let key = SigningKey::from_secret_bytes(Scheme::Ed25519, &[5; 32]).unwrap();
        write_signing_key(&path, &key).unwrap();
        assert!(
            write_signing_key(&path, &key).is_err(),
            "must not overwrite"
        );
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            assert_eq!(
                std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
                0o600
            );
        }
        assert_eq!(read_signing_key(&path).unwrap().key_id(), key.key_id());
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
            assert!(matches!(
                read_signing_key(&path),
                Err(KeyFileError::Permissions { .. })
            ));
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn parse_errors_do_not_echo_the_secret() {
        let err = SigningKey::from_secret_text("ed25519-secret:zz1234").unwrap_err();
        assert!(!err.to_string().contains("zz1234"));
    }
}
