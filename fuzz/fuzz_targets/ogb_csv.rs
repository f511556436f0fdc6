//! `load_ogb_dir` on a folder whose files come from one input: the bytes are split at `\0`
//! into node-feat, node-label, edge, train, valid and test CSV text (missing parts are empty);
//! a first byte with its low bit set gzips them.
#![no_main]

mod common;

use std::io::Write;

use libfuzzer_sys::fuzz_target;

const FILES: [&str; 6] = [
    "raw/node-feat",
    "raw/node-label",
    "raw/edge",
    "split/time/train",
    "split/time/valid",
    "split/time/test",
];

fuzz_target!(|data: &[u8]| {
    let Some((&flags, rest)) = data.split_first() else {
        return;
    };
    let gz = flags & 1 == 1;
    let dir = common::scratch().join("ogbn_fuzz");
    let _ = std::fs::remove_dir_all(&dir);
    let mut parts = rest.split(|&b| b == 0);
    for rel in FILES {
        let text = parts.next().unwrap_or(&[]);
        let path = dir.join(format!("{rel}.csv{}", if gz { ".gz" } else { "" }));
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let bytes = if gz {
            let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            e.write_all(text).unwrap();
            e.finish().unwrap()
        } else {
            text.to_vec()
        };
        std::fs::write(path, bytes).unwrap();
    }
    let _ = induce_graph::io::load_ogb_dir(&dir, "time");
});
