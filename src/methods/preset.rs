//! [`Preset`] and [`Family`]: the paper's settings per dataset family and how a run chooses them.

use std::fmt;
use std::str::FromStr;

use induce_rl::InduceConfig;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// The paper's InduCE settings for a family of datasets (its §4 and appendix), without needing a
/// generator: M = 80 training episodes on BA-Shapes and the real graphs, 500 on the trees;
/// γ = 0.4 inductive, 0.6 transductive; 4 hops, budget 15.
///
/// ```
/// use induce::methods::Preset;
/// assert_eq!(Preset::for_dataset("syn4"), Preset::Trees);
/// assert_eq!(Preset::Trees.transductive(42).train.episodes, 500);
/// assert_eq!(Preset::BaShapes.transductive(42).train.gamma, 0.6);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Preset {
    /// BA-Shapes (generated or the reference `syn1`).
    BaShapes,
    /// Tree-Cycles and Tree-Grid (generated or `syn4`, `syn5`).
    Trees,
    /// Real graphs (Amazon-Photo, Cora, CiteSeer, OGB) and anything else.
    Real,
}

impl Preset {
    /// Every family, in the order `--family` lists them.
    pub const ALL: [Preset; 3] = [Preset::BaShapes, Preset::Trees, Preset::Real];

    /// The family a dataset name belongs to (`ba-shapes`, `syn1` → BA-Shapes; `tree-cycles`,
    /// `tree-grid`, `syn4`, `syn5` → trees; anything else → real). This is only a guess from
    /// the name: `--family` ([`Family::choose`]) overrides it.
    pub fn for_dataset(name: &str) -> Self {
        match name.to_ascii_lowercase().replace('_', "-").as_str() {
            "ba-shapes" | "syn1" => Preset::BaShapes,
            "tree-cycles" | "tree-grid" | "syn4" | "syn5" => Preset::Trees,
            _ => Preset::Real,
        }
    }

    /// The name `--family`, `config.json` and [`FromStr`] use: `ba-shapes`, `trees`, `real`.
    pub fn name(self) -> &'static str {
        match self {
            Preset::BaShapes => "ba-shapes",
            Preset::Trees => "trees",
            Preset::Real => "real",
        }
    }

    /// Training episodes M of the family.
    pub fn episodes(self) -> usize {
        match self {
            Preset::Trees => 500,
            Preset::BaShapes | Preset::Real => 80,
        }
    }

    /// Inductive InduCE (γ 0.4) with this family's episodes.
    pub fn inductive(self, seed: u64) -> InduceConfig {
        let mut c = InduceConfig {
            seed,
            ..InduceConfig::default()
        };
        c.train.episodes = self.episodes();
        c
    }

    /// Transductive InduCE (γ 0.6) with this family's per-target episode cap.
    pub fn transductive(self, seed: u64) -> InduceConfig {
        let mut c = self.inductive(seed);
        c.train.gamma = 0.6;
        c
    }
}

impl fmt::Display for Preset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Preset {
    type Err = Error;

    /// `ba-shapes`, `trees` or `real` (case and `_` / `-` ignored).
    fn from_str(s: &str) -> Result<Self> {
        let t = s.trim().to_ascii_lowercase().replace('_', "-");
        Preset::ALL
            .into_iter()
            .find(|p| p.name() == t)
            .ok_or_else(|| Error::InvalidValue {
                what: "family",
                value: s.to_string(),
                reason: "expected auto, ba-shapes, trees or real".into(),
            })
    }
}

/// The hyper-parameter family of a run ([`Preset`]) and whether it was guessed from the data's
/// name (`--family auto`, the default) or chosen (`--family NAME`). A run's `config.json`
/// records both (`family`, `family_guessed`).
///
/// ```
/// use induce::methods::{Family, Preset};
/// let guessed = Family::choose(None, "syn4");
/// assert_eq!((guessed.preset, guessed.guessed), (Preset::Trees, true));
/// let chosen = Family::choose(Some(Preset::BaShapes), "my-graph");
/// assert_eq!((chosen.preset, chosen.guessed), (Preset::BaShapes, false));
/// assert_eq!("trees".parse::<Preset>().unwrap(), Preset::Trees);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Family {
    /// The family whose settings the run uses.
    pub preset: Preset,
    /// True when it was guessed from the data's name, false when `--family` chose it.
    pub guessed: bool,
}

