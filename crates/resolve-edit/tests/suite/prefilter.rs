//! The literal prefilter of `ast_edit` never drops a match: a preview with
//! [`Prefilter::Literals`] (the default) changes exactly the files, and exactly the bytes, that
//! one parsing every file ([`Prefilter::Off`]) changes. Checked on generated sources (comments,
//! trailing commas and newlines between tokens, strings holding the tokens, nested matches, in
//! Rust, Python and TypeScript, with method chains and names right after a `.`, `::`, `..` or
//! `...`, and TypeScript names in strings, comments and templates) and on real code: this
//! repository's crates, tokio's sources when the cargo registry has them, the Python standard
//! library and puppeteer-core's TypeScript sources (from the npm directory CI installs).

#![expect(
    clippy::unwrap_used,
    reason = "test helpers outside #[test] functions fail the test by panicking"
)]

use std::collections::BTreeMap;
use std::path::Path;

use pretty_assertions::assert_eq;
use proptest::prelude::*;
use resolve_edit::{
    AstEditOutcome, AstEditRequest, Blobs, Prefilter, PrefilterCensus, Workspace, prefilter_census,
    preview_ast_edit_with,
};

use super::common::workspace_holding;

/// What a preview changed: each changed file's new text and replacements.
type Changes = BTreeMap<String, (String, usize)>;

fn request(ops: &[(&str, &str)], lang: Option<&str>) -> AstEditRequest {
    AstEditRequest::new(ops, &["."], lang)
}

/// The files the preview of `request` changes, and how.
fn changes(ws: &Workspace, request: &AstEditRequest, prefilter: Prefilter) -> Changes {
    let outcome = preview_ast_edit_with(ws, request, None, prefilter).unwrap();
    let AstEditOutcome::Preview(preview) = outcome else {
        return Changes::new();
    };
    let blobs = Blobs::of(ws);
    let mut changes = Changes::new();
    for (path, change) in preview.change_set.load().unwrap().files() {
        let content = change.new_content().unwrap();
        let text = String::from_utf8(blobs.read(content).unwrap().into_owned()).unwrap();
        changes.insert(path.to_owned(), (text, change.replacements()));
    }
    changes
}

/// Changes with the prefilter and without it, for one request on one workspace.
fn both(ws: &Workspace, request: &AstEditRequest) -> (Changes, Changes) {
    let filtered = changes(ws, request, Prefilter::Literals);
    let everything = changes(ws, request, Prefilter::Off);
    (filtered, everything)
}

// ---------------------------------------------------------------------------------------------
// generated sources

/// What may come between two tokens: nothing, whitespace, newlines, comments.
fn gap() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        "",
        " ",
        "\n",
        "\n    ",
        "\r\n\t",
        " /* c */ ",
        "/* mem::replace(a, b) Poll::Ready(v) */",
        " /* nested /* as */ words */ ",
        " // a line comment with words\n",
    ])
}

/// Python has no block comments, and a newline ends a statement outside brackets.
fn python_gap() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec!["", " ", "\\\n  ", " \\\n"])
}

fn comma() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec!["", ","])
}

