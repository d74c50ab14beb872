//! Built-once circuits: each fixed circuit is built on first use and shared
//! for the life of the process (`OnceLock`, which also works in WebAssembly).
//! Circuits that depend on public session data (TLS key schedules with their
//! transcript hashes) are built per session instead; see [`crate::tls`].

use std::sync::OnceLock;

use crate::Circuit;

macro_rules! cached {
    ($(#[$doc:meta])* $name:ident, $build:expr) => {
        $(#[$doc])*
        pub fn $name() -> &'static Circuit {
            static CELL: OnceLock<Circuit> = OnceLock::new();
            CELL.get_or_init(|| $build)
        }
    };
}

cached!(
    /// [`crate::aes::aes128_circuit`]: AES-128 with key schedule.
    aes128,
    crate::aes::aes128_circuit()
);
cached!(
    /// [`crate::aes::aes256_circuit`]: AES-256 with key schedule.
    aes256,
    crate::aes::aes256_circuit()
);
cached!(
    /// [`crate::sha2::sha256_compress_circuit`].
    sha256_compress,
    crate::sha2::sha256_compress_circuit()
);
cached!(
    /// [`crate::sha2::sha512_compress_circuit`].
    sha512_compress,
    crate::sha2::sha512_compress_circuit()
);
cached!(
    /// [`crate::chacha::chacha20_block_circuit`].
    chacha20_block,
    crate::chacha::chacha20_block_circuit()
);

#[cfg(test)]
mod tests {
    #[test]
    fn cached_is_shared() {
        assert!(std::ptr::eq(super::aes128(), super::aes128()));
        assert_eq!(super::aes128().and_count(), 6400);
    }
}
