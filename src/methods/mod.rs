//! The explanation methods: their names ([`Method`]), the paper's settings per dataset family
//! ([`Preset`], [`Family`]), the baselines' settings ([`BaselineConfig`]), the loading of black
//! boxes and policies from files, and [`MethodSet`], the one way a run turns a method name into a
//! ready [`Explainer`](induce_explain::Explainer).
//!
//! | file | holds |
//! |---|---|
//! | `name.rs` | [`Method`] |
//! | `preset.rs` | [`Preset`], [`Family`] |
//! | `baselines.rs` | [`BaselineConfig`], [`baseline`] |
//! | `induce.rs` | [`explainer`], [`describe_induce`] |
//! | `loading.rs` | [`load_black_box`], [`load_trained_policy`], policy file names |
//! | `set.rs` | [`MethodSet`], [`MethodSettings`], [`method_config`] |
//! | `supports.rs` | [`Supports`] (what each method keeps of a run's restrictions) |

mod baselines;
mod induce;
mod loading;
mod name;
mod preset;
mod set;
mod supports;

pub use baselines::{BaselineConfig, baseline};
pub use induce::{describe_induce, explainer};
pub use loading::{
    LoadedBlackBox, black_box_for, load_black_box, load_black_box_with_arch, load_trained_policy,
    policy_file_name, policy_path,
};
pub use name::Method;
pub use preset::{Family, Preset};
pub use set::{MethodSet, MethodSettings, Policies, PreparedMethod, method_config};
pub use supports::Supports;
pub(crate) use supports::{Restrictions, check_methods};
