//! `sops-decrypt FILE [--input-type T] [--output-type T] [--age KEYFILE]... [--pgp ASC]...`:
//! decrypts one file to stdout, as `sops -d` would, for comparing the two by hand and in the
//! benchmark script.

use std::io::Write;

use tidegate_sops::{Format, Keys, decrypt};

fn format(name: &str) -> Format {
    match name {
        "yaml" => Format::Yaml,
        "json" => Format::Json,
        "dotenv" => Format::Dotenv,
        "ini" => Format::Ini,
        _ => Format::Binary,
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut keys = Keys::new();
    let mut files = Vec::new();
    let (mut input, mut output) = (None, None);
    let mut i = 0;
    while i < args.len() {
        let next = || args.get(i + 1).cloned().unwrap_or_default();
        match args[i].as_str() {
            flag @ ("--age" | "--pgp") => {
                let path = next();
                let added = std::fs::read_to_string(&path)
                    .map_err(|e| e.to_string())
                    .and_then(|text| {
                        let res = if flag == "--age" {
                            keys.add_age(&text)
                        } else {
                            keys.add_pgp(&text)
                        };
                        res.map_err(|e| e.to_string())
                    });
                if let Err(e) = added {
                    eprintln!("{path}: {e}");
                    std::process::exit(2);
                }
                i += 1;
            }
            "--input-type" => {
                input = Some(format(&next()));
                i += 1;
            }
            "--output-type" => {
                output = Some(format(&next()));
                i += 1;
            }
            f => files.push(f.to_string()),
        }
        i += 1;
    }
    let mut status = 0;
    for f in files {
        let data = match std::fs::read(&f) {
            Ok(d) => d,
            Err(e) => {
                eprintln!("{f}: {e}");
                status = 1;
                continue;
            }
        };
        let input = input.unwrap_or_else(|| Format::from_path(&f));
        let output = output.unwrap_or(input);
        match decrypt(&data, input, output, &keys) {
            Ok(out) => {
                let _ = std::io::stdout().write_all(&out);
            }
            Err(e) => {
                eprintln!("{f}: {e}");
                status = 1;
            }
        }
    }
    std::process::exit(status);
}
