"""InduCE as a PyTorch Geometric ``ExplainerAlgorithm``: counterfactuals through PyG's own
``torch_geometric.explain.Explainer``.

    from torch_geometric.explain import Explainer
    from induce.pyg import InduCE

    explainer = Explainer(model, algorithm=InduCE(method="greedy"), explanation_type="model",
                          edge_mask_type="object",
                          model_config=dict(mode="multiclass_classification",
                                            task_level="node", return_type="log_probs"))
    explanation = explainer(data.x, data.edge_index, index=10)
    explanation.edge_mask        # 1 on the edges the counterfactual removes
    explanation.added_edge_index # [2, k]: the edges it adds
    explanation.cf_edge_index    # the counterfactual graph
    explanation.found            # the prediction flips on the whole edited graph

The model is explained as ``induce.Explainer`` explains a live module: a recognised PyG layer
stack in memory, anything else called back. Node-level classification only; explanation types
``model`` (flip the model's prediction) and ``phenomenon`` (flip the prediction of the target's
class; a node the model does not assign its target class has nothing to flip and is reported as
not found); ``edge_mask_type="object"`` (or ``None``) and no node mask.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any, Optional, Union

import numpy as np
import torch
from torch_geometric.explain import Explanation
from torch_geometric.explain.algorithm import ExplainerAlgorithm
from torch_geometric.explain.config import ExplanationType, MaskType, ModelMode, ModelTaskLevel

from . import Explainer as _InduceExplainer
from . import Options, PathLike, Result

if sys.version_info >= (3, 11):
    from typing import Unpack
elif TYPE_CHECKING:  # annotations are not evaluated at run time (PEP 563)
    from typing_extensions import Unpack

__all__ = ["InduCE"]


class InduCE(ExplainerAlgorithm):
    """Counterfactual explanations by edge edits, and feature edits with ``edits="…,feat"``
    and ``node_mask_type="attributes"`` (``method``: any of ``induce.METHODS`` that
    needs no gradients of the model, ``greedy`` by default (the README's "Which method"); ``policy`` for the inductive
    methods; ``layers`` and the remaining keyword arguments as ``induce.Explainer`` takes them).

    After each call, ``last_result`` holds the ``induce.Result`` (records, summary)."""

    def __init__(self, method: str = "greedy", policy: Optional[PathLike] = None,
                 layers: Optional[int] = None, **options: Unpack[Options]) -> None:
        super().__init__()
        self.method = method
        self.policy = policy
        self.layers = layers
        self.options = options
        self.last_result: Optional[Result] = None
        self._explainers: dict[int, _InduceExplainer] = {}

    def supports(self) -> bool:
        cfg, mc = self.explainer_config, self.model_config
        if mc.task_level != ModelTaskLevel.node:
            raise ValueError(f"InduCE explains node-level models, not task_level "
                             f"'{mc.task_level.value}'")
        if mc.mode == ModelMode.regression:
            raise ValueError("InduCE explains classifiers, not mode 'regression'")
        if cfg.edge_mask_type not in (None, MaskType.object):
            raise ValueError(f"InduCE's edge mask marks removed edges: edge_mask_type 'object', "
                             f"not '{cfg.edge_mask_type.value}'")
        if cfg.node_mask_type not in (None, MaskType.attributes):
            raise ValueError("InduCE's node mask marks the changed feature entries (with "
                             "edits='…,feat'): node_mask_type 'attributes' or None, not "
                             f"'{cfg.node_mask_type.value}'")
        return True

    def _explainer(self, model: torch.nn.Module) -> _InduceExplainer:
        key = id(model)
        if key not in self._explainers:
            self._explainers = {key: _InduceExplainer(model=model, method=self.method,
                                                      policy=self.policy, layers=self.layers,
                                                      **self.options)}
        return self._explainers[key]

    def forward(self, model: torch.nn.Module, x: torch.Tensor, edge_index: torch.Tensor, *,
                target: Optional[torch.Tensor], index: Union[int, torch.Tensor, None] = None,
                **kwargs: Any) -> Explanation:
        if kwargs:
            raise ValueError(f"InduCE calls the model as model(x, edge_index); extra inputs "
                             f"{sorted(kwargs)} need a wrapper: model=lambda x, ei: "
                             "module(x, ei, ...)")
        if index is None:
            raise ValueError("index: InduCE explains node predictions; pass index=")
        if not isinstance(x, torch.Tensor) or not isinstance(edge_index, torch.Tensor):
            raise ValueError("InduCE explains homogeneous graphs (x and edge_index tensors)")
        ids = [int(index)] if isinstance(index, int) else [int(i) for i in
                                                           torch.as_tensor(index).reshape(-1)]
        result = self._explainer(model)(x, edge_index, index=ids)
        self.last_result = result
        ei = edge_index.detach().cpu()
        pairs = torch.minimum(ei[0], ei[1]) * (ei.max() + 1) + torch.maximum(ei[0], ei[1])
        mask = torch.zeros(ei.shape[1], dtype=torch.float32)
        added: list[tuple[int, int]] = []
        changed: list[tuple[int, int, float]] = []
        found: list[bool] = []
        records: list[dict[str, Any]] = []
        for e in result:
            wanted = target is None or self.explainer_config.explanation_type != \
                ExplanationType.phenomenon or int(target[e.target]) == e.original_label
            ok = e.is_counterfactual and wanted
            found.append(ok)
            records.append(e.record)
            if not ok:
                continue
            for u, v in e.removed:
                key = min(u, v) * (int(ei.max()) + 1) + max(u, v)
                mask[pairs == key] = 1.0
            added.extend(e.added)
            changed.extend((v, f, new) for v, f, _, new in e.feature_edits)
        add = torch.as_tensor(np.array(added, dtype=np.int64).reshape(-1, 2).T)
        keep = mask == 0
        cf = torch.cat([ei[:, keep], add, add.flip(0)], dim=1)
        masks: dict[str, Any] = {}
        if self.explainer_config.node_mask_type == MaskType.attributes:
            # The changed feature entries (1), and the features with the changes (cf_x).
            node_mask = torch.zeros(x.shape, dtype=torch.float32)
            cf_x = x.detach().cpu().clone()
            for v, f, new in changed:
                node_mask[v, f] = 1.0
                cf_x[v, f] = new
            masks = {"node_mask": node_mask.to(x.device), "cf_x": cf_x.to(x.device)}
        return Explanation(
            edge_mask=mask.to(edge_index.device),
            added_edge_index=add.to(edge_index.device),
            cf_edge_index=cf.to(edge_index.device),
            found=torch.tensor(found),
            cf_label=torch.tensor([e.new_label for e in result]),
            records=records,
            **masks,
        )
