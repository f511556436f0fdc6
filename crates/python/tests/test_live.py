"""Live models: a torch module or any callable as `Explainer`'s model, with no files written.

Recognised PyG stacks (the tutorial's GCN, PyG's GraphSAGE, GIN and GAT models, GATv2Conv,
GraphConv, ChebConv, SGConv, an MLP then APPNP, TAGConv) are converted in memory and must predict
what the module predicts; the layer types the native path lacks (TransformerConv, GIN with
BatchNorm, jumping knowledge, GeneralConv, a layer used three times, a global readout) run as
callbacks, their receptive field measured on the graph. Every counterfactual either reports is
replayed in PyG: the module's own prediction on the edited graph must differ from its prediction
on the original. The fixtures are committed
(`scripts/pyg-live-fixtures.py` writes them). A numpy callable needs no torch at all.

Tests needing torch and PyG are skipped, with the reason, where they are not installed.
"""

from pathlib import Path

import numpy as np
import pytest

import induce

ROOT = Path(__file__).resolve().parents[3]
LIVE = ROOT / "tests" / "fixtures" / "pyg-live"

torch = pytest.importorskip("torch", reason="torch is not installed: live-module tests skipped")
pytest.importorskip("torch_geometric", reason="PyG is not installed: live-module tests skipped")
import live_models  # noqa: E402  (needs torch and PyG)

TARGETS = list(range(0, 40, 3))


def replay(module, x, ei, e):
    """The module's prediction for the target on the counterfactual graph, and on the original."""
    cf = torch.as_tensor(e.edited_edge_index(ei.numpy()))
    with torch.no_grad():
        before = int(module(x, ei)[e.target].argmax())
        after = int(module(x, cf)[e.target].argmax())
    return before, after


def assert_every_found_replays(case, m, x, ei, result):
    """Something was found, and every found counterfactual flips the module in PyG as
    recorded."""
    found = [e for e in result if e.found]
    assert found, f"{case}: no counterfactual found"
    for e in found:
        assert e.is_counterfactual, e
        before, after = replay(m, x, ei, e)
        assert before == e.original_label, (case, e)
        assert after != before and after == e.new_label, (case, e)


@pytest.mark.parametrize("case", live_models.NATIVE_CASES)
def test_recognised_stacks_are_converted_and_predict_as_the_module(case):
    m, x, ei = live_models.load(LIVE, case)
    text = induce.describe(m, x, ei)
    assert text.startswith("recognised"), text
    with torch.no_grad():
        want = torch.log_softmax(m(x, ei), dim=1).numpy()
    got = induce.predict(m, x, ei)
    assert got.shape == want.shape
    assert np.max(np.abs(got - want)) < 1e-3
    assert (got.argmax(1) == want.argmax(1)).all()


@pytest.mark.parametrize("case", live_models.NATIVE_CASES[4:])
def test_the_added_native_families_explain_and_every_found_replays(case):
    m, x, ei = live_models.load(LIVE, case)
    explainer = induce.Explainer(model=m, method=["greedy", "transductive"], seed=1, episodes=20)
    result = explainer(x, ei, index=TARGETS)
    assert explainer.notes and explainer.notes[0].startswith("recognised"), explainer.notes
    assert_every_found_replays(case, m, x, ei, result)


@pytest.mark.parametrize("case", live_models.CALLBACK_CASES)
def test_other_models_run_as_callbacks_and_every_counterfactual_replays(case):
    m, x, ei = live_models.load(LIVE, case)
    text = induce.describe(m, x, ei)
    assert text.startswith("not a recognised layer stack"), text
    assert "why not native" in text
    with torch.no_grad():
        want = torch.log_softmax(m(x, ei), dim=1).numpy()
    got = induce.predict(m, x, ei)
    assert np.max(np.abs(got - want)) < 1e-4
    explainer = induce.Explainer(model=m, method=["greedy", "random", "transductive"],
                                 seed=1, episodes=20)
    result = explainer(x, ei, index=TARGETS)
    assert explainer.notes and explainer.notes[0].startswith("not a recognised")
    assert len(result) == 3 * len(TARGETS)
    assert_every_found_replays(case, m, x, ei, result)


