//! Fuzzes `config.toml` parsing and resolution: any UTF-8 text must yield a configuration or a
//! `ConfigError::Invalid` naming the file, never a panic; every per-entry problem names its
//! entry's key (or its invalid identity) and every entry's line lies within the text.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use rho_config::ConfigError;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let path = Path::new("/fuzz/home/config.toml");
    let lines = text.matches('\n').count() + 1;
    match rho_config::parse_config(text, path) {
        Ok(config) => {
            assert_eq!(config.path.as_deref(), Some(path));
            for server in &config.mcp_servers {
                assert!(
                    (1..=lines).contains(&server.line),
                    "server line out of range"
                );
                if let Err(problems) = &server.spec {
                    assert!(!problems.is_empty(), "a refused server has no problem");
                    let key = format!("mcp.servers.{}", server.id);
                    for p in problems {
                        assert!(
                            p.starts_with(&key) || p.starts_with("server identity "),
                            "server problem names no key: {p}"
                        );
                    }
                }
            }
            for provider in &config.providers {
                assert!(
                    (1..=lines).contains(&provider.line),
                    "provider line out of range"
                );
                if let Err(problems) = &provider.settings {
                    assert!(!problems.is_empty(), "a refused provider has no problem");
                    let key = format!("providers.{}", provider.id);
                    for p in problems {
                        assert!(
                            p.starts_with(&key) || p.starts_with("provider identity "),
                            "provider problem names no key: {p}"
                        );
                    }
                }
            }
        }
        Err(ConfigError::Invalid {
            path: named,
            message,
        }) => {
            assert_eq!(named, path);
            assert!(!message.is_empty(), "an empty message");
        }
        Err(other) => panic!("unexpected error kind: {other}"),
    }
});
