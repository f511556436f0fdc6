//! Which nodes to explain: target specifications, the paper's target filter, shards.

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use induce_graph::{Dataset, k_hop};
use induce_models::BlackBox;
use serde::{Deserialize, Serialize};

use crate::error::{ExplainError, Result};

/// A set of target nodes, as the command line's `--targets` spells it.
///
/// | spec | nodes |
/// |---|---|
/// | `train`, `test` | the dataset's split |
/// | `eval` | the evaluation set shipped with the data (the reference npz `eval_idx`) |
/// | `all` | every node |
/// | `12,40,77` | these ids |
/// | `@file` | one id a line (blank lines and `#` comments skipped) |
///
/// ```
/// use induce_explain::pipeline::TargetSpec;
/// assert_eq!("12, 40,77".parse::<TargetSpec>().unwrap(), TargetSpec::List(vec![12, 40, 77]));
/// assert_eq!("eval".parse::<TargetSpec>().unwrap(), TargetSpec::Eval);
/// assert!("12,x".parse::<TargetSpec>().is_err());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub enum TargetSpec {
    /// The training split.
    Train,
    /// The test split.
    Test,
    /// The dataset's fixed evaluation set.
    Eval,
    /// Every node.
    All,
    /// Explicit ids.
    List(Vec<u32>),
    /// A file of ids, one a line.
    File(PathBuf),
}

impl FromStr for TargetSpec {
    type Err = ExplainError;

    fn from_str(s: &str) -> Result<Self> {
        let s = s.trim();
        Ok(match s {
            "train" => Self::Train,
            "test" => Self::Test,
            "eval" => Self::Eval,
            "all" => Self::All,
            _ if s.starts_with('@') && s.len() > 1 => Self::File(PathBuf::from(&s[1..])),
            _ => {
                let bad = |reason: String| ExplainError::InvalidValue {
                    what: "target list",
                    value: s.to_string(),
                    reason,
                };
                let ids = s
                    .split(',')
                    .map(|p| {
                        let p = p.trim();
                        p.parse::<u32>().map_err(|_| match p.parse::<i64>() {
                            Ok(v) if v < 0 => {
                                bad(format!("node {v} is out of range: node ids start at 0"))
                            }
                            _ => bad(format!(
                                "`{p}` is not a node id (expected train, test, eval, all, a \
                                 list such as 12,40,77 or @file)"
                            )),
                        })
                    })
                    .collect::<Result<Vec<u32>>>()?;
                Self::List(ids)
            }
        })
    }
}

impl fmt::Display for TargetSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Train => f.write_str("train"),
            Self::Test => f.write_str("test"),
            Self::Eval => f.write_str("eval"),
            Self::All => f.write_str("all"),
            Self::List(ids) => {
                let s: Vec<String> = ids.iter().map(u32::to_string).collect();
                f.write_str(&s.join(","))
            }
            Self::File(p) => write!(f, "@{}", p.display()),
        }
    }
}

impl From<TargetSpec> for String {
    fn from(t: TargetSpec) -> Self {
        t.to_string()
    }
}

impl TryFrom<String> for TargetSpec {
    type Error = ExplainError;
    fn try_from(s: String) -> Result<Self> {
        s.parse()
    }
}

impl TargetSpec {
    /// True for the specs that name a split or every node (`train`, `test`, `all`), to which the
    /// paper's filter ([`select_targets`]) applies; lists, files and `eval` are taken as given.
    pub fn is_broad(&self) -> bool {
        matches!(self, Self::Train | Self::Test | Self::All)
    }

    /// The node ids of this spec on `data`, in order. Errors name the fault: an id out of range,
    /// a duplicate id, a missing or malformed file (with its line), a dataset without an
    /// evaluation set, or an empty result.
    pub fn resolve(&self, data: &Dataset) -> Result<Vec<u32>> {
        let n = data.graph.num_nodes();
        let ids: Vec<u32> = match self {
            Self::Train => data.split.train.clone(),
            Self::Test => data.split.test.clone(),
            Self::Eval => data.eval_targets.clone().ok_or_else(|| {
                ExplainError::NoTargets(format!(
                    "{} has no evaluation set (only reference npz files carry eval_idx); use \
                     test, all, a list or @file",
                    data.name
                ))
            })?,
            Self::All => (0..n as u32).collect(),
            Self::List(ids) => ids.clone(),
            Self::File(path) => read_id_file(path)?,
        };
        let mut seen = std::collections::HashSet::new();
        for &t in &ids {
            if t as usize >= n {
                return Err(ExplainError::TargetOutOfRange {
                    target: t,
                    num_nodes: n,
                });
            }
            if !seen.insert(t) {
                let whose = match self {
                    Self::Eval => format!(" in {}'s eval_idx", data.name),
                    Self::Train => format!(" in {}'s train_idx", data.name),
                    Self::Test => format!(" in {}'s test_idx", data.name),
                    _ => String::new(),
                };
                return Err(ExplainError::InvalidValue {
                    what: "target list",
                    value: self.to_string(),
                    reason: format!("node {t} is listed twice{whose}"),
                });
            }
        }
        if ids.is_empty() {
            return Err(ExplainError::NoTargets(format!(
                "`{self}` selects no node of {}",
                data.name
            )));
        }
        Ok(ids)
    }
}

