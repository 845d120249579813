//! rho's core: the component registry and the session engine.
//!
//! The registry mounts every component source (built-in, loose skills, `config.toml`, Agent
//! Plugins) under one set of precedence, shadowing and naming rules and keeps a diagnostic for
//! everything it refused. The session engine (agent loop, providers, approvals, steering,
//! persistence) runs on top of it, and the session host ([`host::SessionHost`]) owns a running
//! agent: front-ends (JSON-RPC mode, the terminal UI) drive it with operations and read its
//! events, holding no session state of their own.

pub mod claude;
pub mod doctor;
pub mod host;
mod model_choice;
pub mod provider;
mod registry;
pub mod session;
pub mod tool_search;

pub use model_choice::{
    BUILTIN_ENDPOINT, BUILTIN_MODEL, BUILTIN_PROVIDER, CONFIGURE_A_MODEL, ChosenModel,
    ModelChoiceError, ProviderEntry, ProviderFlags, ProviderSource, choose_model,
    list_provider_models, provider_entries,
};
pub use registry::{
    ACTIVATE_SKILL, BUILTIN_OWNER, Bearer, CacheKey, CacheKeys, CacheReader, CachedCatalog,
    ComponentLoadError, DirectCall, DirectCallError, LoadOutcome, MAX_TOOL_CACHE_FILE_BYTES,
    MAX_TOOL_CACHE_FILES, McpSources, MountOptions, MountedServer, MountedTool, NEEDS_TASKS_MARK,
    NameClash, NotLoadedReason, PluginSummary, Probe, ProbedServer, ProbedTool, Registry,
    ServeError, ServeOptions, ServeTransport, ServedNames, ServerHealth, ServerRestart, ServerSlot,
    ServerSource, ServerStatus, ServerToolset, SkillBodyError, SlotState, StartFailure,
    StartReport, TOOL_CACHE_FORMAT, TOOLS_DIGEST_HEX, ToolCache, ToolSet, ToolsetChanged,
    TrustQuestion, Unstartable, collect_servers, load_plugin_components, plugin_locations,
    skill_catalog, startable, tools_digest, untrusted_message, wasm_cache_dir, wasm_tool_risk,
};
pub use rho_config::{
    AgentRuntime, AgentSettings, ConfigSource, PathsEnv, RhoConfig, RhoPaths, ToolSearch,
};
pub use rho_mcp::{MAX_QUEUED_QUESTIONS, RejectedQuestions};
pub use rho_plugins::PluginStatus;
