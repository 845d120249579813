//! WASM tool components built into rho: written with `rho-plugin-sdk` (sources under
//! `builtin-plugins/wasm/`, rebuilt by `builtin-plugins/wasm/build.sh`) and embedded in the
//! binary, so rho's own tools exercise the SDK. The registry loads them through the same WASM
//! host as plugin components.

use rho_component::WorkspaceAccess;

/// One embedded component.
#[derive(Debug, Clone, Copy)]
pub struct BuiltinComponent {
    /// The component name.
    pub name: &'static str,
    /// Its `.wasm` bytes.
    pub bytes: &'static [u8],
    /// What it may do with the workspace.
    pub workspace: WorkspaceAccess,
    /// The JSON of the tools its `list-tools` returns (`rho_wasm::GuestTool`s), so sessions
    /// offer them without compiling the component first. Written by
    /// `builtin-plugins/wasm/build.sh`; a test in `rho-core` checks it against the component.
    pub tools: &'static str,
}

const BUILTIN_COMPONENTS: &[BuiltinComponent] = &[BuiltinComponent {
    name: "text-stats",
    bytes: include_bytes!("../wasm/text_stats.wasm"),
    workspace: WorkspaceAccess::Read,
    tools: include_str!("../wasm/text_stats.tools.json"),
}];

/// Every embedded component.
pub fn builtin_components() -> &'static [BuiltinComponent] {
    BUILTIN_COMPONENTS
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedded_components_are_wasm_components() {
        for component in builtin_components() {
            // The component binary format: magic, then version 0x0d and layer 1.
            assert_eq!(&component.bytes[..4], b"\0asm", "{}", component.name);
            assert_eq!(
                &component.bytes[4..8],
                &[0x0d, 0x00, 0x01, 0x00],
                "{}",
                component.name
            );
        }
    }
}
