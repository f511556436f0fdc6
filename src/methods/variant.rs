//! [`Variant`]: a method with settings of its own in a run (`greedy:shortlist=64`), so that one
//! run holds several variants of one method, each a row of its own in the summary, the report,
//! `eval` and `merge`.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use super::Method;
use crate::error::{Error, Result};

/// A method and the settings it runs with over the run's: `NAME[:OPTION=VALUE]…`, each option
/// one its method reads ([`MethodDecl::settings`](super::MethodDecl)), spelt as the command
/// line's flag without `--` or as the Python keyword. Its label (the summary's row name) is the
/// spec in canonical form; a plain method's label is its name.
///
/// ```
/// use induce::methods::{Method, Variant};
/// let v: Variant = "greedy:shortlist=64".parse().unwrap();
/// assert_eq!((v.method(), v.label()), (Method::GREEDY, "greedy:shortlist=64".to_string()));
/// let w: Variant = "inductive:lookahead=8:widen=true".parse().unwrap();
/// assert_eq!(w.options()[1], ("widen".to_string(), serde_json::json!(true)));
/// assert_eq!(Variant::from(Method::EXACT).label(), "exact");
/// // An option its method does not read is refused, naming the methods that read it.
/// let e = "greedy:lookahead=8".parse::<Variant>().unwrap_err().to_string();
/// assert!(e.contains("greedy does not read `lookahead`"), "{e}");
/// ```
#[derive(Debug, Clone)]
pub struct Variant {
    method: Method,
    options: Vec<(String, serde_json::Value)>,
}

impl Variant {
    /// The method.
    pub fn method(&self) -> Method {
        self.method
    }

    /// Its own settings, `(RunOptions field, value)` in the order given.
    pub fn options(&self) -> &[(String, serde_json::Value)] {
        &self.options
    }

    /// True when it has no settings of its own.
    pub fn is_plain(&self) -> bool {
        self.options.is_empty()
    }

    /// Its label: the method's name, then `:option=value` for each of its settings, the option
    /// spelt as its flag (`max-size`).
    pub fn label(&self) -> String {
        let mut out = self.method.name().to_string();
        for (k, v) in &self.options {
            let v = match v {
                serde_json::Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            out.push_str(&format!(":{}={v}", k.replace('_', "-")));
        }
        out
    }
}

impl From<Method> for Variant {
    fn from(method: Method) -> Self {
        Variant {
            method,
            options: Vec::new(),
        }
    }
}

impl PartialEq for Variant {
    fn eq(&self, other: &Self) -> bool {
        self.label() == other.label()
    }
}

impl fmt::Display for Variant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.label())
    }
}

impl FromStr for Variant {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        let mut parts = s.trim().split(':');
        let method: Method = parts.next().unwrap_or_default().parse()?;
        let mut options: Vec<(String, serde_json::Value)> = Vec::new();
        for part in parts {
            let invalid = |reason: String| Error::InvalidValue {
                what: "method variant",
                value: s.trim().to_string(),
                reason,
            };
            let (key, value) = (part.split_once('='))
                .ok_or_else(|| invalid(format!("`{part}` is not OPTION=VALUE")))?;
            let key = key.trim().trim_start_matches("--").replace('-', "_");
            if !method.reads(&key) {
                let readers: Vec<&str> = (super::ALL.iter())
                    .filter(|d| d.settings.contains(&key.as_str()))
                    .map(|d| d.name)
                    .collect();
                return Err(invalid(match readers.is_empty() {
                    true => format!(
                        "{method} does not read `{key}`; a variant sets the options of its \
                         own method only ({})",
                        method.decl().settings.join(", ")
                    ),
                    false => format!(
                        "{method} does not read `{key}`; it is read by {}",
                        readers.join(", ")
                    ),
                }));
            }
            if options.iter().any(|(k, _)| *k == key) {
                return Err(invalid(format!("`{key}` is given twice")));
            }
            let value = value.trim();
            let value = serde_json::from_str(value)
                .unwrap_or_else(|_| serde_json::Value::String(value.to_string()));
            options.push((key, value));
        }
        Ok(Variant { method, options })
    }
}

impl Serialize for Variant {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(&self.label())
    }
}

impl<'de> Deserialize<'de> for Variant {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// Refuses a list with the same variant twice (the same label: its rows would collide).
pub(crate) fn check_distinct(variants: &[Variant]) -> Result<()> {
    for (i, v) in variants.iter().enumerate() {
        if variants[..i].contains(v) {
            return Err(Error::InvalidValue {
                what: "method list",
                value: (variants.iter())
                    .map(Variant::label)
                    .collect::<Vec<_>>()
                    .join(","),
                reason: format!("{v} is listed twice"),
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variants_parse_label_and_round_trip() {
        let v: Variant = "EXACT:max_size=2:--max-evaluations=1000".parse().unwrap();
        assert_eq!(v.label(), "exact:max-size=2:max-evaluations=1000");
        assert_eq!(v.label().parse::<Variant>().unwrap(), v);
        let json = serde_json::to_string(&v).unwrap();
        assert_eq!(serde_json::from_str::<Variant>(&json).unwrap(), v);
        let g: Variant = "greedy:additions=graph".parse().unwrap();
        assert_eq!(g.options()[0].1, serde_json::json!("graph"));
        for bad in [
            "greedy:shortlist",
            "greedy:shortlist=1:shortlist=2",
            "magic:x=1",
        ] {
            assert!(bad.parse::<Variant>().is_err(), "{bad}");
        }
        let e = "random:shortlist=8"
            .parse::<Variant>()
            .unwrap_err()
            .to_string();
        assert!(e.contains("read by greedy"), "{e}");
        let list: Vec<Variant> = vec![Method::GREEDY.into(), "greedy:shortlist=1".parse().unwrap()];
        assert!(check_distinct(&list).is_ok());
        let twice = [list[1].clone(), list[1].clone()];
        assert!(
            check_distinct(&twice)
                .unwrap_err()
                .to_string()
                .contains("listed twice")
        );
    }
}
