//! How precise the literal prefilter is for one pattern on one tree: prints
//! `searched=N kept=K matching=M searched_bytes=… kept_bytes=… matching_bytes=…` — files of the
//! language searched, files the prefilter keeps for parsing, and files the preview changes (those
//! that really match), and the bytes of each.
//!
//! Run: `cargo run --release -p resolve-edit --example prefilter_census -- ROOT LANG PATTERN`
//! (`bench/run.py` does, for each row). The preview writes its blobs under `ROOT/.resolve/`.

use std::process::ExitCode;

use resolve_edit::{AstEditRequest, EditError, Workspace, prefilter_census};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [root, lang, pattern] = args.as_slice() else {
        eprintln!("usage: prefilter_census ROOT LANG PATTERN");
        return ExitCode::from(2);
    };
    let request = AstEditRequest::new(&[(pattern.as_str(), "")], &["."], Some(lang.as_str()));
    let census = Workspace::open(root)
        .map_err(EditError::from)
        .and_then(|workspace| prefilter_census(&workspace, &request));
    match census {
        Ok(census) => {
            println!(
                "searched={} kept={} matching={} searched_bytes={} kept_bytes={} matching_bytes={}",
                census.searched,
                census.kept,
                census.matching,
                census.searched_bytes,
                census.kept_bytes,
                census.matching_bytes
            );
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("prefilter_census: {error}");
            ExitCode::FAILURE
        }
    }
}