/// One Rust statement: a match, a match split by gaps, a decoy or a string holding the tokens.
fn rust_statement() -> impl Strategy<Value = String> {
    (0..35usize, gap(), gap(), gap(), comma()).prop_map(|(kind, g1, g2, g3, comma)| match kind {
        0 => format!("let x = mem{g1}::{g2}replace({g3}&mut a, b{comma});"),
        1 => format!("let x = std::mem::replace(&mut a,{g1}b);"),
        2 => format!("return Poll{g1}::{g2}Ready({g3}v{comma});"),
        3 => format!("let y = x{g1}.{g2}unwrap{g3}();"),
        4 => "let s = \"mem::replace(a, b) Poll::Ready(v) x.unwrap()\";".to_owned(),
        5 => format!("let n = Poll::Ready(Poll::{g1}Ready(x.unwrap(){g2}.unwrap()));"),
        6 => "// mem::replace(a, b) and Poll::Ready(v)".to_owned(),
        7 => format!("let z = replace(mem,{g1}x); s.replace(1, 2);"),
        8 => format!("let w = r#\"Poll::Ready({g1})\"#; let mem = 1;"),
        9 => format!("foo(a,{g1}b{comma}); foo(a{g2}, b);"),
        10 => format!("let t = mem::replace(&mut a, mem::replace(&mut b,{g1}c));"),
        // Lines starting with `//`: comments, or code after a string or comment ends.
        12 => "/// let d = mem::replace(&mut a, b).unwrap(); Poll::Ready(d)".to_owned(),
        13 => format!("let s = \"a\n// \"; x{g1}.unwrap(); let q = Poll::Ready(1);"),
        14 => format!("/* a\n  // b */ mem::replace({g1}&mut a, b);"),
        15 => "let s = r#\"\n// x.unwrap() mem::replace(a, b)\n\"#;".to_owned(),
        // Method chains over lines and comments, and calls that only look like one.
        16 => format!("let q = x{g1}.foo(){g2}.{g3}bar();"),
        17 => format!("x.foo();{g1}y.bar();"),
        18 => format!("let q = x.foo(1){g1}.bar(); let r = x.foo().baz(){g2}.bar();"),
        19 => format!("let q = x.foo(){g1}?.bar(); let p = (x.foo()){g2}.bar(x.foo());"),
        // A node with trailing children the pattern lacks.
        20 => format!("foo(if c {{ 1 }}{g1}else {{ 2 }}, z{comma});"),
        // Identifiers that start or end with a pattern's.
        21 => format!(
            "let u = x.unwrap_or(1){g1}.try_unwrap(); mem::replace_all(a, b); mymem::replace(a, b);"
        ),
        // A pattern's first name right after a qualifier (`::`, `.`) or a range's `..`.
        22 => format!("let r = ..mem::replace(&mut a,{g1}b); let s = (a..Poll::Ready(v));"),
        23 => format!("let q = task::Poll::{g1}Ready(v); let p = self.x.foo().bar();"),
        24 => format!("let o = x.0.foo(){g1}.bar(); let m = std::mem::replace; s.foo(a, b);"),
        // Names inside comments and literals holding quotes, and real matches after char
        // literals, lifetimes and raw strings.
        25 => "/// let a = \"1\".parse::<u8>().unwrap(); Poll::Ready(\"v\")".to_owned(),
        26 => format!("let c = '\"'; let d = x{g1}.unwrap(); let e = '\\'';"),
        27 => {
            format!("let s: &'static str = x{g1}.unwrap(); 'l: loop {{ mem::replace(&mut a, b); }}")
        }
        28 => format!("let r = r#\"a \" x.unwrap() \"#; let t = b'\\''; Poll::Ready({g1}v);"),
        29 => format!("/* \" /* x.unwrap() */ \" */ let u = \"\\\"\"; y{g1}.unwrap();"),
        // Brackets in literals and comments between a call's brackets, and calls whose
        // brackets close before a later one.
        30 => format!("let q = x.foo(\")\", [1, (2)]){g1}.bar(); let r = x.foo(')').bar();"),
        31 => format!("let s = x.foo(a /* ) */, b{comma}){g1}.bar(); x.foo(c); y(d).bar();"),
        32 => format!("let t = x.foo(g(a)).h(b){g1}.bar(); x.foo(r\"(\"{g2}).bar();"),
        // One argument whose own commas follow a closure's `|` or a turbofish's `<`.
        33 => format!("let u = x.foo(|a, b| {{ (a, b) }}){g1}.bar();"),
        34 => "x.foo(f::<A, B>()); x.bar(a, b);".to_owned(),
        _ => format!("let c = a{g1}as{g2}u32;"),
    })
}