fn read_id_file(path: &Path) -> Result<Vec<u32>> {
    let text = std::fs::read_to_string(path).map_err(|e| ExplainError::InvalidValue {
        what: "target file",
        value: format!("@{}", path.display()),
        reason: e.to_string(),
    })?;
    let mut ids = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        ids.push(line.parse().map_err(|_| ExplainError::BadRunFile {
            path: path.to_path_buf(),
            line: Some(i + 1),
            message: format!("`{line}` is not a node id"),
        })?);
    }
    Ok(ids)
}

/// The paper's targets among `nodes`: nodes that the black box predicts correctly on the graph
/// (evaluated on their `hops`-hop neighbourhood widened to the model's receptive field, `L + 1`
/// hops, or on the whole graph for a model that reports no `L`) and, on graphs with motif ground truth (the synthetic benchmarks,
/// where label 0 is the base graph and explaining it is meaningless), a non-zero label. On real
/// graphs (no ground truth) every class counts. Runs on all cores; keeps the order of `nodes`.
pub fn select_targets(
    data: &Dataset,
    black_box: &dyn BlackBox,
    nodes: &[u32],
    hops: u32,
) -> Result<Vec<u32>> {
    let g = &data.graph;
    // The model's prediction on the graph: on a neighbourhood of at least its receptive field
    // (`L + 1` hops), or on the whole graph for a model that reports no `L`.
    let whole = match black_box.message_passing_layers() {
        Some(_) => None,
        None => Some(black_box.log_probs(g.features(), &g.edges())?.predictions()),
    };
    let hops = black_box
        .message_passing_layers()
        .map_or(hops, |l| hops.max(l + 1));
    let keep = crate::parallel::map(nodes, crate::parallel::default_threads(), |&u| {
        if u as usize >= g.num_nodes() {
            return Err(ExplainError::TargetOutOfRange {
                target: u,
                num_nodes: g.num_nodes(),
            });
        }
        let label = g.labels()[u as usize] as usize;
        if label == 0 && g.motifs().is_some() {
            return Ok(false);
        }
        if let Some(pred) = &whole {
            return Ok(pred[u as usize] == label);
        }
        let s = k_hop(g, u, hops)?;
        let lp = match black_box.prepare_rows(g.features(), &s.nodes)? {
            Some(p) => p.log_probs(&s.edges)?,
            None => black_box.log_probs(&s.features(g), &s.edges)?,
        };
        Ok(lp.argmax(s.target_local) == label)
    })?;
    Ok(nodes
        .iter()
        .zip(keep)
        .filter_map(|(&u, k)| k.then_some(u))
        .collect())
}

/// The `index`-th (1-based) of `count` contiguous, disjoint shards of a target list: what one
/// machine of a run spread over `count` machines explains. Concatenating the shards `1..=count`
/// in order gives the whole list back. Spelled `I/N` (`--shard 2/4`).
///
/// ```
/// use induce_explain::pipeline::Shard;
/// let s: Shard = "2/3".parse().unwrap();
/// assert_eq!(s.select(&[1, 2, 3, 4, 5, 6, 7]), vec![4, 5]); // sizes 3, 2, 2
/// assert!("3/2".parse::<Shard>().is_err() && "0/2".parse::<Shard>().is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub struct Shard {
    /// 1-based shard number.
    pub index: usize,
    /// Number of shards.
    pub count: usize,
}

