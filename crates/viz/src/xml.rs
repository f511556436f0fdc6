//! The little XML/HTML writing the drawings and the report need.

/// Escapes `&`, `<`, `>`, `"` and `'` for XML/HTML text and attribute values.
///
/// ```
/// assert_eq!(induce_viz::xml::escape("a<b & \"c\""), "a&lt;b &amp; &quot;c&quot;");
/// ```
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// The categorical colours of predicted classes (Tableau 10; class `k` takes colour `k mod 10`).
pub const PALETTE: [&str; 10] = [
    "#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7",
    "#9c755f", "#bab0ac",
];

/// The colour of class `k`.
pub fn class_colour(k: usize) -> &'static str {
    PALETTE[k % PALETTE.len()]
}

/// Colour of added edges.
pub const ADDED: &str = "#2ca02c";
/// Colour of deleted edges.
pub const DELETED: &str = "#d62728";
/// Stroke of the ring around a node whose features an explanation changed (orange).
pub const FEATURES: &str = "#ff7f0e";
