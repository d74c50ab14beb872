//! Offline Intel DCAP quote verification (SGX and TDX) with the `dcap-qvl`
//! crate, against collateral supplied by the caller.
//!
//! This module owns: loading a quote and its collateral from bytes or files
//! with precise errors for truncated or foreign input, the validity window of
//! a collateral set (so "outside the window" can be told apart from "forged"),
//! and the optional check that the quote's report data equals an expected
//! value. It never fetches collateral over the network.
//!
//! The sample quote and collateral embedded here are the TDX samples that the
//! `dcap-qvl` 0.7.1 crate package ships (`sample/tdx_quote`,
//! `sample/tdx_quote_collateral.json`); see `testdata/README.md`.

use dcap_qvl::configs::RingConfig;
use dcap_qvl::quote::Quote;
use dcap_qvl::verify::QuoteVerifier;
use dcap_qvl::QuoteCollateralV3;
use std::path::Path;

/// The TDX sample quote shipped by `dcap-qvl` 0.7.1 (`sample/tdx_quote`).
pub const SAMPLE_TDX_QUOTE: &[u8] = include_bytes!("../testdata/tdx_quote");
/// Its collateral (`sample/tdx_quote_collateral.json`).
pub const SAMPLE_TDX_COLLATERAL: &[u8] = include_bytes!("../testdata/tdx_quote_collateral.json");
/// A time inside the sample collateral's validity window
/// (2025-07-01T00:00:00Z; the window is 2025-06-19T10:32:27Z to
/// 2025-07-19T10:16:03Z, checked by the tests).
pub const SAMPLE_VERIFY_NOW: u64 = 1_751_328_000;

/// Bytes of a quote header; anything shorter is not a quote.
pub const QUOTE_HEADER_LEN: usize = 48;
/// Offset of the 64-byte report data in a v4/v5 TDX quote (header 48 +
/// 520 bytes of the TD report before report data).
pub const TDX_REPORT_DATA_OFFSET: usize = 568;
/// Offset of the 64-byte report data in an SGX (v3) quote.
pub const SGX_REPORT_DATA_OFFSET: usize = 368;
/// Largest quote we accept; real quotes are 4-8 KiB with an embedded PCK chain.
pub const MAX_QUOTE_LEN: usize = 64 * 1024;
/// Largest collateral file we accept.
pub const MAX_COLLATERAL_LEN: usize = 1024 * 1024;

/// Why a quote was not accepted.
#[derive(Debug, thiserror::Error)]
pub enum DcapError {
    #[error("cannot read {what} file {path}: {source}")]
    Read {
        what: &'static str,
        path: String,
        source: std::io::Error,
    },
    #[error("{what} is {len} bytes, more than the {max} accepted")]
    TooLarge {
        what: &'static str,
        len: usize,
        max: usize,
    },
    #[error("quote is truncated: {len} bytes, a quote header alone is {QUOTE_HEADER_LEN}")]
    Truncated { len: usize },
    #[error("not a DCAP quote: {0}")]
    NotAQuote(String),
    #[error("collateral is not valid QuoteCollateralV3 JSON: {0}")]
    BadCollateral(String),
    #[error(
        "verification time {now} is outside the collateral's validity window \
         [{not_before}, {not_after}] (unix seconds): {reason}"
    )]
    OutsideValidity {
        now: u64,
        not_before: u64,
        not_after: u64,
        reason: String,
    },
    #[error("quote verification failed: {0}")]
    Verification(String),
    #[error("expected report data is {0} bytes; at most 64 are allowed")]
    ExpectedReportDataTooLong(usize),
    #[error("expected report data is not hex: {0}")]
    BadReportDataHex(String),
    #[error("report data mismatch: quote has {actual}, expected {expected}")]
    ReportDataMismatch { expected: String, actual: String },
}

/// What a successful verification established.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct VerifiedQuote {
    /// TCB status of the platform (e.g. `UpToDate`).
    pub tcb_status: String,
    pub advisory_ids: Vec<String>,
    /// True for TDX quotes, false for SGX enclave quotes.
    pub tdx: bool,
    /// The 64 bytes of report data the quote signs.
    #[serde(with = "hex_bytes")]
    pub report_data: [u8; 64],
}

