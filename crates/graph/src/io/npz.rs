//! A small, defensive `.npz` reader shared by the npz loaders.
//!
//! An `.npz` file is a zip archive of `<name>.npy` members (stored by `np.savez`, deflated by
//! `np.savez_compressed`). The archive is read with `zip`, each member is read fully into memory
//! (through `zip`'s CRC check) and parsed with `npyz`. Before `npyz` sees a member, its header is
//! checked here (magic, declared header length, nesting depth, shape) so that a corrupt or
//! hostile file gives an error instead of an overflow panic or a huge allocation; after parsing,
//! the data length must equal `elements × item size`.

use std::fs::File;
use std::io::{BufReader, Cursor, Read};
use std::path::{Path, PathBuf};

use npyz::{DType, NpyFile, Order, TypeChar, TypeStr};
use zip::ZipArchive;
use zip::result::ZipError;

use crate::error::{GraphError, Result};

/// Deepest bracket nesting accepted in an npy header (numpy writes depth 2).
const MAX_HEADER_DEPTH: usize = 16;
/// Largest member read into memory up front; bigger members grow the buffer as they are read.
const MAX_PREALLOC: u64 = 256 << 20;
/// Largest uncompressed member accepted (16 GiB): far beyond every benchmark graph, far below
/// what a corrupt 64-bit size field can declare.
pub(crate) const MAX_MEMBER_BYTES: u64 = 16 << 30;
/// Deflate expands at most 1032:1 (RFC 1951: 258 bytes from a 2-bit code); a member that
/// declares more than this many bytes per compressed byte cannot hold what it declares.
const MAX_DEFLATE_RATIO: u64 = 1032;

/// An open `.npz` archive.
pub(crate) struct Npz {
    path: PathBuf,
    zip: ZipArchive<BufReader<File>>,
    /// Length of the archive file in bytes.
    file_len: u64,
}

impl Npz {
    /// Opens the archive; a missing file is [`GraphError::Io`], a file that is not a readable
    /// zip archive is [`GraphError::Format`].
    pub(crate) fn open(path: &Path) -> Result<Self> {
        let file = File::open(path).map_err(|e| GraphError::io(path, e))?;
        let file_len = file.metadata().map_err(|e| GraphError::io(path, e))?.len();
        let zip = ZipArchive::new(BufReader::new(file)).map_err(|e| match e {
            ZipError::Io(e) if e.kind() != std::io::ErrorKind::UnexpectedEof => {
                GraphError::io(path, e)
            }
            e => GraphError::format(path, format!("not a readable npz (zip) archive: {e}")),
        })?;
        Ok(Self {
            path: path.to_path_buf(),
            zip,
            file_len,
        })
    }

    /// The archive's path.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// True when the archive has a member `<name>.npy`.
    pub(crate) fn has(&self, name: &str) -> bool {
        self.zip.index_for_name(&format!("{name}.npy")).is_some()
    }

    /// Reads and parses the member `<name>.npy`.
    pub(crate) fn array(&mut self, name: &str) -> Result<NpyArray> {
        let member = format!("{name}.npy");
        let path = self.path.clone();
        let corrupt = |e: &dyn std::fmt::Display| {
            GraphError::format(
                &path,
                format!("array `{name}`: corrupt zip member {member}: {e}"),
            )
        };
        let mut file = match self.zip.by_name(&member) {
            Ok(f) => f,
            Err(ZipError::FileNotFound) => {
                return Err(GraphError::format(
                    &path,
                    format!("missing array `{name}` (no member {member})"),
                ));
            }
            Err(e) => return Err(corrupt(&e)),
        };
        let declared = file.size();
        let stored = file.compressed_size();
        let too_large = |declared: u64, limit: u64, reason: String| GraphError::TooLarge {
            path: path.clone(),
            what: format!("zip member {member} (array `{name}`, uncompressed bytes)"),
            declared,
            limit,
            reason,
        };
        // Refuse impossible sizes before allocating: a member cannot store more than the
        // archive, a stored member holds exactly its compressed bytes, a deflated one at most
        // 1032 times them, and no member may exceed MAX_MEMBER_BYTES.
        if stored > self.file_len {
            return Err(GraphError::TooLarge {
                path: path.clone(),
                what: format!("zip member {member} (array `{name}`, compressed bytes)"),
                declared: stored,
                limit: self.file_len,
                reason: "the archive's length".into(),
            });
        }
        let limit = match file.compression() {
            zip::CompressionMethod::Stored => stored,
            _ => stored
                .saturating_mul(MAX_DEFLATE_RATIO)
                .saturating_add(1024),
        }
        .min(MAX_MEMBER_BYTES);
        if declared > limit {
            let reason = if limit == MAX_MEMBER_BYTES {
                "the reader's cap on one array".to_string()
            } else {
                format!("what {stored} {:?} bytes can hold", file.compression())
            };
            return Err(too_large(declared, limit, reason));
        }
        let mut bytes = Vec::with_capacity(declared.min(MAX_PREALLOC) as usize);
        (&mut file)
            .take(declared.saturating_add(1))
            .read_to_end(&mut bytes)
            .map_err(|e| corrupt(&e))?;
        drop(file);
        if bytes.len() as u64 != declared {
            return Err(corrupt(&format!(
                "declares {declared} uncompressed bytes, holds {}",
                bytes.len()
            )));
        }
        NpyArray::parse(&path, name, bytes)
    }
}

