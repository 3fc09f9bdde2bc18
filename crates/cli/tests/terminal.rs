//! What the binary does for a terminal user: shell completions (the bash script completes verbs
//! in a real bash; zsh and fish scripts are produced) and colour only on a terminal.

use std::process::Command;

fn completion(shell: &str) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_tidegate"))
        .args(["completion", shell])
        .output()
        .unwrap();
    assert!(out.status.success());
    String::from_utf8(out.stdout).unwrap()
}

fn bash_complete(line: &[&str]) -> Vec<String> {
    let script = format!(
        "source <({bin} completion bash)\nCOMP_WORDS=({words})\nCOMP_CWORD={cword}\nCOMP_LINE=\"{line}\"\nCOMP_POINT=${{#COMP_LINE}}\n_tidegate tidegate \"{last}\" \"{prev}\"\nprintf '%s\\n' \"${{COMPREPLY[@]}}\"\n",
        bin = env!("CARGO_BIN_EXE_tidegate"),
        words = line.join(" "),
        cword = line.len() - 1,
        line = line.join(" "),
        last = line[line.len() - 1],
        prev = line[line.len() - 2],
    );
    let out = Command::new("bash")
        .arg("-c")
        .arg(script)
        .output()
        .expect("bash runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .split_whitespace()
        .map(String::from)
        .collect()
}

#[test]
fn bash_completes_verbs_and_kinds() {
    assert_eq!(bash_complete(&["tidegate", "rec"]), ["reconcile"]);
    let kinds = bash_complete(&["tidegate", "get", ""]);
    for k in ["sources", "kustomizations", "all"] {
        assert!(kinds.iter().any(|x| x == k), "{kinds:?}");
    }
    assert!(completion("zsh").starts_with("#compdef tidegate"));
    assert!(completion("fish").contains("complete -c tidegate"));
}

/// Runs the binary under a pseudo-terminal (`script`) and returns what it wrote.
fn on_a_terminal(args: &str) -> String {
    let out = Command::new("script")
        .args([
            "-qec",
            &format!("{} {args}", env!("CARGO_BIN_EXE_tidegate")),
            "/dev/null",
        ])
        .env_remove("NO_COLOR")
        .output()
        .expect("script (bsdutils) runs; CI installs it");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn symbols_are_coloured_on_a_terminal_only() {
    let args = "get ks nope --kubeconfig /nonexistent/kubeconfig";
    let tty = on_a_terminal(args);
    assert!(tty.contains("\u{1b}[31m✗\u{1b}[0m "), "{tty:?}");
    let plain = Command::new(env!("CARGO_BIN_EXE_tidegate"))
        .args(args.split(' '))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&plain.stderr);
    assert!(err.starts_with("✗ ") && !err.contains('\u{1b}'), "{err:?}");
}