mod hex_bytes {
    pub fn serialize<S: serde::Serializer>(b: &[u8; 64], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&hex::encode(b))
    }
}

/// Pad a 1..=64-byte expected report data to 64 bytes with zeros (the
/// convention for a SHA-256 digest placed in the 64-byte field).
pub fn expected_report_data(bytes: &[u8]) -> Result<[u8; 64], DcapError> {
    if bytes.len() > 64 {
        return Err(DcapError::ExpectedReportDataTooLong(bytes.len()));
    }
    let mut out = [0u8; 64];
    out[..bytes.len()].copy_from_slice(bytes);
    Ok(out)
}

/// Parse expected report data given as hex (optional `0x`), zero-padded.
pub fn parse_report_data_hex(text: &str) -> Result<[u8; 64], DcapError> {
    let t = text.trim();
    let t = t.strip_prefix("0x").unwrap_or(t);
    let bytes = hex::decode(t).map_err(|e| DcapError::BadReportDataHex(e.to_string()))?;
    expected_report_data(&bytes)
}

/// Parse collateral JSON as produced by `dcap-qvl` / a PCCS client.
pub fn parse_collateral(json: &[u8]) -> Result<QuoteCollateralV3, DcapError> {
    if json.len() > MAX_COLLATERAL_LEN {
        return Err(DcapError::TooLarge {
            what: "collateral",
            len: json.len(),
            max: MAX_COLLATERAL_LEN,
        });
    }
    serde_json::from_slice(json).map_err(|e| DcapError::BadCollateral(e.to_string()))
}

/// Check a quote's structure before spending signature checks on it.
pub fn parse_quote(quote: &[u8]) -> Result<Quote, DcapError> {
    if quote.len() > MAX_QUOTE_LEN {
        return Err(DcapError::TooLarge {
            what: "quote",
            len: quote.len(),
            max: MAX_QUOTE_LEN,
        });
    }
    if quote.len() < QUOTE_HEADER_LEN {
        return Err(DcapError::Truncated { len: quote.len() });
    }
    Quote::parse(quote).map_err(|e| DcapError::NotAQuote(format!("{e:#}")))
}

fn read_bounded(path: &Path, what: &'static str, max: usize) -> Result<Vec<u8>, DcapError> {
    let err = |source| DcapError::Read {
        what,
        path: path.display().to_string(),
        source,
    };
    let len = std::fs::metadata(path).map_err(err)?.len();
    if len > max as u64 {
        return Err(DcapError::TooLarge {
            what,
            len: len as usize,
            max,
        });
    }
    std::fs::read(path).map_err(err)
}

/// Read a quote file: raw binary, or hex text (as `tdx-quote.hex` samples
/// and many tools write them).
pub fn read_quote_file(path: &Path) -> Result<Vec<u8>, DcapError> {
    let raw = read_bounded(path, "quote", 2 * MAX_QUOTE_LEN + 2)?;
    let text = raw.trim_ascii();
    let text = text.strip_prefix(b"0x").unwrap_or(text);
    if !text.is_empty() && text.iter().all(u8::is_ascii_hexdigit) {
        if let Ok(bytes) = hex::decode(text) {
            return Ok(bytes);
        }
    }
    Ok(raw)
}

/// Read and parse a collateral JSON file.
pub fn read_collateral_file(path: &Path) -> Result<QuoteCollateralV3, DcapError> {
    parse_collateral(&read_bounded(path, "collateral", MAX_COLLATERAL_LEN)?)
}

