//! Fuzzes `${PLUGIN_ROOT}` / `${PLUGIN_DATA}` expansion on arbitrary UTF-8.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    let out = rho_plugins::expand_placeholders(text, "/root", "/data");
    if !text.contains("${PLUGIN_") {
        // Nothing that could be a placeholder: the text must come back unchanged.
        assert_eq!(out, text);
    }
    // One pass with replacements that start with `/` and hold no `$`: no exact placeholder can
    // survive, and none can be formed where a replacement meets the text around it.
    assert!(!out.contains("${PLUGIN_ROOT}"));
    assert!(!out.contains("${PLUGIN_DATA}"));
});
