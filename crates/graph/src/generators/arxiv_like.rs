//! Arxiv-like: a seeded synthetic graph of the size of ogbn-arxiv for scale benchmarks
//! (heavy-tailed degrees, homophilous edges, class-informative features); see
//! [`ArxivLikeConfig`].

use std::collections::HashSet;

use rand::Rng;
use rand::SeedableRng;
use rand::rngs::StdRng;
use rand::seq::SliceRandom;

use super::common::check_unit_interval;
use super::split_seed;
use crate::dataset::{Dataset, Split};
use crate::error::{GraphError, Result};
use crate::features::Features;
use crate::graph::Graph;

/// The dataset name of the generated graph.
const NAME: &str = "arxiv-like";

/// XOR-ed into the seed for the feature stream (the fractional part of `sqrt(3)`).
const FEATURE_SEED_MIX: u64 = 0xBB67_AE85_84CA_A73B;

/// Failed draws in a row after which the weighted edge sampler is considered stalled; it also is
/// after `2 × edges + STALL` failed draws in all.
const STALL: usize = 100_000;

/// Parameters of the arxiv-like generator: a seeded synthetic citation-style graph of the size
/// of ogbn-arxiv, for scale benchmarks (it is **not** ogbn-arxiv and carries none of its data).
///
/// What it models, with the [`Default`] values of [`ArxivLikeConfig`] (the ogbn-arxiv sizes):
///
/// | property  | value                                                                         |
/// |-----------|-------------------------------------------------------------------------------|
/// | nodes     | 169,343                                                                       |
/// | edges     | exactly 1,166,243 undirected, no self loops or duplicates (mean degree 13.77) |
/// | degrees   | heavy-tailed: Chung–Lu weights `(rank + 1)^(−1/(γ−1))`, γ = 2.5              |
/// | classes   | 40, Zipf sizes `∝ (c + 1)^(−1)` (39,580 … 989), label 0 the largest          |
/// | homophily | exactly `round(0.65 × edges)` = 758,058 edges join two nodes of one class    |
/// | features  | 128 f32: class centroid + Gaussian noise (σ = 12), unit variance per entry    |
/// | split     | seeded random 54 % train / 18 % valid / 28 % test (OGB's time-split shares)   |
///
/// **Construction.**
///
/// 1. *Classes.* The class sizes are the largest-remainder rounding of
///    `num_nodes × (c + 1)^(−s) / Σ_k (k + 1)^(−s)` (`s` = `class_size_exponent`), raised to
///    at least one node per class (taken from the largest class); they depend on the sizes
///    only ([`ArxivLikeConfig::class_sizes`]). The labels are then dealt to the nodes in a
///    seeded random order.
/// 2. *Degrees.* The nodes receive, in a seeded random order, the weights
///    `w = (r + 1)^(−1/(γ−1))` for ranks `r = 0..num_nodes` (`γ` = `degree_exponent`): the
///    quantiles of a power law of exponent γ, so the expected degree of the rank-`r` node is
///    `2 × edges × w_r / Σ w` (about 14,000 for the top node by default, 4.6 for the last).
/// 3. *Edges.* Exactly `round(intra_class_fraction × edges)` intra-class and the rest
///    inter-class edges are drawn: an endpoint `u` with probability `∝ w`, then a partner `v`
///    `∝ w` among the other nodes of `u`'s class (intra) or among the nodes of the other classes
///    (inter); self loops and existing edges are redrawn. Duplicates pile up on the hubs, so
///    realised hub degrees are below their expectations (under 4 % of the draws are redrawn
///    by default). Should the sampler stall (100,000 failed draws in a row, or `2 × edges +
///    100,000` in all: a nearly complete graph or class), the remaining edges of each kind are
///    drawn uniformly from that kind's free pairs and [`Dataset::notes`] says how many.
///    Realised at the default size and seed: mean degree 13.77, median 8, 99th percentile 101,
///    maximum 6,907 (ogbn-arxiv: 13,161), 308 isolated nodes.
/// 4. *Features.* Each class has a centroid `μ_c ~ N(0, I)` in `feature_dim` dimensions; node
///    `u` gets `(μ_{y_u} + σ ε_u) / sqrt(1 + σ²)` with `ε_u ~ N(0, I)` and `σ` =
///    `feature_noise`. The default σ = 12 makes single nodes weak evidence and neighbourhoods
///    strong: at the default size and seed, the nearest class mean (means from the train
///    split) labels 13 % of the test nodes right from the raw features (the largest class
///    alone is 23 %), 52 / 86 / 92 % after 1 / 2 / 3 rounds of averaging each node with its
///    neighbours; a GCN has to use the graph. Inter-class edges go to random classes, so deep
///    averaging keeps helping; lower σ makes the features alone more informative (σ = 5:
///    54 % raw, 91 / 97 / 96 % averaged).
/// 5. *Split.* A seeded shuffle of the nodes: the first `⌊train_fraction × n⌋` train, the next
///    `⌊valid_fraction × n⌋` valid, the rest test; each list sorted ascending.
///
/// **Seeding.** Steps 1–3 draw from `StdRng::seed_from_u64(seed)` (in that order), step 4
/// from `StdRng::seed_from_u64(seed ^ 0xBB67_AE85_84CA_A73B)` (so the feature parameters do
/// not change the graph), step 5 from `StdRng::seed_from_u64(`[`split_seed`]`(seed))`. The
/// same config always gives the identical graph, labels, features and split.
///
/// **Cost.** Expected `O(edges × log nodes)` time (a binary search over cumulative weights per
/// endpoint, a hash-set lookup per edge) plus `O(nodes × feature_dim)` for the features: about a
/// second for the default size in release builds. Memory is dominated by the features
/// (169,343 × 128 × 4 bytes = 87 MB).
///
/// ```
/// use induce_graph::generators::ArxivLikeConfig;
/// let cfg = ArxivLikeConfig {
///     num_nodes: 2_000,
///     num_edges: 10_000,
///     num_classes: 5,
///     feature_dim: 16,
///     ..ArxivLikeConfig::default()
/// };
/// let d = cfg.generate().unwrap();
/// assert_eq!(d.name, "arxiv-like");
/// assert_eq!((d.graph.num_nodes(), d.graph.num_edges()), (2_000, 10_000));
/// assert_eq!((d.graph.features().dim(), d.graph.num_classes()), (16, 5));
/// assert_eq!((d.split.train.len(), d.split.valid.len(), d.split.test.len()), (1_080, 360, 560));
/// let intra = d.graph.edges().iter().filter(|&&(u, w)| {
///     d.graph.labels()[u as usize] == d.graph.labels()[w as usize]
/// }).count();
/// assert_eq!(intra, 6_500); // round(0.65 × 10,000)
/// assert_eq!(cfg.class_sizes().unwrap(), vec![876, 438, 292, 219, 175]);
/// ```
///
/// Invalid parameters are [`GraphError::InvalidParameter`] errors naming the field:
///
/// ```
/// use induce_graph::{GraphError, generators::ArxivLikeConfig};
/// let bad = ArxivLikeConfig { num_classes: 0, ..ArxivLikeConfig::default() };
/// assert!(matches!(bad.validate(), Err(GraphError::InvalidParameter { name: "num_classes", .. })));
/// ```
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ArxivLikeConfig {
    /// Number of nodes (default 169,343). At least `num_classes`, at most `u32::MAX`.
    pub num_nodes: usize,
    /// Exact number of undirected edges (default 1,166,243). At most `n (n − 1) / 2`, and the
    /// intra- and inter-class shares must fit in the pairs of their kind.
    pub num_edges: usize,
    /// Feature dimension (default 128). At least 1.
    pub feature_dim: usize,
    /// Number of classes (default 40). At least 1; every class gets at least one node.
    pub num_classes: usize,
    /// Zipf exponent `s` of the class sizes, `size_c ∝ (c + 1)^(−s)` (default 1.0: the largest
    /// class is 23 % of the nodes, the smallest 0.6 % with 40 classes). Finite, `≥ 0`; 0 gives
    /// equal sizes.
    pub class_size_exponent: f64,
    /// Power-law exponent γ of the expected degrees (default 2.5). Finite, `> 2`; smaller is
    /// more skewed. At the default size and seed the realised maximum degree is 6,907 with
    /// 308 isolated nodes; γ = 2.3 gives 12,524 (ogbn-arxiv: 13,161) with 935 isolated nodes,
    /// γ = 2.1 gives 22,247 with 3,279.
    pub degree_exponent: f64,
    /// Share of the edges inside a class (edge homophily), in `[0, 1]` (default 0.65, about
    /// ogbn-arxiv's). Exactly `round(fraction × num_edges)` edges are intra-class. Ignored
    /// with a single class (every edge is then intra-class).
    pub intra_class_fraction: f64,
    /// Standard deviation `σ` of the feature noise relative to the spread of the class centroids
    /// (default 12.0, see *Features* above). Finite, `≥ 0`; 0 makes the features the centroids
    /// themselves.
    pub feature_noise: f64,
    /// Share of the nodes in the training split, rounded down (default 0.54).
    pub train_fraction: f64,
    /// Share of the nodes in the validation split, rounded down (default 0.18); the rest is
    /// test. `train_fraction + valid_fraction ≤ 1`.
    pub valid_fraction: f64,
    /// Seed of every random draw (default 42); see *Seeding* above for the streams.
    pub seed: u64,
}

