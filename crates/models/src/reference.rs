//! Importing the reference (authors') weights from SafeTensors through Burn's store.

use std::path::Path;

use burn::store::burn_pack::Tensor as PackTensor;
use burn::store::{
    ModuleAdapter, ModuleContext, ModuleSnapshot, PyTorchToBurnAdapter, SafetensorsStore, bridge,
};
use burn::tensor::{Device, Shape, TensorData};

use crate::error::{ModelError, Result};
use crate::gcn::{Gcn, GcnConfig};
use crate::policy::{Policy, PolicyConfig};

/// Reads the tensor shapes in a SafeTensors header (name → shape), without loading the data.
pub fn safetensors_shapes(path: impl AsRef<Path>) -> Result<Vec<(String, Vec<usize>)>> {
    let path = path.as_ref();
    Ok(safetensors_header(path)?
        .into_iter()
        .map(|(name, _, shape)| (name, shape))
        .collect())
}

/// Bytes per element of a SafeTensors dtype, `None` for a dtype this reader does not know.
fn dtype_size(dtype: &str) -> Option<u64> {
    Some(match dtype {
        "F64" | "I64" | "U64" => 8,
        "F32" | "I32" | "U32" => 4,
        "F16" | "BF16" | "I16" | "U16" => 2,
        "I8" | "U8" | "BOOL" | "F8_E4M3" | "F8_E5M2" => 1,
        _ => return None,
    })
}

