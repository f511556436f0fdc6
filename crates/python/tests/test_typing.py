"""The typed API: ``Options`` against the library's settings, the native module against its
stub, ``Explanation`` and ``Result`` as dataclasses. (``mypy --strict -p induce`` runs in CI,
from crates/python.)"""

import ast
import builtins
import dataclasses
import inspect
import typing
from pathlib import Path

import pytest

import induce
from induce import _native

STUB = Path(induce.__file__).parent / "_native.pyi"


def test_options_are_the_librarys_settings():
    assert set(induce.Options.__annotations__) == set(_native.OPTIONS)
    assert induce.Options.__optional_keys__ == frozenset(_native.OPTIONS)
    assert induce.OPTIONS == _native.OPTIONS
    assert len(set(_native.OPTIONS)) == len(_native.OPTIONS)


def _samples(name, hint):
    """Values of the type ``hint`` of the option ``name``: every one of a ``Literal``."""
    if name in ("lock_nodes", "lock_features"):
        return [[1, 2]]
    if name == "lock_edges":
        return [[[0, 1]]]
    if name == "edits":
        return ["add", "del", "both", "feat", "add,del,feat", "del,feat"]
    args = [a for a in typing.get_args(hint) if a is not type(None)]
    assert len(args) == 1, (name, hint)
    t = args[0]
    if typing.get_origin(t) is typing.Literal:
        return list(typing.get_args(t))
    return {bool: [True, False], int: [1], float: [0.5]}[t]


def test_every_options_type_is_one_the_library_takes():
    hints = typing.get_type_hints(induce.Options)
    for name, hint in hints.items():
        for value in _samples(name, hint):
            _native.check_options(induce._options({name: value}))
        _native.check_options(induce._options({name: None}))


def test_a_misspelled_option_fails_at_construction_naming_the_valid_ones():
    with pytest.raises(induce.OptionError) as e:
        induce.Explainer(model="model.safetensors", seeed=1)
    message = str(e.value)
    assert "unknown field `seeed`" in message
    assert all(f"`{name}`" in message for name in _native.OPTIONS), message


def test_the_stub_describes_the_native_module():
    assert STUB.exists() and (STUB.parent / "py.typed").exists()
    tree = ast.parse(STUB.read_text())
    names, functions, classes = set(), {}, {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            functions[node.name] = node
        elif isinstance(node, ast.ClassDef):
            classes[node.name] = node
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    names |= set(functions) | set(classes)
    stubbed = {n for n in names if not n.startswith("_")} | (names & {"__version__"})
    public = {n for n in dir(_native) if not n.startswith("_")} | {"__version__"}
    assert stubbed == public
    for name, node in classes.items():
        for base in node.bases:
            assert isinstance(base, ast.Name)
            parent = getattr(_native, base.id, None) or getattr(builtins, base.id)
            assert issubclass(getattr(_native, name), parent), name
    for name, node in functions.items():
        args = node.args
        assert not (args.posonlyargs or args.kwonlyargs or args.vararg or args.kwarg), name
        defaults = [inspect.Parameter.empty] * (len(args.args) - len(args.defaults)) + [
            ast.literal_eval(d) for d in args.defaults]
        stub = [(a.arg, d) for a, d in zip(args.args, defaults)]
        native = [(p.name, p.default) for p in inspect.signature(getattr(_native, name))
                  .parameters.values()]
        assert stub == native, name


RECORD = {
    "method": "greedy", "target": 3, "found": True, "original_label": 1, "new_label": 2,
    "edits": [[3, 4, "del"], [3, 7, "add"]], "neighbourhood_edges": 5, "accuracy": None,
    "strict_accuracy": None, "valid": True, "verdict": "exact",
}


def test_explanation_and_result_are_dataclasses():
    e = induce.Explanation.from_record(RECORD)
    assert dataclasses.is_dataclass(e)
    assert (e.added, e.removed, e.size, e.is_counterfactual) == ([(3, 7)], [(3, 4)], 2, True)
    assert e.record is RECORD and e.evaluations is None and e.certified is None
    assert repr(e) == ("Explanation(method='greedy', target=3, found=True, 1 -> 2, "
                       "added=[(3, 7)], removed=[(3, 4)])")
    r = induce.Result.from_payload({"summary": {}, "runs": [{"method": "greedy",
                                                              "records": [RECORD]}]})
    assert dataclasses.is_dataclass(r)
    assert list(r) == [e] and r[0] == e and r[:1] == [e] and len(r) == 1
    assert repr(r) == "Result(1 explanations, 1 found, 1 valid on the whole graph)"
    unconfirmed = induce.Explanation.from_record(dict(RECORD, valid=False))
    assert not unconfirmed.is_counterfactual and ", valid=False," in repr(unconfirmed)