/// The interval in which collateral is current: the intersection of the TCB
/// info's and QE identity's `[issueDate, nextUpdate]`. `None` when the JSON
/// lacks those dates. (CRLs and certificates carry their own validity,
/// which `dcap-qvl` checks; this window is used for reporting.)
pub fn collateral_window(c: &QuoteCollateralV3) -> Option<(u64, u64)> {
    fn dates(json: &str) -> Option<(u64, u64)> {
        let v: serde_json::Value = serde_json::from_str(json).ok()?;
        let issue = rfc3339_utc(v.get("issueDate")?.as_str()?)?;
        let next = rfc3339_utc(v.get("nextUpdate")?.as_str()?)?;
        Some((issue, next))
    }
    let (a0, a1) = dates(&c.tcb_info)?;
    let (b0, b1) = dates(&c.qe_identity)?;
    Some((a0.max(b0), a1.min(b1)))
}

/// Parse `YYYY-MM-DDTHH:MM:SSZ` (optionally with fractional seconds) to unix
/// seconds. Intel's collateral uses only UTC times of this shape.
pub fn rfc3339_utc(s: &str) -> Option<u64> {
    let b = s.as_bytes();
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || b[10] != b'T' || !s.ends_with('Z') {
        return None;
    }
    let num = |r: std::ops::Range<usize>| -> Option<u64> { s.get(r)?.parse().ok() };
    let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (h, mi, se) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || se > 60 {
        return None;
    }
    // Days from civil date (Howard Hinnant's algorithm), valid for y >= 1970.
    let (y, mo) = if mo <= 2 {
        (y - 1, mo + 9)
    } else {
        (y, mo - 3)
    };
    let era = y / 400;
    let yoe = y - era * 400;
    let doy = (153 * mo + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = (era * 146_097 + doe).checked_sub(719_468)?;
    Some(days * 86_400 + h * 3_600 + mi * 60 + se)
}

/// A verifier bound to one collateral set, shareable between threads.
pub struct DcapVerifier {
    collateral: QuoteCollateralV3,
    window: Option<(u64, u64)>,
    inner: QuoteVerifier<RingConfig>,
}

impl std::fmt::Debug for DcapVerifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DcapVerifier")
            .field("window", &self.window)
            .finish_non_exhaustive()
    }
}

impl DcapVerifier {
    /// Verifier against Intel's production root CA with the given collateral.
    pub fn new(collateral: QuoteCollateralV3) -> Self {
        Self {
            window: collateral_window(&collateral),
            collateral,
            inner: QuoteVerifier::new_prod().with_config::<RingConfig>(),
        }
    }

    /// Verifier for the embedded sample collateral.
    pub fn sample() -> Self {
        Self::new(parse_collateral(SAMPLE_TDX_COLLATERAL).expect("embedded sample collateral"))
    }

    /// The collateral's validity window, if its dates could be read.
    pub fn window(&self) -> Option<(u64, u64)> {
        self.window
    }

    /// Verify `quote` at unix time `now` and, when given, that its report
    /// data equals `expected_report_data` exactly.
    pub fn verify(
        &self,
        quote: &[u8],
        now: u64,
        expected_report_data: Option<&[u8; 64]>,
    ) -> Result<VerifiedQuote, DcapError> {
        parse_quote(quote)?;
        let report = self
            .inner
            .verify(quote, &self.collateral, now)
            .map_err(|e| self.classify(now, format!("{e:#}")))?;
        let (tdx, report_data) = match (report.report.as_td10(), report.report.as_sgx()) {
            (Some(td), _) => (true, td.report_data),
            (None, Some(sgx)) => (false, sgx.report_data),
            (None, None) => return Err(DcapError::NotAQuote("unknown report body".into())),
        };
        if let Some(expected) = expected_report_data {
            if expected != &report_data {
                return Err(DcapError::ReportDataMismatch {
                    expected: hex::encode(expected),
                    actual: hex::encode(report_data),
                });
            }
        }
        Ok(VerifiedQuote {
            tcb_status: report.status,
            advisory_ids: report.advisory_ids,
            tdx,
            report_data,
        })
    }

