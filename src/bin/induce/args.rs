//! Arguments several subcommands share, and their conversions.

use std::path::PathBuf;

use clap::Args;
use induce::graph::io::DataFormat;
use induce::methods::EditSet;
use induce::methods::Preset;
use induce::models::device::BackendKind;
use induce::rl::{Kernel, Reward};

/// `--black-box` and `--arch`: the model a run explains, trains against or predicts with.
#[derive(Debug, Clone, Args)]
pub struct ModelArgs {
    /// The black box: the authors' .safetensors GCN, a .bpk checkpoint or a run directory; with
    /// --arch, a PyTorch Geometric model's state_dict saved as .safetensors.
    #[arg(long)]
    pub black_box: PathBuf,
    /// The architecture of a PyG black box (JSON: GCNConv / SAGEConv / GINConv / GATConv layers,
    /// activation, head; docs/FORMATS.md).
    #[arg(long)]
    pub arch: Option<PathBuf>,
}

#[derive(Debug, Clone, Args)]
pub struct FormatArg {
    /// Data format: reference, gnn-benchmark or ogb [default: detected from the file].
    #[arg(long)]
    pub format: Option<DataFormat>,
}

#[derive(Debug, Clone, Args)]
pub struct FamilyArg {
    /// Hyper-parameter family: ba-shapes, trees, real, or auto (guessed from the data's name:
    /// syn1 and ba-shapes → ba-shapes; syn4, syn5, tree-cycles, tree-grid → trees; any other
    /// name → real). It sets InduCE's episodes (500 on trees, 80 otherwise) and the baselines'
    /// authors' settings; the choice is printed on stderr and saved in the run's config.
    #[arg(long, default_value = "auto", value_name = "FAMILY")]
    pub family: FamilyChoice,
}

/// `--family`: a [`Preset`] by name, or `auto` (`None`: guessed from the data's name).
#[derive(Debug, Clone, Copy)]
pub struct FamilyChoice(pub Option<Preset>);

impl std::str::FromStr for FamilyChoice {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        match s.trim() {
            "auto" => Ok(Self(None)),
            other => other
                .parse::<Preset>()
                .map(|p| Self(Some(p)))
                .map_err(|e| e.to_string()),
        }
    }
}

#[derive(Debug, Clone, Args)]
pub struct DataArgs {
    /// The data: a reference npz (e.g. shared/reference/syn1.npz), a gnn-benchmark npz (Cora,
    /// CiteSeer, Amazon-Photo), an OGB folder, or a built-in benchmark name (ba-shapes,
    /// tree-cycles, tree-grid; generated with --seed).
    #[arg(long)]
    pub data: String,
    #[command(flatten)]
    pub format: FormatArg,
    /// Seed of everything random (generated data, initialisation, sampling).
    #[arg(long, default_value_t = induce::DEFAULT_SEED)]
    pub seed: u64,
    /// Backend: flex, ndarray, vulkan, cuda or cube-cpu, as compiled in [default: $INDUCE_BACKEND,
    /// else flex].
    #[arg(long)]
    pub backend: Option<BackendKind>,
    /// No progress bars.
    #[arg(long)]
    pub no_progress: bool,
}

