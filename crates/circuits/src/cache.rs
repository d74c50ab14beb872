//! Built-once circuits: each fixed circuit is built on first use and shared
//! for the life of the process (`OnceLock`, which also works in WebAssembly).
//! The TLS key schedules are cached in their session-independent form, with
//! transcript hashes and randoms as (public) input groups; the variants with
//! those values folded in as constants are cheaper in AND gates but are built
//! per session (see [`crate::tls`]).

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
    /// [`crate::sha2::compress_public_schedule_circuit`] for SHA-256.
    sha256_compress_public_schedule,
    crate::sha2::compress_public_schedule_circuit(crate::sha2::HashAlg::Sha256)
);
cached!(
    /// [`crate::sha2::compress_public_schedule_circuit`] for SHA-512/384.
    sha512_compress_public_schedule,
    crate::sha2::compress_public_schedule_circuit(crate::sha2::HashAlg::Sha384)
);
cached!(
    /// [`crate::chacha::chacha20_block_circuit`].
    chacha20_block,
    crate::chacha::chacha20_block_circuit()
);

/// [`crate::tls::tls13_key_schedule_circuit_public_inputs`] for `suite`.
///
/// Panics unless the key length is 16 or 32 bytes (all TLS 1.3 suites).
pub fn tls13_key_schedule(suite: crate::tls::Tls13Suite) -> &'static Circuit {
    use crate::sha2::HashAlg;
    static CELLS: [OnceLock<Circuit>; 4] = [const { OnceLock::new() }; 4];
    let h = match suite.hash {
        HashAlg::Sha256 => 0,
        HashAlg::Sha384 => 1,
    };
    let k = match suite.key_len {
        16 => 0,
        32 => 1,
        other => panic!("no TLS 1.3 suite has {other}-byte keys"),
    };
    CELLS[2 * h + k].get_or_init(|| crate::tls::tls13_key_schedule_circuit_public_inputs(suite))
}

/// [`crate::tls::tls12_key_schedule_circuit_public_inputs`] for `suite`.
///
/// Panics unless the key length is 16 or 32 and the IV length 4 or 12
/// bytes (the TLS 1.2 AEAD suites).
pub fn tls12_key_schedule(suite: crate::tls::Tls12Suite) -> &'static Circuit {
    use crate::sha2::HashAlg;
    static CELLS: [OnceLock<Circuit>; 8] = [const { OnceLock::new() }; 8];
    let h = match suite.hash {
        HashAlg::Sha256 => 0,
        HashAlg::Sha384 => 1,
    };
    let k = match suite.key_len {
        16 => 0,
        32 => 1,
        other => panic!("no TLS 1.2 AEAD suite has {other}-byte keys"),
    };
    let i = match suite.iv_len {
        4 => 0,
        12 => 1,
        other => panic!("no TLS 1.2 AEAD suite has a {other}-byte IV"),
    };
    CELLS[4 * h + 2 * k + i]
        .get_or_init(|| crate::tls::tls12_key_schedule_circuit_public_inputs(suite))
}

#[cfg(test)]
mod tests {
    #[test]
    fn cached_is_shared() {
        assert!(std::ptr::eq(super::aes128(), super::aes128()));
        assert_eq!(super::aes128().and_count(), 6400);
    }
}