@pytest.mark.parametrize("case", sorted(live_models.REACH_CASES))
def test_receptive_fields_are_measured_and_every_found_replays(case):
    # Counted per layer (SGConv's K, APPNP's K, ...) where a walk can; measured on the graph
    # where it cannot: widened for a layer used three times, the whole graph for a readout.
    m, x, ei = live_models.load(LIVE, case)
    result = induce.Explainer(model=m, method=["greedy", "transductive"], seed=1, episodes=20)(
        x, ei, index=TARGETS)
    notes = [n for n in result.summary["notes"] if n.startswith("receptive field")]
    want = live_models.REACH_CASES[case]
    if want is None:
        assert notes == [], notes
    elif want == "widened":
        assert len(notes) == 1 and "claims 1 message-passing layers" in notes[0], notes
    else:
        assert len(notes) == 1 and "the whole graph" in notes[0], notes
    assert_every_found_replays(case, m, x, ei, result)


def test_tutorial_gcn_in_three_lines_with_no_files(tmp_path, monkeypatch):
    m, x, ei = live_models.load(LIVE, "tutorial_gcn")
    monkeypatch.chdir(tmp_path)
    result = induce.Explainer(model=m, method="greedy")(x, ei, index=TARGETS)
    assert list(tmp_path.iterdir()) == []
    assert len(result) == len(TARGETS)
    for e in result:
        if e.found:
            before, after = replay(m, x, ei, e)
            assert after != before, e


def test_the_converted_stack_equals_the_callback():
    m, x, ei = live_models.load(LIVE, "basic_sage")
    native = induce.Explainer(model=m, method="greedy")(x, ei, index=TARGETS)
    called = induce.Explainer(model=lambda a, b: m(a, b), method="greedy", layers=2)(
        x, ei, index=TARGETS)
    assert [(e.found, e.added, e.removed) for e in native] == \
        [(e.found, e.added, e.removed) for e in called]


def test_gradient_baselines_refuse_a_callback_by_name():
    m, x, ei = live_models.load(LIVE, "transformer")
    with pytest.raises(ValueError, match="cf-gnnexplainer"):
        induce.Explainer(model=m, method="cf-gnnexplainer")(x, ei, index=[0])


def test_pyg_explainer_algorithm():
    from torch_geometric.explain import Explainer

    from induce.pyg import InduCE

    m, x, ei = live_models.load(LIVE, "gatv2")
    explainer = Explainer(m, algorithm=InduCE(method="greedy"), explanation_type="model",
                          edge_mask_type="object",
                          model_config=dict(mode="multiclass_classification", task_level="node",
                                            return_type="raw"))
    for target in TARGETS[:5]:
        expl = explainer(x, ei, index=target)
        assert expl.edge_mask.shape == (ei.shape[1],)
        if bool(expl.found[0]):
            with torch.no_grad():
                before = int(m(x, ei)[target].argmax())
                after = int(m(x, expl.cf_edge_index)[target].argmax())
            assert after != before
            assert int(expl.cf_label[0]) == after
        else:
            assert float(expl.edge_mask.sum()) == 0.0 and expl.added_edge_index.shape[1] == 0
    with pytest.raises(ValueError, match="node_mask_type"):
        Explainer(m, algorithm=InduCE(), explanation_type="model", edge_mask_type="object",
                  node_mask_type="object",
                  model_config=dict(mode="multiclass_classification", task_level="node",
                                    return_type="raw"))


def binary_features(case):
    """A committed module and its graph with the features made 0/1 (bag-of-words style)."""
    m, x, ei = live_models.load(LIVE, case)
    return m, (x > x.median()).float(), ei


def replay_features(module, x, ei, e):
    """The module's prediction for the target with the record's feature and edge edits."""
    x2 = x.clone()
    for v, f, old, new in e.feature_edits:
        assert float(x[v, f]) == old, e
        x2[v, f] = new
    cf = torch.as_tensor(e.edited_edge_index(ei.numpy()))
    with torch.no_grad():
        return int(module(x, ei)[e.target].argmax()), int(module(x2, cf)[e.target].argmax())


