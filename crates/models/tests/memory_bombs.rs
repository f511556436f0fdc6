//! Memory bombs in weight files: a few bytes declaring a model of 10¹² parameters. Each must be
//! a `ModelError::Checkpoint` naming the file and the value, refused before the model is
//! allocated (allocating would abort the test process).

use induce_models::io::checkpoint::{load_gcn, save_gcn};
use induce_models::io::reference::{load_reference_gcn, load_reference_policy, safetensors_shapes};
use induce_models::testing::test_device;
use induce_models::{GcnConfig, ModelError};
use serde_json::json;

fn safetensors(header: &serde_json::Value, data: &[u8]) -> Vec<u8> {
    let h = serde_json::to_vec(header).unwrap();
    let mut b = (h.len() as u64).to_le_bytes().to_vec();
    b.extend(h);
    b.extend_from_slice(data);
    b
}

fn checkpoint_message(e: ModelError) -> String {
    assert!(matches!(e, ModelError::Checkpoint { .. }), "{e:?}");
    e.to_string()
}

#[test]
fn memory_bomb_gcn_config_declares_1e12_parameters() {
    let dev = test_device().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("gcn.bpk");
    let cfg = GcnConfig::new(10, 4);
    save_gcn(&cfg.init(&dev), &cfg, &path).unwrap();
    let json_path = path.with_extension("json");
    let good: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&json_path).unwrap()).unwrap();
    for (key, value) in [
        ("hidden", 1_000_000u64),
        ("input_dim", 1_000_000_000_000),
        ("num_classes", 1 << 40),
        ("hidden", u64::MAX),
        ("hidden", 0),
    ] {
        let mut bad = good.clone();
        bad[key] = json!(value);
        std::fs::write(&json_path, serde_json::to_vec(&bad).unwrap()).unwrap();
        let msg = checkpoint_message(load_gcn(&path, None, &dev).unwrap_err());
        assert!(msg.contains("gcn.json"), "{msg}");
        assert!(msg.contains(&value.to_string()), "{key} = {value}: {msg}");
    }
}

#[test]
fn memory_bomb_safetensors_shapes_declare_1e12_elements() {
    let dev = test_device().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("bomb_gcn.safetensors");
    // A consistent GCN of hidden width 10^6 (gc2.weight alone: 10^12 values) over 16 bytes.
    let h = 1_000_000u64;
    let entry =
        |shape: serde_json::Value| json!({"dtype": "F32", "shape": shape, "data_offsets": [0, 16]});
    let header = json!({
        "gc1.weight": entry(json!([10, h])),
        "gc1.bias": entry(json!([h])),
        "gc2.weight": entry(json!([h, h])),
        "gc2.bias": entry(json!([h])),
        "gc3.weight": entry(json!([h, h])),
        "gc3.bias": entry(json!([h])),
        "lin.weight": entry(json!([4, 3 * h])),
        "lin.bias": entry(json!([4])),
    });
    std::fs::write(&path, safetensors(&header, &[0u8; 16])).unwrap();
    for e in [
        load_reference_gcn(&path, &dev).unwrap_err(),
        safetensors_shapes(&path).unwrap_err(),
    ] {
        let msg = checkpoint_message(e);
        assert!(msg.contains("bomb_gcn.safetensors"), "{msg}");
        assert!(msg.contains("needs") && msg.contains("[0, 16]"), "{msg}");
    }
    // The policy reader, with a GAT width of 10^6.
    let path = tmp.path().join("bomb_policy.safetensors");
    let header = json!({"gcn.0.lin_src.weight": entry(json!([h, h]))});
    std::fs::write(&path, safetensors(&header, &[0u8; 16])).unwrap();
    let msg = checkpoint_message(load_reference_policy(&path, &dev).unwrap_err());
    assert!(
        msg.contains("bomb_policy.safetensors") && msg.contains("needs"),
        "{msg}"
    );
    // A header length of 2^63 bytes.
    let mut b = safetensors(&json!({}), &[]);
    b[..8].copy_from_slice(&(1u64 << 63).to_le_bytes());
    std::fs::write(&path, b).unwrap();
    let msg = checkpoint_message(safetensors_shapes(&path).unwrap_err());
    assert!(msg.contains("9223372036854775808"), "{msg}");
}