fn rust_file() -> impl Strategy<Value = String> {
    prop::collection::vec(rust_statement(), 0..6)
        .prop_map(|statements| format!("fn f() {{\n    {}\n}}\n", statements.join("\n    ")))
}

fn python_statement() -> impl Strategy<Value = String> {
    (0..21usize, python_gap(), gap(), comma()).prop_map(|(kind, g1, g2, comma)| {
        let g2 = g2.replace("/*", "#").replace("*/", "\n");
        match kind {
            0 => format!("x = foo{g1}.bar(a, b{comma})"),
            1 => format!("x = (foo{g2}.{g2}bar(a,{g2}b{comma}))"),
            2 => "s = \"foo.bar(a, b)\"".to_owned(),
            3 => "# foo.bar(a, b)".to_owned(),
            4 => format!("y = bar.foo(a){g1}"),
            5 => format!("print(foo.bar(foo.bar(1, 2), 3){g1})"),
            6 => format!("w = (a\n    // foo.bar(1,{g2}2))"),
            8 => format!("y = (x{g2}.foo(){g2}.bar())"),
            9 => format!("x.foo(){g1}\ny.bar()"),
            10 => format!("q = x.foo(1).bar(){g1}\nr = x.foo().baz().bar()"),
            // A pattern's first name right after a `.`, or on the line after a float's.
            11 => format!("y = a.foo.bar(1, 2{comma}){g1}"),
            12 => format!("y = 1.\nfoo.bar(1,{g2}2)"),
            13 => format!("z = a.x.foo(){g1}.bar()"),
            // Brackets in strings and comments between a call's brackets, calls whose
            // brackets close before a later one, f-strings, one argument or more.
            14 => format!("q = x.foo(\")\", [a, (b)]){g1}.bar() + d.get(')')"),
            15 => format!("r = (x.foo('(',{g2}a{comma})\n  .bar()) + d.get(a, b{comma})"),
            16 => format!("s = x.foo(f\"{{a(b)}}\"){g1}.bar()\nx.foo(c)\ny(d).bar() + d.get()"),
            17 => format!("t = x.foo(r'\\\\', [c]){g1}.bar(d.get(k))"),
            18 => "u = d.get(lambda a, b: 0)".to_owned(),
            // A member's name, one word, or more than one.
            19 => format!("self.x{g1}.append(1)\nself.x.y.append(2)\nself.x().append(3)"),
            20 => format!("v = (self\n  .é{g2}.append(4))\nself.append(5)"),
            _ => format!("z = a{g1}in b"),
        }
    })
}

fn python_file() -> impl Strategy<Value = String> {
    prop::collection::vec(python_statement(), 0..6).prop_map(|lines| lines.join("\n") + "\n")
}

