//! Writes the embedded Unicode tables raw (native/src/unicode/tables.bin decoded, each array
//! in its dtype and the target's byte order) with the Rust that embeds them, into OUT_DIR:
//! the compiled module hands numpy views of them out, so a process reads only the pages of
//! the tables it uses instead of decoding ~10 MB at its first text kernel call.

use std::env;
use std::fmt::Write as _;
use std::fs;
use std::path::PathBuf;

#[path = "native/src/unicode/decode.rs"]
mod decode;

const SOURCE: &str = "native/src/unicode/tables.bin";

fn main() {
    println!("cargo:rerun-if-changed={SOURCE}");
    println!("cargo:rerun-if-changed=native/src/unicode/decode.rs");
    let data = fs::read(SOURCE).expect("read the Unicode tables");
    let (version, families) = decode::decode(&data).expect("decode the Unicode tables");
    let big = env::var("CARGO_CFG_TARGET_ENDIAN").as_deref() == Ok("big");
    let out = PathBuf::from(env::var("OUT_DIR").expect("OUT_DIR"));
    let mut rs = format!(
        "/// The Unicode version of the tables.\npub static VERSION: &str = {version:?};\n"
    );
    let mut list =
        String::from("/// Every family's tables.\npub static FAMILIES: &[(&str, &[Table])] = &[\n");
    for (f, family) in families.iter().enumerate() {
        writeln!(list, "    ({:?}, &[", family.name).unwrap();
        for (a, array) in family.arrays.iter().enumerate() {
            let mut bytes = Vec::with_capacity(array.values.len() * array.dtype as usize);
            for &v in &array.values {
                match (array.dtype, big) {
                    (1, _) => bytes.push(v as u8),
                    (4, false) => bytes.extend_from_slice(&(v as i32).to_le_bytes()),
                    (4, true) => bytes.extend_from_slice(&(v as i32).to_be_bytes()),
                    (_, false) => bytes.extend_from_slice(&v.to_le_bytes()),
                    (_, true) => bytes.extend_from_slice(&v.to_be_bytes()),
                }
            }
            let file = out.join(format!("unicode_{}_{}.bin", family.name, array.name));
            fs::write(&file, &bytes).expect("write a Unicode table");
            let ident = format!("T_{f}_{a}");
            writeln!(
                rs,
                "static {ident}: Aligned<[u8; {}]> = Aligned(*include_bytes!({:?}));",
                bytes.len(),
                file.display().to_string()
            )
            .unwrap();
            let dtype = match array.dtype {
                1 => "U8",
                4 => "I32",
                _ => "I64",
            };
            writeln!(
                list,
                "        Table {{ name: {:?}, dtype: Dtype::{dtype}, bytes: &{ident}.0 }},",
                array.name
            )
            .unwrap();
        }
        list.push_str("    ]),\n");
    }
    list.push_str("];\n");
    rs.push_str(&list);
    fs::write(out.join("unicode_tables.rs"), rs).expect("write the table list");
}
