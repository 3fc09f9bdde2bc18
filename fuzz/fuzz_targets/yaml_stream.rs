//! The YAML reader every manifest and request body goes through: any bytes give values or an
//! error, never a panic, and never more values than the node budget allows.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let _ = tidegate_core::yaml::parse_stream(text);
    let _ = tidegate_core::yaml::parse_one_with(text, tidegate_core::yaml::Duplicates::LastWins);
    let _ = tidegate_core::yaml::check_aliasing(text);
});