impl Shard {
    /// The shard of the array task this process runs in, from the scheduler's environment
    /// (`--shard auto`), read through `var` (the process's environment:
    /// [`Shard::from_process_env`]):
    ///
    /// * Slurm job arrays: `SLURM_ARRAY_TASK_ID`, `SLURM_ARRAY_TASK_COUNT` and
    ///   `SLURM_ARRAY_TASK_MIN` (shard `ID − MIN + 1` of `COUNT`, so `--array=0-3` and
    ///   `--array=1-4` both give shards 1..4); the indices must be contiguous (no step, no list
    ///   with gaps). A rerun of one index of a finished array (`sbatch --array=3`) has
    ///   `COUNT = 1`: give it `--shard 3/N` (the scripts `induce slurm` writes always do).
    /// * Kubernetes Indexed Jobs: `JOB_COMPLETION_INDEX` (from 0) with the count in
    ///   `INDUCE_SHARD_COUNT` (Kubernetes does not export it; set it to the Job's
    ///   `completions`).
    ///
    /// ```
    /// use induce_explain::pipeline::Shard;
    /// let env = |pairs: &'static [(&'static str, &'static str)]| {
    ///     move |k: &str| pairs.iter().find(|(n, _)| *n == k).map(|(_, v)| v.to_string())
    /// };
    /// let slurm = env(&[("SLURM_ARRAY_TASK_ID", "2"), ("SLURM_ARRAY_TASK_COUNT", "4"),
    ///     ("SLURM_ARRAY_TASK_MIN", "0")]);
    /// assert_eq!(Shard::from_env(slurm).unwrap().to_string(), "3/4");
    /// let k8s = env(&[("JOB_COMPLETION_INDEX", "0"), ("INDUCE_SHARD_COUNT", "8")]);
    /// assert_eq!(Shard::from_env(k8s).unwrap().to_string(), "1/8");
    /// assert!(Shard::from_env(env(&[])).unwrap_err().to_string().contains("SLURM_ARRAY_TASK_ID"));
    /// ```
    pub fn from_env(var: impl Fn(&str) -> Option<String>) -> Result<Self> {
        let bad = |value: String, reason: String| ExplainError::InvalidValue {
            what: "shard",
            value,
            reason,
        };
        let num = |name: &str| -> Result<Option<usize>> {
            match var(name) {
                None => Ok(None),
                Some(v) => v.trim().parse().map(Some).map_err(|_| {
                    bad(
                        format!("auto ({name}={v})"),
                        format!("{name} is not a number"),
                    )
                }),
            }
        };
        if let Some(id) = num("SLURM_ARRAY_TASK_ID")? {
            let count = num("SLURM_ARRAY_TASK_COUNT")?.ok_or_else(|| {
                bad(
                    format!("auto (SLURM_ARRAY_TASK_ID={id})"),
                    "SLURM_ARRAY_TASK_COUNT is not set".into(),
                )
            })?;
            let min = num("SLURM_ARRAY_TASK_MIN")?.unwrap_or(0);
            let step = num("SLURM_ARRAY_TASK_STEP")?.unwrap_or(1);
            let here = format!("auto (array task {id} of {count} from {min}, step {step})");
            if step != 1 {
                return Err(bad(
                    here,
                    "the array's indices must be contiguous (no step)".into(),
                ));
            }
            if id < min || id - min >= count {
                return Err(bad(
                    here,
                    "the array's indices must be contiguous (no list with gaps); pass --shard \
                     I/N for a rerun of one index"
                        .into(),
                ));
            }
            return Ok(Self {
                index: id - min + 1,
                count,
            });
        }
        if let Some(i) = num("JOB_COMPLETION_INDEX")? {
            let count = num("INDUCE_SHARD_COUNT")?.ok_or_else(|| {
                bad(
                    format!("auto (JOB_COMPLETION_INDEX={i})"),
                    "INDUCE_SHARD_COUNT is not set (set it to the Indexed Job's completions)"
                        .into(),
                )
            })?;
            if i >= count {
                return Err(bad(
                    format!("auto (JOB_COMPLETION_INDEX={i}, INDUCE_SHARD_COUNT={count})"),
                    "the index must be below the count".into(),
                ));
            }
            return Ok(Self {
                index: i + 1,
                count,
            });
        }
        Err(bad(
            "auto".into(),
            "not inside a job array: neither SLURM_ARRAY_TASK_ID (Slurm) nor \
             JOB_COMPLETION_INDEX (Kubernetes Indexed Job) is set"
                .into(),
        ))
    }

    /// [`Shard::from_env`] on this process's environment.
    pub fn from_process_env() -> Result<Self> {
        Self::from_env(|k| std::env::var(k).ok())
    }

    /// The shard's part of `items`: shard sizes differ by at most one, larger shards first.
    pub fn select<T: Clone>(&self, items: &[T]) -> Vec<T> {
        let (base, extra) = (items.len() / self.count, items.len() % self.count);
        let i = self.index - 1;
        let start = i * base + i.min(extra);
        let len = base + usize::from(i < extra);
        items[start..start + len].to_vec()
    }
}

impl FromStr for Shard {
    type Err = ExplainError;

