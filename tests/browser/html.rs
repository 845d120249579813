//! Just enough HTML reading to submit a login or consent form: the first `<form>`, its
//! `action`, its hidden inputs and the names of its other inputs.

/// The first form of a page.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Form {
    /// The `action` attribute, entity-decoded (empty: the page's own URL).
    pub action: String,
    /// The `method` attribute, lower case (empty means GET).
    pub method: String,
    /// `(name, value)` of every `type="hidden"` input, in page order.
    pub hidden: Vec<(String, String)>,
    /// Names of the other inputs (what a person would fill in).
    pub fields: Vec<String>,
}

impl Form {
    /// The value of hidden input `name`.
    pub fn hidden_value(&self, name: &str) -> Option<&str> {
        self.hidden
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// The first `<form>` in `html` with its inputs, or `None` when the page has no form.
pub fn first_form(html: &str) -> Option<Form> {
    let lower = html.to_ascii_lowercase();
    let start = lower.find("<form")?;
    let end = lower[start..]
        .find("</form")
        .map_or(html.len(), |i| start + i);
    let (open, _) = tag_at(html, start)?;
    let attrs = attributes(open);
    let mut form = Form {
        action: attr(&attrs, "action").unwrap_or_default(),
        method: attr(&attrs, "method")
            .unwrap_or_default()
            .to_ascii_lowercase(),
        ..Form::default()
    };
    let mut at = start + open.len();
    while at < end
        && let Some(i) = lower[at..end].find("<input")
    {
        let Some((tag, _)) = tag_at(html, at + i) else {
            break;
        };
        at += i + tag.len();
        let attrs = attributes(tag);
        let Some(name) = attr(&attrs, "name") else {
            continue;
        };
        if attr(&attrs, "type").is_some_and(|t| t.eq_ignore_ascii_case("hidden")) {
            form.hidden
                .push((name, attr(&attrs, "value").unwrap_or_default()));
        } else {
            form.fields.push(name);
        }
    }
    Some(form)
}

/// The tag that starts at byte `start` (`<` … `>`, quotes respected) and what follows it.
fn tag_at(html: &str, start: usize) -> Option<(&str, &str)> {
    let mut quote = None;
    for (i, c) in html[start..].char_indices() {
        match (quote, c) {
            (None, '"' | '\'') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            (None, '>') => {
                let end = start + i + 1;
                return Some((&html[start..end], &html[end..]));
            }
            _ => {}
        }
    }
    None
}

/// `name=value` pairs of a tag, names lower-cased, values entity-decoded.
fn attributes(tag: &str) -> Vec<(String, String)> {
    let inner = tag
        .trim_start_matches('<')
        .trim_end_matches('>')
        .trim_end_matches('/');
    // Skip the element name.
    let mut rest = inner.trim_start_matches(|c: char| !c.is_whitespace());
    let mut out = Vec::new();
    loop {
        rest = rest.trim_start_matches(|c: char| c.is_whitespace() || c == '/');
        if rest.is_empty() {
            break;
        }
        let name_len = rest
            .find(|c: char| c.is_whitespace() || c == '=' || c == '/')
            .unwrap_or(rest.len());
        let name = rest[..name_len].to_ascii_lowercase();
        rest = rest[name_len..].trim_start();
        let value = if let Some(after) = rest.strip_prefix('=') {
            let after = after.trim_start();
            let (value, next) = match after.chars().next() {
                Some(q @ ('"' | '\'')) => {
                    let body = &after[1..];
                    let close = body.find(q).unwrap_or(body.len());
                    (&body[..close], body.get(close + 1..).unwrap_or(""))
                }
                _ => {
                    let stop = after
                        .find(|c: char| c.is_whitespace())
                        .unwrap_or(after.len());
                    (&after[..stop], &after[stop..])
                }
            };
            rest = next;
            decode_entities(value)
        } else {
            String::new()
        };
        if !name.is_empty() {
            out.push((name, value));
        }
    }
    out
}

fn attr(attrs: &[(String, String)], name: &str) -> Option<String> {
    attrs
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.clone())
}

/// Decodes the entities an HTML escaper produces (`&amp;`, `&quot;`, `&#39;`, `&#x2F;`, …).
fn decode_entities(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find('&') {
        out.push_str(&rest[..i]);
        rest = &rest[i..];
        let Some(semi) = rest.find(';').filter(|&s| s <= 10) else {
            out.push('&');
            rest = &rest[1..];
            continue;
        };
        let entity = &rest[1..semi];
        let decoded = match entity {
            "amp" => Some('&'),
            "lt" => Some('<'),
            "gt" => Some('>'),
            "quot" => Some('"'),
            "apos" => Some('\''),
            _ => entity
                .strip_prefix("#x")
                .or_else(|| entity.strip_prefix("#X"))
                .and_then(|hex| u32::from_str_radix(hex, 16).ok())
                .or_else(|| entity.strip_prefix('#').and_then(|d| d.parse().ok()))
                .and_then(char::from_u32),
        };
        match decoded {
            Some(c) => {
                out.push(c);
                rest = &rest[semi + 1..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOGIN: &str = r#"<!DOCTYPE html><html><head><title>Sign-in</title></head><body>
<div class="login-card"><h1>Sign-in</h1>
<form autocomplete="off" action="/interaction/abc&#x2F;def?x=1&amp;y=2" method="post">
  <input type="hidden" name="prompt" value="login"/>
  <input required type="text" name="login" placeholder="Enter any login" autofocus="on">
  <input required type="password" name="password" placeholder="and password" >
  <button type="submit" class="login login-submit">Sign-in</button>
</form></div></body></html>"#;

    #[test]
    fn reads_the_login_form() {
        let form = first_form(LOGIN).unwrap();
        assert_eq!(form.action, "/interaction/abc/def?x=1&y=2");
        assert_eq!(form.method, "post");
        assert_eq!(form.hidden_value("prompt"), Some("login"));
        assert_eq!(form.fields, ["login", "password"]);
    }

    #[test]
    fn reads_single_quotes_unquoted_values_and_a_greater_than_inside_quotes() {
        let html = "<FORM ACTION='/a>b' method=POST><input type=hidden name=prompt value=consent>";
        let form = first_form(html).unwrap();
        assert_eq!(form.action, "/a>b");
        assert_eq!(form.method, "post");
        assert_eq!(form.hidden_value("prompt"), Some("consent"));
        assert!(form.fields.is_empty());
    }

    #[test]
    fn a_page_without_a_form_has_none() {
        assert_eq!(first_form("<html><p>oops</p></html>"), None);
    }

    #[test]
    fn inputs_after_the_form_do_not_count() {
        let html = "<form action=/x></form><input type=hidden name=prompt value=late>";
        assert_eq!(first_form(html).unwrap().hidden, Vec::new());
    }

    #[test]
    fn unknown_entities_stay_as_written() {
        assert_eq!(decode_entities("a&b &nope; &#65;"), "a&b &nope; A");
    }
}
