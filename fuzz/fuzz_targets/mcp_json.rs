//! Fuzzes `mcp.json` validation for a plugin at a non-existent root: servers or diagnostics,
//! never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = rho_plugins::fuzzing::mcp(data);
});