/// Reads a SafeTensors header: `(name, dtype, shape)` of every tensor, in header order.
///
/// Every entry is checked against the file before anything is sized from it: a known dtype,
/// `data_offsets` `[begin, end]` inside the data section, and `end − begin` equal to the
/// shape's element count times the dtype's size (so no shape can declare more elements than
/// the file holds). `F32` values must be finite, except in BatchNorm running statistics
/// (`*.running_mean`, `*.running_var`), which no model here reads: the authors' shipped policies
/// hold NaN there.
fn safetensors_header(path: &Path) -> Result<Vec<(String, String, Vec<usize>)>> {
    let bytes = std::fs::read(path).map_err(|source| ModelError::Io {
        path: path.into(),
        source,
    })?;
    let bad = |m: &str| ModelError::checkpoint(path, format!("not a SafeTensors file: {m}"));
    if bytes.len() < 8 {
        return Err(bad("shorter than its 8-byte header length"));
    }
    let len = u64::from_le_bytes(bytes[..8].try_into().expect("8 bytes"));
    let header_end = usize::try_from(len)
        .ok()
        .and_then(|l| l.checked_add(8))
        .filter(|&e| e <= bytes.len())
        .ok_or_else(|| {
            bad(&format!(
                "truncated header: declares {len} header bytes, the file has {}",
                bytes.len()
            ))
        })?;
    let header = &bytes[8..header_end];
    let data = &bytes[header_end..];
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
            .map(|x| x.as_u64().and_then(|x| usize::try_from(x).ok()))
            .collect::<Option<Vec<usize>>>()
            .ok_or_else(|| bad(&format!("tensor {name} has a non-integer shape")))?;
        let dtype = v
            .get("dtype")
            .and_then(|d| d.as_str())
            .ok_or_else(|| bad(&format!("tensor {name} has no dtype")))?;
        let item = dtype_size(dtype)
            .ok_or_else(|| bad(&format!("tensor {name} has unknown dtype `{dtype}`")))?;
        let offsets = v
            .get("data_offsets")
            .and_then(|o| o.as_array())
            .and_then(|o| match o.as_slice() {
                [a, b] => Some((a.as_u64()?, b.as_u64()?)),
                _ => None,
            })
            .ok_or_else(|| bad(&format!("tensor {name} has no [begin, end] data_offsets")))?;
        let (begin, end) = offsets;
        if begin > end || end > data.len() as u64 {
            return Err(bad(&format!(
                "tensor {name} has data_offsets [{begin}, {end}] outside the {} data bytes",
                data.len()
            )));
        }
        let needed = shape
            .iter()
            .try_fold(item, |acc, &d| acc.checked_mul(d as u64));
        if needed != Some(end - begin) {
            return Err(bad(&format!(
                "tensor {name} of shape {shape:?} and dtype {dtype} needs {} bytes, its \
                 data_offsets [{begin}, {end}] hold {}",
                needed.map_or_else(|| "too many".to_string(), |n| n.to_string()),
                end - begin
            )));
        }
        let unused_statistic = name.ends_with(".running_mean") || name.ends_with(".running_var");
        if dtype == "F32" && !unused_statistic {
            let values = &data[begin as usize..end as usize];
            if let Some((i, x)) = values
                .chunks_exact(4)
                .map(|c| f32::from_le_bytes(c.try_into().expect("4 bytes")))
                .enumerate()
                .find(|(_, x)| !x.is_finite())
            {
                return Err(ModelError::checkpoint(
                    path,
                    format!("tensor `{name}` element {i} is not finite ({x})"),
                ));
            }
        }
        out.push((name.clone(), dtype.to_string(), shape));
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
pub fn load_reference_gcn(path: impl AsRef<Path>, device: &Device) -> Result<Gcn> {
    let path = path.as_ref();
    let shapes = safetensors_shapes(path)?;
    let w1 = shape_of(&shapes, "gc1.weight", path)?;
    let wl = shape_of(&shapes, "lin.weight", path)?;
    let (&[d, h], &[c, _]) = (w1, wl) else {
        return Err(ModelError::checkpoint(
            path,
            format!("unexpected shapes gc1.weight {w1:?}, lin.weight {wl:?}"),
        ));
    };
    // Every tensor's shape is checked before the model is sized from them (the header check
    // bounds each shape by the file's length).
    let expected: [(&str, Vec<usize>); 8] = [
        ("gc1.weight", vec![d, h]),
        ("gc1.bias", vec![h]),
        ("gc2.weight", vec![h, h]),
        ("gc2.bias", vec![h]),
        ("gc3.weight", vec![h, h]),
        ("gc3.bias", vec![h]),
        ("lin.weight", vec![c, h.saturating_mul(3)]),
        ("lin.bias", vec![c]),
    ];
    for (name, want) in &expected {
        let got = shape_of(&shapes, name, path)?;
        if got != want.as_slice() {
            return Err(ModelError::checkpoint(
                path,
                format!("tensor `{name}` has shape {got:?}, expected {want:?}"),
            ));
        }
    }
    if d == 0 || h == 0 || c == 0 {
        return Err(ModelError::checkpoint(
            path,
            format!("empty model: input dimension {d}, hidden width {h}, {c} classes"),
        ));
    }
    let config = GcnConfig::new(d, c).with_hidden(h);
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

/// Reshapes PyG's attention vectors `att_src` / `att_dst` (`[1, heads = 1, out]`) into the
/// `[out, 1]` column of a [`GatConv`](crate::GatConv) while the store applies them (the bytes
/// are the same in row-major order; only the shape changes). Every other tensor passes through.
#[derive(Debug, Clone, Copy)]
struct GatAttentionAdapter;

impl ModuleAdapter for GatAttentionAdapter {
    fn adapt(&self, tensor: PackTensor, ctx: ModuleContext<'_>) -> PackTensor {
        let is_att = tensor.name.ends_with(".att_src") || tensor.name.ends_with(".att_dst");
        let dims = tensor.shape.clone();
        if ctx.module_type() != Some("Struct:GatConv") || !is_att || dims.num_dims() != 3 {
            return tensor;
        }
        let out = dims[0] * dims[1] * dims[2];
        let (name, dtype) = (tensor.name.clone(), tensor.dtype);
        bridge::map_data(tensor, name, dtype, Shape::new([out, 1]), move |data| {
            let (bytes, _, dtype) = data.into_parts();
            TensorData::from_bytes(bytes, [out, 1], dtype)
        })
    }

    fn clone_box(&self) -> Box<dyn ModuleAdapter> {
        Box::new(*self)
    }
}

/// Loads the authors' shipped inductive policy (`synX_policy.safetensors`, `PolicyNetwork2`
/// names) into a [`Policy`] built with [`PolicyConfig::reference`]; the input width, GAT width,
/// number of GAT layers and MLP width are read from the file.
///
/// | file | ours |
/// |---|---|
/// | `gcn.{2i}.lin_src.weight` `[h, d_in]` | `gat.{i}.lin.weight` `[d_in, h]` (transposed) |
/// | `gcn.{2i}.att_src` / `att_dst` `[1, 1, h]` | `gat.{i}.att_src` / `att_dst` `[h, 1]` |
/// | `gcn.{2i}.bias` `[h]` | `gat.{i}.bias` |
/// | `gcn.{2i+1}.weight` / `bias` `[h]` | `norm.{i}.weight` / `bias` (BatchNorm affine) |
/// | `confidence_model.layers.{k}.weight` / `bias` | `mlp.{k}.weight` (transposed) / `bias` |
///
/// `lin_dst.weight` (PyG shares it with `lin_src`), the BatchNorm running statistics and
/// `num_batches_tracked` are not used (the reference runs BatchNorm on batch statistics).
///
/// Errors: [`ModelError::Io`] for an unreadable file and [`ModelError::Checkpoint`] naming the
/// file and the tensor for a missing tensor, a shape that does not fit the reference network,
/// a non-f32 tensor or a malformed file.
pub fn load_reference_policy(path: impl AsRef<Path>, device: &Device) -> Result<Policy> {
    let path = path.as_ref();
    let header = safetensors_header(path)?;
    let get = |name: &str| -> Result<&[usize]> {
        let (_, dtype, shape) = header
            .iter()
            .find(|(n, _, _)| n == name)
            .ok_or_else(|| ModelError::checkpoint(path, format!("missing tensor `{name}`")))?;
        if dtype != "F32" {
            return Err(ModelError::checkpoint(
                path,
                format!("tensor `{name}` has dtype {dtype}, expected F32"),
            ));
        }
        Ok(shape.as_slice())
    };
    let expect = |name: &str, want: &[usize]| -> Result<()> {
        let got = get(name)?;
        if got != want {
            return Err(ModelError::checkpoint(
                path,
                format!("tensor `{name}` has shape {got:?}, expected {want:?}"),
            ));
        }
        Ok(())
    };
    let w0 = get("gcn.0.lin_src.weight")?;
    let [hidden, input_dim] = *w0 else {
        return Err(ModelError::checkpoint(
            path,
            format!("tensor `gcn.0.lin_src.weight` has shape {w0:?}, expected [hidden, d_in]"),
        ));
    };
    let layers = (0..)
        .take_while(|i| {
            let name = format!("gcn.{}.lin_src.weight", 2 * i);
            header.iter().any(|(n, _, _)| *n == name)
        })
        .count();
    for i in 0..layers {
        let (g, bn) = (2 * i, 2 * i + 1);
        let d_in = if i == 0 { input_dim } else { hidden };
        expect(&format!("gcn.{g}.lin_src.weight"), &[hidden, d_in])?;
        expect(&format!("gcn.{g}.att_src"), &[1, 1, hidden])?;
        expect(&format!("gcn.{g}.att_dst"), &[1, 1, hidden])?;
        expect(&format!("gcn.{g}.bias"), &[hidden])?;
        expect(&format!("gcn.{bn}.weight"), &[hidden])?;
        expect(&format!("gcn.{bn}.bias"), &[hidden])?;
    }
    let m0 = get("confidence_model.layers.0.weight")?;
    let mlp_hidden = m0.first().copied().unwrap_or(0);
    let mlp_shapes = [
        [mlp_hidden, 2 * hidden + 1],
        [mlp_hidden, mlp_hidden],
        [1, mlp_hidden],
    ];
    for (k, shape) in mlp_shapes.iter().enumerate() {
        expect(&format!("confidence_model.layers.{k}.weight"), shape)?;
        expect(&format!("confidence_model.layers.{k}.bias"), &shape[..1])?;
    }

    if hidden == 0 || input_dim == 0 || mlp_hidden == 0 {
        return Err(ModelError::checkpoint(
            path,
            format!(
                "empty policy: input dimension {input_dim}, GAT width {hidden}, MLP width \
                 {mlp_hidden}"
            ),
        ));
    }
    let config = PolicyConfig::reference(input_dim)
        .with_hidden(hidden)
        .with_gat_layers(layers)
        .with_mlp_hidden(mlp_hidden);
    let mut policy = config.init(device);
    let mut store = SafetensorsStore::from_file(path)
        .with_from_adapter(PyTorchToBurnAdapter.chain(GatAttentionAdapter))
        .with_key_remapping(r"^confidence_model\.layers\.", "mlp.");
    for i in 0..layers {
        let (g, bn) = (2 * i, 2 * i + 1);
        store = store
            .with_key_remapping(format!(r"^gcn\.{g}\.lin_src\."), format!("gat.{i}.lin."))
            .with_key_remapping(
                format!(r"^gcn\.{g}\.(att_src|att_dst|bias)$"),
                format!("gat.{i}.${{1}}"),
            )
            .with_key_remapping(
                format!(r"^gcn\.{bn}\.(weight|bias)$"),
                format!("norm.{i}.${{1}}"),
            );
    }
    let res = policy
        .load_from(&mut store)
        .map_err(|e| ModelError::checkpoint(path, format!("cannot import: {e}")))?;
    let expected = 6 * layers + 6;
    if res.applied.len() != expected || !res.errors.is_empty() || !res.missing.is_empty() {
        return Err(ModelError::checkpoint(
            path,
            format!(
                "imported {} of {expected} tensors; missing {:?}; errors: {:?}",
                res.applied.len(),
                res.missing,
                res.errors
            ),
        ));
    }
    Ok(policy)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::default_device;
    use crate::tensors::to_vec;

    /// Writes a SafeTensors file of f32 tensors `(name, shape, values)`.
    fn write_safetensors(path: &Path, tensors: &[(String, Vec<usize>, Vec<f32>)]) {
        let mut header = serde_json::Map::new();
        let mut data = Vec::new();
        for (name, shape, values) in tensors {
            let start = data.len();
            for v in values {
                data.extend_from_slice(&v.to_le_bytes());
            }
            header.insert(
                name.clone(),
                serde_json::json!({"dtype": "F32", "shape": shape, "data_offsets": [start, data.len()]}),
            );
        }
        let header = serde_json::to_vec(&header).unwrap();
        let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
        bytes.extend(header);
        bytes.extend(data);
        std::fs::write(path, bytes).unwrap();
    }

    /// A PyG-named policy (`d_in` 3, width 2, 3 GAT layers, MLP width 4) whose every value is
    /// distinct: tensor `t`, element `e` holds `t + e / 100`.
    fn policy_tensors() -> Vec<(String, Vec<usize>, Vec<f32>)> {
        let mut spec: Vec<(String, Vec<usize>)> = Vec::new();
        for i in 0..3 {
            let (g, bn) = (2 * i, 2 * i + 1);
            let d_in = if i == 0 { 3 } else { 2 };
            spec.push((format!("gcn.{g}.lin_src.weight"), vec![2, d_in]));
            spec.push((format!("gcn.{g}.lin_dst.weight"), vec![2, d_in]));
            spec.push((format!("gcn.{g}.att_src"), vec![1, 1, 2]));
            spec.push((format!("gcn.{g}.att_dst"), vec![1, 1, 2]));
            spec.push((format!("gcn.{g}.bias"), vec![2]));
            spec.push((format!("gcn.{bn}.weight"), vec![2]));
            spec.push((format!("gcn.{bn}.bias"), vec![2]));
            spec.push((format!("gcn.{bn}.running_mean"), vec![2]));
        }
        for (k, shape) in [[4, 5], [4, 4], [1, 4]].iter().enumerate() {
            spec.push((
                format!("confidence_model.layers.{k}.weight"),
                shape.to_vec(),
            ));
            spec.push((format!("confidence_model.layers.{k}.bias"), vec![shape[0]]));
        }
        spec.into_iter()
            .enumerate()
            .map(|(t, (name, shape))| {
                let n = shape.iter().product::<usize>();
                let v = (0..n).map(|e| t as f32 + e as f32 / 100.0).collect();
                (name, shape, v)
            })
            .collect()
    }

    fn values(tensors: &[(String, Vec<usize>, Vec<f32>)], name: &str) -> Vec<f32> {
        tensors.iter().find(|t| t.0 == name).unwrap().2.clone()
    }

    #[test]
    fn shipped_policy_names_map_onto_the_reference_network() {
        let dev = default_device().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("policy.safetensors");
        let t = policy_tensors();
        write_safetensors(&p, &t);
        let policy = load_reference_policy(&p, &dev).unwrap();
        assert_eq!(policy.input_dim(), 3);
        assert_eq!(
            (policy.gat.len(), policy.norm.len(), policy.mlp.len()),
            (3, 3, 3)
        );
        assert!(policy.nan_to_num);
        // lin_src [out = 2, in = 3] is stored transposed: ours[i][o] = theirs[o][i]
        let theirs = values(&t, "gcn.0.lin_src.weight");
        let ours = to_vec(policy.gat[0].lin.weight.val());
        for i in 0..3 {
            for o in 0..2 {
                assert_eq!(ours[i * 2 + o], theirs[o * 3 + i]);
            }
        }
        for (i, g) in [0, 2, 4].into_iter().enumerate() {
            let layer = &policy.gat[i];
            assert_eq!(layer.att_src.dims(), [2, 1]);
            assert_eq!(
                to_vec(layer.att_src.val()),
                values(&t, &format!("gcn.{g}.att_src"))
            );
            assert_eq!(
                to_vec(layer.att_dst.val()),
                values(&t, &format!("gcn.{g}.att_dst"))
            );
            let bias = to_vec(layer.bias.val().unsqueeze_dim(0));
            assert_eq!(bias, values(&t, &format!("gcn.{g}.bias")));
            let bn = &policy.norm[i];
            let w = to_vec(bn.weight.val().unsqueeze_dim(0));
            assert_eq!(w, values(&t, &format!("gcn.{}.weight", g + 1)));
            let b = to_vec(bn.bias.val().unsqueeze_dim(0));
            assert_eq!(b, values(&t, &format!("gcn.{}.bias", g + 1)));
        }
        let theirs = values(&t, "confidence_model.layers.2.weight");
        assert_eq!(policy.mlp[2].weight.dims(), [4, 1]);
        assert_eq!(to_vec(policy.mlp[2].weight.val()), theirs);
        let b = policy.mlp[0].bias.as_ref().unwrap().val().unsqueeze_dim(0);
        assert_eq!(to_vec(b), values(&t, "confidence_model.layers.0.bias"));
    }

    #[test]
    fn unusable_policy_files_are_typed_errors() {
        let dev = default_device().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("policy.safetensors");
        let err = |t: &[(String, Vec<usize>, Vec<f32>)]| {
            write_safetensors(&p, t);
            match load_reference_policy(&p, &dev) {
                Err(e @ ModelError::Checkpoint { .. }) => e.to_string(),
                other => panic!("expected a checkpoint error, got {other:?}"),
            }
        };
        let mut t = policy_tensors();
        t.retain(|x| x.0 != "gcn.2.att_dst");
        let e = err(&t);
        assert!(
            e.contains("policy.safetensors") && e.contains("gcn.2.att_dst"),
            "{e}"
        );

        let mut t = policy_tensors();
        let i = t
            .iter()
            .position(|x| x.0 == "confidence_model.layers.1.weight")
            .unwrap();
        t[i].1 = vec![4, 3];
        t[i].2.truncate(12);
        let e = err(&t);
        assert!(
            e.contains("confidence_model.layers.1.weight") && e.contains("[4, 3]"),
            "{e}"
        );

        let mut t = policy_tensors();
        t.retain(|x| !x.0.starts_with("gcn.0.lin_src"));
        assert!(err(&t).contains("gcn.0.lin_src.weight"));
        assert!(matches!(
            load_reference_policy(dir.path().join("missing.safetensors"), &dev),
            Err(ModelError::Io { .. })
        ));
    }
}
