//! Structure-aware mutations of `.npz` archives: their zip members, the zip headers' fields, and
//! the `.npy` headers and data inside the members.

#![allow(dead_code)]

use std::io::{Cursor, Read, Write};

use rand::Rng;
use rand::rngs::StdRng;

use crate::fuzz_support::{INTERESTING_FLOATS, interesting_int, mutate_bytes};

/// The members of an archive, in order (name, uncompressed bytes).
pub fn read_members(bytes: &[u8]) -> Vec<(String, Vec<u8>)> {
    let mut z = zip::ZipArchive::new(Cursor::new(bytes)).expect("seed is a zip archive");
    (0..z.len())
        .map(|i| {
            let mut f = z.by_index(i).unwrap();
            let mut data = Vec::new();
            f.read_to_end(&mut data).unwrap();
            (f.name().unwrap().to_string(), data)
        })
        .collect()
}

/// A stored (uncompressed) zip archive written by hand: duplicate names are kept, and
/// `declared` overrides a member's declared uncompressed size (local header and central
/// directory) when given.
pub fn raw_zip(members: &[(String, Vec<u8>)], declared: &[(usize, u32)]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut central = Vec::new();
    for (i, (name, data)) in members.iter().enumerate() {
        let mut crc = flate2::Crc::new();
        crc.update(data);
        let crc = crc.sum();
        let size = data.len() as u32;
        let usize_ = declared
            .iter()
            .find(|(m, _)| *m == i)
            .map_or(size, |&(_, s)| s);
        let offset = out.len() as u32;
        out.extend_from_slice(b"PK\x03\x04");
        out.extend_from_slice(&20u16.to_le_bytes()); // version needed
        out.extend_from_slice(&0u16.to_le_bytes()); // flags
        out.extend_from_slice(&0u16.to_le_bytes()); // stored
        out.extend_from_slice(&[0, 0, 0x21, 0]); // time, date
        out.extend_from_slice(&crc.to_le_bytes());
        out.extend_from_slice(&size.to_le_bytes());
        out.extend_from_slice(&usize_.to_le_bytes());
        out.extend_from_slice(&(name.len() as u16).to_le_bytes());
        out.extend_from_slice(&0u16.to_le_bytes());
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(data);

        central.extend_from_slice(b"PK\x01\x02");
        central.extend_from_slice(&20u16.to_le_bytes()); // made by
        central.extend_from_slice(&20u16.to_le_bytes()); // needed
        central.extend_from_slice(&0u16.to_le_bytes());
        central.extend_from_slice(&0u16.to_le_bytes());
        central.extend_from_slice(&[0, 0, 0x21, 0]);
        central.extend_from_slice(&crc.to_le_bytes());
        central.extend_from_slice(&size.to_le_bytes());
        central.extend_from_slice(&usize_.to_le_bytes());
        central.extend_from_slice(&(name.len() as u16).to_le_bytes());
        central.extend_from_slice(&[0; 4]); // extra, comment lengths
        central.extend_from_slice(&[0; 4]); // disk, internal attributes
        central.extend_from_slice(&[0; 4]); // external attributes
        central.extend_from_slice(&offset.to_le_bytes());
        central.extend_from_slice(name.as_bytes());
    }
    let cd_offset = out.len() as u32;
    out.extend_from_slice(&central);
    out.extend_from_slice(b"PK\x05\x06");
    out.extend_from_slice(&[0; 4]);
    let n = members.len() as u16;
    out.extend_from_slice(&n.to_le_bytes());
    out.extend_from_slice(&n.to_le_bytes());
    out.extend_from_slice(&(central.len() as u32).to_le_bytes());
    out.extend_from_slice(&cd_offset.to_le_bytes());
    out.extend_from_slice(&0u16.to_le_bytes());
    out
}

