//! The explanation methods. Each method declares itself once, in its own file beside its code
//! ([`MethodDecl`]: its name, what it supports, the settings it reads, how it is built, its
//! note); [`ALL`] is the one list of them, and [`Method`] a handle on a declaration. Also: the
//! paper's settings per dataset family ([`Preset`], [`Family`]), the baselines' settings
//! ([`BaselineConfig`]), the loading of black boxes and policies from files, and
//! [`MethodSet`], the one way a run turns a method into a ready
//! [`Explainer`](induce_explain::Explainer).
//!
//! Adding a method: a file here with its `DECL` (and its builder), and one entry in [`ALL`].
//! The command line's `--method` and its help, the Python package's `METHODS`, the checks of a
//! run's restrictions and settings, and the notes all follow.
//!
//! | file | holds |
//! |---|---|
//! | `method.rs` | [`Method`], [`MethodDecl`], [`Kind`], [`Build`], [`Describe`] |
//! | `inductive.rs`, `best_of_k.rs`, `transductive.rs`, `fine_tuned.rs`, `del_only.rs`, `untrained.rs` | InduCE's methods |
//! | `induce.rs` | what InduCE's methods share (their notes, settings, builders) |
//! | `random.rs`, `cf_gnnexplainer.rs` (and `++`), `cf2.rs`, `pgexplainer.rs` | the baselines |
//! | `greedy.rs`, `exact.rs` | the search references |
//! | `baselines.rs` | [`BaselineConfig`] and what the baselines' notes share |
//! | `preset.rs` | [`Preset`], [`Family`] |
//! | `loading.rs` | [`load_black_box`], [`load_trained_policy`], policy file names |
//! | `set.rs` | [`MethodSet`], [`MethodSettings`], [`method_config`] |
//! | `variant.rs` | [`Variant`] (a method with settings of its own in a run) |
//! | `supports.rs` | [`Supports`] (what a method keeps of a run's restrictions), the checks |

mod baselines;
mod best_of_k;
mod cf2;
mod cf_gnnexplainer;
mod cf_gnnfeatures;
mod del_only;
mod exact;
mod fine_tuned;
mod greedy;
mod induce;
mod inductive;
mod loading;
mod method;
mod pgexplainer;
mod preset;
mod random;
mod set;
mod supports;
mod transductive;
mod untrained;
mod variant;

pub use baselines::BaselineConfig;
pub use loading::{
    LoadedBlackBox, black_box_for, load_black_box, load_black_box_with_arch, load_trained_policy,
    policy_file_name, policy_path,
};
pub use method::{
    Build, BuildFn, Describe, DescribeFn, Kind, Method, MethodDecl, Needs, Schedule, method_help,
};
pub use preset::{Family, Preset};
pub use set::{MethodSet, MethodSettings, Policies, PreparedMethod, method_config};
pub(crate) use supports::check_methods;
pub use supports::{EditSet, Restrictions, Supports, TRAINING_SETTINGS, check_settings};
pub use variant::Variant;
pub(crate) use variant::check_distinct;

/// Every method, in the order runs and listings give them: InduCE's, the baselines, the
/// searches. The one list: a method declared in its own file appears everywhere once it is
/// here.
pub static ALL: &[&MethodDecl] = &[
    &inductive::DECL,
    &best_of_k::DECL,
    &transductive::DECL,
    &fine_tuned::DECL,
    &del_only::DECL,
    &untrained::DECL,
    &random::DECL,
    &cf_gnnexplainer::DECL,
    &cf_gnnexplainer::PLUS_PLUS,
    &cf_gnnfeatures::DECL,
    &cf2::DECL,
    &pgexplainer::DECL,
    &greedy::DECL,
    &exact::DECL,
    #[cfg(test)]
    &toy::DECL,
];

/// A toy method, declared only in this crate's unit tests: it shows that a method's file and
/// its entry in [`ALL`] are all a method needs.
#[cfg(test)]
mod toy;