fn typescript_statement() -> impl Strategy<Value = String> {
    (0..25usize, gap(), gap(), comma()).prop_map(|(kind, g1, g2, comma)| match kind {
        0 => format!("foo{g1}.{g2}bar(a, b{comma});"),
        1 => format!("let a = foo.bar(1){g1}"),
        2 => "const s = `foo.bar(${x})`;".to_owned(),
        3 => format!("console{g1}.log(a,{g2}b{comma})"),
        4 => "/* foo.bar(a, b) */ let q = 1;".to_owned(),
        5 => format!("const v = x as{g1}number;"),
        6 => format!("const t = `a\n// ${{foo.bar(a,{g1}b)}}`;"),
        8 => format!("x{g1}.foo(){g2}.bar();"),
        9 => format!("x.foo();{g1}y.bar();"),
        10 => format!("x.foo(1).bar(); x.foo().baz(){g1}.bar(); x.foo()?.bar();"),
        // A pattern's first name right after a `.` or `?.`, or a spread's `...`.
        11 => format!("f(...foo.bar(1,{g1}2));"),
        12 => format!("this.foo.bar(1, 2); a?.foo.bar(3,{g1}4);"),
        13 => format!("const r = [...console.log(1)];{g1}w.console.log(2{comma});"),
        // Names in strings, comments and templates; code in substitutions and after a regular
        // expression that holds a quote.
        14 => format!("/** foo.bar(a, b) 'it */ x.foo(){g1}.bar();"),
        15 => format!("const u = 'foo.bar(1, 2)' + `${{foo.bar(1,{g1}2)}} foo.bar(3, 4)`;"),
        16 => format!("s.replace(/'/g, \"\"); foo.bar(5,{g1}6);"),
        17 => format!("const t = `x ${{ {{k: console.log(7)}}.k }} '${{'}}'}}' y`;{g1}"),
        18 => format!("const d = a / b; console.log(8) // '{g1}"),
        // Brackets in strings, comments, templates and regular expressions between a call's
        // brackets, and calls whose brackets close before a later one.
        19 => format!("x.foo(\")\", [a, (b)]){g1}.bar(); x.foo(`${{a(')')}}`).bar();"),
        20 => format!("x.foo(a /* ) */, b{comma}){g1}.bar(); x.foo(c); y(d).bar();"),
        21 => format!("x.foo(/[(]/){g1}.bar(); x.foo(a).baz(b).bar();"),
        22 => "x.foo(g<A, B>(c));".to_owned(),
        23 => format!("this.a{g1}.push(1); this.$b.push(2); this.a.b.push(3); this.push(4);"),
        _ => format!("foo.bar(foo.bar(1,{g1}2), 3);"),
    })
}

fn typescript_file() -> impl Strategy<Value = String> {
    prop::collection::vec(typescript_statement(), 0..6).prop_map(|lines| lines.join("\n") + "\n")
}