/// An archive written with the `zip` crate (deflated or stored); duplicates are not possible.
pub fn zip_archive(members: &[(String, Vec<u8>)], deflate: bool) -> Vec<u8> {
    let mut buf = Cursor::new(Vec::new());
    {
        let mut z = zip::ZipWriter::new(&mut buf);
        let method = if deflate {
            zip::CompressionMethod::Deflated
        } else {
            zip::CompressionMethod::Stored
        };
        let opts = zip::write::SimpleFileOptions::default().compression_method(method);
        for (name, bytes) in members {
            z.start_file(name.as_str(), opts).unwrap();
            z.write_all(bytes).unwrap();
        }
        z.finish().unwrap();
    }
    buf.into_inner()
}

/// An `.npy` member (format 1.0, or 2.0 when the header needs it) from a header dict and data.
pub fn npy(header: &str, data: &[u8]) -> Vec<u8> {
    let mut b = Vec::new();
    if header.len() <= u16::MAX as usize {
        b.extend_from_slice(b"\x93NUMPY\x01\x00");
        b.extend_from_slice(&(header.len() as u16).to_le_bytes());
    } else {
        b.extend_from_slice(b"\x93NUMPY\x02\x00");
        b.extend_from_slice(&(header.len() as u32).to_le_bytes());
    }
    b.extend_from_slice(header.as_bytes());
    b.extend_from_slice(data);
    b
}

/// Splits an `.npy` member into its header dict and data, when it is well formed enough.
pub fn split_npy(bytes: &[u8]) -> Option<(String, Vec<u8>)> {
    if bytes.len() < 10 || &bytes[..6] != b"\x93NUMPY" {
        return None;
    }
    let (len, start) = match bytes[6] {
        1 => (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10),
        _ if bytes.len() >= 12 => (
            u32::from_le_bytes(bytes[8..12].try_into().unwrap()) as usize,
            12,
        ),
        _ => return None,
    };
    let header = std::str::from_utf8(bytes.get(start..start + len)?).ok()?;
    Some((header.to_string(), bytes[start + len..].to_vec()))
}

/// Replaces the value of `'key': ...` in an npy header dict (up to the next `, '` or `}`).
fn replace_entry(header: &str, key: &str, value: &str) -> Option<String> {
    let k = format!("'{key}':");
    let at = header.find(&k)? + k.len();
    let rest = &header[at..];
    let end = if key == "shape" {
        rest.find(')').map(|p| p + 1)?
    } else {
        rest.find(", '").or_else(|| rest.find('}'))?
    };
    Some(format!("{} {value}{}", &header[..at], &rest[end..]))
}

const DTYPES: [&str; 18] = [
    "'<i8'",
    "'<i4'",
    "'<i2'",
    "'|i1'",
    "'<u8'",
    "'|u1'",
    "'<f4'",
    "'<f8'",
    "'<f2'",
    "'|b1'",
    "'<c8'",
    "'|O'",
    "'<U5'",
    "'>i8'",
    "'>f4'",
    "'|V8'",
    "'<M8[s]'",
    "[('a', '<i4')]",
];

fn shape_text(rng: &mut StdRng) -> String {
    let dims: Vec<String> = (0..rng.random_range(0..4))
        .map(|_| {
            if rng.random_bool(0.5) {
                [
                    "1000000000000",
                    "0",
                    "-1",
                    "4294967296",
                    "18446744073709551615",
                    "2",
                    "x",
                    "1L",
                ][rng.random_range(0..8)]
                .to_string()
            } else {
                rng.random_range(0..3000).to_string()
            }
        })
        .collect();
    match dims.len() {
        1 => format!("({},)", dims[0]),
        _ => format!("({})", dims.join(", ")),
    }
}