    /// A failure at a time outside the window is reported as such, so that a
    /// stale timestamp is not mistaken for a forged quote.
    fn classify(&self, now: u64, reason: String) -> DcapError {
        match self.window {
            Some((not_before, not_after)) if now < not_before || now > not_after => {
                DcapError::OutsideValidity {
                    now,
                    not_before,
                    not_after,
                    reason,
                }
            }
            _ => DcapError::Verification(reason),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verifier() -> DcapVerifier {
        DcapVerifier::sample()
    }

    fn sample_report_data() -> [u8; 64] {
        SAMPLE_TDX_QUOTE[TDX_REPORT_DATA_OFFSET..TDX_REPORT_DATA_OFFSET + 64]
            .try_into()
            .unwrap()
    }

    #[test]
    fn rfc3339_known_values() {
        assert_eq!(rfc3339_utc("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(rfc3339_utc("2025-07-01T00:00:00Z"), Some(SAMPLE_VERIFY_NOW));
        assert_eq!(rfc3339_utc("2000-02-29T12:34:56Z"), Some(951_827_696));
        assert_eq!(rfc3339_utc("2025-06-19T10:16:03.5Z"), Some(1_750_328_163));
        assert_eq!(rfc3339_utc("2025-13-01T00:00:00Z"), None);
        assert_eq!(rfc3339_utc("garbage"), None);
    }

    #[test]
    fn sample_window_contains_pinned_time() {
        let (a, b) = verifier().window().expect("sample has dates");
        assert_eq!(a, rfc3339_utc("2025-06-19T10:32:27Z").unwrap());
        assert_eq!(b, rfc3339_utc("2025-07-19T10:16:03Z").unwrap());
        assert!((a..=b).contains(&SAMPLE_VERIFY_NOW));
    }

    #[test]
    fn sample_verifies_inside_window() {
        let v = verifier()
            .verify(SAMPLE_TDX_QUOTE, SAMPLE_VERIFY_NOW, None)
            .unwrap();
        assert!(v.tdx);
        assert_eq!(v.tcb_status, "UpToDate");
        assert_eq!(v.report_data, sample_report_data());
        // With the right report data it also passes.
        verifier()
            .verify(
                SAMPLE_TDX_QUOTE,
                SAMPLE_VERIFY_NOW,
                Some(&sample_report_data()),
            )
            .unwrap();
    }

    #[test]
    fn fails_outside_window_with_reason() {
        let (a, b) = verifier().window().unwrap();
        for now in [a - 86_400, b + 86_400, 0] {
            let err = verifier().verify(SAMPLE_TDX_QUOTE, now, None).unwrap_err();
            assert!(
                matches!(err, DcapError::OutsideValidity { .. }),
                "at {now}: {err}"
            );
            assert!(err.to_string().contains("outside"), "{err}");
        }
    }

    #[test]
    fn flipped_bytes_are_rejected() {
        let v = verifier();
        // Header (version, attestation key type, QE vendor id), TD report
        // body (TEE TCB SVN, MRTD, report data), the quote signature, the
        // attestation key, the QE report, the QE report signature, the QE
        // authentication data, the PCK leaf and intermediate certificates.
        let positions = [
            0, 2, 12, 48, 200, 570, 631, 640, 700, 800, 900, 1000, 1100, 1300, 2001, 2900, 3100,
            3900,
        ];
        for pos in positions {
            let mut q = SAMPLE_TDX_QUOTE.to_vec();
            q[pos] ^= 0x01;
            let err = v.verify(&q, SAMPLE_VERIFY_NOW, None);
            assert!(err.is_err(), "flip at byte {pos} was accepted");
        }
    }

    #[test]
    fn no_single_flip_changes_what_is_verified() {
        // Flip bit 0 of every byte. The signed header and report body must
        // always be rejected. A few bytes are not authenticated (PEM line
        // breaks, which become whitespace; the copy of Intel's root CA in
        // the chain, since the verifier pins its own root; length fields
        // the parser tolerates): a flip there may verify, but only with
        // exactly the claims of the untouched quote.
        let v = verifier();
        let good = v.verify(SAMPLE_TDX_QUOTE, SAMPLE_VERIFY_NOW, None).unwrap();
        let mut q = SAMPLE_TDX_QUOTE.to_vec();
        let mut accepted = 0;
        for pos in 0..q.len() {
            q[pos] ^= 0x01;
            if let Ok(r) = v.verify(&q, SAMPLE_VERIFY_NOW, None) {
                assert!(
                    pos >= 632,
                    "flip in the signed quote body at {pos} accepted"
                );
                assert_eq!(r, good, "flip at {pos} changed the verified claims");
                accepted += 1;
            }
            q[pos] ^= 0x01;
        }
        // Most of the quote is authenticated.
        assert!(accepted < q.len() / 4, "{accepted} flips accepted");
    }

    #[test]
    fn mismatched_report_data_is_rejected() {
        let mut wrong = sample_report_data();
        wrong[63] ^= 0x80;
        let err = verifier()
            .verify(SAMPLE_TDX_QUOTE, SAMPLE_VERIFY_NOW, Some(&wrong))
            .unwrap_err();
        assert!(matches!(err, DcapError::ReportDataMismatch { .. }), "{err}");
        let zeros = expected_report_data(&[0u8; 32]).unwrap();
        assert!(verifier()
            .verify(SAMPLE_TDX_QUOTE, SAMPLE_VERIFY_NOW, Some(&zeros))
            .is_err());
        assert_eq!(
            parse_report_data_hex(&format!("0x{}", hex::encode(sample_report_data()))).unwrap(),
            sample_report_data()
        );
        assert!(matches!(
            parse_report_data_hex("zz"),
            Err(DcapError::BadReportDataHex(_))
        ));
        assert!(matches!(
            expected_report_data(&[0u8; 65]),
            Err(DcapError::ExpectedReportDataTooLong(65))
        ));
    }

    #[test]
    fn truncated_and_foreign_inputs_are_rejected() {
        let v = verifier();
        for len in [0, 10, 47] {
            let err = v
                .verify(&SAMPLE_TDX_QUOTE[..len], SAMPLE_VERIFY_NOW, None)
                .unwrap_err();
            assert!(matches!(err, DcapError::Truncated { .. }), "{err}");
        }
        // Cuts into the header, body, signature, QE report, PCK chain.
        for len in [48, 100, 632, 1000, 2000, 3500] {
            assert!(
                v.verify(&SAMPLE_TDX_QUOTE[..len], SAMPLE_VERIFY_NOW, None)
                    .is_err(),
                "truncated to {len} was accepted"
            );
        }
        // A JSON file, a PNG-like header and zeros are not quotes.
        for junk in [
            SAMPLE_TDX_COLLATERAL,
            &[0x89, b'P', b'N', b'G'][..],
            &[0u8; 5000][..],
        ] {
            assert!(v.verify(junk, SAMPLE_VERIFY_NOW, None).is_err());
        }
        let huge = vec![0u8; MAX_QUOTE_LEN + 1];
        assert!(matches!(
            v.verify(&huge, SAMPLE_VERIFY_NOW, None),
            Err(DcapError::TooLarge { .. })
        ));
    }

    #[test]
    fn bad_collateral_is_rejected() {
        assert!(matches!(
            parse_collateral(b"{\"not\": \"collateral\"}"),
            Err(DcapError::BadCollateral(_))
        ));
        assert!(parse_collateral(&SAMPLE_TDX_COLLATERAL[..100]).is_err());
        assert!(parse_collateral(SAMPLE_TDX_QUOTE).is_err());
    }

    #[test]
    fn quote_files_raw_and_hex() {
        let dir = std::env::temp_dir().join(format!("webproof-dcap-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let raw = dir.join("q.bin");
        let hexf = dir.join("q.hex");
        std::fs::write(&raw, SAMPLE_TDX_QUOTE).unwrap();
        std::fs::write(&hexf, format!("{}\n", hex::encode(SAMPLE_TDX_QUOTE))).unwrap();
        assert_eq!(read_quote_file(&raw).unwrap(), SAMPLE_TDX_QUOTE);
        assert_eq!(read_quote_file(&hexf).unwrap(), SAMPLE_TDX_QUOTE);
        assert!(matches!(
            read_quote_file(&dir.join("missing")),
            Err(DcapError::Read { .. })
        ));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
