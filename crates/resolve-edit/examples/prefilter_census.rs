//! How precise the literal prefilter is for one pattern on one tree: prints
//! `searched=N kept=K matching=M` — files of the language searched, files the prefilter keeps
//! for parsing, and files the preview changes (those that really match).
//!
//! Run: `cargo run --release -p resolve-edit --example prefilter_census -- ROOT LANG PATTERN`
//! (`bench/run.py` does, for each row). The preview writes its blobs under `ROOT/.resolve/`.

use std::process::ExitCode;

use resolve_edit::{
    AstEditOp, AstEditOutcome, AstEditRequest, Workspace, prefilter_census, preview_ast_edit,
};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [root, lang, pattern] = args.as_slice() else {
        eprintln!("usage: prefilter_census ROOT LANG PATTERN");
        return ExitCode::from(2);
    };
    let request = AstEditRequest {
        ops: vec![AstEditOp {
            pat: pattern.clone(),
            out: String::new(),
        }],
        paths: vec![".".to_owned()],
        lang: Some(lang.clone()),
    };
    let result = Workspace::open(root)
        .map_err(resolve_edit::EditError::from)
        .and_then(|workspace| {
            let census = prefilter_census(&workspace, &request)?;
            let matching = match preview_ast_edit(&workspace, &request, None)? {
                AstEditOutcome::Preview(preview) => preview.change_set.load()?.files().count(),
                AstEditOutcome::NoReplacements { .. } => 0,
            };
            Ok((census, matching))
        });
    match result {
        Ok((census, matching)) => {
            println!(
                "searched={} kept={} matching={matching}",
                census.searched, census.kept
            );
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("prefilter_census: {error}");
            ExitCode::FAILURE
        }
    }
}
