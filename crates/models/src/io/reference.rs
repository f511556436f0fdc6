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
    Ok(safetensors_tensors(path)?
        .into_iter()
        .map(|t| (t.name, t.dtype, t.shape))
        .collect())
}

/// One tensor of a SafeTensors file, as stored: its name, dtype (`F32`, `I64`, ...), shape and
/// little-endian bytes.
#[derive(Debug, Clone)]
pub struct RawTensor {
    /// The tensor's key.
    pub name: String,
    /// The SafeTensors dtype string.
    pub dtype: String,
    /// The shape.
    pub shape: Vec<usize>,
    /// The data, `shape.product() × size_of(dtype)` bytes.
    pub bytes: Vec<u8>,
}

impl RawTensor {
    /// The values of an `F32` tensor, `None` for another dtype.
    pub fn f32_values(&self) -> Option<Vec<f32>> {
        (self.dtype == "F32").then(|| {
            self.bytes
                .chunks_exact(4)
                .map(|c| f32::from_le_bytes(c.try_into().expect("4 bytes")))
                .collect()
        })
    }

    /// The values of an `I64` tensor, `None` for another dtype.
    pub fn i64_values(&self) -> Option<Vec<i64>> {
        (self.dtype == "I64").then(|| {
            self.bytes
                .chunks_exact(8)
                .map(|c| i64::from_le_bytes(c.try_into().expect("8 bytes")))
                .collect()
        })
    }
}

/// Reads every tensor of a SafeTensors file, in header order, checked as
/// [`safetensors_shapes`] describes (a known dtype, offsets inside the file, sizes matching the
/// shapes; `F32` values finite except BatchNorm running statistics, which a caller that reads
/// them must check).
pub fn safetensors_tensors(path: impl AsRef<Path>) -> Result<Vec<RawTensor>> {
    let path = path.as_ref();
    let bytes = std::fs::read(path).map_err(|source| ModelError::Io {
        path: path.into(),
        source,
    })?;
    parse_safetensors(path, &bytes)
}

/// [`safetensors_tensors`] of SafeTensors bytes held in memory; `source` names them in errors
/// (a file, or a description such as `<torch module>`).
///
/// ```
/// use induce_models::io::reference::parse_safetensors;
///
/// let header = br#"{"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}"#;
/// let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
/// bytes.extend_from_slice(header);
/// bytes.extend_from_slice(&[0, 0, 128, 63, 0, 0, 0, 64]); // 1.0, 2.0
/// let t = parse_safetensors("<memory>".as_ref(), &bytes).unwrap();
/// assert_eq!(t[0].f32_values(), Some(vec![1.0, 2.0]));
/// assert!(parse_safetensors("<memory>".as_ref(), &bytes[..20]).is_err());
/// ```
pub fn parse_safetensors(path: &Path, bytes: &[u8]) -> Result<Vec<RawTensor>> {
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
        out.push(RawTensor {
            name: name.clone(),
            dtype: dtype.to_string(),
            shape,
            bytes: data[begin as usize..end as usize].to_vec(),
        });
    }
    Ok(out)
}

/// The tensors of the authors' `GCNSynthetic` state dict, with their shapes in terms of the input
/// width `d`, the hidden width `h` and the class count `C` (what [`load_reference_gcn`] reads).
pub const GCN_TENSORS: [(&str, &str); 8] = [
    ("gc1.weight", "[d, h]"),
    ("gc1.bias", "[h]"),
    ("gc2.weight", "[h, h]"),
    ("gc2.bias", "[h]"),
    ("gc3.weight", "[h, h]"),
    ("gc3.bias", "[h]"),
    ("lin.weight", "[C, 3h]"),
    ("lin.bias", "[C]"),
];

/// Where the file layout is documented, for error messages.
const LAYOUT_DOC: &str = "docs/FORMATS.md";

/// `name [shape]` of at most `max` tensors of a header (sorted by name), then how many more.
fn list_tensors(header: &[(String, String, Vec<usize>)], max: usize) -> String {
    if header.is_empty() {
        return "no tensor".into();
    }
    let mut sorted: Vec<&(String, String, Vec<usize>)> = header.iter().collect();
    sorted.sort_by(|a, b| a.0.cmp(&b.0));
    let mut parts: Vec<String> = sorted
        .iter()
        .take(max)
        .map(|(n, _, s)| format!("{n} {s:?}"))
        .collect();
    if header.len() > max {
        parts.push(format!("… {} more", header.len() - max));
    }
    parts.join(", ")
}

