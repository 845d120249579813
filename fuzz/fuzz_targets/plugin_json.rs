//! Fuzzes `plugin.json` validation: any bytes must yield a manifest or diagnostics, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = rho_plugins::fuzzing::manifest(data);
});
