//! `serve --link-key-file`: the key capability links are signed with, shared by the instances that
//! share a store so that a link minted by one is served by all.

use std::path::{Path, PathBuf};

use dual_server::LinkKey;
use dual_server::links::LinkKeyError;

/// Why the link key file could not be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LinkKeyFileError {
    /// The file could not be read.
    #[error("cannot read the link key file {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The error.
        #[source]
        source: std::io::Error,
    },
    /// The path is not a regular file (`/dev/urandom`, a FIFO, a directory), or it is larger than
    /// [`MAX_KEY_FILE_BYTES`]: a key file holds the key and nothing else.
    #[error(
        "the link key file {path} is not a regular file of at most {MAX_KEY_FILE_BYTES} bytes (make one with `head -c 32 /dev/urandom > FILE`)"
    )]
    NotAKeyFile {
        /// The file.
        path: PathBuf,
    },
    /// The file holds too few bytes.
    #[error("the link key file {path} holds no usable key: {source}")]
    Key {
        /// The file.
        path: PathBuf,
        /// Why the key was refused (fewer than 32 bytes).
        #[source]
        source: LinkKeyError,
    },
}

/// The largest key file [`read`] accepts.
pub const MAX_KEY_FILE_BYTES: u64 = 4096;

/// The key in the file at `path`: all of its bytes (at least 32; `head -c 32 /dev/urandom > FILE`
/// makes one).
///
/// # Errors
/// [`LinkKeyFileError`] when the file cannot be read, is not a regular file, holds more than
/// [`MAX_KEY_FILE_BYTES`] or fewer than 32 bytes.
pub fn read(path: &Path) -> Result<LinkKey, LinkKeyFileError> {
    let read_error = |source| LinkKeyFileError::Read {
        path: path.to_owned(),
        source,
    };
    let not_a_key_file = || LinkKeyFileError::NotAKeyFile {
        path: path.to_owned(),
    };
    // The metadata before opening: opening a FIFO would block start-up until a writer came.
    let metadata = std::fs::metadata(path).map_err(read_error)?;
    if !metadata.is_file() || metadata.len() > MAX_KEY_FILE_BYTES {
        return Err(not_a_key_file());
    }
    let mut bytes = Vec::new();
    let file = std::fs::File::open(path).map_err(read_error)?;
    // Bounded even if the file grew since: one byte past the cap says it is too large.
    std::io::Read::read_to_end(&mut std::io::Read::take(file, MAX_KEY_FILE_BYTES + 1), &mut bytes)
        .map_err(read_error)?;
    if bytes.len() as u64 > MAX_KEY_FILE_BYTES {
        return Err(not_a_key_file());
    }
    LinkKey::from_bytes(&bytes).map_err(|source| LinkKeyFileError::Key {
        path: path.to_owned(),
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_needs_32_bytes() {
        let dir = std::env::temp_dir().join(format!("dual-serve-link-key-{:016x}", fastrand::u64(..)));
        std::fs::create_dir_all(&dir).expect("a directory");
        let short = dir.join("short");
        let good = dir.join("good");
        std::fs::write(&short, [7_u8; 31]).expect("written");
        std::fs::write(&good, [7_u8; 32]).expect("written");
        assert!(matches!(read(&short), Err(LinkKeyFileError::Key { .. })));
        assert!(read(&good).is_ok());
        assert!(matches!(
            read(&dir.join("missing")),
            Err(LinkKeyFileError::Read { .. })
        ));
        // Not key files: a device that never ends, a directory, a file past the cap.
        let large = dir.join("large");
        std::fs::write(&large, vec![7_u8; 4097]).expect("written");
        for path in [Path::new("/dev/urandom"), dir.as_path(), large.as_path()] {
            let refused = read(path);
            assert!(
                matches!(refused, Err(LinkKeyFileError::NotAKeyFile { .. })),
                "{path:?}: {refused:?}"
            );
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