impl Default for ArxivLikeConfig {
    fn default() -> Self {
        Self {
            num_nodes: 169_343,
            num_edges: 1_166_243,
            feature_dim: 128,
            num_classes: 40,
            class_size_exponent: 1.0,
            degree_exponent: 2.5,
            intra_class_fraction: 0.65,
            feature_noise: 12.0,
            train_fraction: 0.54,
            valid_fraction: 0.18,
            seed: 42,
        }
    }
}

/// What [`ArxivLikeConfig::plan`] derives from the parameters before any random draw.
#[derive(Debug)]
struct Plan {
    sizes: Vec<usize>,
    intra_target: usize,
    inter_target: usize,
    intra_pairs: u64,
    inter_pairs: u64,
}

fn invalid(name: &'static str, value: impl ToString, reason: &'static str) -> GraphError {
    GraphError::InvalidParameter {
        name,
        value: value.to_string(),
        reason,
    }
}

/// Number of unordered pairs of `k` items.
fn pairs(k: usize) -> u64 {
    let k = k as u64;
    k * k.saturating_sub(1) / 2
}

impl ArxivLikeConfig {
    /// Checks every parameter without generating anything.
    pub fn validate(&self) -> Result<()> {
        self.plan().map(|_| ())
    }

    /// The number of nodes of each class (label `c` at index `c`), as described under
    /// *Construction* in the [type documentation](Self). Depends only on `num_nodes`, `num_classes` and `class_size_exponent`.
    pub fn class_sizes(&self) -> Result<Vec<usize>> {
        let (n, c) = (self.num_nodes, self.num_classes);
        if c == 0 {
            return Err(invalid("num_classes", c, "must be at least 1"));
        }
        if n < c {
            return Err(invalid(
                "num_nodes",
                n,
                "fewer nodes than classes: every class needs a node",
            ));
        }
        if n > u32::MAX as usize {
            return Err(invalid("num_nodes", n, "node ids are 32-bit"));
        }
        let s = self.class_size_exponent;
        if !(s.is_finite() && s >= 0.0) {
            return Err(invalid("class_size_exponent", s, "must be finite and ≥ 0"));
        }
        let weights: Vec<f64> = (0..c).map(|k| ((k + 1) as f64).powf(-s)).collect();
        let total: f64 = weights.iter().sum();
        let quotas: Vec<f64> = weights.iter().map(|w| w / total * n as f64).collect();
        let mut sizes: Vec<usize> = quotas.iter().map(|q| q.floor() as usize).collect();
        // Largest remainders first (ties to the lower label); the loop also absorbs any
        // floating-point excess or shortfall.
        let mut by_fraction: Vec<usize> = (0..c).collect();
        by_fraction.sort_by(|&a, &b| {
            let (fa, fb) = (quotas[a] - quotas[a].floor(), quotas[b] - quotas[b].floor());
            fb.total_cmp(&fa).then(a.cmp(&b))
        });
        let mut k = 0;
        while sizes.iter().sum::<usize>() < n {
            sizes[by_fraction[k % c]] += 1;
            k += 1;
        }
        while sizes.iter().sum::<usize>() > n {
            let big = argmax(&sizes);
            sizes[big] -= 1;
        }
        for l in 0..c {
            if sizes[l] == 0 {
                // n ≥ c, so while some class is empty another has at least two nodes.
                let big = argmax(&sizes);
                sizes[big] -= 1;
                sizes[l] = 1;
            }
        }
        Ok(sizes)
    }