#[derive(Debug, Clone, Args)]
pub struct InduceArgs {
    /// Training episodes M [default: the paper's for the --family, 80 on BA-Shapes and real
    /// graphs, 500 on the trees; for `transductive` the per-target cap].
    #[arg(long, help_heading = "InduCE")]
    pub episodes: Option<usize>,
    /// Adam learning rate of the policy [default: the paper's 3e-4]; for `transductive` and
    /// `inductive-fine-tuned` the per-target rate.
    #[arg(long, allow_negative_numbers = true, help_heading = "InduCE")]
    pub lr: Option<f64>,
    /// Edit types: a comma list of add, del and feat (both = add,del) [default: both;
    /// inductive-del-only: del; cf-gnnfeatures: feat]. feat edits features too (new values for
    /// the target's feature entries, 0/1 entries flipped; `--edits feat` alone: features only;
    /// InduCE's policy needs the estimated state for them). A method that cannot keep them is
    /// refused (add with a deleting baseline or inductive-del-only; del with cf-gnnexplainer++;
    /// feat with the other baselines and inductive-del-only; add or del with cf-gnnfeatures).
    #[arg(long, help_heading = "Protocol and restrictions", value_parser = parse_edits)]
    pub edits: Option<EditSet>,
    /// Feature columns no feature edit may change (protected attributes, say), comma
    /// separated: with --edits …,feat.
    #[arg(
        long,
        value_name = "IDS",
        value_delimiter = ',',
        help_heading = "Protocol and restrictions"
    )]
    pub lock_features: Vec<u32>,
    /// With --edits …,feat: whose feature entries may change: target (its own row) or field
    /// (every node within the black box's layers of it in the unedited graph: many more
    /// actions; InduCE: those inside its neighbourhood).
    #[arg(
        long,
        value_name = "target|field",
        help_heading = "Protocol and restrictions"
    )]
    pub feature_nodes: Option<induce::baselines::FeatureNodes>,
    /// With --edits …,feat: how many quantile levels of a continuous feature column (one not
    /// all 0/1 over the graph) an entry may be set to: K evenly spaced levels, from the column's
    /// minimum to its maximum (3: the minimum, the median and the maximum); 0/1 columns flip.
    #[arg(long, value_name = "K", help_heading = "Protocol and restrictions")]
    pub feature_quantiles: Option<usize>,
    /// Kernel of the policy and the black box: host (fused CPU kernels) or burn (Burn tensors
    /// on the backend).
    #[arg(long, help_heading = "Scale")]
    pub kernel: Option<Kernel>,
    /// Explain (or train on) every node of a broad target spec, not only the paper's targets
    /// (predicted correctly; with a non-zero label on graphs with motif ground truth).
    #[arg(long, help_heading = "Targets")]
    pub all_nodes: bool,
    /// Neighbourhood radius h in hops [default: the --family's, 4 = L + 1 for the 3-layer
    /// GCN, the paper's]. A trained policy is used with the hops it was trained with. The
    /// radius of InduCE, greedy and exact; the other baselines search their authors' (the
    /// run's notes say which), and each method's sparsity counts the edges of the
    /// neighbourhood it searched.
    #[arg(long, help_heading = "Protocol and restrictions")]
    pub hops: Option<u32>,
    /// The edit budget δ of InduCE and greedy: an episode (a search) stops after this many
    /// edits [default: 15, the paper's; with a trained policy, the budget it was trained
    /// with]. exact has --max-size; the other baselines keep their own (--iterations).
    #[arg(long, help_heading = "Protocol and restrictions")]
    pub budget: Option<usize>,
    /// Work on fan-out-capped neighbourhoods: every expanded node visits at most K of its
    /// neighbours (seeded per target) [default: the exact h-hop neighbourhood]. For hubs of
    /// large graphs.
    #[arg(long, help_heading = "Scale")]
    pub fanout: Option<usize>,
    /// Refuse (with an error naming the target) any target whose neighbourhood has more nodes
    /// than this, instead of risking the machine's memory; --fanout brings hubs under it.
    #[arg(long, value_name = "N", help_heading = "Scale")]
    pub max_neighbourhood: Option<usize>,
    /// The reward InduCE trains with: shaped (the drop in the black box's log-probability of
    /// the original label, minus 0.1 per edit, plus 1 on the flip; chosen by measurement,
    /// docs/RESULTS.md) or paper (the paper's 1 / (log p(y) + 0.5 · edits)) [default: shaped].
    /// Training only: `induce train` and transductive (a loaded policy, fine-tuned too, keeps
    /// the reward it was trained with); --paper-faithful does not change it.
    #[arg(long, value_name = "shaped|paper", help_heading = "InduCE")]
    pub reward: Option<Reward>,
    /// The class every counterfactual must reach (a class id of the black box): found only
    /// when the prediction becomes this class, not just any other; a target already predicted
    /// as it has none. InduCE's methods (trained toward it with `induce train`) and the searches
    /// (greedy, exact); another baseline is refused with it [default: any other class].
    #[arg(long, value_name = "C", help_heading = "Protocol and restrictions")]
    pub to_class: Option<usize>,
    /// The policy's per-node state: paper (the paper's: features, degree, entropy, one-hot of
    /// the predicted label), targeted (the paper's and two more columns: the hop distance from
    /// the target and the black box's probability that the node is of another class than the
    /// target's) or estimated (the targeted one and the black box's first-order estimate of
    /// each action, also a prior on the policy's scores; needs gradients) [default: estimated
    /// with the recommended recipe (`induce train`; targeted for a black box without
    /// gradients), paper with --training reinforce, --paper-faithful and transductive].
    /// Training only: `induce train` and transductive (a loaded policy keeps its own).
    #[arg(long, value_name = "paper|targeted|estimated", help_heading = "InduCE")]
    pub state: Option<State>,
}

/// The policy state layouts a user chooses (`--state`; the authors' layout comes with
/// --paper-faithful).
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum State {
    Paper,
    Targeted,
    Estimated,
}

impl From<State> for induce::rl::StateLayout {
    fn from(s: State) -> Self {
        match s {
            State::Paper => induce::rl::StateLayout::Paper,
            State::Targeted => induce::rl::StateLayout::Targeted,
            State::Estimated => induce::rl::StateLayout::Estimated,
        }
    }
}

/// `--edits`' value ([`EditSet`]'s words).
fn parse_edits(s: &str) -> Result<EditSet, String> {
    s.parse()
}

impl InduceArgs {
    /// The library's run options these flags give (the caller adds its own).
    pub fn options(&self) -> induce::run::RunOptions {
        induce::run::RunOptions {
            episodes: self.episodes,
            lr: self.lr,
            edits: self.edits,
            lock_features: (!self.lock_features.is_empty()).then(|| self.lock_features.clone()),
            feature_nodes: self.feature_nodes,
            feature_quantiles: self.feature_quantiles,
            kernel: self.kernel,
            hops: self.hops,
            budget: self.budget,
            fanout: self.fanout,
            max_neighbourhood: self.max_neighbourhood,
            all_nodes: self.all_nodes,
            reward: self.reward,
            to_class: self.to_class,
            state: self.state.map(Into::into),
            ..Default::default()
        }
    }
}