/// One parsed `.npy` member: its header, and its data not yet decoded.
pub(crate) struct NpyArray {
    path: PathBuf,
    name: String,
    shape: Vec<usize>,
    dtype: TypeStr,
    npy: Member,
}

/// A member's `.npy` reader over its bytes.
type Member = NpyFile<Cursor<Vec<u8>>>;

/// What [`check_header`] learnt from the raw bytes.
#[derive(Debug)]
struct RawHeader {
    shape: Vec<u64>,
    data_offset: usize,
}

/// Checks an npy member's header before `npyz` parses it: magic and version, the declared
/// header length against the member size, bracket depth, and a shape whose element count does
/// not overflow (npyz multiplies the dimensions unchecked). The data length is checked against
/// the dtype once npyz has parsed the header.
fn check_header(bytes: &[u8]) -> std::result::Result<RawHeader, String> {
    if bytes.len() < 10 || &bytes[..6] != b"\x93NUMPY" {
        return Err("not an npy array (bad magic bytes)".into());
    }
    let (header_len, start): (usize, usize) = match bytes[6] {
        1 => (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10),
        2 | 3 if bytes.len() >= 12 => (
            u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize,
            12,
        ),
        2 | 3 => return Err("truncated npy header".into()),
        v => return Err(format!("unsupported npy format version {v}")),
    };
    let end = start
        .checked_add(header_len)
        .filter(|&end| end <= bytes.len())
        .ok_or_else(|| "truncated npy header".to_string())?;
    let text = &bytes[start..end];
    let mut depth = 0usize;
    for &b in text {
        match b {
            b'(' | b'[' | b'{' => {
                depth += 1;
                if depth > MAX_HEADER_DEPTH {
                    return Err("malformed npy header (nested too deeply)".into());
                }
            }
            b')' | b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    let shape = parse_shape(text)?;
    shape
        .iter()
        .try_fold(1u64, |acc, &d| acc.checked_mul(d))
        .ok_or_else(|| format!("shape {shape:?} overflows"))?;
    Ok(RawHeader {
        shape,
        data_offset: end,
    })
}

/// Extracts the `'shape': (a, b, ...)` entry of an npy header dict.
fn parse_shape(text: &[u8]) -> std::result::Result<Vec<u64>, String> {
    let bad = || "malformed npy header (unreadable shape)".to_string();
    let key = [&b"'shape'"[..], &b"\"shape\""[..]]
        .iter()
        .find_map(|k| {
            text.windows(k.len())
                .position(|w| w == *k)
                .map(|p| p + k.len())
        })
        .ok_or_else(|| "malformed npy header (no shape)".to_string())?;
    let rest = std::str::from_utf8(&text[key..])
        .map_err(|_| bad())?
        .trim_start();
    let rest = rest.strip_prefix(':').ok_or_else(bad)?.trim_start();
    let close = match rest.chars().next() {
        Some('(') => ')',
        Some('[') => ']',
        _ => return Err(bad()),
    };
    let inner = &rest[1..rest.find(close).ok_or_else(bad)?];
    inner
        .split(',')
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .map(|t| {
            t.trim_end_matches(['L', 'l'])
                .parse::<u64>()
                .map_err(|_| bad())
        })
        .collect()
}

/// Reads every element of `npy` as `T` (the dtype has been checked to match `T`).
fn read_all<T: npyz::Deserialize>(
    npy: NpyFile<Cursor<Vec<u8>>>,
) -> std::result::Result<Vec<T>, String> {
    npy.data::<T>()
        .map_err(|e| e.to_string())?
        .collect::<std::io::Result<Vec<T>>>()
        .map_err(|e| format!("corrupt npy data: {e}"))
}

impl NpyArray {
    fn parse(path: &Path, name: &str, bytes: Vec<u8>) -> Result<Self> {
        let err = |msg: String| GraphError::format(path, format!("array `{name}`: {msg}"));
        let raw = check_header(&bytes).map_err(err)?;
        let data_len = (bytes.len() - raw.data_offset) as u64;
        let npy = NpyFile::new(Cursor::new(bytes))
            .map_err(|e| err(format!("malformed npy header: {e}")))?;
        if npy.shape() != raw.shape.as_slice() {
            return Err(err(format!(
                "malformed npy header (shape {:?})",
                npy.shape()
            )));
        }
        let dtype = match npy.dtype() {
            DType::Plain(ts) if ts.type_char() == TypeChar::Object => {
                return Err(err("object (pickled) arrays are not supported".into()));
            }
            DType::Plain(ts) => ts,
            other => {
                return Err(err(format!(
                    "expected a numeric dtype, found structured dtype {}",
                    other.descr()
                )));
            }
        };
        let expected = dtype
            .num_bytes()
            .and_then(|i| (i as u64).checked_mul(npy.len()));
        if expected != Some(data_len) {
            let what = match expected {
                Some(e) if e > data_len => "truncated",
                _ => "corrupt",
            };
            return Err(err(format!(
                "{what} npy data: shape {:?} of {} needs {} data bytes, found {data_len}",
                npy.shape(),
                npy.dtype().descr(),
                expected.map_or_else(|| "too many".to_string(), |e| e.to_string()),
            )));
        }
        let shape = raw
            .shape
            .iter()
            .map(|&d| usize::try_from(d))
            .collect::<std::result::Result<Vec<_>, _>>()
            .map_err(|_| err("shape does not fit in memory".into()))?;
        Ok(Self {
            path: path.to_path_buf(),
            name: name.to_string(),
            shape,
            dtype,
            npy,
        })
    }

    fn error(&self, msg: impl std::fmt::Display) -> GraphError {
        GraphError::format(&self.path, format!("array `{}`: {msg}", self.name))
    }

    /// A [`GraphError::Format`] naming this array.
    pub(crate) fn shape_error(&self, expected: &str) -> GraphError {
        self.error(format!("expected shape {expected}, found {:?}", self.shape))
    }

    /// The length of a 1-d array, or a shape error.
    pub(crate) fn expect_1d(&self, expected: &str) -> Result<usize> {
        match self.shape[..] {
            [n] => Ok(n),
            _ => Err(self.shape_error(expected)),
        }
    }

    /// The `(rows, cols)` of a 2-d array, or a shape error.
    pub(crate) fn expect_2d(&self, expected: &str) -> Result<(usize, usize)> {
        match self.shape[..] {
            [r, c] => Ok((r, c)),
            _ => Err(self.shape_error(expected)),
        }
    }

    /// Reorders a Fortran-order 2-d array to row-major.
    fn row_major<T: Copy>(order: Order, shape: &[usize], data: Vec<T>) -> Vec<T> {
        match (order, shape) {
            (Order::Fortran, &[r, c]) if r > 1 && c > 1 => {
                let mut out = Vec::with_capacity(data.len());
                for i in 0..r {
                    out.extend((0..c).map(|j| data[j * r + i]));
                }
                out
            }
            _ => data,
        }
    }

    /// The array's reader, dtype and shape, and the error that names the array (for the readers
    /// that consume the reader).
    fn into_parts(self) -> (Member, TypeStr, Vec<usize>, impl Fn(String) -> GraphError) {
        let Self {
            path,
            name,
            shape,
            dtype,
            npy,
        } = self;
        let err = move |m: String| GraphError::format(&path, format!("array `{name}`: {m}"));
        (npy, dtype, shape, err)
    }

    /// All elements as `i64`, row-major. Accepts any signed or unsigned integer dtype.
    pub(crate) fn ints(self) -> Result<Vec<i64>> {
        fn widen<T: Into<i128>>(v: Vec<T>) -> Vec<i128> {
            v.into_iter().map(Into::into).collect()
        }
        let (npy, ts, shape, err) = self.into_parts();
        let order = npy.order();
        let wide = match (ts.type_char(), ts.size_field()) {
            (TypeChar::Int, 8) => {
                let data = read_all::<i64>(npy).map_err(&err)?;
                return Ok(Self::row_major(order, &shape, data));
            }
            (TypeChar::Int, 1) => read_all::<i8>(npy).map(widen),
            (TypeChar::Int, 2) => read_all::<i16>(npy).map(widen),
            (TypeChar::Int, 4) => read_all::<i32>(npy).map(widen),
            (TypeChar::Uint, 1) => read_all::<u8>(npy).map(widen),
            (TypeChar::Uint, 2) => read_all::<u16>(npy).map(widen),
            (TypeChar::Uint, 4) => read_all::<u32>(npy).map(widen),
            (TypeChar::Uint, 8) => read_all::<u64>(npy).map(widen),
            _ => {
                return Err(err(format!(
                    "expected an integer dtype (int8/16/32/64 or uint8/16/32/64), found '{ts}'"
                )));
            }
        };
        let data = wide
            .map_err(&err)?
            .into_iter()
            .map(|v| i64::try_from(v).map_err(|_| err(format!("value {v} does not fit in int64"))))
            .collect::<Result<Vec<i64>>>()?;
        Ok(Self::row_major(order, &shape, data))
    }

    /// All elements as `f32`, row-major. Accepts float32 and float64 (rounded to `f32`).
    pub(crate) fn floats(self) -> Result<Vec<f32>> {
        let (npy, ts, shape, err) = self.into_parts();
        let order = npy.order();
        let data = match (ts.type_char(), ts.size_field()) {
            (TypeChar::Float, 4) => read_all::<f32>(npy),
            (TypeChar::Float, 8) => {
                read_all::<f64>(npy).map(|v| v.into_iter().map(|x| x as f32).collect())
            }
            _ => {
                return Err(err(format!(
                    "expected a float dtype (float32 or float64), found '{ts}'"
                )));
            }
        };
        Ok(Self::row_major(order, &shape, data.map_err(&err)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_checks_reject_hostile_headers() {
        let with_header = |h: &str, data: usize| {
            let mut b = b"\x93NUMPY\x01\x00".to_vec();
            b.extend_from_slice(&(h.len() as u16).to_le_bytes());
            b.extend_from_slice(h.as_bytes());
            b.extend(std::iter::repeat_n(0u8, data));
            b
        };
        let fails = |bytes: &[u8], needle: &str| {
            let msg = check_header(bytes).unwrap_err();
            assert!(msg.contains(needle), "{needle}: {msg}");
        };
        let ok = "{'descr': '<i8', 'fortran_order': False, 'shape': (2, 3), }\n";
        assert_eq!(
            check_header(&with_header(ok, 48)).unwrap().shape,
            vec![2, 3]
        );
        let big = "{'descr': '<i8', 'fortran_order': False, 'shape': (1000000000000L,), }";
        assert_eq!(
            check_header(&with_header(big, 8)).unwrap().shape,
            vec![1_000_000_000_000]
        );
        let huge = "{'descr': '<i8', 'shape': (4294967296, 4294967296, 4294967296), }";
        fails(&with_header(huge, 8), "overflows");
        let deep = format!(
            "{{'shape': (1,), 'x': {}{}}}",
            "(".repeat(100),
            ")".repeat(100)
        );
        fails(&with_header(&deep, 8), "nested");
        fails(
            &with_header("{'descr': '<i8', 'fortran_order': False}", 8),
            "no shape",
        );
        fails(
            &with_header("{'descr': '<i8', 'shape': (2, x)}", 8),
            "unreadable shape",
        );
        fails(b"\x93NUMPY\x01\x00\xff\xff{", "truncated");
        fails(b"PK\x03\x04 not npy", "magic");
        fails(b"\x93NUMPY\x07\x00\x00\x00", "version");
    }
}