    /// Validates the parameters and derives the class sizes and edge quotas.
    fn plan(&self) -> Result<Plan> {
        let sizes = self.class_sizes()?;
        let n = self.num_nodes;
        if self.feature_dim == 0 {
            return Err(invalid("feature_dim", 0, "must be at least 1"));
        }
        if n.checked_mul(self.feature_dim).is_none() {
            return Err(invalid(
                "feature_dim",
                self.feature_dim,
                "nodes × feature_dim overflows",
            ));
        }
        let m = self.num_edges;
        let all_pairs = pairs(n);
        if m as u64 > all_pairs {
            return Err(invalid(
                "num_edges",
                m,
                "more edges than node pairs n (n − 1) / 2",
            ));
        }
        if m >= u32::MAX as usize {
            return Err(invalid("num_edges", m, "edge ids are 32-bit"));
        }
        let g = self.degree_exponent;
        if !(g.is_finite() && g > 2.0) {
            return Err(invalid("degree_exponent", g, "must be finite and > 2"));
        }
        let h = self.intra_class_fraction;
        check_unit_interval("intra_class_fraction", h)?;
        let sigma = self.feature_noise;
        if !(sigma.is_finite() && sigma >= 0.0) {
            return Err(invalid("feature_noise", sigma, "must be finite and ≥ 0"));
        }
        check_unit_interval("train_fraction", self.train_fraction)?;
        check_unit_interval("valid_fraction", self.valid_fraction)?;
        if self.train_fraction + self.valid_fraction > 1.0 {
            return Err(invalid(
                "valid_fraction",
                self.valid_fraction,
                "train_fraction + valid_fraction exceeds 1",
            ));
        }
        let intra_pairs: u64 = sizes.iter().map(|&s| pairs(s)).sum();
        let inter_pairs = all_pairs - intra_pairs;
        let intra_target = if sizes.len() == 1 {
            m
        } else {
            ((h * m as f64).round() as usize).min(m)
        };
        let inter_target = m - intra_target;
        if intra_target as u64 > intra_pairs {
            return Err(invalid(
                "intra_class_fraction",
                h,
                "asks for more intra-class edges than there are node pairs inside the classes",
            ));
        }
        if inter_target as u64 > inter_pairs {
            return Err(invalid(
                "intra_class_fraction",
                h,
                "asks for more inter-class edges than there are node pairs across the classes",
            ));
        }
        Ok(Plan {
            sizes,
            intra_target,
            inter_target,
            intra_pairs,
            inter_pairs,
        })
    }