@pytest.mark.parametrize("case", ["basic_sage", "graphconv", "transformer"])
def test_feature_edits_flip_the_module_in_pyg(case):
    # Issue 60: `edits="feat"` searches the target's 0/1 feature entries (greedy), alone or
    # beside its edge edits; every counterfactual is replayed in PyG with the changed entries.
    # TransformerConv is not native: a callback handed each trial's edited receptive field with
    # its feature rows replaced.
    m, x, ei = binary_features(case)
    for edits in ("feat", "add,del,feat"):
        result = induce.Explainer(model=m, method="greedy", edits=edits)(x, ei, index=TARGETS)
        found = [e for e in result if e.found]
        assert found, (case, edits)
        for e in found:
            assert e.is_counterfactual and e.features_changed == len(e.feature_edits), e
            assert edits != "feat" or (e.size == 0 and e.features_changed > 0), e
            before, after = replay_features(m, x, ei, e)
            assert before == e.original_label and after == e.new_label != before, e
    # InduCE's policy scores feature actions from the estimated state's gradient: refused
    # without that state; with it (a native module, which has gradients) its counterfactuals
    # replay in PyG too.
    with pytest.raises(ValueError, match="estimated"):
        induce.Explainer(model=m, method="transductive", edits="feat")(x, ei, index=[0])
    if case == "transformer":
        return
    for edits in ("feat", "add,del,feat"):
        result = induce.Explainer(model=m, method="transductive", edits=edits, state="estimated",
                                  episodes=20)(x, ei, index=TARGETS)
        for e in (e for e in result if e.found):
            assert e.features_changed == len(e.feature_edits) > 0 or edits != "feat", e
            before, after = replay_features(m, x, ei, e)
            assert before == e.original_label and after == e.new_label != before, e


def test_cf_gnnfeatures_zeroes_entries_that_flip_the_module_in_pyg():
    # The peer of issue 60: CF-GNNExplainer's mask on the target's features (it only zeroes
    # entries); its counterfactuals are replayed in PyG, and it refuses edge edit types.
    m, x, ei = binary_features("graphconv")
    result = induce.Explainer(model=m, method="cf-gnnfeatures")(x, ei, index=TARGETS)
    found = [e for e in result if e.found]
    assert found
    for e in found:
        assert e.size == 0 and all(new == 0.0 and old == 1.0 for _, _, old, new in e.feature_edits)
        before, after = replay_features(m, x, ei, e)
        assert before == e.original_label and after == e.new_label != before, e
    with pytest.raises(ValueError, match="no edges"):
        induce.Explainer(model=m, method="cf-gnnfeatures", edits="add,del,feat")(x, ei, index=[0])


def test_pyg_explainer_marks_the_changed_features():
    from torch_geometric.explain import Explainer

    from induce.pyg import InduCE

    m, x, ei = binary_features("graphconv")
    explainer = Explainer(m, algorithm=InduCE(edits="feat"), explanation_type="model",
                          edge_mask_type="object", node_mask_type="attributes",
                          model_config=dict(mode="multiclass_classification",
                                            task_level="node", return_type="log_probs"))
    changed = 0
    for target in TARGETS[:6]:
        expl = explainer(x, ei, index=target)
        (record,) = expl.records
        edits = record.get("feature_edits", []) if record["found"] else []
        changed += len(edits)
        assert expl.node_mask.shape == x.shape
        assert float(expl.node_mask.sum()) == len(edits) and float(expl.edge_mask.sum()) == 0.0
        if record["found"]:
            with torch.no_grad():
                assert int(m(expl.cf_x, ei)[target].argmax()) == record["new_label"]
    assert changed > 0


def test_feature_edits_on_the_receptive_field_replay_in_pyg():
    # feature_nodes="field": any node within the model's layers of the target may change.
    m, x, ei = binary_features("graphconv")
    result = induce.Explainer(model=m, method="greedy", edits="feat",
                              feature_nodes="field")(x, ei, index=TARGETS)
    found = [e for e in result if e.found]
    assert found
    for e in found:
        before, after = replay_features(m, x, ei, e)
        assert before == e.original_label and after == e.new_label != before, e
    with pytest.raises(ValueError, match="feature_nodes"):
        induce.Explainer(model=m, method="greedy", feature_nodes="field")(x, ei, index=[0])
