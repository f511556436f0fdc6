//! What to write in `arch.json` when a `state_dict` does not match it: the key prefix or layer
//! keys that would load the file, or the layer type its tensors belong to.

use super::arch::PygArch;

/// Where a layer's tensors start in a key: the layer's own prefix ends before the first of
/// these (`.weight`/`.bias` last: a `Linear` layer's own).
const MARKERS: [&str; 13] = [
    ".lin.",
    ".lin_l.",
    ".lin_r.",
    ".lin_src.",
    ".lin_dst.",
    ".att",
    ".nn.",
    ".eps",
    ".lin_rel.",
    ".lin_root.",
    ".lins.",
    ".weight",
    ".bias",
];

/// The layer type that tensors (names relative to their layer) belong to, as a PyG class name
/// (`TAGConv/ChebConv` where the tensors cannot tell).
fn layer_type(rel: &[&str]) -> &'static str {
    let has = |p: &str| rel.iter().any(|k| k.starts_with(p));
    if has("att_src") || has("att_dst") {
        "GATConv"
    } else if has("att") {
        "GATv2Conv"
    } else if has("lin_rel") || has("lin_root") {
        "GraphConv"
    } else if has("nn.") || has("eps") {
        "GINConv"
    } else if has("lins.") {
        "TAGConv/ChebConv"
    } else if has("lin_l.") {
        "SAGEConv"
    } else if has("weight") {
        "Linear"
    } else {
        "GCNConv"
    }
}

/// The layer types (as [`layer_type`] names them) whose tensors a family reads; empty for a
/// family without tensors.
fn native_types(family: &str) -> &'static [&'static str] {
    match family {
        // SGConv's tensors (`lin.weight`, `lin.bias`) look like a GCNConv's.
        "gcn" | "sg" => &["GCNConv"],
        "sage" => &["SAGEConv"],
        "gin" => &["GINConv"],
        "gat" => &["GATConv"],
        "gatv2" => &["GATv2Conv"],
        "graph" => &["GraphConv"],
        "tag" | "cheb" => &["TAGConv/ChebConv"],
        "linear" => &["Linear"],
        _ => &[],
    }
}

/// The architecture's `"type"` for the tensors of a layer type.
fn family_of(layer_type: &str) -> &'static str {
    match layer_type {
        "GCNConv" => "gcn\" (\"sg\" for an SGConv)",
        "SAGEConv" => "sage\"",
        "GINConv" => "gin\"",
        "GATConv" => "gat\"",
        "GATv2Conv" => "gatv2\"",
        "GraphConv" => "graph\"",
        "TAGConv/ChebConv" => "tag\" or \"cheb\"",
        _ => "linear\"",
    }
}

/// The layers a `state_dict` holds: each layer's key prefix (in natural order) and its type.
fn layer_roots<'a>(keys: &[&'a str]) -> Vec<(&'a str, &'static str)> {
    let mut roots: Vec<&str> = keys
        .iter()
        .filter_map(|k| {
            MARKERS
                .iter()
                .filter_map(|m| k.find(m))
                .min()
                .map(|i| &k[..i])
        })
        .collect();
    roots.sort_by_key(|a| natural(a));
    roots.dedup();
    roots
        .into_iter()
        .map(|r| {
            let rel: Vec<&str> = keys
                .iter()
                .filter_map(|k| k.strip_prefix(r).and_then(|s| s.strip_prefix('.')))
                .collect();
            (r, layer_type(&rel))
        })
        .collect()
}

/// A sort key that puts `convs.2` before `convs.10`.
fn natural(s: &str) -> Vec<(String, u64)> {
    s.split('.')
        .map(|p| match p.parse::<u64>() {
            Ok(n) => (String::new(), n),
            Err(_) => (p.to_string(), 0),
        })
        .collect()
}

