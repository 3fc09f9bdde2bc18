//! Shell completions: the bash script completes verbs and sub-verbs in a real bash; the zsh and
//! fish scripts are produced for the binary's name.

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