/// One structure-aware mutation of an `.npy` member: shape, dtype, order, hostile values in
/// the data (NaN/inf floats, negative or out-of-range ids), data truncated or extended, header
/// bytes damaged; returns its description.
pub fn mutate_npy(rng: &mut StdRng, bytes: &mut Vec<u8>) -> String {
    let Some((header, mut data)) = split_npy(bytes) else {
        return mutate_bytes(rng, bytes);
    };
    let (new_header, desc) = match rng.random_range(0..7) {
        0 => {
            let s = shape_text(rng);
            (
                replace_entry(&header, "shape", &s),
                format!("shape set to {s}"),
            )
        }
        1 => {
            let d = DTYPES[rng.random_range(0..DTYPES.len())];
            (
                replace_entry(&header, "descr", d),
                format!("dtype set to {d}"),
            )
        }
        2 => {
            let f = if header.contains("True") {
                "False"
            } else {
                "True"
            };
            (
                replace_entry(&header, "fortran_order", f),
                format!("fortran_order set to {f}"),
            )
        }
        3 | 4 => {
            // Hostile values in the data, by dtype.
            let float = header.contains("'<f");
            let wide = header.contains("8'");
            let item = if wide { 8 } else { 4 };
            if data.len() < item {
                (Some(header.clone()), "no data to poison".to_string())
            } else {
                let k = rng.random_range(1..4);
                let mut what = Vec::new();
                for _ in 0..k {
                    let i = rng.random_range(0..data.len() / item) * item;
                    if float {
                        let f = INTERESTING_FLOATS[rng.random_range(0..INTERESTING_FLOATS.len())];
                        if wide {
                            data[i..i + 8].copy_from_slice(&f.to_le_bytes());
                        } else {
                            data[i..i + 4].copy_from_slice(&(f as f32).to_le_bytes());
                        }
                        what.push(format!("{f}"));
                    } else {
                        let v = interesting_int(rng);
                        if wide {
                            data[i..i + 8].copy_from_slice(&v.to_le_bytes());
                        } else {
                            data[i..i + 4].copy_from_slice(&(v as i32).to_le_bytes());
                        }
                        what.push(v.to_string());
                    }
                }
                (
                    Some(header.clone()),
                    format!("data values set to {}", what.join(", ")),
                )
            }
        }
        5 => {
            let d = mutate_bytes(rng, &mut data);
            (Some(header.clone()), format!("data: {d}"))
        }
        _ => {
            let mut h = header.clone().into_bytes();
            let d = mutate_bytes(rng, &mut h);
            (
                Some(String::from_utf8_lossy(&h).into_owned()),
                format!("header: {d}"),
            )
        }
    };
    match new_header {
        Some(h) => {
            *bytes = npy(&h, &data);
            desc
        }
        None => mutate_bytes(rng, bytes),
    }
}

/// Offsets of the zip signatures `sig` in `bytes`.
fn find_all(bytes: &[u8], sig: &[u8; 4]) -> Vec<usize> {
    bytes
        .windows(4)
        .enumerate()
        .filter(|(_, w)| w == sig)
        .map(|(i, _)| i)
        .collect()
}