/// Why `arch` cannot read a `state_dict` with these `keys`, and what would read it, or `None`
/// when every layer's key prefix holds tensors of its declared type.
///
/// ```text
/// keys conv1.lin.weight, conv1.bias, conv2.lin.weight, conv2.bias; arch {"layers": [gcn, gcn]}
///   → the layers are at `conv1`, `conv2`, not under the prefix `convs`: give each layer its
///     key: "layers": [{"type": "gcn", "key": "conv1"}, {"type": "gcn", "key": "conv2"}]
/// ```
pub(super) fn layout_hint(keys: &[&str], arch: &PygArch) -> Option<String> {
    let roots: Vec<(&str, &str)> = layer_roots(keys)
        .into_iter()
        .filter(|(r, _)| Some(*r) != arch.head.as_deref())
        .collect();
    let wanted: Vec<String> = (0..arch.layers.len()).map(|i| arch.layer_key(i)).collect();
    let missing = wanted.iter().zip(&arch.layers).any(|(w, spec)| {
        !native_types(spec.family()).is_empty()
            && !keys.iter().any(|k| k.starts_with(&format!("{w}.")))
    });
    if missing {
        let found = roots
            .iter()
            .map(|(r, t)| format!("`{r}` ({t})"))
            .collect::<Vec<_>>()
            .join(", ");
        let fix = if roots.len() == wanted.len() && !roots.is_empty() {
            let prefixes: Vec<Option<&str>> = roots
                .iter()
                .enumerate()
                .map(|(i, (r, _))| r.strip_suffix(&format!(".{i}")))
                .collect();
            match prefixes.first() {
                Some(Some(p)) if prefixes.iter().all(|q| q == &Some(*p)) => {
                    format!("set \"prefix\": \"{p}\"")
                }
                _ => format!(
                    "give each layer its key: \"layers\": [{}]",
                    roots
                        .iter()
                        .zip(&arch.layers)
                        .map(|((r, _), l)| format!(
                            "{{\"type\": \"{}\", \"key\": \"{r}\"}}",
                            l.family()
                        ))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            }
        } else {
            format!(
                "the architecture lists {} layers; describe the file's {}",
                wanted.len(),
                roots.len()
            )
        };
        return Some(format!(
            "the architecture reads its layers at {} but the file's layers are at {}: {fix}",
            wanted
                .iter()
                .map(|w| format!("`{w}`"))
                .collect::<Vec<_>>()
                .join(", "),
            if found.is_empty() {
                "no recognisable key".to_string()
            } else {
                found
            }
        ));
    }
    for (w, spec) in wanted.iter().zip(&arch.layers) {
        let expected = native_types(spec.family());
        if let Some((_, t)) = roots.iter().find(|(r, _)| r == w)
            && !expected.contains(t)
        {
            return Some(format!(
                "layer `{w}` holds the tensors of a {t}, but the architecture says \"type\": \
                 \"{}\" ({}): a layer-type mismatch; write \"type\": \"{}",
                spec.family(),
                expected.join(", "),
                family_of(t)
            ));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arch(json: &str) -> PygArch {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn the_tutorial_gcn_gets_its_layer_keys() {
        let keys = [
            "conv1.bias",
            "conv1.lin.weight",
            "conv2.bias",
            "conv2.lin.weight",
        ];
        let hint = layout_hint(
            &keys,
            &arch(r#"{"layers": [{"type": "gcn"}, {"type": "gcn"}]}"#),
        );
        assert_eq!(
            hint.unwrap(),
            "the architecture reads its layers at `convs.0`, `convs.1` but the file's layers are \
             at `conv1` (GCNConv), `conv2` (GCNConv): give each layer its key: \"layers\": \
             [{\"type\": \"gcn\", \"key\": \"conv1\"}, {\"type\": \"gcn\", \"key\": \"conv2\"}]"
        );
    }

    #[test]
    fn a_wrapped_module_list_gets_its_prefix() {
        let keys = [
            "model.convs.0.lin.weight",
            "model.convs.0.bias",
            "model.convs.1.lin.weight",
            "model.convs.1.bias",
            "lin.weight",
            "lin.bias",
        ];
        let a = arch(r#"{"layers": [{"type": "gcn"}, {"type": "gcn"}], "head": "lin"}"#);
        let hint = layout_hint(&keys, &a).unwrap();
        assert!(hint.ends_with("set \"prefix\": \"model.convs\""), "{hint}");
    }

    #[test]
    fn gat_weights_described_as_gcn_are_a_type_mismatch() {
        let keys = [
            "convs.0.att_src",
            "convs.0.att_dst",
            "convs.0.lin.weight",
            "convs.0.bias",
        ];
        let hint = layout_hint(&keys, &arch(r#"{"layers": [{"type": "gcn"}]}"#)).unwrap();
        assert!(hint.contains("holds the tensors of a GATConv"), "{hint}");
        assert!(hint.ends_with("write \"type\": \"gat\""), "{hint}");
        let v2 = [
            "convs.0.att",
            "convs.0.lin_l.weight",
            "convs.0.lin_r.weight",
        ];
        let hint = layout_hint(&v2, &arch(r#"{"layers": [{"type": "sage"}]}"#)).unwrap();
        assert!(hint.contains("holds the tensors of a GATv2Conv"), "{hint}");
        assert!(hint.ends_with("write \"type\": \"gatv2\""), "{hint}");
    }

    #[test]
    fn a_matching_layout_has_no_hint() {
        let keys = [
            "convs.0.lin_l.weight",
            "convs.0.lin_l.bias",
            "convs.0.lin_r.weight",
        ];
        assert_eq!(
            layout_hint(&keys, &arch(r#"{"layers": [{"type": "sage"}]}"#)),
            None
        );
    }
}
