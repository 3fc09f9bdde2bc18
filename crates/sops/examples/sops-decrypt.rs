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
            "--age" => {
                let text = std::fs::read_to_string(next()).expect("age key file");
                keys.add_age(&text).expect("age key");
                i += 1;
            }
            "--pgp" => {
                let text = std::fs::read_to_string(next()).expect("pgp key file");
                keys.add_pgp(&text).expect("pgp key");
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
        let data = std::fs::read(&f).expect("input file");
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
