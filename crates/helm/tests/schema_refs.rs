//! `values.schema.json` documents that `$ref` other documents over HTTP, as many public charts'
//! schemas do (bjw-s app-template refers to its common library's schema on GitHub): a small
//! HTTP server on loopback serves the referred documents, and helm v4.1.4 and Tidegate render
//! the same charts against it. Standard output, or the error text, must be the same.

mod common;

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;

use tidegate_helm::action::{TemplateOptions, ValueOptions, template};

fn helm() -> PathBuf {
    common::helm_binary("v4.1.4", "TIDEGATE_HELM4")
}

fn chart(dir: &Path, name: &str, schema: &str, values: &str) -> PathBuf {
    let c = dir.join(name);
    std::fs::create_dir_all(c.join("templates")).expect("chart folder");
    std::fs::write(
        c.join("Chart.yaml"),
        format!("apiVersion: v2\nname: {name}\nversion: 0.1.0\n"),
    )
    .expect("Chart.yaml");
    std::fs::write(c.join("values.yaml"), values).expect("values.yaml");
    std::fs::write(c.join("values.schema.json"), schema).expect("schema");
    std::fs::write(
        c.join("templates/cm.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\ndata:\n  port: {{ .Values.port | quote }}\n",
    )
    .expect("template");
    c
}

fn helm_result(chart: &Path) -> Result<String, String> {
    let out = Command::new(helm())
        .arg("template")
        .arg(chart)
        .env("HELM_CACHE_HOME", "/tmp/tidegate-helm-cache")
        .env("HELM_CONFIG_HOME", "/tmp/tidegate-helm-config")
        .env("HELM_DATA_HOME", "/tmp/tidegate-helm-data")
        .env_remove("HTTP_PROXY")
        .env_remove("HTTPS_PROXY")
        .env_remove("http_proxy")
        .env_remove("https_proxy")
        .output()
        .expect("runs helm");
    if out.status.success() {
        return Ok(String::from_utf8_lossy(&out.stdout).into_owned());
    }
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let at = stderr.find("Error: ").map(|i| i + 7).unwrap_or(0);
    Err(stderr[at..].trim_end_matches('\n').to_string())
}

fn our_result(chart: &Path) -> Result<String, String> {
    let opts = TemplateOptions {
        values: ValueOptions::default(),
        ..TemplateOptions::default()
    };
    template(chart, &opts).map_err(|e| e.to_string().trim_end_matches('\n').to_string())
}

#[test]
fn remote_schema_refs_as_helm() {
    assert!(
        helm().exists(),
        "helm v4.1.4 is missing at {} (scripts/install-test-tools.sh installs it)",
        helm().display()
    );
    let library = r#"{
      "$id": "LIBRARY_URL",
      "type": "object",
      "properties": {
        "port": {"$ref": "parts/port.json#/definitions/port"},
        "name": {"$ref": "parts/port.json#/definitions/name"}
      },
      "required": ["port"]
    }"#;
    let port_doc = r#"{"definitions": {
        "port": {"type": "integer", "minimum": 1, "maximum": 65535},
        "name": {"type": "string", "pattern": "^[a-z]+$"}}}"#;
    let listener = TcpListener::bind("127.0.0.1:0").expect("binds");
    let base = format!(
        "http://127.0.0.1:{}",
        listener.local_addr().expect("address").port()
    );
    let lib_url = format!("{base}/lib/values.schema.json");
    serve(
        listener,
        vec![
            (
                "/lib/values.schema.json",
                library.replace("LIBRARY_URL", &lib_url),
            ),
            ("/lib/parts/port.json", port_doc.to_string()),
        ],
    );
    let dir = std::env::temp_dir().join(format!("tidegate-schema-refs-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let refer = format!(r#"{{"$ref": "{lib_url}"}}"#);
    let cases = [
        chart(&dir, "valid", &refer, "port: 8080\nname: web\n"),
        // One error per chart: with several, helm lists them in Go's random map order.
        chart(&dir, "invalid", &refer, "port: 0\nname: web\n"),
        chart(&dir, "invalid-pattern", &refer, "port: 80\nname: Web\n"),
        chart(&dir, "missing-required", &refer, "name: web\n"),
        chart(
            &dir,
            "not-found",
            &format!(r#"{{"$ref": "{base}/nope/values.schema.json"}}"#),
            "port: 1\n",
        ),
        chart(
            &dir,
            "nested-not-found",
            &format!(
                r#"{{"properties": {{"port": {{"$ref": "{base}/lib/parts/missing.json#/x"}}}}}}"#
            ),
            "port: 1\n",
        ),
    ];
    let mut problems = Vec::new();
    for c in &cases {
        let theirs = helm_result(c);
        let ours = our_result(c);
        if theirs != ours {
            problems.push(format!(
                "{}:\n  helm: {theirs:?}\n  ours: {ours:?}",
                c.display()
            ));
        }
    }
    // The valid chart must render and the broken ones must fail, in both.
    assert!(our_result(&cases[0]).is_ok(), "the valid chart renders");
    assert!(our_result(&cases[1]).is_err(), "the invalid chart fails");
    let _ = std::fs::remove_dir_all(&dir);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Serves `docs` (path → body) from `listener` until the process ends; 404 for others.
fn serve(listener: TcpListener, docs: Vec<(&'static str, String)>) {
    let docs = std::sync::Arc::new(docs);
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let docs = docs.clone();
            std::thread::spawn(move || answer(stream, &docs));
        }
    });
}

fn answer(stream: std::net::TcpStream, docs: &[(&'static str, String)]) {
    let mut reader = BufReader::new(&stream);
    let mut request = String::new();
    if reader.read_line(&mut request).is_err() {
        return;
    }
    let mut line = String::new();
    while reader.read_line(&mut line).is_ok_and(|n| n > 2) {
        line.clear();
    }
    let path = request.split_whitespace().nth(1).unwrap_or("").to_string();
    let reply = match docs.iter().find(|(p, _)| *p == path) {
        Some((_, body)) => format!(
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        ),
        None => {
            "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".to_string()
        }
    };
    let mut stream = stream;
    let _ = stream.write_all(reply.as_bytes());
}
