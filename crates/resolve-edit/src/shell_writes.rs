//! Shell command lines that visibly write files inside the root — `sed -i`, `>`/`>>`
//! redirections (heredocs into files too), `tee`, `cp`/`mv`/`install` onto files, `python -c`
//! or `node -e` code that writes, `perl -i`, `truncate`, `rm` — which a host's hook refuses
//! while its edits are staged ([`visible_shell_writes`]).
//!
//! A lexical look at the command line, not a sandbox: a program that writes on its own (a
//! script, a build) is not seen. A target that cannot be known from the text (it names a
//! variable or a command substitution) counts as inside the root.

use std::path::{Path, PathBuf};

use resolve_store::normalize_lexically;

/// Targets a redirection may write without touching a file of the root.
const HARMLESS_TARGETS: [&str; 4] = ["/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty"];

/// What `command`, run in `cwd`, visibly writes inside `root`: one description per write
/// (`` `sed -i` ``, `` redirection into `out.txt` ``), empty when it writes nothing visible there.
pub fn visible_shell_writes(command: &str, cwd: &Path, root: &Path) -> Vec<String> {
    let inside = |target: &str| -> bool {
        if target.contains('$') || target.contains('`') {
            return true;
        }
        if HARMLESS_TARGETS.contains(&target) {
            return false;
        }
        let path = PathBuf::from(target);
        let absolute = if path.is_absolute() {
            path
        } else {
            cwd.join(path)
        };
        match (normalize_lexically(&absolute), normalize_lexically(root)) {
            (Some(target), Some(root)) => target.starts_with(root),
            // A path climbing above `/` names no file of the root.
            (None, _) | (_, None) => false,
        }
    };
    let mut writes = Vec::new();
    for simple in simple_commands(&lex(command)) {
        let mut words = Vec::new();
        let mut tokens = simple.iter();
        while let Some(token) = tokens.next() {
            match token {
                Token::Word(word) => words.push(word.as_str()),
                Token::Redirect(op) => {
                    let Some(Token::Word(target)) = tokens.next() else {
                        continue;
                    };
                    let duplicates = op.ends_with('&') || target.starts_with('&');
                    if op.contains('>') && !duplicates && inside(target) {
                        writes.push(format!("redirection `{op}` into `{target}`"));
                    }
                }
                Token::Separator => {}
            }
        }
        if let Some(write) = writing_program(&words, &inside) {
            writes.push(write);
        }
    }
    writes
}

/// The write a simple command's program visibly makes inside the root, if any.
fn writing_program(words: &[&str], inside: &dyn Fn(&str) -> bool) -> Option<String> {
    // Skip assignments and wrappers that run the next word as the program.
    let start = words.iter().position(|word| {
        !word.contains('=') && !matches!(*word, "sudo" | "env" | "command" | "exec" | "nohup")
    })?;
    let words = &words[start..];
    let program = Path::new(words[0]).file_name()?.to_str()?;
    let args = &words[1..];
    let operands: Vec<&str> = args
        .iter()
        .copied()
        .filter(|arg| !arg.starts_with('-'))
        .collect();
    // A short option letter, alone or in a cluster (`-i`, `-pi`), or a long option.
    let has_option = |short: char, long: &str| {
        args.iter().any(|arg| match arg.strip_prefix("--") {
            Some(_) => arg.starts_with(long),
            None => arg.starts_with('-') && arg[1..].contains(short),
        })
    };
    match program {
        "sed" | "perl" if has_option('i', "--in-place") => Some(format!("`{program} -i`")),
        "tee" => operands
            .iter()
            .find(|file| inside(file))
            .map(|file| format!("`tee` into `{file}`")),
        "cp" | "mv" | "install" | "ln" => operands
            .last()
            .filter(|target| operands.len() >= 2 && inside(target))
            .map(|target| format!("`{program}` onto `{target}`")),
        "rm" | "truncate" | "touch" => operands
            .iter()
            .find(|file| inside(file))
            .map(|file| format!("`{program}` of `{file}`")),
        "dd" => operands
            .iter()
            .filter_map(|arg| arg.strip_prefix("of="))
            .find(|file| inside(file))
            .map(|file| format!("`dd` into `{file}`")),
        _ if is_interpreter(program) => {
            let code = args
                .windows(2)
                .find(|pair| matches!(pair[0], "-c" | "-e" | "--eval"))
                .map(|pair| pair[1])?;
            writes_in_code(code).then(|| format!("`{program} {}` code that writes files", args[0]))
        }
        _ => None,
    }
}

/// Whether `program` runs code given with `-c` / `-e`.
fn is_interpreter(program: &str) -> bool {
    program.starts_with("python") || matches!(program, "node" | "ruby" | "perl" | "deno" | "bun")
}

/// Whether inline code visibly writes a file.
fn writes_in_code(code: &str) -> bool {
    let opens_for_writing = code.contains("open(")
        && ["'w", "\"w", "'a", "\"a", "'x", "\"x", "'r+", "\"r+"]
            .iter()
            .any(|mode| code.contains(mode));
    opens_for_writing
        || [
            "write_text",
            "write_bytes",
            "writeFile",
            "appendFile",
            "createWriteStream",
            "os.remove",
            "os.rename",
            "shutil.",
            "unlink",
            "File.write",
        ]
        .iter()
        .any(|call| code.contains(call))
}

/// A token of a command line.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    /// A word, quotes removed.
    Word(String),
    /// A redirection operator, with its file descriptor (`>`, `2>>`, `&>`, `<`).
    Redirect(String),
    /// `|`, `;`, `&`, `&&`, `||`, a newline, `(` or `)`.
    Separator,
}

