//! Agent Skills support (placeholder until the skills crate lands).
