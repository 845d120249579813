//! Agent Plugins (placeholder).