/// Checks a SafeTensors header against the [`GCN_TENSORS`] layout and returns `(d, h, C)`.
///
/// The widths are read from the biases (`gc1.bias` gives `h`, `lin.bias` gives `C`), so a weight
/// of the wrong orientation is named as such: `gc{1,2,3}.weight` are used as `X @ W` and must be
/// `[in, out]`; `lin.weight` is an `nn.Linear` weight, `[out, in]`. Errors say what to change: a
/// missing tensor lists the expected names and the ones in the file.
fn gcn_layout(
    path: &Path,
    header: &[(String, String, Vec<usize>)],
) -> Result<(usize, usize, usize)> {
    let fail = |m: String| ModelError::checkpoint(path, format!("{m} (layout: {LAYOUT_DOC})"));
    let missing: Vec<&str> = GCN_TENSORS
        .iter()
        .map(|(n, _)| *n)
        .filter(|n| !header.iter().any(|(h, _, _)| h == n))
        .collect();
    if !missing.is_empty() {
        let expected: Vec<String> = GCN_TENSORS
            .iter()
            .map(|(n, s)| format!("{n} {s}"))
            .collect();
        // A wrapper's prefix (`model.gc1.weight`) is the commonest cause: say which.
        let prefixed = header
            .iter()
            .find_map(|(h, _, _)| h.strip_suffix(missing[0]).filter(|p| p.ends_with('.')));
        let hint = match prefixed {
            Some(p) => {
                format!("; the file's names carry the prefix `{p}`: save the GCN's own state_dict")
            }
            None => String::new(),
        };
        return Err(fail(format!(
            "missing tensor{} {}: a GCNSynthetic black box has {}; the file has {}{hint}",
            if missing.len() == 1 { "" } else { "s" },
            missing
                .iter()
                .map(|n| format!("`{n}`"))
                .collect::<Vec<_>>()
                .join(", "),
            expected.join(", "),
            list_tensors(header, 12),
        )));
    }
    let get = |name: &str| -> Result<&[usize]> {
        let (_, dtype, shape) = header
            .iter()
            .find(|(n, _, _)| n == name)
            .expect("presence checked above");
        if dtype != "F32" {
            return Err(fail(format!(
                "tensor `{name}` has dtype {dtype}, expected F32 (save float32: \
                 `.astype(np.float32)` in NumPy, `.float()` in PyTorch)"
            )));
        }
        Ok(shape.as_slice())
    };
    let bias = |name: &str| -> Result<usize> {
        match *get(name)? {
            [n] => Ok(n),
            ref s => Err(fail(format!(
                "tensor `{name}` has shape {s:?}, expected a vector"
            ))),
        }
    };
    let (h, c) = (bias("gc1.bias")?, bias("lin.bias")?);
    for name in ["gc2.bias", "gc3.bias"] {
        let got = bias(name)?;
        if got != h {
            return Err(fail(format!(
                "tensor `{name}` has shape [{got}], expected [{h}] (the hidden width of gc1.bias)"
            )));
        }
    }
    let transposed = |name: &str, got: &[usize], want: String, layout: &str| {
        fail(format!(
            "tensor `{name}` is saved transposed: shape {got:?}, expected {want} ({layout}); \
             save its transpose (`W.T`)"
        ))
    };
    let w1 = get("gc1.weight")?;
    let d = match *w1 {
        [d, o] if o == h => d,
        [o, i] if o == h => {
            return Err(transposed(
                "gc1.weight",
                w1,
                format!("[{i}, {h}]"),
                "[in, out], used as X @ W",
            ));
        }
        _ => {
            return Err(fail(format!(
                "tensor `gc1.weight` has shape {w1:?}, expected [d, {h}] ([in, out], used as \
                 X @ W; {h} = the width of gc1.bias)"
            )));
        }
    };
    for name in ["gc2.weight", "gc3.weight"] {
        let got = get(name)?;
        if got != [h, h] {
            return Err(fail(format!(
                "tensor `{name}` has shape {got:?}, expected [{h}, {h}] (hidden width {h}, from \
                 gc1.bias)"
            )));
        }
    }
    let wl = get("lin.weight")?;
    let z = h.saturating_mul(3);
    if wl != [c, z] {
        if wl == [z, c] {
            return Err(transposed(
                "lin.weight",
                wl,
                format!("[{c}, {z}]"),
                "nn.Linear layout [out = classes, in = 3 × hidden]",
            ));
        }
        return Err(fail(format!(
            "tensor `lin.weight` has shape {wl:?}, expected [{c}, {z}] ([classes, 3 × hidden]: \
             the three layers' outputs are concatenated; {c} classes from lin.bias, hidden {h} \
             from gc1.bias)"
        )));
    }
    if d == 0 || h == 0 || c == 0 {
        return Err(ModelError::checkpoint(
            path,
            format!("empty model: input dimension {d}, hidden width {h}, {c} classes"),
        ));
    }
    Ok((d, h, c))
}

