//! Relay frames (`RelayFrame::decode`): never a panic, and whatever decodes
//! re-encodes to a frame that decodes to the same value.
#![no_main]
use libfuzzer_sys::fuzz_target;
use webproof_proxy::protocol::RelayFrame;

fuzz_target!(|data: &[u8]| {
    if let Ok(f) = RelayFrame::decode(data) {
        let again = RelayFrame::decode(&f.encode()).expect("an encoded frame decodes");
        // Free text is decoded lossily; everything else is exact.
        match (&f, &again) {
            (RelayFrame::ServerClosed(_), RelayFrame::ServerClosed(_))
            | (RelayFrame::CloseAck(Err(_)), RelayFrame::CloseAck(Err(_))) => {}
            _ => assert_eq!(f, again),
        }
        if !matches!(f, RelayFrame::ServerClosed(_) | RelayFrame::CloseAck(Err(_))) {
            assert_eq!(f.encode(), data);
        }
    }
});
