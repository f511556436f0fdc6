//! What every training pass shares, REINFORCE's ([`super::train`]) and imitation's
//! ([`super::imitate`]): the pool of training episodes ([`Pool`]) and each pass's statistics
//! ([`EpochStats`]).

use serde::{Deserialize, Serialize};

use crate::env::{EnvConfig, Episode};
use crate::error::Result;
use induce_graph::Graph;
use induce_models::BlackBox;

/// Progress of one training epoch (one pass over the training targets).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EpochStats {
    /// Epoch index, from 0.
    pub epoch: usize,
    /// Mean undiscounted episode return.
    pub mean_return: f32,
    /// Share of episodes that flipped the label.
    pub flipped: f32,
    /// Mean number of edits per episode.
    pub mean_edits: f32,
    /// Imitation passes ([`Training::Imitation`](crate::imitation::Training::Imitation)): the share of visited states at which the
    /// policy's argmax was as good as the teacher's choice (a flip where the teacher's flips,
    /// else no larger margin), before the pass's updates. `None` in REINFORCE passes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agreement: Option<f32>,
}

impl EpochStats {
    /// The statistics of pass `epoch` over `targets` episodes from their summed return, flips
    /// and edits.
    pub(super) fn of(
        epoch: usize,
        targets: f32,
        (ret, flips, edits): (f32, usize, usize),
        agreement: Option<f32>,
    ) -> Self {
        Self {
            epoch,
            mean_return: ret / targets,
            flipped: flips as f32 / targets,
            mean_edits: edits as f32 / targets,
            agreement,
        }
    }
}

/// Where the training episodes come from.
pub(super) enum Pool<'e, 'a> {
    /// Episodes built by the caller, reset before each rollout.
    Prepared(&'e mut [Episode<'a>]),
    /// Episodes built for each batch from the targets and dropped after it.
    Lazy {
        graph: &'a Graph,
        black_box: &'a dyn BlackBox,
        targets: Vec<u32>,
        env: &'e EnvConfig,
    },
}

impl<'a> Pool<'_, 'a> {
    pub(super) fn len(&self) -> usize {
        match self {
            Pool::Prepared(e) => e.len(),
            Pool::Lazy { targets, .. } => targets.len(),
        }
    }

    /// The episodes of the targets `batch` (pool indices, distinct) with their `seeds`: the
    /// prepared ones, or fresh ones built into `fresh`.
    pub(super) fn batch<'p>(
        &'p mut self,
        batch: &[usize],
        seeds: &[u64],
        fresh: &'p mut Vec<Episode<'a>>,
    ) -> Result<Vec<(&'p mut Episode<'a>, u64)>> {
        for &i in batch {
            fresh.extend(self.build(i)?);
        }
        Ok(match self {
            Pool::Prepared(episodes) => {
                let mut slots: Vec<Option<&mut Episode<'a>>> =
                    episodes.iter_mut().map(Some).collect();
                batch
                    .iter()
                    .zip(seeds)
                    .map(|(&i, &s)| (slots[i].take().expect("batch indices are distinct"), s))
                    .collect()
            }
            Pool::Lazy { .. } => fresh.iter_mut().zip(seeds.iter().copied()).collect(),
        })
    }

    /// Each target's margin on its unedited neighbourhood ([`Goal::margin`]: how far the black
    /// box's prediction is from the goal), in pool order, on `threads` threads: the
    /// curriculum's measure of a target's difficulty. A lazy pool builds each episode once for
    /// it.
    ///
    /// [`Goal::margin`]: induce_explain::Goal::margin
    pub(super) fn margins(&mut self, threads: usize) -> Result<Vec<f32>> {
        let margin =
            |ep: &Episode<'_>| (ep.goal()).margin(ep.judge().target_row(), ep.original_label());
        match self {
            Pool::Prepared(episodes) => crate::parallel::map_mut(episodes, threads, |ep| {
                ep.reset();
                Ok(margin(ep))
            }),
            Pool::Lazy { .. } => {
                let pool = &*self;
                let indices: Vec<usize> = (0..pool.len()).collect();
                crate::parallel::map(&indices, threads, |&i| {
                    Ok(margin(
                        &pool.build(i)?.expect("a lazy pool builds its episodes"),
                    ))
                })
            }
        }
    }

    /// A fresh episode of target `i` of a lazy pool.
    fn build(&self, i: usize) -> Result<Option<Episode<'a>>> {
        match self {
            Pool::Prepared(_) => Ok(None),
            Pool::Lazy {
                graph,
                black_box,
                targets,
                env,
            } => Episode::new(graph, *black_box, targets[i], env).map(Some),
        }
    }
}