    fn from_str(s: &str) -> Result<Self> {
        let bad = |reason: &str| ExplainError::InvalidValue {
            what: "shard",
            value: s.to_string(),
            reason: reason.to_string(),
        };
        let (i, n) = s
            .split_once('/')
            .ok_or_else(|| bad("expected I/N, e.g. 2/4"))?;
        let i: usize = i
            .trim()
            .parse()
            .map_err(|_| bad("I is not a number (expected I/N, e.g. 2/4)"))?;
        let n: usize = n
            .trim()
            .parse()
            .map_err(|_| bad("N is not a number (expected I/N, e.g. 2/4)"))?;
        if n == 0 {
            return Err(bad("N must be at least 1"));
        }
        if i == 0 || i > n {
            return Err(bad("I must lie in 1..=N (shards are numbered from 1)"));
        }
        Ok(Self { index: i, count: n })
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl From<Shard> for String {
    fn from(s: Shard) -> Self {
        s.to_string()
    }
}

impl TryFrom<String> for Shard {
    type Error = ExplainError;
    fn try_from(s: String) -> Result<Self> {
        s.parse()
    }
}

#[cfg(test)]
mod tests {
    use induce_graph::{Dataset, Split};

    use super::*;
    use crate::pipeline::testutil::{DEGREE_RULE, graph};

    fn data() -> Dataset {
        Dataset {
            name: "toy".into(),
            graph: graph(),
            split: Split {
                train: vec![0, 1, 2],
                valid: vec![],
                test: vec![4, 5, 6],
            },
            eval_targets: None,
            notes: vec![],
        }
    }

    #[test]
    fn shards_partition_the_list_in_order() {
        let items: Vec<u32> = (0..10).collect();
        for n in 1..=12 {
            let mut joined = Vec::new();
            for i in 1..=n {
                let part = Shard { index: i, count: n }.select(&items);
                assert!(part.len() >= 10 / n && part.len() <= 10 / n + 1);
                joined.extend(part);
            }
            assert_eq!(joined, items, "{n} shards");
        }
        assert_eq!("4/4".parse::<Shard>().unwrap().to_string(), "4/4");
        assert_eq!(
            "3/2".parse::<Shard>().unwrap_err().to_string(),
            "invalid shard `3/2`: I must lie in 1..=N (shards are numbered from 1)"
        );
        assert!("a/2".parse::<Shard>().is_err() && "2".parse::<Shard>().is_err());
        assert!("1/0".parse::<Shard>().is_err());
        let j = serde_json::to_string(&Shard { index: 2, count: 4 }).unwrap();
        assert_eq!(j, "\"2/4\"");
    }

    #[test]
    fn specs_resolve_with_clear_errors() {
        let d = data();
        assert_eq!(TargetSpec::Test.resolve(&d).unwrap(), vec![4, 5, 6]);
        assert_eq!(TargetSpec::All.resolve(&d).unwrap().len(), 8);
        let e = TargetSpec::Eval.resolve(&d).unwrap_err().to_string();
        assert!(e.contains("toy has no evaluation set"), "{e}");
        let e = TargetSpec::List(vec![3, 8]).resolve(&d).unwrap_err();
        assert_eq!(
            e.to_string(),
            "target node 8 is out of range: the graph has 8 nodes"
        );
        let e = TargetSpec::List(vec![3, 3]).resolve(&d).unwrap_err();
        assert!(e.to_string().contains("node 3 is listed twice"), "{e}");
        let mut empty = data();
        empty.split.test.clear();
        let e = TargetSpec::Test.resolve(&empty).unwrap_err().to_string();
        assert_eq!(e, "no target to explain: `test` selects no node of toy");

        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("ids.txt");
        std::fs::write(&f, "# targets\n5\n\n7 # last\n").unwrap();
        let spec: TargetSpec = format!("@{}", f.display()).parse().unwrap();
        assert_eq!(spec.resolve(&d).unwrap(), vec![5, 7]);
        std::fs::write(&f, "5\nseven\n").unwrap();
        let e = spec.resolve(&d).unwrap_err().to_string();
        assert!(
            e.ends_with("ids.txt line 2: `seven` is not a node id"),
            "{e}"
        );
        let missing: TargetSpec = "@/nonexistent/ids.txt".parse().unwrap();
        let e = missing.resolve(&d).unwrap_err().to_string();
        assert!(
            e.starts_with("invalid target file `@/nonexistent/ids.txt`: "),
            "{e}"
        );
    }

    #[test]
    fn paper_filter_keeps_correct_nonzero_nodes() {
        let mut d = data();
        // DEGREE_RULE predicts 1 for nodes 0, 4, 5 on their 2-hop neighbourhood; node 5 has
        // label 0 (base graph), node 1 is predicted 0 against its label 1.
        let mut labels = vec![1; 8];
        labels[5] = 0;
        let edges = d.graph.edges();
        d.graph =
            induce_graph::Graph::from_edges(8, &edges, d.graph.features().clone(), labels).unwrap();
        let t = select_targets(&d, &DEGREE_RULE, &[0, 1, 4, 5, 6], 2).unwrap();
        assert_eq!(t, vec![0, 4]);
    }
}
