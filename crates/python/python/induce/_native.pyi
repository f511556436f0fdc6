"""Type stubs of ``induce._native``, the Rust side of the package (``crates/python/src/lib.rs``,
``model.rs`` and ``errors.rs``). Arrays cross as little-endian bytes, settings as the JSON of
``RunOptions`` and results as JSON text; ``induce``'s own modules do the converting."""

import os
from collections.abc import Callable, Sequence
from typing import Final, final

from typing_extensions import TypeAlias

_Path: TypeAlias = str | os.PathLike[str]

#: The crate's version.
__version__: Final[str]
#: The method names ``explain`` accepts, in the library's order.
METHODS: Final[tuple[str, ...]]
#: The names of ``RunOptions``' fields (the keyword options), in field order.
OPTIONS: Final[tuple[str, ...]]

class InduceError(ValueError):
    """Anything induce refuses or cannot do: a ValueError, with the command line's message."""

class NotDifferentiableError(InduceError):
    """The method needs the model's gradients, and the model gives none (a callback)."""

class NotFoundError(InduceError):
    """A file or folder the call names does not exist."""

class GraphError(InduceError):
    """The graph's arrays or files are malformed (shapes, ids, NaN features, ...)."""

class OptionError(InduceError):
    """An option (a keyword argument) is unknown or has a value that cannot be used."""

class ModelError(InduceError):
    """The model does not fit the data, its file is malformed, or it failed when called."""

@final
class Graph:
    """A graph handed over from Python (built by ``graph``)."""

@final
class Model:
    """A model handed to ``explain``, ``train_policy`` or ``predict`` (built by ``model_file``,
    ``model_pyg`` or ``model_callback``)."""

def graph(
    x: bytes,
    n: int,
    d: int,
    edge_index: bytes,
    y: bytes | None = None,
    motif: bytes | None = None,
) -> Graph:
    """The graph of the arrays: ``x`` (``n × d`` little-endian float32), ``edge_index``
    (``[2, E]`` little-endian int64), optional labels ``y`` and motif ids ``motif`` (``[n]``
    int64, ``-1`` for a node in no motif)."""

def check_options(
    options: str, methods: Sequence[str] | None = None, policy: bool = False
) -> None:
    """Checks the JSON of ``RunOptions``: an unknown option or a value of the wrong type is an
    ``OptionError`` naming it and the valid ones. With ``methods``, an option that none of them
    reads is an ``OptionError`` too, naming the methods that read it (``policy``: a policy was
    given)."""

def model_file(path: _Path, arch: _Path | None = None) -> Model:
    """A model file: the paper's GCN (``.safetensors``, ``.bpk``, a run directory) or a PyG
    ``state_dict`` with its ``arch`` file."""

def model_pyg(arch: str, weights: bytes, name: str) -> Model:
    """A PyG layer stack from its architecture (the JSON of ``arch.json``) and its
    ``state_dict`` as SafeTensors bytes; ``name`` stands for it in messages."""

def model_callback(
    f: Callable[..., bytes],
    layers: int | None,
    name: str,
    declared: bool = False,
    rows: bool = False,
) -> Model:
    """A Python callable as the black box, called as ``f(x, n, d, edge_index, e)`` (``x``
    ``n × d`` float32 bytes, ``edge_index`` ``[2, e]`` int64 bytes, one direction) or, with
    ``rows``, ``f(None, n, d, edge_index, e, ids)`` (``ids``: ``[n]`` int64 bytes of the rows of
    the features it holds); it returns ``[n, classes]`` float32 bytes. ``layers``: the hops its
    outputs reach (``None``: verdicts on the whole graph); ``declared``: given by the user."""

def explain(
    graph: Graph,
    model: Model,
    policy: _Path | None,
    methods: Sequence[str],
    index: Sequence[int],
    options: str,
) -> str:
    """Explains ``index`` with ``methods``; ``options`` is the JSON of ``RunOptions``. Returns
    ``{"summary": ..., "runs": [{"method", "records", "train_seconds", "explain_seconds",
    "notes"}]}`` as JSON."""

def train_policy(
    graph: Graph,
    model: Model,
    index: Sequence[int],
    out: _Path,
    options: str,
) -> str:
    """Trains an inductive policy on ``index`` and writes it to the directory ``out``; returns
    ``{"policy": path, "targets": n, "seconds": s}`` as JSON."""

def predict(graph: Graph, model: Model, options: str) -> tuple[bytes, int]:
    """The class log-probabilities of every node: ``(bytes, classes)``, the bytes ``[n,
    classes]`` little-endian float32."""