/// Overwrites one field of a local header, central-directory entry or end-of-directory record
/// (sizes, CRC, name and extra lengths, method, flags, offsets, entry counts) with a hostile
/// value; returns its description, or `None` when the archive has no such record.
pub fn mutate_zip_field(rng: &mut StdRng, bytes: &mut [u8]) -> Option<String> {
    // (signature, [(field offset, width, name)])
    let local: &[(usize, usize, &str)] = &[
        (6, 2, "flags"),
        (8, 2, "method"),
        (14, 4, "crc"),
        (18, 4, "compressed size"),
        (22, 4, "uncompressed size"),
        (26, 2, "name length"),
        (28, 2, "extra length"),
    ];
    let central: &[(usize, usize, &str)] = &[
        (8, 2, "flags"),
        (10, 2, "method"),
        (16, 4, "crc"),
        (20, 4, "compressed size"),
        (24, 4, "uncompressed size"),
        (28, 2, "name length"),
        (30, 2, "extra length"),
        (32, 2, "comment length"),
        (42, 4, "local header offset"),
    ];
    let eocd: &[(usize, usize, &str)] = &[
        (8, 2, "entries on disk"),
        (10, 2, "entries"),
        (12, 4, "directory size"),
        (16, 4, "directory offset"),
        (20, 2, "comment length"),
    ];
    type Fields<'a> = &'a [(usize, usize, &'a str)];
    let kinds: [(&[u8; 4], Fields, &str); 3] = [
        (b"PK\x03\x04", local, "local header"),
        (b"PK\x01\x02", central, "central entry"),
        (b"PK\x05\x06", eocd, "end of directory"),
    ];
    let (sig, fields, kind) = kinds[rng.random_range(0..3)];
    let at = find_all(bytes, sig);
    if at.is_empty() {
        return None;
    }
    let rec = at[rng.random_range(0..at.len())];
    let (off, width, name) = fields[rng.random_range(0..fields.len())];
    let pos = rec + off;
    if pos + width > bytes.len() {
        return None;
    }
    let old = if width == 2 {
        u16::from_le_bytes([bytes[pos], bytes[pos + 1]]) as u64
    } else {
        u32::from_le_bytes(bytes[pos..pos + 4].try_into().unwrap()) as u64
    };
    let v: u64 = match rng.random_range(0..6) {
        0 => 0,
        1 => u64::MAX,
        2 => old.wrapping_add(1),
        3 => old.wrapping_sub(1),
        4 => bytes.len() as u64,
        _ => rng.random(),
    };
    if width == 2 {
        bytes[pos..pos + 2].copy_from_slice(&(v as u16).to_le_bytes());
    } else {
        bytes[pos..pos + 4].copy_from_slice(&(v as u32).to_le_bytes());
    }
    Some(format!(
        "{kind} at {rec}: {name} {old} -> {}",
        if width == 2 {
            v as u16 as u64
        } else {
            v as u32 as u64
        }
    ))
}

/// One mutation of a whole `.npz` archive given as members: an npy member mutated (and the
/// archive rewritten, stored or deflated), a member dropped, duplicated, renamed or swapped, a
/// declared member size made huge, a zip header field damaged, or raw bytes damaged.
pub fn mutate_npz(rng: &mut StdRng, seed: &[(String, Vec<u8>)]) -> (Vec<u8>, String) {
    let mut members = seed.to_vec();
    let pick = |rng: &mut StdRng, m: &[(String, Vec<u8>)]| rng.random_range(0..m.len());
    let mut desc = Vec::new();
    let rounds = rng.random_range(1..=3);
    let mut dup = false;
    let mut declared = Vec::new();
    for _ in 0..rounds {
        if members.is_empty() {
            break;
        }
        let i = pick(rng, &members);
        match rng.random_range(0..10) {
            0..=5 => {
                let d = mutate_npy(rng, &mut members[i].1);
                desc.push(format!("{}: {d}", members[i].0));
            }
            6 => {
                let m = members.remove(i);
                desc.push(format!("{} dropped", m.0));
            }
            7 => {
                let m = members[i].clone();
                let j = pick(rng, &members);
                // The duplicate carries another member's content under the same name.
                members.push((m.0.clone(), members[j].1.clone()));
                dup = true;
                desc.push(format!("{} duplicated (content of {})", m.0, members[j].0));
            }
            8 => {
                let j = pick(rng, &members);
                let (a, b) = (members[i].1.clone(), members[j].1.clone());
                members[i].1 = b;
                members[j].1 = a;
                desc.push(format!("{} and {} swapped", members[i].0, members[j].0));
            }
            _ => {
                let v = [u32::MAX, 1 << 31, 0, 1][rng.random_range(0..4)];
                declared.push((i, v));
                dup = true;
                desc.push(format!("{} declares uncompressed size {v}", members[i].0));
            }
        }
    }
    let mut bytes = if dup || rng.random_bool(0.3) {
        raw_zip(&members, &declared)
    } else {
        zip_archive(&members, rng.random_bool(0.5))
    };
    if rng.random_bool(0.25)
        && let Some(d) = mutate_zip_field(rng, &mut bytes)
    {
        desc.push(d);
    }
    if rng.random_bool(0.15) {
        desc.push(format!("archive: {}", mutate_bytes(rng, &mut bytes)));
    }
    (bytes, desc.join("; "))
}
