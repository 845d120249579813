//! Built-in components (placeholder).
