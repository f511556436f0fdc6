//! Structure-aware mutations of JSON documents (field deletions, type changes, hostile
//! numbers, duplicated or emptied arrays). Included with `#[path]` by the crates whose fuzz
//! campaigns read JSON (`serde_json` is their dependency).

#![allow(dead_code)]

use rand::Rng;
use rand::rngs::StdRng;
use serde_json::{Value, json};

use crate::fuzz_support::{INTERESTING_INTS, hostile_field};

/// JSON pointers of every node of `v` (the root is `""`).
fn pointers(v: &Value, at: String, out: &mut Vec<String>) {
    match v {
        Value::Object(o) => {
            for (k, c) in o {
                let p = format!("{at}/{}", k.replace('~', "~0").replace('/', "~1"));
                pointers(c, p, out);
            }
        }
        Value::Array(a) => {
            for (i, c) in a.iter().enumerate() {
                pointers(c, format!("{at}/{i}"), out);
            }
        }
        _ => {}
    }
    out.push(at);
}

/// A value of a random, mostly wrong, type.
fn hostile_value(rng: &mut StdRng) -> Value {
    match rng.random_range(0..12) {
        0 => Value::Null,
        1 => json!(rng.random_bool(0.5)),
        2 => json!(hostile_field(rng)),
        3 | 4 => {
            let i = INTERESTING_INTS[rng.random_range(0..INTERESTING_INTS.len())];
            json!(i)
        }
        5 => json!(u64::MAX),
        6 => json!(1e308),
        7 => json!(-0.5),
        8 => json!([]),
        9 => json!({}),
        10 => json!([1_000_000_000_000u64, 1_000_000_000_000u64]),
        _ => json!("NaN"),
    }
}

/// One mutation of `v` at a random node: deleted, replaced by a value of another type or a
/// hostile number, an array element duplicated or the array emptied, wrapped in an array.
pub fn mutate_json(rng: &mut StdRng, v: &mut Value) -> String {
    let mut ps = Vec::new();
    pointers(v, String::new(), &mut ps);
    let p = ps[rng.random_range(0..ps.len())].clone();
    let op = rng.random_range(0..6);
    if op == 0 && !p.is_empty() {
        let (parent, key) = p.rsplit_once('/').unwrap();
        let key = key.replace("~1", "/").replace("~0", "~");
        match v.pointer_mut(parent) {
            Some(Value::Object(o)) => {
                o.remove(&key);
            }
            Some(Value::Array(a)) => {
                if let Ok(i) = key.parse::<usize>()
                    && i < a.len()
                {
                    a.remove(i);
                }
            }
            _ => {}
        }
        return format!("{p} deleted");
    }
    let Some(node) = v.pointer_mut(&p) else {
        return "no-op".into();
    };
    match op {
        4 if node.is_array() => {
            let a = node.as_array_mut().unwrap();
            if a.is_empty() || rng.random_bool(0.3) {
                a.clear();
                format!("{p} emptied")
            } else {
                let i = rng.random_range(0..a.len());
                let e = a[i].clone();
                a.insert(i, e);
                format!("{p}/{i} duplicated")
            }
        }
        5 => {
            let old = node.take();
            *node = json!([old]);
            format!("{p} wrapped in an array")
        }
        _ => {
            let new = hostile_value(rng);
            let d = format!("{p} set to {new}");
            *node = new;
            d
        }
    }
}

/// Serialises `v`, sometimes with a byte-level mutation of the text on top.
pub fn to_text(v: &Value) -> String {
    serde_json::to_string_pretty(v).unwrap()
}