    /// Generates the dataset (named `arxiv-like`, one note saying it is synthetic, no fixed
    /// evaluation targets). Errors as [`validate`](Self::validate) does.
    pub fn generate(&self) -> Result<Dataset> {
        let plan = self.plan()?;
        let n = self.num_nodes;
        let mut rng = StdRng::seed_from_u64(self.seed);

        // 1. Labels.
        let mut labels: Vec<u32> = Vec::with_capacity(n);
        for (c, &s) in plan.sizes.iter().enumerate() {
            labels.extend(std::iter::repeat_n(c as u32, s));
        }
        labels.shuffle(&mut rng);

        // 2. Degree weights: rank r gets (r + 1)^(−1/(γ−1)); the ranks are shuffled.
        let alpha = 1.0 / (self.degree_exponent - 1.0);
        let mut ranks: Vec<u32> = (0..n as u32).collect();
        ranks.shuffle(&mut rng);
        let weights: Vec<f64> = ranks
            .iter()
            .map(|&r| (f64::from(r) + 1.0).powf(-alpha))
            .collect();
        drop(ranks);

        // 3. Edges.
        let groups = Groups::new(&labels, plan.sizes.len());
        let sampler = Sampler::new(&groups, &weights);
        let mut edges = EdgeSet::with_capacity(self.num_edges);
        let mut counts = [0usize; 2]; // [intra, inter]
        let targets = [plan.intra_target, plan.inter_target];
        let h = self.intra_class_fraction;
        let (mut fails, mut all_fails) = (0usize, 0usize);
        let budget = 2 * self.num_edges + STALL;
        while (counts[0] < targets[0] || counts[1] < targets[1])
            && fails < STALL
            && all_fails < budget
        {
            let intra = if counts[0] == targets[0] {
                false
            } else if counts[1] == targets[1] {
                true
            } else {
                rng.random::<f64>() < h
            };
            let u = sampler.any(&mut rng);
            let c = labels[u as usize];
            let v = if intra {
                sampler.within(c, &mut rng)
            } else {
                match sampler.outside(c, &mut rng) {
                    Some(v) if labels[v as usize] != c => v,
                    _ => {
                        fails += 1;
                        all_fails += 1;
                        continue;
                    }
                }
            };
            if u != v && edges.insert(u, v) {
                counts[usize::from(!intra)] += 1;
                fails = 0;
            } else {
                fails += 1;
                all_fails += 1;
            }
        }
        let mut notes = vec![format!(
            "synthetic graph of the size of ogbn-arxiv (not its data): {} nodes, {} edges, \
             {} classes, Chung–Lu degrees with exponent {}, {} intra-class edges, \
             class-centroid + Gaussian-noise features (noise {}), seed {}",
            n,
            self.num_edges,
            self.num_classes,
            self.degree_exponent,
            targets[0],
            self.feature_noise,
            self.seed
        )];
        let pair_counts = [plan.intra_pairs, plan.inter_pairs];
        let mut uniform = [0usize; 2];
        for kind in 0..2 {
            let need = targets[kind] - counts[kind];
            if need > 0 {
                fill_uniform(
                    kind == 0,
                    need,
                    pair_counts[kind] - counts[kind] as u64,
                    &groups,
                    &mut edges,
                    &mut rng,
                );
                uniform[kind] = need;
            }
        }
        if uniform != [0, 0] {
            notes.push(format!(
                "the weighted edge sampler stalled: the last {} intra-class and {} inter-class \
                 edges were drawn uniformly from the free pairs of their kind",
                uniform[0], uniform[1]
            ));
        }
        // Free the sampling state before the features are allocated.
        let EdgeSet { list: edges, keys } = edges;
        drop((keys, sampler));
        drop((groups, weights));

        // 4. Features.
        let features = self.features(&labels)?;

        // 5. Split.
        let split = self.split();

        let graph = Graph::from_edges(n, &edges, features, labels)?;
        debug_assert_eq!(graph.num_edges(), self.num_edges);
        Ok(Dataset {
            name: NAME.to_owned(),
            graph,
            split,
            eval_targets: None,
            notes,
        })
    }

    /// Class centroids `N(0, I)` plus noise `σ N(0, I)`, divided by `sqrt(1 + σ²)`.
    fn features(&self, labels: &[u32]) -> Result<Features> {
        let d = self.feature_dim;
        let mut rng = StdRng::seed_from_u64(self.seed ^ FEATURE_SEED_MIX);
        let mut normal = Normal::default();
        let centroids: Vec<f64> = (0..self.num_classes * d)
            .map(|_| normal.sample(&mut rng))
            .collect();
        let sigma = self.feature_noise;
        let scale = 1.0 / (1.0 + sigma * sigma).sqrt();
        let mut data = Vec::with_capacity(labels.len() * d);
        for &y in labels {
            let mu = &centroids[y as usize * d..(y as usize + 1) * d];
            data.extend(
                mu.iter()
                    .map(|&m| ((m + sigma * normal.sample(&mut rng)) * scale) as f32),
            );
        }
        Features::new(labels.len(), d, data)
    }

    /// The seeded train / valid / test split, each part sorted ascending.
    fn split(&self) -> Split {
        let n = self.num_nodes;
        let mut ids: Vec<u32> = (0..n as u32).collect();
        ids.shuffle(&mut StdRng::seed_from_u64(split_seed(self.seed)));
        let n_train = (n as f64 * self.train_fraction).floor() as usize;
        let n_valid = ((n as f64 * self.valid_fraction).floor() as usize).min(n - n_train);
        let mut test = ids.split_off(n_train + n_valid);
        let mut valid = ids.split_off(n_train);
        let mut train = ids;
        train.sort_unstable();
        valid.sort_unstable();
        test.sort_unstable();
        Split { train, valid, test }
    }
}

/// Index of the first largest entry.
fn argmax(v: &[usize]) -> usize {
    let mut best = 0;
    for (i, &x) in v.iter().enumerate() {
        if x > v[best] {
            best = i;
        }
    }
    best
}

/// The nodes grouped by class: class `c` is `order[start[c]..start[c + 1]]`, ascending ids.
#[derive(Debug)]
struct Groups {
    order: Vec<u32>,
    start: Vec<usize>,
}

impl Groups {
    fn new(labels: &[u32], num_classes: usize) -> Self {
        let mut start = vec![0usize; num_classes + 1];
        for &l in labels {
            start[l as usize + 1] += 1;
        }
        for c in 0..num_classes {
            start[c + 1] += start[c];
        }
        let mut fill = start.clone();
        let mut order = vec![0u32; labels.len()];
        for (u, &l) in labels.iter().enumerate() {
            order[fill[l as usize]] = u as u32;
            fill[l as usize] += 1;
        }
        Self { order, start }
    }

    fn num_classes(&self) -> usize {
        self.start.len() - 1
    }

    fn range(&self, c: usize) -> (usize, usize) {
        (self.start[c], self.start[c + 1])
    }

    fn members(&self, c: usize) -> &[u32] {
        &self.order[self.start[c]..self.start[c + 1]]
    }
}

/// Draws nodes with probability proportional to their weight, from everywhere, from one class,
/// or from outside one class (binary search in the cumulative weights along [`Groups::order`]).
#[derive(Debug)]
struct Sampler<'a> {
    groups: &'a Groups,
    /// `cum[i]` = total weight of `order[..=i]`.
    cum: Vec<f64>,
}

