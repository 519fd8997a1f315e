//! The lexer on command lines: words, operators, redirections, substitutions.

use super::*;
use pretty_assertions::assert_eq;

fn words(script: &Script) -> Vec<Vec<String>> {
    script
        .commands
        .iter()
        .map(|c| c.words.iter().map(|w| w.text.clone()).collect())
        .collect()
}

#[test]
fn operators_split_commands_and_quotes_hold_them_together() {
    let script = parse("cd src && ls -la | grep 'a b' ; echo \"x && y\" || true &").unwrap();
    assert_eq!(
        words(&script),
        vec![
            vec!["cd", "src"],
            vec!["ls", "-la"],
            vec!["grep", "a b"],
            vec!["echo", "x && y"],
            vec!["true"],
        ]
    );
    let pipelines: Vec<(usize, bool)> = script
        .commands
        .iter()
        .map(|c| (c.pipeline, c.piped))
        .collect();
    assert_eq!(pipelines[1].0, pipelines[2].0);
    assert!(pipelines[2].1 && !pipelines[1].1);
    assert_ne!(pipelines[0].0, pipelines[1].0);
}

#[test]
fn redirections_assignments_and_substitutions() {
    let script = parse("FOO=1 make >out.log 2>&1 && cat </dev/null >>/etc/x").unwrap();
    assert_eq!(words(&script), vec![vec!["make"], vec!["cat"]]);
    assert_eq!(script.commands[0].redirects[0].target.text, "out.log");
    assert_eq!(script.commands[0].redirects.len(), 1);
    assert!(script.commands[1].redirects[1].writes);
    assert_eq!(script.commands[1].redirects[1].target.text, "/etc/x");
    let script = parse("echo $(git push) `rm -rf x` \"$(id)\" ${HOME}").unwrap();
    assert_eq!(script.substitutions, vec!["git push", "rm -rf x", "id"]);
    assert!(script.commands[0].words[1].expands);
    let script = parse("echo hi>/tmp/x").unwrap();
    assert_eq!(script.commands[0].redirects[0].target.text, "/tmp/x");
}

#[test]
fn heredocs_are_the_commands_input() {
    let script = parse(
        "cat > f.py <<'EOF'\nimport os\nos.system('x')\nEOF\nbash <<-END\n\tgit push\n\tEND\n",
    )
    .unwrap();
    assert_eq!(words(&script), vec![vec!["cat"], vec!["bash"]]);
    assert_eq!(
        script.commands[0].stdin_text,
        vec!["import os\nos.system('x')\n"]
    );
    assert_eq!(script.commands[1].stdin_text, vec!["\tgit push\n"]);
}

#[test]
fn what_cannot_be_read_is_an_error() {
    assert!(parse("echo 'unterminated").is_err());
    assert!(parse("echo $(ls").is_err());
    assert!(parse("cat <<EOF\nno end").is_err());
    assert!(parse("ls # a comment with 'quote").is_ok());
}

#[test]
fn assignments_function_definitions_and_ansi_c_quoting() {
    let script = parse("PATH=./bin:$PATH; BASH_ALIASES[ls]=x PS0+=y make").unwrap();
    assert_eq!(script.commands[0].assigned, vec!["PATH"]);
    assert!(script.commands[0].words.is_empty());
    assert_eq!(script.commands[1].assigned, vec!["BASH_ALIASES", "PS0"]);
    assert_eq!(words(&script)[1], vec!["make"]);
    for line in ["ls() { rm -rf ./*; }", "ls () { rm -rf ./*; }"] {
        let script = parse(line).unwrap();
        assert_eq!(
            script.commands[0].defines_function.as_deref(),
            Some("ls"),
            "{line}"
        );
        assert_eq!(words(&script)[1], vec!["{", "rm", "-rf", "./*"], "{line}");
    }
    let script = parse("$'\\x72\\x6d' -rf ./*").unwrap();
    assert!(script.commands[0].words[0].expands);
    assert!(parse("echo $'open").is_err());
    // Parentheses that are not `()` stay a subshell.
    let script = parse("(cd src && ls -la)").unwrap();
    assert_eq!(words(&script)[0], vec!["cd", "src"]);
    assert!(script.commands.iter().all(|c| c.defines_function.is_none()));
}
