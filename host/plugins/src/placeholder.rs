//! `${PLUGIN_ROOT}` / `${PLUGIN_DATA}` expansion (Agent Plugins §9.2): one pass, exact matches
//! only, and text a replacement introduces is never scanned again.

const ROOT: &str = "${PLUGIN_ROOT}";
const DATA: &str = "${PLUGIN_DATA}";

/// Replaces every exact `${PLUGIN_ROOT}` and `${PLUGIN_DATA}` in `text`. Anything else that looks
/// like a placeholder (`${HOME}`, `$PLUGIN_ROOT`, `${plugin_root}`) stays literal.
pub fn expand_placeholders(text: &str, root: &str, data: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find("${PLUGIN_") {
        out.push_str(&rest[..i]);
        let tail = &rest[i..];
        if let Some(after) = tail.strip_prefix(ROOT) {
            out.push_str(root);
            rest = after;
        } else if let Some(after) = tail.strip_prefix(DATA) {
            out.push_str(data);
            rest = after;
        } else {
            out.push_str("${PLUGIN_");
            rest = &tail["${PLUGIN_".len()..];
        }
    }
    out.push_str(rest);
    out
}

/// Whether `text` contains either placeholder.
pub(crate) fn has_placeholder(text: &str) -> bool {
    text.contains(ROOT) || text.contains(DATA)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn single_pass_and_literal_lookalikes() {
        let e = |t| expand_placeholders(t, "/r", "/d");
        assert_eq!(e("${PLUGIN_ROOT}/x:${PLUGIN_DATA}"), "/r/x:/d");
        assert_eq!(
            e("${HOME} $PLUGIN_ROOT ${plugin_root} ${PLUGIN_ROOTS"),
            "${HOME} $PLUGIN_ROOT ${plugin_root} ${PLUGIN_ROOTS"
        );
        assert_eq!(e("${PLUGIN_${PLUGIN_ROOT}}"), "${PLUGIN_/r}");
        // A root whose own name is a placeholder is not expanded again.
        assert_eq!(
            expand_placeholders("${PLUGIN_ROOT}", "/x/${PLUGIN_DATA}", "/d"),
            "/x/${PLUGIN_DATA}"
        );
        assert_eq!(e(""), "");
        assert_eq!(e("é${PLUGIN_DATA}é"), "é/dé");
    }
}
