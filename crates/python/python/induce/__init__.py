"""induce: counterfactual explanations for graph neural networks (InduCE), in Rust.

Explain a node classifier's predictions with the fewest edge additions and deletions that flip
them, on numpy arrays (torch tensors accepted when torch is importable):

    import induce
    explainer = induce.Explainer(model="model.safetensors", arch="arch.json",
                                 method="greedy", seed=42)
    result = explainer(x, edge_index, index=[10, 20, 30])
    for e in result:
        print(e.target, e.is_counterfactual, e.original_label, "->", e.new_label, e.added, e.removed)

`model` is a PyTorch Geometric model's ``state_dict`` saved with
``safetensors.torch.save_file`` plus its architecture file (``arch``; GCNConv, SAGEConv, GINConv,
GATConv, GATv2Conv, GraphConv, SGConv, APPNP, TAGConv, ChebConv and Linear layers, see
docs/FORMATS.md of the repository), the paper's GCN
(``*.safetensors`` without ``arch``) or a ``.bpk`` checkpoint of the ``induce`` command line.
Every call runs the same job as ``induce explain`` with the same settings (keyword arguments
named as its flags: ``seed``, ``family``, ``hops``, ``budget``, ``episodes``, ``lr``,
``iterations``, ``edits`` (a comma list of ``add``, ``del``, ``feat``), ``samples``, ``greedy_every``, ``fanout``, ``max_neighbourhood``, ``kernel``,
``reward``, ``state`` (``paper``, ``targeted`` or ``estimated``), ``training`` (``train_policy``:
``imitation``, the default recipe, or ``reinforce``, the paper's), ``paper_faithful``, ``all_nodes``, ``threads``, ``batch_targets``,
``black_box_kernel``, ``lookahead``, ``widen``, ``temperature``, ``max_size``, ``max_evaluations``, ``shortlist``, ``additions``, ``feature_nodes`` (``target`` or ``field``: whose features
``edits="…,feat"`` may edit), ``feature_quantiles`` (the quantile levels a continuous feature
column's entries may take; 0/1 columns flip), and the
constraints ``lock_nodes`` (node ids no edit may touch), ``lock_edges`` (pairs ``(u, v)`` no
edit may delete or add) and ``lock_features`` (feature columns no feature edit may change, with
``edits="…,feat"``), ``to_class``; typed by ``Options``, listed by ``OPTIONS``), so its results
equal the command line's. Bad input raises
``TypeError`` (wrong dtypes) or ``InduceError``, a ``ValueError``, of the kind at fault
(``GraphError``: shapes, ids; ``ModelError``: a model that does not fit the features;
``OptionError``: an unknown option; ``NotFoundError``, ``NotDifferentiableError``) with the
message the command line would print. The GIL is released
while Rust works; Ctrl-C raises ``KeyboardInterrupt``.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Optional, TypedDict, Union, overload

import numpy as np
from numpy.typing import ArrayLike, NDArray

from . import _native

if sys.version_info >= (3, 11):
    from typing import Unpack
elif TYPE_CHECKING:  # annotations are not evaluated at run time (PEP 563)
    from typing_extensions import Unpack

if TYPE_CHECKING:
    from . import _torch

__all__ = ["Explainer", "Explanation", "Result", "Options", "TrainedPolicy", "train_policy",
           "predict", "describe", "METHODS", "OPTIONS", "__version__", "InduceError",
           "NotDifferentiableError", "NotFoundError", "GraphError", "OptionError", "ModelError"]

#: The package's version (the native module's crate version).
__version__: str = _native.__version__

#: The methods ``Explainer`` accepts (InduCE's modes, the baselines and the search references
#: ``greedy`` and ``exact``), as the native module lists them.
METHODS: tuple[str, ...] = tuple(_native.METHODS)

#: The keyword options (the fields of the library's ``RunOptions``, in order), as the native
#: module lists them; ``Options`` types them.
OPTIONS: tuple[str, ...] = tuple(_native.OPTIONS)

#: Every error the package raises for bad input or a failed call is an ``InduceError`` (a
#: ``ValueError``), or one of its kinds: ``NotDifferentiableError`` (the method needs
#: gradients the model does not give), ``NotFoundError`` (a file the call names is missing),
#: ``GraphError`` (malformed graph arrays or files), ``OptionError`` (an unknown option or a
#: value that cannot be used) and ``ModelError`` (a model that does not fit the data, a
#: malformed model file, a callback that failed). Wrong dtypes raise ``TypeError``.
InduceError = _native.InduceError
NotDifferentiableError = _native.NotDifferentiableError
NotFoundError = _native.NotFoundError
GraphError = _native.GraphError
OptionError = _native.OptionError
ModelError = _native.ModelError

#: A file path.
PathLike = Union[str, "os.PathLike[str]"]

#: A black box: a model file, a live ``torch.nn.Module`` or any callable
#: ``f(x, edge_index) -> logits``.
ModelLike = Union[str, "os.PathLike[str]", Callable[..., Any]]

_Kernel = Literal["host", "burn"]


class Options(TypedDict, total=False):
    """The command line's settings, by name: the keyword options of ``Explainer``,
    ``train_policy`` and ``predict`` (the library's ``RunOptions``; a test checks the names
    against the native module's ``OPTIONS``). ``None`` (or leaving one out) is the run's
    default. An unknown name is an ``OptionError`` naming the valid ones."""

    seed: Optional[int]
    family: Optional[Literal["ba-shapes", "trees", "real"]]
    episodes: Optional[int]
    lr: Optional[float]
    edits: Optional[str]
    kernel: Optional[_Kernel]
    hops: Optional[int]
    budget: Optional[int]
    fanout: Optional[int]
    max_neighbourhood: Optional[int]
    iterations: Optional[int]
    samples: Optional[int]
    greedy_every: Optional[int]
    reward: Optional[Literal["shaped", "paper"]]
    state: Optional[Literal["paper", "reference", "targeted", "estimated"]]
    training: Optional[Literal["reinforce", "imitation"]]
    #: ``train_policy`` only: train on a seeded random sample of this many of ``index``.
    sample: Optional[int]
    #: ``train_policy`` only, imitation: the candidates judged at a training state.
    max_judged: Optional[int]
    paper_faithful: Optional[bool]
    all_nodes: Optional[bool]
    threads: Optional[int]
    batch_targets: Optional[int]
    black_box_kernel: Optional[_Kernel]
    max_size: Optional[int]
    max_evaluations: Optional[int]
    shortlist: Optional[int]
    additions: Optional[Literal["ball", "graph"]]
    feature_nodes: Optional[Literal["target", "field"]]
    feature_quantiles: Optional[int]
    lookahead: Optional[int]
    widen: Optional[bool]
    temperature: Optional[float]
    #: Node ids no edit may touch (a list or an int array).
    lock_nodes: Optional[ArrayLike]
    lock_features: Optional[ArrayLike]
    #: Pairs ``(u, v)`` no edit may delete or add (``[k, 2]``).
    lock_edges: Optional[ArrayLike]
    to_class: Optional[int]


class TrainedPolicy(TypedDict):
    """What ``train_policy`` returns: the policy's directory, the targets it trained on and the
    seconds it took."""

    policy: str
    targets: int
    seconds: float


#: The words of ``edits``: a comma list (``"add,del,feat"``); ``both`` is ``add,del``.
_EDITS = ("add", "del", "both", "feat")


def _to_numpy(a: object, name: str) -> NDArray[Any]:
    """A numpy array from a numpy array, a torch tensor or a nested list."""
    if hasattr(a, "detach") and hasattr(a, "cpu"):  # a torch tensor, without importing torch
        a = a.detach().cpu().numpy()
    if not isinstance(a, np.ndarray):
        try:
            a = np.asarray(a)
        except Exception as e:  # noqa: BLE001
            raise TypeError(f"{name}: expected an array, got {type(a).__name__}") from e
    if a.dtype == object:
        raise TypeError(f"{name}: expected a numeric array, got dtype object")
    return a


def _features(x: ArrayLike) -> NDArray[np.float32]:
    x = _to_numpy(x, "x")
    if not np.issubdtype(x.dtype, np.floating):
        raise TypeError(f"x: node features must be floats, got dtype {x.dtype}")
    if x.ndim != 2:
        raise GraphError(f"x: expected shape [num_nodes, num_features], got {list(x.shape)}")
    return np.ascontiguousarray(x, dtype="<f4")


def _edge_index(edge_index: ArrayLike) -> NDArray[np.int64]:
    ei = _to_numpy(edge_index, "edge_index")
    if not np.issubdtype(ei.dtype, np.integer):
        raise TypeError(f"edge_index: node ids must be integers, got dtype {ei.dtype}")
    if ei.ndim != 2 or ei.shape[0] != 2:
        raise GraphError(f"edge_index: expected shape [2, num_edges], got {list(ei.shape)}")
    return np.ascontiguousarray(ei, dtype="<i8")


def _per_node(a: Optional[ArrayLike], n: int, name: str, what: str) -> Optional[bytes]:
    if a is None:
        return None
    a = _to_numpy(a, name)
    if not np.issubdtype(a.dtype, np.integer):
        raise TypeError(f"{name}: {what} must be integers, got dtype {a.dtype}")
    if a.shape != (n,):
        raise GraphError(f"{name}: expected shape [{n}], got {list(a.shape)}")
    return np.ascontiguousarray(a, dtype="<i8").tobytes()


def _graph(xf: NDArray[np.float32], ei: NDArray[np.int64], y: Optional[ArrayLike] = None,
           motif: Optional[ArrayLike] = None) -> _native.Graph:
    """The native graph of checked arrays, with optional labels ``y`` and motif ids ``motif``
    (``-1`` for a node in no motif)."""
    n, d = xf.shape
    return _native.graph(xf.tobytes(), n, d, ei.tobytes(), _per_node(y, n, "y", "labels"),
                         _per_node(motif, n, "motif", "motif ids"))


def _index(index: ArrayLike, n: int) -> list[int]:
    if isinstance(index, (int, np.integer)):
        return [int(index)]
    idx = _to_numpy(index, "index")
    if idx.dtype == bool:
        if idx.shape != (n,):
            raise GraphError(f"index: a boolean mask needs shape [{n}], got {list(idx.shape)}")
        idx = np.nonzero(idx)[0]
    if idx.size and not np.issubdtype(idx.dtype, np.integer):
        raise TypeError(f"index: node ids must be integers, got dtype {idx.dtype}")
    return [int(i) for i in idx.reshape(-1)]


def _options(options: Mapping[str, Any]) -> str:
    opts: dict[str, Any] = dict(options)
    if opts.get("edits") is not None:
        e = opts["edits"]
        if not isinstance(e, str) or any(w.strip() not in _EDITS for w in e.split(",")):
            raise OptionError(f"invalid option edits={e!r}: expected a comma list of add, del, "
                              "feat (both = add,del)")
    if opts.get("reward") is not None:
        r = opts["reward"]
        if r not in ("shaped", "paper"):
            raise OptionError(f"invalid option reward={r!r}: expected shaped or paper")
        opts["reward"] = {"kind": r}
    if opts.get("lock_features") is not None:
        cols = _to_numpy(opts["lock_features"], "lock_features").reshape(-1)
        if cols.size and not np.issubdtype(cols.dtype, np.integer):
            raise TypeError(f"lock_features: feature columns must be integers, got dtype "
                            f"{cols.dtype}")
        opts["lock_features"] = [int(v) for v in cols]
    if opts.get("lock_nodes") is not None:
        ids = _to_numpy(opts["lock_nodes"], "lock_nodes").reshape(-1)
        if ids.size and not np.issubdtype(ids.dtype, np.integer):
            raise TypeError(f"lock_nodes: node ids must be integers, got dtype {ids.dtype}")
        opts["lock_nodes"] = [int(v) for v in ids]
    if opts.get("lock_edges") is not None:
        pairs = _to_numpy(opts["lock_edges"], "lock_edges")
        if pairs.size == 0:
            pairs = pairs.reshape(0, 2)
        if pairs.ndim != 2 or pairs.shape[1] != 2:
            raise OptionError(f"lock_edges: expected pairs, shape [k, 2], got {list(pairs.shape)}")
        if pairs.size and not np.issubdtype(pairs.dtype, np.integer):
            raise TypeError(f"lock_edges: node ids must be integers, got dtype {pairs.dtype}")
        opts["lock_edges"] = [[int(u), int(v)] for u, v in pairs]
    return json.dumps({k: v for k, v in opts.items() if v is not None})


@overload
def _path(p: None, name: str) -> None: ...
@overload
def _path(p: PathLike, name: str) -> str: ...
@overload
def _path(p: Optional[PathLike], name: str) -> Optional[str]: ...
def _path(p: Optional[PathLike], name: str) -> Optional[str]:
    if p is None:
        return None
    if not isinstance(p, (str, os.PathLike)):
        raise TypeError(f"{name}: expected a path, got {type(p).__name__}")
    return os.fspath(p)


@dataclass(repr=False)
class Explanation:
    """One method's counterfactual for one target node (``Explanation.from_record`` makes one
    from a record of ``explanations.jsonl``).

    Attributes: ``method``, ``target``, ``found`` (the method reports a counterfactual),
    ``verdict`` (where the method judged it: ``"exact"``, the default, on the whole edited
    graph's prediction; ``"neighbourhood"`` with ``paper_faithful=True``, on the frozen
    neighbourhood, the paper's protocol, which the whole graph may not confirm), ``valid``
    (for found ones: the prediction flips on the whole edited graph, checked by a whole-graph
    forward pass whatever the verdict; ``is_counterfactual`` is ``found and valid``),
    ``original_label``, ``new_label``, ``added`` and ``removed`` (the counterfactual's
    edges as ``(u, v)`` pairs in the graph's node ids; empty when nothing was found),
    ``size`` (number of edge edits), ``feature_edits`` (with ``edits="…,feat"``: the changed
    feature entries as ``(node, feature, old, new)``) and ``features_changed`` (their number,
    never summed into ``size``), ``accuracy`` and ``strict_accuracy`` (the paper's accuracies,
    ``None`` unless the graph has motif ground truth: pass ``motif=``), ``one_minimal`` (for
    found counterfactuals), ``evaluations``
    (black-box calls the method made for this target, or ``None``), ``certified`` (``exact``
    only: ``{"minimum": {"size": s}}``, ``{"none_up_to": {"size": k}}`` or ``{"gave_up":
    {...}}``; ``None`` otherwise), and ``record`` (the full record, as in
    ``explanations.jsonl``).
    """

    method: str
    target: int
    found: bool
    verdict: str
    valid: Optional[bool]
    original_label: int
    new_label: int
    added: list[tuple[int, int]]
    removed: list[tuple[int, int]]
    size: int
    feature_edits: list[tuple[int, int, float, float]]
    features_changed: int
    accuracy: Optional[float]
    strict_accuracy: Optional[float]
    one_minimal: Optional[bool]
    evaluations: Optional[int]
    certified: Optional[dict[str, Any]]
    record: dict[str, Any]

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> Explanation:
        """The explanation of a record (one line of ``explanations.jsonl``)."""
        found = bool(record["found"])
        # A record that found nothing lists no edit (older runs kept the search's last ones).
        edits: list[tuple[int, int, str]] = record.get("edits", []) if found else []
        feats: list[list[Any]] = record.get("feature_edits", []) if found else []
        return cls(
            method=record["method"],
            target=record["target"],
            found=found,
            verdict=record.get("verdict", "neighbourhood"),
            valid=record.get("valid"),
            original_label=record["original_label"],
            new_label=record["new_label"],
            added=[(u, v) for u, v, kind in edits if kind == "add"],
            removed=[(u, v) for u, v, kind in edits if kind == "del"],
            size=len(edits),
            feature_edits=[(int(v), int(f), float(a), float(b)) for v, f, a, b in feats],
            features_changed=len(feats),
            accuracy=record.get("accuracy"),
            strict_accuracy=record.get("strict_accuracy"),
            one_minimal=record.get("one_minimal"),
            evaluations=record.get("evaluations"),
            certified=record.get("certified"),
            record=record,
        )

    @property
    def is_counterfactual(self) -> bool:
        """Found and confirmed on the whole edited graph (the only kind that counts)."""
        return self.found and self.valid is True

    def __repr__(self) -> str:
        unconfirmed = "" if not self.found or self.valid else ", valid=False"
        return (
            f"Explanation(method={self.method!r}, target={self.target}, found={self.found}"
            f"{unconfirmed}, {self.original_label} -> {self.new_label}, added={self.added}, "
            f"removed={self.removed}"
            + (f", features={[(v, f) for v, f, _, _ in self.feature_edits]}"
               if self.feature_edits else "") + ")"
        )

    def edited_edge_index(self, edge_index: ArrayLike) -> NDArray[np.int64]:
        """The counterfactual graph: ``edge_index`` ([2, E], both directions) with the removed
        edges dropped and the added ones appended in both directions (numpy int64)."""
        ei = _edge_index(edge_index)
        gone = {(min(u, v), max(u, v)) for u, v in self.removed}
        keep = [
            i for i in range(ei.shape[1])
            if (min(ei[0, i], ei[1, i]), max(ei[0, i], ei[1, i])) not in gone
        ]
        add = np.array([[u, v] for u, v in self.added] + [[v, u] for u, v in self.added],
                       dtype=np.int64).reshape(-1, 2).T
        return np.concatenate([ei[:, keep], add], axis=1)

    def to_pyg(self, x: ArrayLike, edge_index: ArrayLike) -> Any:
        """A ``torch_geometric.explain.Explanation`` (needs torch and PyG): ``x``,
        ``edge_index``, ``edge_mask`` (1 on the edges the counterfactual removes), ``index``
        (the target), ``added_edge_index`` ([2, k]), ``cf_edge_index`` (the edited graph),
        ``prediction`` and ``target`` (the new and the original label)."""
        import torch
        from torch_geometric.explain import Explanation as PygExplanation

        ei = _edge_index(edge_index)
        gone = {(min(u, v), max(u, v)) for u, v in self.removed}
        mask = [
            1.0 if (min(ei[0, i], ei[1, i]), max(ei[0, i], ei[1, i])) in gone else 0.0
            for i in range(ei.shape[1])
        ]
        added = np.array(self.added, dtype=np.int64).reshape(-1, 2).T
        return PygExplanation(
            x=torch.as_tensor(_features(x)),
            edge_index=torch.as_tensor(ei),
            edge_mask=torch.tensor(mask, dtype=torch.float32),
            index=self.target,
            added_edge_index=torch.as_tensor(added),
            cf_edge_index=torch.as_tensor(self.edited_edge_index(ei)),
            prediction=torch.tensor([self.new_label]),
            target=torch.tensor([self.original_label]),
        )


@dataclass(repr=False)
class Result:
    """The explanations of one call (iterable, in method then target order; ``explanations``,
    made from the runs' records), ``summary`` (as ``summary.json``: one row per method with
    fidelity, size, ...) and ``runs`` (per method: records, times, notes).
    ``Result.from_payload`` makes one from the native module's answer."""

    summary: dict[str, Any]
    runs: list[dict[str, Any]]
    explanations: list[Explanation] = field(init=False)

    def __post_init__(self) -> None:
        self.explanations = [Explanation.from_record(r) for run in self.runs
                             for r in run["records"]]

    @classmethod
    def from_payload(cls, payload: Mapping[str, Any]) -> Result:
        """The result of the native module's answer, ``{"summary": ..., "runs": [...]}``."""
        return cls(summary=payload["summary"], runs=payload["runs"])

    def __iter__(self) -> Iterator[Explanation]:
        return iter(self.explanations)

    def __len__(self) -> int:
        return len(self.explanations)

    @overload
    def __getitem__(self, i: int) -> Explanation: ...
    @overload
    def __getitem__(self, i: slice) -> list[Explanation]: ...
    def __getitem__(self, i: Union[int, slice]) -> Union[Explanation, list[Explanation]]:
        return self.explanations[i]

    def __repr__(self) -> str:
        found = sum(e.found for e in self.explanations)
        valid = sum(e.is_counterfactual for e in self.explanations)
        return (f"Result({len(self.explanations)} explanations, {found} found, "
                f"{valid} valid on the whole graph)")


def _methods(method: Union[str, Sequence[str]]) -> list[str]:
    methods = [method] if isinstance(method, str) else list(method)
    if not methods:
        raise OptionError("method: no method given")
    for m in methods:
        if not isinstance(m, str):
            raise TypeError(f"method: expected a method name, got {type(m).__name__}")
    return methods


class _Model:
    """The black box of ``Explainer``, ``predict`` and ``train_policy``: a file path (with
    ``arch`` for a PyG ``state_dict``), a live ``torch.nn.Module`` (a recognised PyG layer stack
    converted in memory and checked against the module's own output on the graph; anything else
    called back), or any callable ``f(x, edge_index) -> logits`` (called back).

    ``layers`` (callbacks): the hops the model's outputs reach, so that verdicts are taken on
    the edited receptive field (``None`` for a torch module: counted over the PyG
    ``MessagePassing`` layers found in it, each with the hops it propagates, e.g. SGConv's
    ``K``; ``0``: every verdict evaluates the whole graph, exact for any model). Every run checks
    a counted value on the graph first (each sampled node's output on its field against the
    whole graph) and widens it, or judges on the whole graph, where the outputs reach further
    (a global readout, say), with a note; a value given here is checked the same way, and one
    that is too small is an error naming the measured reach. ``inputs`` (callables): ``"torch"`` tensors (the default when torch is
    importable) or ``"numpy"`` arrays."""

    def __init__(self, model: ModelLike, arch: Optional[PathLike] = None,
                 layers: Optional[int] = None,
                 inputs: Optional[Literal["torch", "numpy"]] = None) -> None:
        self.arch = _path(arch, "arch")
        self.layers = layers
        self.native_cache: dict[tuple[Any, ...], _native.Model] = {}
        self.notes: list[str] = []
        self.inputs: str = "numpy"
        self.model: Any
        self.kind: Literal["file", "module", "callable"]
        if isinstance(model, (str, os.PathLike)):
            self.kind, self.model = "file", _path(model, "model")
            return
        if self.arch is not None:
            raise TypeError("arch: only for a model file; a live module describes itself")
        if not callable(model):
            raise TypeError(f"model: expected a path, a torch.nn.Module or a callable, got "
                            f"{type(model).__name__}")
        self.model = model
        self.kind = "module" if _is_module(model) else "callable"
        if inputs is None:
            inputs = "torch" if self.kind == "module" or _has_torch() else "numpy"
        if inputs not in ("torch", "numpy"):
            raise OptionError(f"invalid option inputs={inputs!r}: expected torch or numpy")
        self.inputs = inputs

    def native(self, xf: NDArray[np.float32], ei: NDArray[np.int64]) -> _native.Model:
        """The native model for the graph ``(xf, ei)``."""
        if self.kind == "file":
            return _native.model_file(self.model, self.arch)
        key = (xf.shape, ei.shape, hash(xf.tobytes()), hash(ei.tobytes()))
        if key not in self.native_cache:
            self.native_cache.clear()
            self.native_cache[key] = self._live(xf, ei)
        return self.native_cache[key]

    def _live(self, xf: NDArray[np.float32], ei: NDArray[np.int64]) -> _native.Model:
        from . import _torch

        cb = _torch.Callback(self.model, self.inputs, features=xf)
        name = f"<{type(self.model).__name__}>"
        layers = self.layers
        if self.kind == "module":
            training = getattr(self.model, "training", False)
            self.model.eval()
            try:
                conv = _torch.convert(self.model)
                want = _log_softmax(cb.outputs(xf, _both(ei)))
                unmapped = None
                for arch in _torch.candidates(conv):
                    try:
                        m = _native.model_pyg(json.dumps(arch),
                                              _torch.safetensors_bytes(conv.tensors), name)
                        got = _predict_native(m, xf, ei)
                    except ValueError as e:
                        # A forward the walk misread (a head fed more than the last layer,
                        # say): the module runs as a callback instead.
                        unmapped = str(e)
                        break
                    if got.shape == want.shape and _agrees(got, want):
                        self.notes = [str(conv)]
                        return m
                if conv.recognised:
                    conv.reasons.append(
                        f"the converter cannot map its forward ({unmapped})" if unmapped else
                        "the converted stack's outputs differ from the module's on this graph "
                        "(its forward does more)")
                    conv.arch = None
                self.notes = [str(conv)]
                if layers is None:
                    layers = conv.layers or None
            finally:
                self.model.train(training)
        declared = self.layers is not None and self.layers != 0
        if layers == 0:
            layers = None
        return _native.model_callback(_EvalCallback(self.model, cb), layers, name, declared,
                                      rows=True)


class _EvalCallback:
    """A callback that puts a torch module in eval mode around each call."""

    def __init__(self, model: Any, cb: _torch.Callback) -> None:
        self.model, self.cb = model, cb

    def __call__(self, *args: Any) -> bytes:
        training = getattr(self.model, "training", None)
        if training:
            self.model.eval()
        try:
            return self.cb(*args)
        finally:
            if training:
                self.model.train(True)


def _is_module(model: object) -> bool:
    try:
        import torch
    except ImportError:
        return False
    return isinstance(model, torch.nn.Module)


def _has_torch() -> bool:
    try:
        import torch  # noqa: F401
    except ImportError:
        return False
    return True


def _both(ei: NDArray[np.int64]) -> NDArray[np.int64]:
    """``edge_index`` with every edge in both directions, each pair once per direction."""
    pairs = {(int(min(u, v)), int(max(u, v))) for u, v in ei.T if u != v}
    one = np.array(sorted(pairs), dtype=np.int64).reshape(-1, 2).T
    return np.concatenate([one, one[::-1]], axis=1)


def _log_softmax(a: NDArray[np.float32]) -> NDArray[np.float32]:
    a = a - a.max(axis=1, keepdims=True)
    out: NDArray[np.float32] = a - np.log(np.exp(a).sum(axis=1, keepdims=True))
    return out


def _agrees(got: NDArray[np.float32], want: NDArray[np.float32]) -> bool:
    """The converted model computes the module's function: log-probabilities within float32
    noise of each other, the same prediction wherever the module's top two are apart."""
    if not np.all(np.isfinite(got)) or np.max(np.abs(got - want)) > 1e-3:
        return False
    top = np.sort(want, axis=1)
    clear = (top[:, -1] - top[:, -2]) > 1e-4 if want.shape[1] > 1 else np.ones(len(want), bool)
    return bool(np.all(got.argmax(1)[clear] == want.argmax(1)[clear]))


def _predict_native(model: _native.Model, xf: NDArray[np.float32], ei: NDArray[np.int64],
                    options: Optional[Mapping[str, Any]] = None) -> NDArray[np.float32]:
    raw, c = _native.predict(_graph(xf, ei), model, _options(options or {}))
    return np.frombuffer(raw, dtype="<f4").reshape(xf.shape[0], c)


def describe(model: Any, x: Optional[ArrayLike] = None,
             edge_index: Optional[ArrayLike] = None) -> str:
    """What ``Explainer`` makes of a live ``torch.nn.Module``: the layers, head and activation it
    recognised (converted in memory, no files) or why a part was not (then the module runs as a
    callback, with the same results, slower). With ``x`` and ``edge_index`` the conversion is also
    checked against the module's own output on that graph, as ``Explainer`` does. Returns the
    text."""
    from . import _torch

    if x is None:
        return str(_torch.convert(model))
    if edge_index is None:
        raise TypeError("edge_index: needed with x, to check the conversion on the graph")
    m = _Model(model)
    m.native(_features(x), _edge_index(edge_index))
    return "\n".join(m.notes)


class Explainer:
    """An explainer of one black box with one or more methods (see ``METHODS``).

    ``model``: the black box: a file, a live ``torch.nn.Module`` or any callable ``f(x,
    edge_index) -> logits`` (see ``describe``; ``layers`` and ``inputs`` are for the last two);
    ``arch``: the PyG architecture file of a ``state_dict`` file; ``policy``: a trained policy
    (``train_policy``'s directory) for the inductive methods; ``method``: ``greedy`` by
    default, the exact one-step search, which needs no policy and no gradients (the README's
    "Which method": a trained policy pays off when many nodes are explained); a list runs
    several, and a variant runs a method with options of its own, as a row of its own
    (``method=["greedy", "greedy:shortlist=64"]``); ``options``: the command line's settings
    by name (``seed=42``, ``hops=3``, ...), each one that a method of the list reads.

    With the PyG tutorial's GCN in hand::

        explainer = induce.Explainer(model=model, method="greedy")
        for e in explainer(data.x, data.edge_index, index=[0, 1, 2]):
            print(e)
    """

    def __init__(self, model: ModelLike, arch: Optional[PathLike] = None,
                 method: Union[str, Sequence[str]] = "greedy", policy: Optional[PathLike] = None,
                 layers: Optional[int] = None, inputs: Optional[Literal["torch", "numpy"]] = None,
                 **options: Unpack[Options]) -> None:
        self._model = _Model(model, arch, layers, inputs)
        self.model = self._model.model
        self.arch = self._model.arch
        self.policy = _path(policy, "policy")
        self.methods = _methods(method)
        self.options = options
        # Refuse a bad option now, not at the call: a misspelled one, or one that none of the
        # methods reads (naming the methods that do).
        _native.check_options(_options(options), self.methods, self.policy is not None)

    @property
    def notes(self) -> list[str]:
        """What the last call made of a live model (``describe``'s text), or ``[]``."""
        return self._model.notes

    def __call__(self, x: ArrayLike, edge_index: ArrayLike, index: ArrayLike,
                 y: Optional[ArrayLike] = None, motif: Optional[ArrayLike] = None) -> Result:
        """Explains the nodes ``index`` (an int, a list, an int array or a boolean mask) of the
        graph with features ``x`` ([N, d], float) and edges ``edge_index`` ([2, E], int; one or
        both directions). ``y`` (optional, [N] int) are ground-truth labels; ``motif``
        (optional, [N] int) each node's motif instance, ``-1`` for none: the ground truth of a
        synthetic motif graph, which makes the accuracies meaningful (as a ``motif`` array in an
        ``.npz`` does for ``induce explain``). Returns a ``Result``."""
        xf = _features(x)
        ei = _edge_index(edge_index)
        payload = _native.explain(
            _graph(xf, ei, y, motif), self._model.native(xf, ei), self.policy, self.methods,
            _index(index, xf.shape[0]), _options(self.options),
        )
        return Result.from_payload(json.loads(payload))


def predict(model: ModelLike, x: ArrayLike, edge_index: ArrayLike, arch: Optional[PathLike] = None,
            layers: Optional[int] = None, inputs: Optional[Literal["torch", "numpy"]] = None,
            **options: Unpack[Options]) -> NDArray[np.float32]:
    """Every node's class log-probabilities under ``model`` (a file, a live module or a
    callable, as ``Explainer`` takes it) on the whole graph: a float32 numpy array
    ``[N, classes]`` (``.argmax(1)`` gives the labels), as ``induce predict`` writes them."""
    xf = _features(x)
    ei = _edge_index(edge_index)
    m = _Model(model, arch, layers, inputs)
    return _predict_native(m.native(xf, ei), xf, ei, options)


def train_policy(model: ModelLike, x: ArrayLike, edge_index: ArrayLike, index: ArrayLike,
                 out: PathLike, arch: Optional[PathLike] = None, y: Optional[ArrayLike] = None,
                 layers: Optional[int] = None, inputs: Optional[Literal["torch", "numpy"]] = None,
                 motif: Optional[ArrayLike] = None, **options: Unpack[Options]) -> TrainedPolicy:
    """Trains InduCE's inductive policy on the nodes ``index`` and writes it to the directory
    ``out`` (as ``induce train --out`` does). ``model`` is a file, a live module or a callable, as
    ``Explainer`` takes it. Trains with the recommended recipe unless told otherwise (imitation
    of the greedy search on the estimated state, the targeted one for a model without
    gradients; ``training="reinforce"`` or ``paper_faithful=True`` for the paper's). Returns
    ``{"policy": path, "targets": n, "seconds": s}``; pass ``policy=out`` to
    ``Explainer(method="inductive", ...)``. ``edits="add,del,feat"`` (or ``"feat"``) trains the
    policy with feature actions too (the estimated state: a model with gradients). The recipe
    trains on at most 900 of the nodes ``index`` (a sample seeded by ``seed``); ``sample=N``
    draws N instead, and ``max_judged=N`` sets the candidates the search judges at a training
    state (default 128). ``Explainer`` refuses these training options."""
    xf = _features(x)
    ei = _edge_index(edge_index)
    m = _Model(model, arch, layers, inputs)
    payload = _native.train_policy(
        _graph(xf, ei, y, motif), m.native(xf, ei), _index(index, xf.shape[0]),
        _path(out, "out"), _options(options),
    )
    trained: TrainedPolicy = json.loads(payload)
    return trained