impl Family {
    /// `choice` when given (`--family NAME`), else the guess from the dataset `name`
    /// ([`Preset::for_dataset`]).
    pub fn choose(choice: Option<Preset>, name: &str) -> Self {
        match choice {
            Some(preset) => Self {
                preset,
                guessed: false,
            },
            None => Self {
                preset: Preset::for_dataset(name),
                guessed: true,
            },
        }
    }

    /// One line saying which family a run on the dataset `name` uses, how it was chosen and,
    /// for a guess, why: e.g. `trees, guessed from the name `syn4`, a Tree-Cycles / Tree-Grid
    /// benchmark (a family chosen explicitly overrides: ba-shapes, trees, real)`. It names no
    /// front end's option: it is a note of every run (the command line's `--family`, the
    /// Python package's `family=`, [`Family::choose`] in Rust).
    ///
    /// ```
    /// use induce::methods::Family;
    /// let f = Family::choose(None, "graph");
    /// assert_eq!(f.describe("graph"), "real, guessed from the name `graph`, which names no \
    ///     synthetic benchmark (ba-shapes, syn1, tree-cycles, tree-grid, syn4, syn5) \
    ///     (a family chosen explicitly overrides: ba-shapes, trees, real)");
    /// ```
    pub fn describe(&self, name: &str) -> String {
        let why = match self.preset {
            Preset::BaShapes => "a BA-Shapes benchmark",
            Preset::Trees => "a Tree-Cycles / Tree-Grid benchmark",
            Preset::Real => {
                "which names no synthetic benchmark (ba-shapes, syn1, tree-cycles, tree-grid, \
                 syn4, syn5)"
            }
        };
        match self.guessed {
            true => format!(
                "{}, guessed from the name `{name}`, {why} (a family chosen explicitly \
                 overrides: ba-shapes, trees, real)",
                self.preset
            ),
            false => format!("{}, chosen explicitly", self.preset),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::methods::BaselineConfig;

    #[test]
    fn presets_follow_the_paper() {
        for (name, p, m) in [
            ("ba-shapes", Preset::BaShapes, 80),
            ("syn1", Preset::BaShapes, 80),
            ("tree-grid", Preset::Trees, 500),
            ("syn5", Preset::Trees, 500),
            ("cora", Preset::Real, 80),
        ] {
            assert_eq!(Preset::for_dataset(name), p);
            assert_eq!(p.inductive(7).train.episodes, m);
            assert_eq!(
                (p.inductive(7).train.gamma, p.transductive(7).train.gamma),
                (0.4, 0.6)
            );
            assert_eq!(p.transductive(7).seed, 7);
        }
        for p in Preset::ALL {
            assert_eq!(p.name().parse::<Preset>().unwrap(), p);
            // The serialised name (config.json) is the name `--family` takes.
            assert_eq!(serde_json::to_value(p).unwrap(), p.name());
        }
        assert_eq!("BA_Shapes".parse::<Preset>().unwrap(), Preset::BaShapes);
        let e = "grids".parse::<Preset>().unwrap_err().to_string();
        assert_eq!(
            e,
            "invalid family `grids`: expected auto, ba-shapes, trees or real"
        );
        // The family decides the baselines' settings; the name only tells the two trees apart.
        let real = BaselineConfig::for_family(Preset::Real, "syn4", 1);
        assert_eq!(real, BaselineConfig::for_dataset("cora", 1));
        assert_eq!(
            BaselineConfig::for_family(Preset::Trees, "tree-cycles", 1),
            BaselineConfig::for_dataset("tree-cycles", 1)
        );
        let f = Family::choose(None, "ba_grid");
        assert_eq!((f.preset, f.guessed), (Preset::Real, true));
        assert!(
            f.describe("ba_grid")
                .contains("guessed from the name `ba_grid`")
        );
        let f = Family::choose(Some(Preset::BaShapes), "ba_grid");
        assert_eq!(f.describe("ba_grid"), "ba-shapes, chosen explicitly");
    }
}