impl<'a> Sampler<'a> {
    fn new(groups: &'a Groups, weights: &[f64]) -> Self {
        let mut acc = 0.0;
        let cum = groups
            .order
            .iter()
            .map(|&u| {
                acc += weights[u as usize];
                acc
            })
            .collect();
        Self { groups, cum }
    }

    /// Total weight of `order[..i]`.
    fn before(&self, i: usize) -> f64 {
        if i == 0 { 0.0 } else { self.cum[i - 1] }
    }

    /// The node of `order[lo..hi]` (non-empty) whose weight interval holds `r`.
    fn locate(&self, lo: usize, hi: usize, r: f64) -> u32 {
        let k = self.cum[lo..hi].partition_point(|&c| c <= r);
        self.groups.order[lo + k.min(hi - lo - 1)]
    }

    fn any(&self, rng: &mut StdRng) -> u32 {
        let n = self.cum.len();
        self.locate(0, n, rng.random::<f64>() * self.before(n))
    }

    fn within(&self, c: u32, rng: &mut StdRng) -> u32 {
        let (lo, hi) = self.groups.range(c as usize);
        let (a, b) = (self.before(lo), self.before(hi));
        self.locate(lo, hi, a + rng.random::<f64>() * (b - a))
    }

    /// A node outside class `c`; `None` when every node is in `c`. Rounding can, very rarely,
    /// land on a node of `c`: the caller checks.
    fn outside(&self, c: u32, rng: &mut StdRng) -> Option<u32> {
        let (lo, hi) = self.groups.range(c as usize);
        let n = self.cum.len();
        if lo == 0 && hi == n {
            return None;
        }
        let (a, b) = (self.before(lo), self.before(hi));
        let rest = self.before(n) - (b - a);
        let mut r = rng.random::<f64>() * rest;
        if r >= a {
            r += b - a;
        }
        Some(self.locate(0, n, r))
    }
}

/// The edge list in insertion order with a membership set of `min << 32 | max` keys.
#[derive(Debug)]
struct EdgeSet {
    list: Vec<(u32, u32)>,
    keys: HashSet<u64>,
}

impl EdgeSet {
    fn with_capacity(m: usize) -> Self {
        Self {
            list: Vec::with_capacity(m),
            keys: HashSet::with_capacity(m),
        }
    }

    fn key(u: u32, v: u32) -> u64 {
        (u64::from(u.min(v)) << 32) | u64::from(u.max(v))
    }

    fn contains(&self, u: u32, v: u32) -> bool {
        self.keys.contains(&Self::key(u, v))
    }

    /// Adds `{u, v}` (`u ≠ v`); `false` if present.
    fn insert(&mut self, u: u32, v: u32) -> bool {
        debug_assert_ne!(u, v);
        let fresh = self.keys.insert(Self::key(u, v));
        if fresh {
            self.list.push((u.min(v), u.max(v)));
        }
        fresh
    }
}

/// Adds `need` edges drawn uniformly from the `free` absent pairs of one kind (intra- or
/// inter-class). When at least half the pairs of the kind are free, by rejection sampling of
/// uniform pairs of the kind (≤ 2 draws per edge on average); otherwise by one selection-sampling
/// pass over the pairs of the kind, which are then fewer than twice the edges already present.
fn fill_uniform(
    intra: bool,
    need: usize,
    free: u64,
    groups: &Groups,
    edges: &mut EdgeSet,
    rng: &mut StdRng,
) {
    debug_assert!(need as u64 <= free);
    let c = groups.num_classes();
    let n = groups.order.len() as u64;
    // Unordered intra pairs per class, or ordered inter pairs with the first node in the class.
    let class_pairs: Vec<u64> = (0..c)
        .map(|k| {
            let s = groups.members(k).len() as u64;
            if intra {
                pairs(s as usize)
            } else {
                s * (n - s)
            }
        })
        .collect();
    let kind_pairs: u64 = if intra {
        class_pairs.iter().sum()
    } else {
        class_pairs.iter().sum::<u64>() / 2
    };
    if free.saturating_mul(2) >= kind_pairs {
        let mut cum = Vec::with_capacity(c);
        let mut acc = 0u64;
        for &p in &class_pairs {
            acc += p;
            cum.push(acc);
        }
        let mut added = 0;
        while added < need {
            let k = cum.partition_point(|&x| x <= rng.random_range(0..acc));
            let (lo, hi) = groups.range(k);
            let s = hi - lo;
            let iu = rng.random_range(0..s);
            let u = groups.order[lo + iu];
            let v = if intra {
                let iv = rng.random_range(0..s - 1);
                groups.order[lo + if iv >= iu { iv + 1 } else { iv }]
            } else {
                let r = rng.random_range(0..groups.order.len() - s);
                groups.order[if r >= lo { r + s } else { r }]
            };
            if edges.insert(u, v) {
                added += 1;
            }
        }
        return;
    }
    // Selection sampling (Knuth's algorithm S) over the free pairs of the kind.
    let mut remaining = free;
    let mut left = need;
    let mut visit = |u: u32, v: u32, edges: &mut EdgeSet| -> bool {
        if left == 0 {
            return false;
        }
        if !edges.contains(u, v) {
            if rng.random_range(0..remaining) < left as u64 {
                edges.insert(u, v);
                left -= 1;
            }
            remaining -= 1;
        }
        true
    };
    if intra {
        'classes: for k in 0..c {
            let m = groups.members(k);
            for i in 0..m.len() {
                for &v in &m[i + 1..] {
                    if !visit(m[i], v, edges) {
                        break 'classes;
                    }
                }
            }
        }
    } else {
        'pairs: for a in 0..c {
            for b in a + 1..c {
                for &u in groups.members(a) {
                    for &v in groups.members(b) {
                        if !visit(u, v, edges) {
                            break 'pairs;
                        }
                    }
                }
            }
        }
    }
}