/// Patterns with adjacent tokens, meta-variables at the start, middle and end, `$$$`, method
/// chains, nested calls, keywords.
const RUST_OPS: &[(&str, &str)] = &[
    ("$X.foo().bar()", "$X.baz()"),
    ("$X.foo($$$A).bar()", "$X.baz($$$A)"),
    ("$X.foo($A)", "$X.baz($A)"),
    ("x.foo().$M()", "x.$M()"),
    ("$X.foo().bar($$$)", "1"),
    ("foo(if $C { 1 }, z)", "foo($C, z)"),
    ("mem::replace($A, $B)", "std::mem::take($A)"),
    ("Poll::Ready($V)", "Poll::Ready(Some($V))"),
    ("$X.unwrap()", "$X.expect(\"x\")"),
    ("foo(a, b)", "foo(b, a)"),
    ("$A as u32", "u32::from($A)"),
    ("let $A = mem::replace($B, $C);", "drop($B);"),
    ("std::mem::replace($A, $B)", "swap($A, $B)"),
];
const PYTHON_OPS: &[(&str, &str)] = &[
    ("$X.foo().bar()", "$X.baz()"),
    ("$X.foo($$$A).bar()", "$X.baz($$$A)"),
    ("$X.get($K)", "$X[$K]"),
    ("self.$A.append($B)", "self.$A.add($B)"),
    ("x.foo().$M()", "x.$M()"),
    ("foo.bar($A, $B)", "baz($A)"),
    ("x = foo.bar($$$A)", "x = 1"),
    ("$A in b", "b.has($A)"),
];
const TYPESCRIPT_OPS: &[(&str, &str)] = &[
    ("$X.foo().bar()", "$X.baz()"),
    ("$X.foo($$$A).bar()", "$X.baz($$$A)"),
    ("$X.foo($A)", "$X.baz($A)"),
    ("this.$A.push($B)", "this.$A.add($B)"),
    ("foo.bar($A, $B)", "baz($A)"),
    ("let $A = foo.bar($B);", "const $A = 2;"),
    ("console.log($$$A)", "log($$$A)"),
    ("$X as number", "Number($X)"),
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn the_prefilter_changes_what_parsing_every_file_changes(
        rust in prop::collection::vec(rust_file(), 1..4),
        python in prop::collection::vec(python_file(), 1..3),
        typescript in prop::collection::vec(typescript_file(), 1..3),
    ) {
        let mut files = Vec::new();
        files.extend(rust.into_iter().enumerate().map(|(i, text)| (format!("r{i}.rs"), text)));
        files.extend(python.into_iter().enumerate().map(|(i, text)| (format!("p{i}.py"), text)));
        files.extend(
            typescript.into_iter().enumerate().map(|(i, text)| (format!("t{i}.ts"), text)),
        );
        let pairs: Vec<(&str, &[u8])> = files
            .iter()
            .map(|(path, text)| (path.as_str(), text.as_bytes()))
            .collect();
        let (_dir, ws) = workspace_holding(&pairs);
        for (ops, lang) in [(RUST_OPS, "rust"), (PYTHON_OPS, "python"), (TYPESCRIPT_OPS, "ts")] {
            for op in ops {
                let (filtered, everything) = both(&ws, &request(&[*op], Some(lang)));
                prop_assert_eq!(filtered, everything, "pattern {}", op.0);
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// real code

/// Patterns for real Rust code: selective, medium and dense ones, adjacent tokens, keywords,
/// meta-variables between tokens, macros.
const CORPUS_OPS: &[(&str, &str)] = &[
    ("mem::replace($A, $B)", "std::mem::take($A)"),
    ("Poll::Ready($V)", "Poll::Ready(Some($V))"),
    ("$X.unwrap()", "$X.expect(\"x\")"),
    ("Ok(())", "Ok(((),))"),
    ("Arc::new($A)", "Arc::from($A)"),
    ("$A as usize", "usize::from($A)"),
    ("self.$F.take()", "None"),
    ("$X.lock().unwrap()", "$X.lock()"),
    ("Poll::Ready(Ok($V))", "Poll::Ready($V)"),
    ("matches!($A, $B)", "true"),
    ("unsafe { $$$B }", "{ $$$B }"),
    ("$X.iter().map($F)", "$X.map($F)"),
    ("$X.as_ref().unwrap()", "$X.unwrap()"),
    ("$X.into_iter().collect()", "$X"),
    ("$X.borrow_mut().$M($$$A)", "$X.$M($$$A)"),
];

/// Copy every `.rs` file under `from` to `to` (the preview writes its blobs under the root).
fn copy_rust_files(from: &Path, to: &Path) -> usize {
    copy_files(from, to, "rs", true)
}

/// Copy the files named `*.{extension}` in `from` (and, with `deep`, below it) to `to`.
fn copy_files(from: &Path, to: &Path, extension: &str, deep: bool) -> usize {
    let mut copied = 0;
    let Ok(entries) = std::fs::read_dir(from) else {
        return 0;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name();
        if path.is_dir() {
            if deep && name != "target" && name != ".resolve" {
                copied += copy_files(&path, &to.join(&name), extension, deep);
            }
        } else if path.extension().is_some_and(|ext| ext == extension) {
            std::fs::create_dir_all(to).unwrap();
            std::fs::copy(&path, to.join(&name)).unwrap();
            copied += 1;
        }
    }
    copied
}

/// The prefilter changes what parsing every file changes for each of `ops` in `lang` on the
/// real code copied into `dir` (`files` of it), and at least half the patterns match somewhere
/// (the comparison means something only where they do).
fn assert_prefilter_changes_what_parsing_changes(
    dir: &Path,
    files: usize,
    ops: &[(&str, &str)],
    lang: &str,
) {
    assert!(files > 50, "only {files} {lang} files found");
    let ws = Workspace::open(dir).unwrap();
    let mut changed_somewhere = 0;
    for op in ops {
        let (filtered, everything) = both(&ws, &request(&[*op], Some(lang)));
        assert_eq!(filtered, everything, "pattern {}", op.0);
        changed_somewhere += usize::from(!everything.is_empty());
    }
    assert!(
        changed_somewhere >= ops.len() / 2,
        "only {changed_somewhere} patterns matched"
    );
}

#[test]
fn on_real_code_the_prefilter_changes_what_parsing_every_file_changes() {
    let dir = tempfile::tempdir().unwrap();
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files = copy_rust_files(&crates, &dir.path().join("crates"));
    if let Some(tokio) = resolve_test_support::registry_tokio() {
        files += copy_rust_files(&tokio, &dir.path().join("tokio"));
    }
    assert_prefilter_changes_what_parsing_changes(dir.path(), files, CORPUS_OPS, "rust");
}

/// Patterns for real Python code: method chains, meta-variables at the start and the end, one
/// argument, brackets around `$$$`.
const PYTHON_CORPUS_OPS: &[(&str, &str)] = &[
    ("$X.strip().split($$$A)", "$X.split($$$A)"),
    ("$X.encode().decode()", "$X"),
    ("self.$A.append($B)", "self.$A.add($B)"),
    ("$X.items()", "$X.pairs()"),
    ("os.path.join($$$A)", "join($$$A)"),
    ("$X.lower().startswith($P)", "$X.startswith($P)"),
    ("$X.get($K)", "$X[$K]"),
    ("$X.setdefault($$$A).append($V)", "$X.add($V)"),
    ("$X.join($$$A).strip()", "$X.strip()"),
];

#[test]
fn on_real_python_the_prefilter_changes_what_parsing_every_file_changes() {
    let dir = tempfile::tempdir().unwrap();
    let files = copy_files(
        &resolve_test_support::python_stdlib(),
        &dir.path().join("stdlib"),
        "py",
        false,
    );
    assert_prefilter_changes_what_parsing_changes(dir.path(), files, PYTHON_CORPUS_OPS, "python");
}

/// Patterns for real TypeScript code: method calls whose names its doc comments and strings
/// also hold.
const TYPESCRIPT_CORPUS_OPS: &[(&str, &str)] = &[
    ("$X.emit($$$A)", "emit($X, $$$A)"),
    ("$X.push($V)", "$X.add($V)"),
    ("$X.on($E, $F)", "$X.once($E, $F)"),
    ("$X.map($F)", "$X.flatMap($F)"),
    ("$X.then($$$A)", "$X.after($$$A)"),
    ("await $X.close()", "$X.drop()"),
];

#[test]
fn on_real_typescript_the_prefilter_changes_what_parsing_every_file_changes() {
    // puppeteer-core's sources, from the npm directory CI installs for the browser tests.
    let Some(sources) = resolve_test_support::installed_npm_dir("puppeteer-core/src") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let files = copy_files(&sources, &dir.path().join("src"), "ts", true);
    assert_prefilter_changes_what_parsing_changes(dir.path(), files, TYPESCRIPT_CORPUS_OPS, "ts");
}

#[test]
fn the_census_counts_the_files_and_bytes_searched_kept_and_matching() {
    let matching = "fn a() { x.unwrap(); }\n";
    // Inside a macro's token tree: kept (the tokens are code), but no match there.
    let in_vain = "fn b() { m! { y.unwrap() } }\n";
    let without = "fn c() {}\n";
    let (_dir, ws) = workspace_holding(&[
        ("a.rs", matching.as_bytes()),
        ("b.rs", in_vain.as_bytes()),
        ("c.rs", without.as_bytes()),
    ]);
    let census = prefilter_census(&ws, &request(&[("$X.unwrap()", "$X")], Some("rust"))).unwrap();
    let bytes = |texts: &[&str]| texts.iter().map(|text| text.len() as u64).sum::<u64>();
    assert_eq!(
        census,
        PrefilterCensus {
            searched: 3,
            kept: 2,
            matching: 1,
            searched_bytes: bytes(&[matching, in_vain, without]),
            kept_bytes: bytes(&[matching, in_vain]),
            matching_bytes: bytes(&[matching]),
        }
    );
}
