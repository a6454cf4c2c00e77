//! The `ast_edit` target: random patterns and rewrites against random source, through
//! `preview_ast_edit` (the producer behind the `ast_edit` tool).

use resolve_edit::{
    AstEditOp, AstEditOutcome, AstEditRequest, Blobs, DEFAULT_MAX_FILES, FileChange,
    NO_REPLACEMENTS, content_hash, is_binary, preview_ast_edit,
};

use crate::fixture::Fixture;

/// Language names with a file extension of that language.
const LANGUAGES: &[(&str, &str)] = &[
    ("rust", "rs"),
    ("python", "py"),
    ("javascript", "js"),
    ("typescript", "ts"),
    ("tsx", "tsx"),
    ("go", "go"),
    ("c", "c"),
    ("cpp", "cpp"),
    ("java", "java"),
    ("json", "json"),
    ("html", "html"),
    ("css", "css"),
    ("yaml", "yaml"),
    ("bash", "sh"),
    ("ruby", "rb"),
    ("lua", "lua"),
    ("php", "php"),
    ("kotlin", "kt"),
    ("swift", "swift"),
    ("csharp", "cs"),
];

/// The field separator of an input (ASCII record separator).
const SEPARATOR: u8 = 0x1e;

/// Preview one `ast_edit` of a one-file workspace.
///
/// Input: fields separated by byte `0x1e`: the language, then pattern and rewrite pairs (a
/// missing last rewrite is empty), then the source. The language is a name (`rust`: the file
/// gets a matching extension and `lang` is passed), `.ext` (the file gets that extension and
/// the language is inferred), or anything else (passed as `lang` for a `.txt` file).
///
/// Invariants: no panic; nothing is written; a preview changes exactly the one file, records
/// the source's hash as its base, changes its text, keeps a leading byte-order mark, and is
/// never made from a binary source; zero matches say `No replacements made`.
pub fn ast_edit(data: &[u8]) {
    let fields: Vec<&[u8]> = data.split(|byte| *byte == SEPARATOR).collect();
    let [lang, middle @ .., source] = fields.as_slice() else {
        return;
    };
    if middle.is_empty() {
        return;
    }
    let Ok(lang) = std::str::from_utf8(lang) else {
        return;
    };
    let mut ops = Vec::new();
    for pair in middle.chunks(2) {
        let (Ok(pat), Ok(out)) = (
            std::str::from_utf8(pair[0]),
            std::str::from_utf8(pair.get(1).copied().unwrap_or_default()),
        ) else {
            return;
        };
        ops.push(AstEditOp {
            pat: pat.to_owned(),
            out: out.to_owned(),
        });
    }
    let (file, lang) = match LANGUAGES.iter().find(|(name, _)| *name == lang) {
        Some((name, ext)) => (format!("f.{ext}"), Some((*name).to_owned())),
        None => match lang.strip_prefix('.') {
            Some(ext) if !ext.is_empty() && ext.chars().all(|c| c.is_ascii_alphanumeric()) => {
                (format!("f.{ext}"), None)
            }
            Some(_) | None => ("f.txt".to_owned(), Some(lang.to_owned())),
        },
    };
    let fixture = Fixture::new(&[(file.as_str(), source)]);
    let before = fixture.snapshot();
    let request = AstEditRequest {
        ops,
        paths: vec![file.clone()],
        lang,
    };
    let outcome = preview_ast_edit(&fixture.workspace(), &request, Some(DEFAULT_MAX_FILES));
    assert_eq!(
        fixture.snapshot(),
        before,
        "a preview wrote to the workspace"
    );
    fixture.assert_outside_untouched();
    match outcome {
        Err(error) => assert!(!error.to_string().is_empty()),
        Ok(AstEditOutcome::NoReplacements { text }) => {
            assert!(text.starts_with(NO_REPLACEMENTS), "{text}");
        }
        Ok(AstEditOutcome::Preview(preview)) => {
            assert!(!is_binary(source), "a binary source was rewritten");
            let change_set = preview
                .change_set
                .load()
                .expect("a preview's change set reads back from its spool");
            assert_eq!(change_set.paths(), std::slice::from_ref(&file));
            let Some(FileChange::Update {
                base_hash,
                content,
                replacements,
                ..
            }) = change_set.get(&file)
            else {
                panic!("an ast_edit preview must update its file");
            };
            assert_eq!(base_hash, &content_hash(source), "wrong base hash");
            let blobs = Blobs::of(&fixture.workspace());
            let content = blobs
                .read(content)
                .expect("a preview's content reads back from the blob store")
                .into_owned();
            assert_ne!(content, *source, "a preview that changes nothing");
            assert!(*replacements >= 1);
            if source.starts_with("\u{feff}".as_bytes()) {
                assert!(
                    content.starts_with("\u{feff}".as_bytes()),
                    "the BOM was lost"
                );
            }
            let text = blobs
                .read_text(&preview.text)
                .expect("a preview's text reads back from the blob store");
            assert!(text.starts_with(resolve_edit::PREVIEW_BANNER));
        }
    }
}