/// Loads the authors' black-box GCN (`synX_gcn.safetensors`, CF-GNNExplainer's `GCNSynthetic`
/// names: `gc{1,2,3}.{weight,bias}` with weights `[in, out]`, `lin.{weight,bias}` with the
/// PyTorch `[C, 3h]` layout; [`GCN_TENSORS`], `docs/FORMATS.md`) into a [`Gcn`]. Dimensions are
/// read from the file; every tensor must be F32.
///
/// Errors ([`ModelError::Checkpoint`], naming the file) say what to change: a missing tensor
/// lists the expected names and the ones found; a weight of the wrong orientation is reported
/// as saved transposed; a wrong shape names the tensor, its shape and the expected one.
pub fn load_reference_gcn(path: impl AsRef<Path>, device: &Device) -> Result<Gcn> {
    let path = path.as_ref();
    // Every tensor's shape is checked before the model is sized from them (the header check
    // bounds each shape by the file's length).
    let (d, h, c) = gcn_layout(path, &safetensors_header(path)?)?;
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
    use crate::kernels::tensors::to_vec;
    use crate::testing::test_device;

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
        let dev = test_device().unwrap();
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

    /// The authors' GCN layout (`d` inputs, width `h`, `c` classes) with values `k / 100`.
    fn gcn_tensors(d: usize, h: usize, c: usize) -> Vec<(String, Vec<usize>, Vec<f32>)> {
        [
            ("gc1.weight", vec![d, h]),
            ("gc1.bias", vec![h]),
            ("gc2.weight", vec![h, h]),
            ("gc2.bias", vec![h]),
            ("gc3.weight", vec![h, h]),
            ("gc3.bias", vec![h]),
            ("lin.weight", vec![c, 3 * h]),
            ("lin.bias", vec![c]),
        ]
        .into_iter()
        .map(|(n, shape)| {
            let k = shape.iter().product::<usize>();
            let v = (0..k).map(|e| e as f32 / 100.0).collect();
            (n.to_string(), shape, v)
        })
        .collect()
    }

    /// The message of loading `t` as a GCN, which must be a checkpoint error naming the file.
    fn gcn_error(t: &[(String, Vec<usize>, Vec<f32>)]) -> String {
        let dev = test_device().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("mine_gcn.safetensors");
        write_safetensors(&p, t);
        match load_reference_gcn(&p, &dev) {
            Err(e @ ModelError::Checkpoint { .. }) => {
                let m = e.to_string();
                assert!(m.contains("mine_gcn.safetensors"), "{m}");
                m
            }
            other => panic!("expected a checkpoint error, got {other:?}"),
        }
    }

    /// Replaces tensor `name` by one of `shape` (values `k / 100`).
    fn reshaped(
        mut t: Vec<(String, Vec<usize>, Vec<f32>)>,
        name: &str,
        shape: &[usize],
    ) -> Vec<(String, Vec<usize>, Vec<f32>)> {
        let i = t.iter().position(|x| x.0 == name).unwrap();
        let k = shape.iter().product::<usize>();
        t[i].1 = shape.to_vec();
        t[i].2 = (0..k).map(|e| e as f32 / 100.0).collect();
        t
    }

    #[test]
    fn a_gcn_in_the_documented_layout_loads_with_its_sizes() {
        let dev = test_device().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("gcn.safetensors");
        let t = gcn_tensors(3, 4, 2);
        write_safetensors(&p, &t);
        let m = load_reference_gcn(&p, &dev).unwrap();
        assert_eq!((m.input_dim(), m.hidden(), m.num_classes()), (3, 4, 2));
        // gc weights are [in, out] as stored; lin.weight [C, 3h] becomes Burn's [3h, C].
        assert_eq!(to_vec(m.gc1.weight.val()), values(&t, "gc1.weight"));
        let theirs = values(&t, "lin.weight");
        let ours = to_vec(m.lin.weight.val());
        for o in 0..2 {
            for i in 0..12 {
                assert_eq!(ours[i * 2 + o], theirs[o * 12 + i]);
            }
        }
    }

    #[test]
    fn a_missing_gcn_tensor_lists_the_expected_names_and_the_ones_found() {
        let mut t = gcn_tensors(3, 4, 2);
        t.retain(|x| x.0 != "gc2.bias");
        let e = gcn_error(&t);
        assert!(e.contains("missing tensor `gc2.bias`"), "{e}");
        for (name, shape) in GCN_TENSORS {
            assert!(e.contains(&format!("{name} {shape}")), "{name}: {e}");
        }
        assert!(
            e.contains("the file has gc1.bias [4], gc1.weight [3, 4], gc2.weight [4, 4]"),
            "{e}"
        );
        assert!(e.contains("docs/FORMATS.md"), "{e}");

        // Other names altogether (a PyG-style model): every missing name, and what is there.
        let other: Vec<_> = gcn_tensors(3, 4, 2)
            .into_iter()
            .map(|(n, s, v)| (n.replace("gc", "conv"), s, v))
            .collect();
        let e = gcn_error(&other);
        assert!(
            e.contains("missing tensors `gc1.weight`, `gc1.bias`, `gc2.weight`"),
            "{e}"
        );
        assert!(
            e.contains("the file has conv1.bias [4], conv1.weight [3, 4]"),
            "{e}"
        );

        // A wrapper's prefix is named.
        let prefixed: Vec<_> = gcn_tensors(3, 4, 2)
            .into_iter()
            .map(|(n, s, v)| (format!("model.{n}"), s, v))
            .collect();
        let e = gcn_error(&prefixed);
        assert!(e.contains("the prefix `model.`"), "{e}");
    }

    #[test]
    fn a_transposed_gcn_weight_is_named_as_such() {
        // gc1.weight saved nn.Linear-style, [out, in] = [4, 3].
        let e = gcn_error(&reshaped(gcn_tensors(3, 4, 2), "gc1.weight", &[4, 3]));
        assert!(
            e.contains("`gc1.weight` is saved transposed: shape [4, 3], expected [3, 4]"),
            "{e}"
        );
        assert!(!e.contains("bias"), "{e}");
        // lin.weight saved [in, out] = [12, 2] where nn.Linear's [out, in] is expected.
        let e = gcn_error(&reshaped(gcn_tensors(3, 4, 2), "lin.weight", &[12, 2]));
        assert!(
            e.contains("`lin.weight` is saved transposed: shape [12, 2], expected [2, 12]"),
            "{e}"
        );
        // A shape that is neither: named with the expected one.
        let e = gcn_error(&reshaped(gcn_tensors(3, 4, 2), "lin.weight", &[2, 8]));
        assert!(
            e.contains("`lin.weight` has shape [2, 8], expected [2, 12]"),
            "{e}"
        );
        let e = gcn_error(&reshaped(gcn_tensors(3, 4, 2), "gc3.weight", &[4, 5]));
        assert!(
            e.contains("`gc3.weight` has shape [4, 5], expected [4, 4]"),
            "{e}"
        );
        let e = gcn_error(&reshaped(gcn_tensors(3, 4, 2), "gc2.bias", &[5]));
        assert!(e.contains("`gc2.bias` has shape [5], expected [4]"), "{e}");
    }

    #[test]
    fn a_float64_gcn_says_to_save_float32() {
        let dev = test_device().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f64.safetensors");
        write_safetensors(&p, &gcn_tensors(3, 4, 2));
        // Rewrite the header's dtypes as F64 over doubled data offsets: a NumPy default save.
        let bytes = std::fs::read(&p).unwrap();
        let len = u64::from_le_bytes(bytes[..8].try_into().unwrap()) as usize;
        let header: serde_json::Value = serde_json::from_slice(&bytes[8..8 + len]).unwrap();
        let mut h = serde_json::Map::new();
        for (k, v) in header.as_object().unwrap() {
            let o = v["data_offsets"].as_array().unwrap();
            let (a, b) = (o[0].as_u64().unwrap() * 2, o[1].as_u64().unwrap() * 2);
            h.insert(
                k.clone(),
                serde_json::json!({"dtype": "F64", "shape": v["shape"], "data_offsets": [a, b]}),
            );
        }
        let h = serde_json::to_vec(&h).unwrap();
        let mut out = (h.len() as u64).to_le_bytes().to_vec();
        out.extend(h);
        out.extend(vec![0u8; 2 * (bytes.len() - 8 - len)]);
        std::fs::write(&p, out).unwrap();
        let e = load_reference_gcn(&p, &dev).unwrap_err().to_string();
        assert!(e.contains("has dtype F64, expected F32"), "{e}");
        assert!(e.contains("np.float32"), "{e}");
    }

    #[test]
    fn unusable_policy_files_are_typed_errors() {
        let dev = test_device().unwrap();
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
