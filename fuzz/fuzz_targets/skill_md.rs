//! Fuzzes `SKILL.md` parsing: the frontmatter split, the YAML subset and field validation on raw
//! bytes, plus the in-memory body split used for built-in skills.
#![no_main]

use std::path::PathBuf;

use libfuzzer_sys::fuzz_target;
use rho_component::SkillSource;

fuzz_target!(|data: &[u8]| {
    let _ = rho_skills::parse_skill(
        data,
        "fuzz",
        PathBuf::from("/fuzz/SKILL.md"),
        SkillSource::User,
    );
    let text = String::from_utf8_lossy(data);
    if let Some(body) = rho_skills::split_body(&text) {
        // The body is a trimmed slice of the text, so it can never be longer.
        assert!(body.len() <= text.len());
    }
});