/// The simple commands of `tokens`, split at separators.
fn simple_commands(tokens: &[Token]) -> Vec<&[Token]> {
    tokens
        .split(|token| *token == Token::Separator)
        .filter(|simple| !simple.is_empty())
        .collect()
}

/// `line` as tokens: quotes and backslashes honoured, heredoc bodies skipped.
fn lex(line: &str) -> Vec<Token> {
    let chars: Vec<char> = line.chars().collect();
    let mut tokens = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut heredocs: Vec<String> = Vec::new();
    let mut i = 0;
    let flush = |word: &mut String, in_word: &mut bool, tokens: &mut Vec<Token>| {
        if *in_word {
            tokens.push(Token::Word(std::mem::take(word)));
            *in_word = false;
        }
    };
    while i < chars.len() {
        let c = chars[i];
        match c {
            '\'' => {
                in_word = true;
                i += 1;
                while i < chars.len() && chars[i] != '\'' {
                    word.push(chars[i]);
                    i += 1;
                }
            }
            '"' => {
                in_word = true;
                i += 1;
                while i < chars.len() && chars[i] != '"' {
                    if chars[i] == '\\' && i + 1 < chars.len() {
                        i += 1;
                    }
                    word.push(chars[i]);
                    i += 1;
                }
            }
            '\\' => {
                in_word = true;
                if i + 1 < chars.len() && chars[i + 1] != '\n' {
                    word.push(chars[i + 1]);
                }
                i += 1;
            }
            ' ' | '\t' => flush(&mut word, &mut in_word, &mut tokens),
            '\n' => {
                flush(&mut word, &mut in_word, &mut tokens);
                tokens.push(Token::Separator);
                // Skip the bodies of heredocs opened on the line just ended.
                for delimiter in heredocs.drain(..) {
                    loop {
                        let end = chars[i + 1..]
                            .iter()
                            .position(|c| *c == '\n')
                            .map_or(chars.len(), |at| i + 1 + at);
                        let body_line: String = chars[(i + 1).min(end)..end].iter().collect();
                        i = end;
                        if body_line.trim() == delimiter || i >= chars.len() {
                            break;
                        }
                    }
                }
            }
            '|' | ';' | '(' | ')' => {
                flush(&mut word, &mut in_word, &mut tokens);
                if c == '|' && chars.get(i + 1) == Some(&'|') {
                    i += 1;
                }
                tokens.push(Token::Separator);
            }
            '&' if chars.get(i + 1) != Some(&'>') => {
                flush(&mut word, &mut in_word, &mut tokens);
                if chars.get(i + 1) == Some(&'&') {
                    i += 1;
                }
                tokens.push(Token::Separator);
            }
            '>' | '<' | '&' => {
                // A file descriptor written right before the operator belongs to it.
                let mut op = String::new();
                if in_word && word.chars().all(|d| d.is_ascii_digit()) {
                    op = std::mem::take(&mut word);
                    in_word = false;
                }
                flush(&mut word, &mut in_word, &mut tokens);
                op.push(c);
                while let Some(next) = chars.get(i + 1).copied() {
                    if matches!(next, '>' | '<' | '&' | '|' | '-') && op.len() < 4 {
                        op.push(next);
                        i += 1;
                    } else {
                        break;
                    }
                }
                if op.starts_with("<<") && !op.starts_with("<<<") {
                    // The next word is the heredoc's delimiter.
                    let rest: String = chars[i + 1..].iter().collect();
                    let delimiter: String = rest
                        .trim_start()
                        .split(|c: char| c.is_whitespace() || c == ';' || c == '|')
                        .next()
                        .unwrap_or_default()
                        .chars()
                        .filter(|c| !matches!(c, '\'' | '"' | '\\'))
                        .collect();
                    heredocs.push(delimiter);
                }
                tokens.push(Token::Redirect(op));
            }
            _ => {
                in_word = true;
                word.push(c);
            }
        }
        i += 1;
    }
    flush(&mut word, &mut in_word, &mut tokens);
    tokens
}

#[cfg(test)]
mod tests {
    use super::*;

    fn writes(command: &str) -> Vec<String> {
        visible_shell_writes(command, Path::new("/work/root"), Path::new("/work/root"))
    }

    #[test]
    fn visible_writes_inside_the_root_are_found() {
        for command in [
            "sed -i 's/a/b/' src/a.rs",
            "sed --in-place=.bak s/a/b/ a.txt",
            "echo hi > a.txt",
            "echo hi >> ./notes/a.txt",
            "ls 2> err.log",
            "cat > gen.rs <<'EOF'\nfn main() {}\nEOF",
            "echo hi | tee out.txt",
            "cp /tmp/x a.txt",
            "mv a.txt b.txt",
            "python3 -c \"open('a.txt', 'w').write('x')\"",
            "node -e \"require('fs').writeFileSync('a.txt', 'x')\"",
            "perl -pi -e 's/a/b/' a.txt",
            "rm a.txt",
            "echo x > \"$OUT\"",
        ] {
            assert!(!writes(command).is_empty(), "{command:?} should be refused");
        }
    }

    #[test]
    fn reading_and_writing_outside_the_root_are_left_alone() {
        for command in [
            "cat a.txt | grep x",
            "ls -la 2>&1",
            "cargo test > /dev/null 2>&1",
            "echo hi > /tmp/scratch.txt",
            "grep -r 'a > b' src",
            "cat <<EOF\nx > y.txt\nEOF",
            "python3 -c 'print(1)'",
            "cp a.txt /tmp/a.txt",
            "git status && git diff",
        ] {
            assert_eq!(writes(command), Vec::<String>::new(), "{command:?}");
        }
    }
}