/// Standard normal draws by the Marsaglia polar method (two per accepted point).
#[derive(Debug, Default)]
struct Normal {
    spare: Option<f64>,
}

impl Normal {
    fn sample(&mut self, rng: &mut StdRng) -> f64 {
        if let Some(z) = self.spare.take() {
            return z;
        }
        loop {
            let x = 2.0 * rng.random::<f64>() - 1.0;
            let y = 2.0 * rng.random::<f64>() - 1.0;
            let s = x * x + y * y;
            if s > 0.0 && s < 1.0 {
                let f = (-2.0 * s.ln() / s).sqrt();
                self.spare = Some(y * f);
                return x * f;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generators::common::testing::same;

    fn small() -> ArxivLikeConfig {
        ArxivLikeConfig {
            num_nodes: 5_000,
            num_edges: 34_000,
            feature_dim: 16,
            num_classes: 10,
            ..ArxivLikeConfig::default()
        }
    }

    fn degrees(d: &Dataset) -> Vec<usize> {
        let mut deg = vec![0; d.graph.num_nodes()];
        for (u, w) in d.graph.edges() {
            deg[u as usize] += 1;
            deg[w as usize] += 1;
        }
        deg
    }

    fn intra_edges(d: &Dataset) -> usize {
        let y = d.graph.labels();
        d.graph
            .edges()
            .iter()
            .filter(|&&(u, w)| y[u as usize] == y[w as usize])
            .count()
    }

    /// Exact counts, a simple graph, labels, split and features well formed.
    fn check_well_formed(d: &Dataset, cfg: &ArxivLikeConfig) {
        let g = &d.graph;
        assert_eq!(d.name, "arxiv-like");
        assert_eq!(g.num_nodes(), cfg.num_nodes);
        assert_eq!(g.num_edges(), cfg.num_edges);
        let edges = g.edges();
        assert_eq!(edges.len(), cfg.num_edges);
        assert!(edges.iter().all(|&(u, w)| u < w), "no self loops");
        assert!(edges.windows(2).all(|p| p[0] < p[1]), "no duplicates");
        assert_eq!(g.features().num_nodes(), cfg.num_nodes);
        assert_eq!(g.features().dim(), cfg.feature_dim);
        let mut counts = vec![0usize; cfg.num_classes];
        for &l in g.labels() {
            counts[l as usize] += 1;
        }
        assert_eq!(counts, cfg.class_sizes().unwrap());
        assert!(counts.iter().all(|&c| c > 0), "every class present");
        let s = &d.split;
        s.validate(cfg.num_nodes).unwrap();
        let n = cfg.num_nodes as f64;
        assert_eq!(s.train.len(), (n * cfg.train_fraction).floor() as usize);
        assert_eq!(s.valid.len(), (n * cfg.valid_fraction).floor() as usize);
        let mut all: Vec<u32> = [&s.train, &s.valid, &s.test]
            .into_iter()
            .flatten()
            .copied()
            .collect();
        all.sort_unstable();
        assert_eq!(all, (0..cfg.num_nodes as u32).collect::<Vec<_>>());
        assert!(d.eval_targets.is_none());
        assert!(d.notes[0].contains("synthetic"));
    }

    #[test]
    fn small_config_is_well_formed() {
        let cfg = small();
        let d = cfg.generate().unwrap();
        check_well_formed(&d, &cfg);
        assert_eq!(d.notes.len(), 1, "no stall: {:?}", d.notes);
        // Zipf sizes: strictly uneven, the largest first.
        let sizes = cfg.class_sizes().unwrap();
        assert_eq!(sizes.iter().sum::<usize>(), 5_000);
        assert!(sizes.windows(2).all(|p| p[0] >= p[1]));
        assert!(sizes[0] > 5 * sizes[9]);
    }

    #[test]
    fn homophily_is_the_configured_fraction() {
        for h in [0.0, 0.3, 0.65, 1.0] {
            let cfg = ArxivLikeConfig {
                intra_class_fraction: h,
                ..small()
            };
            let d = cfg.generate().unwrap();
            assert_eq!(d.graph.num_edges(), 34_000);
            assert_eq!(
                intra_edges(&d),
                (h * 34_000.0).round() as usize,
                "fraction {h}"
            );
        }
    }

    #[test]
    fn degrees_are_heavy_tailed() {
        let d = small().generate().unwrap();
        let mut deg = degrees(&d);
        deg.sort_unstable();
        let mean = 2.0 * 34_000.0 / 5_000.0;
        let max = *deg.last().unwrap() as f64;
        let median = deg[deg.len() / 2] as f64;
        assert!(max > 15.0 * mean, "max {max}, mean {mean}");
        assert!(median < mean, "median {median} below the mean {mean}");
        // A lower exponent is more skewed.
        let skewed = ArxivLikeConfig {
            degree_exponent: 2.1,
            ..small()
        }
        .generate()
        .unwrap();
        assert!(*degrees(&skewed).iter().max().unwrap() as f64 > max);
    }

    #[test]
    fn deterministic_per_seed() {
        let a = small().generate().unwrap();
        assert!(same(&a, &small().generate().unwrap()));
        let b = ArxivLikeConfig {
            seed: 43,
            ..small()
        }
        .generate()
        .unwrap();
        assert_ne!(a.graph.edges(), b.graph.edges());
        assert_ne!(a.graph.labels(), b.graph.labels());
        assert_ne!(a.graph.features(), b.graph.features());
        assert_ne!(a.split, b.split);
        // The feature parameters do not change the graph.
        let c = ArxivLikeConfig {
            feature_noise: 1.0,
            feature_dim: 8,
            ..small()
        }
        .generate()
        .unwrap();
        assert_eq!(a.graph.edges(), c.graph.edges());
        assert_eq!(a.graph.labels(), c.graph.labels());
        assert_eq!(a.split, c.split);
    }

    #[test]
    fn features_carry_the_class() {
        let cfg = ArxivLikeConfig {
            feature_noise: 0.5,
            ..small()
        };
        let d = cfg.generate().unwrap();
        let f = d.graph.features();
        let y = d.graph.labels();
        // Class means of the features, then the nearest-mean accuracy.
        let (c, dim) = (cfg.num_classes, cfg.feature_dim);
        let mut mean = vec![0.0f64; c * dim];
        let sizes = cfg.class_sizes().unwrap();
        for u in 0..cfg.num_nodes {
            for (k, &x) in f.row(u).iter().enumerate() {
                mean[y[u] as usize * dim + k] += f64::from(x) / sizes[y[u] as usize] as f64;
            }
        }
        let nearest = |u: usize| {
            (0..c)
                .min_by(|&a, &b| {
                    let dist = |k: usize| -> f64 {
                        f.row(u)
                            .iter()
                            .zip(&mean[k * dim..(k + 1) * dim])
                            .map(|(&x, &m)| (f64::from(x) - m).powi(2))
                            .sum()
                    };
                    dist(a).total_cmp(&dist(b))
                })
                .unwrap()
        };
        let right = (0..cfg.num_nodes)
            .filter(|&u| nearest(u) == y[u] as usize)
            .count();
        assert!(right as f64 > 0.9 * cfg.num_nodes as f64, "{right}");
        // Overall about unit variance.
        let all = f.as_slice();
        let var = all.iter().map(|&x| f64::from(x).powi(2)).sum::<f64>() / all.len() as f64;
        assert!((0.3..2.0).contains(&var), "{var}");
        // No noise: every node is its class centroid.
        let exact = ArxivLikeConfig {
            feature_noise: 0.0,
            ..small()
        }
        .generate()
        .unwrap();
        let (fe, ye) = (exact.graph.features(), exact.graph.labels());
        for u in 1..cfg.num_nodes {
            if ye[u] == ye[0] {
                assert_eq!(fe.row(u), fe.row(0));
            }
        }
    }

    #[test]
    fn class_sizes_are_zipf_and_cover_every_class() {
        let sizes = |n, c, s| {
            ArxivLikeConfig {
                num_nodes: n,
                num_classes: c,
                class_size_exponent: s,
                ..ArxivLikeConfig::default()
            }
            .class_sizes()
            .unwrap()
        };
        assert_eq!(sizes(100, 4, 0.0), vec![25; 4]);
        assert_eq!(sizes(10, 3, 0.0), vec![4, 3, 3]);
        assert_eq!(sizes(12, 3, 1.0), vec![7, 3, 2]); // 6.5, 3.3, 2.2
        // Steep exponent: the tail classes still get one node each.
        let s = sizes(10, 5, 8.0);
        assert_eq!(s, vec![6, 1, 1, 1, 1]);
        assert_eq!(sizes(5, 5, 3.0), vec![1; 5]);
        let arxiv = ArxivLikeConfig::default().class_sizes().unwrap();
        assert_eq!(arxiv.len(), 40);
        assert_eq!(arxiv.iter().sum::<usize>(), 169_343);
        assert!(arxiv[0] > 35_000 && arxiv[39] < 1_100, "{arxiv:?}");
    }

    #[test]
    fn tiny_and_dense_configs_are_exact() {
        // Complete graph on 30 nodes: the sampler must fill every pair.
        let complete = ArxivLikeConfig {
            num_nodes: 30,
            num_edges: 435,
            num_classes: 3,
            class_size_exponent: 0.0,
            intra_class_fraction: 135.0 / 435.0, // 3 × C(10, 2) intra pairs
            feature_dim: 2,
            ..ArxivLikeConfig::default()
        };
        let d = complete.generate().unwrap();
        check_well_formed(&d, &complete);
        // Nearly all pairs, different homophily: the uniform fallback may kick in.
        let dense = ArxivLikeConfig {
            num_edges: 400,
            intra_class_fraction: 0.3,
            ..complete.clone()
        };
        let d = dense.generate().unwrap();
        check_well_formed(&d, &dense);
        assert_eq!(intra_edges(&d), 120);
        assert!(same(&d, &dense.generate().unwrap()));
        // One class: every edge is intra-class whatever the fraction says.
        let one = ArxivLikeConfig {
            num_nodes: 50,
            num_edges: 200,
            num_classes: 1,
            feature_dim: 3,
            ..ArxivLikeConfig::default()
        };
        let d = one.generate().unwrap();
        check_well_formed(&d, &one);
        // A complete one-class graph stalls the weighted sampler: the uniform fill finishes it.
        let full = ArxivLikeConfig {
            num_nodes: 200,
            num_edges: 19_900,
            num_classes: 1,
            feature_dim: 2,
            ..ArxivLikeConfig::default()
        };
        let d = full.generate().unwrap();
        check_well_formed(&d, &full);
        assert!(d.notes[1].contains("stalled"), "{:?}", d.notes);
        // Single node, no edges.
        let single = ArxivLikeConfig {
            num_nodes: 1,
            num_edges: 0,
            num_classes: 1,
            ..ArxivLikeConfig::default()
        };
        assert_eq!(single.generate().unwrap().graph.num_nodes(), 1);
        // Every node its own class: only inter-class edges exist.
        let singletons = ArxivLikeConfig {
            num_nodes: 20,
            num_edges: 60,
            num_classes: 20,
            intra_class_fraction: 0.0,
            ..ArxivLikeConfig::default()
        };
        check_well_formed(&singletons.generate().unwrap(), &singletons);
    }

    #[test]
    fn fallback_is_uniform_and_exact() {
        let groups = Groups::new(&[0, 1, 0, 1, 0, 1, 2], 3);
        assert_eq!(groups.members(0), &[0, 2, 4]);
        assert_eq!(groups.members(2), &[6]);
        let mut rng = StdRng::seed_from_u64(1);
        // Intra pairs: 3 + 3 + 0 = 6. Rejection mode, then the scan for the rest.
        let mut e = EdgeSet::with_capacity(6);
        fill_uniform(true, 2, 6, &groups, &mut e, &mut rng);
        fill_uniform(true, 4, 4, &groups, &mut e, &mut rng);
        let mut got = e.list.clone();
        got.sort_unstable();
        assert_eq!(got, vec![(0, 2), (0, 4), (1, 3), (1, 5), (2, 4), (3, 5)]);
        // Inter pairs: 21 − 6 = 15.
        let mut e = EdgeSet::with_capacity(15);
        fill_uniform(false, 5, 15, &groups, &mut e, &mut rng);
        fill_uniform(false, 10, 10, &groups, &mut e, &mut rng);
        assert_eq!(e.list.len(), 15);
        let y = [0, 1, 0, 1, 0, 1, 2];
        assert!(e.list.iter().all(|&(u, v)| y[u as usize] != y[v as usize]));
    }

    #[test]
    fn bad_parameters_are_typed_errors() {
        let bad = |c: ArxivLikeConfig, which: &str| {
            match c.validate() {
                Err(GraphError::InvalidParameter { name, .. }) => assert_eq!(name, which),
                other => panic!("expected an error on {which}, got {other:?}"),
            }
            assert!(c.generate().is_err());
        };
        let d = small;
        bad(
            ArxivLikeConfig {
                num_classes: 0,
                ..d()
            },
            "num_classes",
        );
        bad(
            ArxivLikeConfig {
                num_nodes: 9,
                ..d()
            },
            "num_nodes",
        );
        bad(
            ArxivLikeConfig {
                num_nodes: u32::MAX as usize + 1,
                ..d()
            },
            "num_nodes",
        );
        bad(
            ArxivLikeConfig {
                num_edges: 5_000 * 4_999 / 2 + 1,
                ..d()
            },
            "num_edges",
        );
        bad(
            ArxivLikeConfig {
                feature_dim: 0,
                ..d()
            },
            "feature_dim",
        );
        bad(
            ArxivLikeConfig {
                feature_dim: usize::MAX,
                ..d()
            },
            "feature_dim",
        );
        bad(
            ArxivLikeConfig {
                degree_exponent: 2.0,
                ..d()
            },
            "degree_exponent",
        );
        bad(
            ArxivLikeConfig {
                degree_exponent: f64::NAN,
                ..d()
            },
            "degree_exponent",
        );
        bad(
            ArxivLikeConfig {
                degree_exponent: f64::INFINITY,
                ..d()
            },
            "degree_exponent",
        );
        bad(
            ArxivLikeConfig {
                class_size_exponent: -1.0,
                ..d()
            },
            "class_size_exponent",
        );
        bad(
            ArxivLikeConfig {
                intra_class_fraction: 1.5,
                ..d()
            },
            "intra_class_fraction",
        );
        bad(
            ArxivLikeConfig {
                feature_noise: -0.1,
                ..d()
            },
            "feature_noise",
        );
        bad(
            ArxivLikeConfig {
                feature_noise: f64::NAN,
                ..d()
            },
            "feature_noise",
        );
        bad(
            ArxivLikeConfig {
                train_fraction: 1.1,
                ..d()
            },
            "train_fraction",
        );
        bad(
            ArxivLikeConfig {
                valid_fraction: -0.5,
                ..d()
            },
            "valid_fraction",
        );
        bad(
            ArxivLikeConfig {
                train_fraction: 0.9,
                valid_fraction: 0.2,
                ..d()
            },
            "valid_fraction",
        );
        // 10 equal classes of 2 nodes: 10 intra pairs, 180 inter pairs.
        let pairs = ArxivLikeConfig {
            num_nodes: 20,
            num_classes: 10,
            class_size_exponent: 0.0,
            ..d()
        };
        bad(
            ArxivLikeConfig {
                num_edges: 20,
                intra_class_fraction: 0.6,
                ..pairs.clone()
            },
            "intra_class_fraction",
        );
        bad(
            ArxivLikeConfig {
                num_edges: 190,
                intra_class_fraction: 0.0,
                ..pairs.clone()
            },
            "intra_class_fraction",
        );
        assert!(
            ArxivLikeConfig {
                num_edges: 190,
                intra_class_fraction: 10.0 / 190.0,
                ..pairs
            }
            .validate()
            .is_ok()
        );
        ArxivLikeConfig::default().validate().unwrap();
    }

    /// The full ogbn-arxiv size: exact counts, quickly (a few seconds in release builds).
    #[test]
    fn default_size_is_exact() {
        let cfg = ArxivLikeConfig::default();
        let d = cfg.generate().unwrap();
        assert_eq!(d.graph.num_nodes(), 169_343);
        assert_eq!(d.graph.num_edges(), 1_166_243);
        assert_eq!(d.graph.features().dim(), 128);
        assert_eq!(d.graph.num_classes(), 40);
        assert_eq!(d.notes.len(), 1, "{:?}", d.notes);
        assert_eq!(
            (d.split.train.len(), d.split.valid.len(), d.split.test.len()),
            (91_445, 30_481, 47_417)
        );
        assert_eq!(intra_edges(&d), 758_058); // round(0.65 × 1,166,243)
        let max = (0..169_343u32).map(|u| d.graph.degree(u)).max().unwrap();
        assert!(max > 1_000, "max degree {max}");
    }
}
