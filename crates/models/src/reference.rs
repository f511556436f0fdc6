//! Importing the reference (authors') weights from SafeTensors through Burn's store.

use std::path::Path;

use burn::store::{ModuleSnapshot, PyTorchToBurnAdapter, SafetensorsStore};
use burn::tensor::Device;

use crate::error::{ModelError, Result};
use crate::gcn::{Gcn, GcnConfig};

/// Reads the tensor shapes in a SafeTensors header (name → shape), without loading the data.
pub fn safetensors_shapes(path: &Path) -> Result<Vec<(String, Vec<usize>)>> {
    let bytes = std::fs::read(path).map_err(|source| ModelError::Io {
        path: path.into(),
        source,
    })?;
    let bad = |m: &str| ModelError::checkpoint(path, format!("not a SafeTensors file: {m}"));
    if bytes.len() < 8 {
        return Err(bad("shorter than its 8-byte header length"));
    }
    let len = u64::from_le_bytes(bytes[..8].try_into().expect("8 bytes")) as usize;
    let header = bytes
        .get(8..8usize.saturating_add(len))
        .ok_or_else(|| bad("truncated header"))?;
    let json: serde_json::Value =
        serde_json::from_slice(header).map_err(|e| bad(&format!("header is not JSON: {e}")))?;
    let obj = json
        .as_object()
        .ok_or_else(|| bad("header is not a JSON object"))?;
    let mut out = Vec::new();
    for (name, v) in obj {
        if name == "__metadata__" {
            continue;
        }
        let shape = v
            .get("shape")
            .and_then(|s| s.as_array())
            .ok_or_else(|| bad(&format!("tensor {name} has no shape")))?
            .iter()
            .map(|x| x.as_u64().map(|x| x as usize))
            .collect::<Option<Vec<usize>>>()
            .ok_or_else(|| bad(&format!("tensor {name} has a non-integer shape")))?;
        out.push((name.clone(), shape));
    }
    Ok(out)
}

fn shape_of<'a>(
    shapes: &'a [(String, Vec<usize>)],
    name: &str,
    path: &Path,
) -> Result<&'a [usize]> {
    shapes
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, s)| s.as_slice())
        .ok_or_else(|| ModelError::checkpoint(path, format!("missing tensor `{name}`")))
}

/// Loads the authors' black-box GCN (`synX_gcn.safetensors`, CF-GNNExplainer's `GCNSynthetic`
/// names: `gc{1,2,3}.{weight,bias}` with weights `[in, out]`, `lin.{weight,bias}` with the
/// PyTorch `[C, 60]` layout) into a [`Gcn`]. Dimensions are read from the file.
pub fn load_reference_gcn(path: &Path, device: &Device) -> Result<Gcn> {
    let shapes = safetensors_shapes(path)?;
    let w1 = shape_of(&shapes, "gc1.weight", path)?;
    let wl = shape_of(&shapes, "lin.weight", path)?;
    if w1.len() != 2 || wl.len() != 2 || wl[1] != 3 * w1[1] {
        return Err(ModelError::checkpoint(
            path,
            format!("unexpected shapes gc1.weight {w1:?}, lin.weight {wl:?}"),
        ));
    }
    let config = GcnConfig::new(w1[0], wl[0]).with_hidden(w1[1]);
    let mut model = config.init(device);
    let mut store = SafetensorsStore::from_file(path).with_from_adapter(PyTorchToBurnAdapter);
    let res = model
        .load_from(&mut store)
        .map_err(|e| ModelError::checkpoint(path, format!("cannot import: {e}")))?;
    if res.applied.len() != 8 || !res.errors.is_empty() {
        return Err(ModelError::checkpoint(
            path,
            format!(
                "imported {} of 8 tensors; errors: {:?}",
                res.applied.len(),
                res.errors
            ),
        ));
    }
    Ok(model)
}
