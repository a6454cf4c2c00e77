#!/usr/bin/env python3
"""Benchmark `resolve ast-edit` / `resolve apply` against the `ast-grep` CLI.

Usage:  python3 bench/run.py [--corpus tokio|registry|python|typescript|DIR] [--lang L] [--runs N] ...

The corpora (each a fixed version, fetched from a package registry when it is not at hand):

  tokio       tokio's `src/` from the cargo registry (the newest tokio-1.* there; `cargo fetch`
              brings one when there is none), four copies side by side; Rust
  registry    the crate sources already in the local cargo registry (~/.cargo/registry/src),
              whole crate directories in name order until their `.rs` files reach
              `--corpus-mb` MB (the default corpus; a generated tree without a registry); Rust
  python      Django 5.1.4's `django/` package, from its PyPI sdist; Python
  typescript  rxjs 7.8.1's `src/` from npm, four copies side by side; TypeScript (a corpus
              tree-sitter parses without errors: ast-grep rewrites files with parse errors,
              resolve skips them, so such files would make the rows unequal)
  DIR         any directory, in the language `--lang` names (default rust)

`.gitignore` files are dropped from the copy, because ast-grep ignores them outside a git
repository while resolve honors them, and both tools must see the same files. Downloads only
those corpora and, when it is missing, `ast-grep-cli==0.51.1` from PyPI into a virtual
environment (the same one CI uses).

Every measurement runs both tools alternately on fresh copies of the corpus, one process at a
time, and reports the median of `--runs` runs: wall time, CPU time (user + system of the child)
and peak RSS (from GNU time, `/usr/bin/time`, when it is there; else wait4). Rows, per corpus:

  preview <shape>     resolve ast-edit (diff + staged pending action) vs ast-grep --json, one
                      row per pattern shape (selective, medium, dense, method chain)
  apply               resolve apply (hash check, journal, write, fsync, rename) of the dense
                      preview vs ast-grep -U (search + write) on the same change

With `--baseline BIN`, each preview row also runs that other `resolve` binary (an earlier build)
in the same alternation and adds its median wall time and the change: the ratios to ast-grep
move with the machine's state from one run to the next, the paired times of two builds less.

Each preview row also says how precise the literal prefilter is: of the files searched, how
many it kept for parsing and how many really match, and the shares of the bytes searched those
hold (what parsing costs follows the bytes; `cargo run --example prefilter_census`), and its
floor: ast-grep's own wall time on only the files that match, in the same alternation, as a
share of its time on the whole tree. Every matching file has to be parsed whole (a file whose
tree has parse errors is skipped, so the whole tree must be known), with the same tree-sitter
parser ast-grep runs, so no preview row can go much below its floor.
With `--scale`, a scaling table follows: resolve preview (dense) on 1x, 4x and 16x the corpus
(copies side by side), with ast-grep on the same tree for reference.
"""


from __future__ import annotations

import argparse
import itertools
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
AST_GREP_VERSION = "0.51.1"
TOKIO_COPIES = 4
DJANGO = "django==5.1.4"
RXJS = "rxjs@7.8.1"
RXJS_COPIES = 4
RUST_DENSE = ("$X.unwrap()", '$X.expect("todo")')
# Each corpus's language, file extension and preview rows: (shape, (pattern, rewrite)). The
# apply row applies the dense one.
ROWS = {
    "tokio": [
        ("selective", ("mem::replace($A, $B)", "std::mem::replace($A, $B)")),
        ("medium", ("Poll::Ready($V)", "Poll::Ready(Ok($V))")),
        ("dense", RUST_DENSE),
    ],
    "rust": [
        ("selective", ("mem::replace($A, $B)", "std::mem::replace($A, $B)")),
        ("method chain", ("$X.as_ref().unwrap()", "$X.unwrap()")),
        ("medium", ("Poll::Ready($V)", "Poll::Ready(Ok($V))")),
        ("dense", RUST_DENSE),
    ],
    "python": [
        ("selective", ("os.path.join($$$A)", "join($$$A)")),
        ("method chain", ("$X.setdefault($$$A).append($V)", "$X.add($V)")),
        ("medium", ("self.$A.append($B)", "self.$A.add($B)")),
        ("dense", ("$X.get($K)", "$X[$K]")),
    ],
    "typescript": [
        ("selective", ("$X.call($$$A)", "$X.apply($$$A)")),
        ("method chain", ("$X.slice($$$A).join($$$B)", "$X.join($$$B)")),
        ("medium", ("isFunction($X)", "typeof $X === 'function'")),
        ("dense", ("$X.subscribe($$$A)", "subscribe($X, $$$A)")),
    ],
}
EXTENSIONS = {"rust": "rs", "python": "py", "typescript": "ts"}


# --- measuring ----------------------------------------------------------------------------


class Sample:
    def __init__(self, wall: float, cpu: float, rss_kb: int):
        self.wall, self.cpu, self.rss_kb = wall, cpu, rss_kb


TIME = Path("/usr/bin/time")


def measure(argv: list[str], cwd: Path | None = None, stdout=subprocess.DEVNULL) -> Sample:
    """Run argv once; wall time, CPU time and peak RSS of that child alone.

    Peak RSS comes from GNU time (`/usr/bin/time -f %M`): the ru_maxrss that wait4 reports for a
    child of this script starts at this script's own peak (Linux carries the peak of the
    memory a process replaces at exec into its rusage), which hides any child smaller than it.
    CPU time comes from wait4, which counts the child's own and that of the children it waited
    for (the tool under GNU time) to the microsecond; GNU time's `%U %S` are rounded down to
    10 ms each, which made a 25 ms run read as 10 ms. It includes GNU time's own start, about
    1 ms, in both tools' rows alike.
    """
    with tempfile.NamedTemporaryFile("r", suffix=".time") as report:
        timed = [str(TIME), "-f", "%M", "-o", report.name, *argv] if TIME.exists() else argv
        started = time.perf_counter()
        proc = subprocess.Popen(timed, cwd=cwd, stdout=stdout, stderr=subprocess.PIPE)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - started
        proc.returncode = os.waitstatus_to_exitcode(status)
        err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
        if proc.returncode != 0:
            sys.exit(f"failed ({proc.returncode}): {' '.join(argv)}\n{err}")
        cpu = usage.ru_utime + usage.ru_stime
        if not TIME.exists():
            return Sample(wall, cpu, usage.ru_maxrss)
        return Sample(wall, cpu, int(report.read().split()[-1]))


def median(samples: list[Sample]) -> Sample:
    return Sample(
        statistics.median(s.wall for s in samples),
        statistics.median(s.cpu for s in samples),
        int(statistics.median(s.rss_kb for s in samples)),
    )


# --- setup --------------------------------------------------------------------------------


def ensure_ast_grep(explicit: str | None) -> str:
    if explicit:
        return explicit
    venv = Path(os.environ.get("RESOLVE_BENCH_VENV", Path.home() / ".cache/resolve-ci-venv"))
    binary = venv / "bin/ast-grep"
    if not binary.exists():
        print(f"installing ast-grep-cli=={AST_GREP_VERSION} into {venv}", file=sys.stderr)
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run(
            [str(venv / "bin/pip"), "install", "--quiet", f"ast-grep-cli=={AST_GREP_VERSION}"],
            check=True,
        )
    version = subprocess.run([str(binary), "--version"], capture_output=True, text=True).stdout
    if AST_GREP_VERSION not in version:
        sys.exit(f"{binary} is {version.strip()}, want {AST_GREP_VERSION}")
    return str(binary)


def ensure_resolve(explicit: str | None, build: bool) -> tuple[str, str]:
    """The resolve binary and the prefilter census example, release builds."""
    target = Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target"))
    if build:
        subprocess.run(
            ["cargo", "build", "--release", "--quiet", "-p", "resolve-cli", "-p", "resolve-edit",
             "--bin", "resolve", "--example", "prefilter_census"], cwd=REPO, check=True
        )
    binary = Path(explicit) if explicit else target / "release/resolve"
    census = target / "release/examples/prefilter_census"
    if not binary.exists():
        sys.exit(f"no release build at {binary}; drop --no-build or pass --resolve")
    if not census.exists():
        sys.exit(f"no prefilter_census example at {census}; drop --no-build, or set "
                 "CARGO_TARGET_DIR to the target directory it was built in")
    return str(binary), str(census)


def rs_bytes(directory: Path, extension: str = "rs") -> int:
    return sum(p.stat().st_size for p in directory.rglob(f"*.{extension}") if p.is_file())


def build_corpus(dest: Path, megabytes: float) -> str:
    """Crate sources from the cargo registry (or a generated tree) into dest."""
    registry = Path.home() / ".cargo/registry/src"
    crates = sorted(
        (c for index in registry.glob("*") if index.is_dir() for c in index.iterdir() if c.is_dir()),
        key=lambda c: c.name,
    ) if registry.is_dir() else []
    dest.mkdir(parents=True)
    total, used = 0, 0
    for crate in crates:
        size = rs_bytes(crate)
        if size == 0:
            continue
        shutil.copytree(crate, dest / crate.name, symlinks=True)
        total += size
        used += 1
        if total >= megabytes * 1e6:
            break
    if used == 0:
        generate_tree(dest, megabytes)
        return f"generated tree ({rs_bytes(dest) / 1e6:.1f} MB of .rs)"
    return f"{used} crates from {registry} ({total / 1e6:.1f} MB of .rs)"


def registry_tokio() -> Path | None:
    """The newest tokio-1.* in the local cargo registry."""
    registry = Path.home() / ".cargo/registry/src"
    found = sorted(
        (c for index in registry.glob("*") for c in index.glob("tokio-1.*") if (c / "src").is_dir()),
        key=lambda c: [int(p) if p.isdigit() else 0 for p in c.name[len("tokio-"):].split(".")],
    )
    return found[-1] if found else None


def tokio_corpus(dest: Path, work: Path) -> str:
    """Four copies of tokio's src/, fetched into the registry first when it is missing."""
    crate = registry_tokio()
    if crate is None:
        manifest = work / "fetch-tokio"
        (manifest / "src").mkdir(parents=True)
        (manifest / "src/lib.rs").write_text("")
        (manifest / "Cargo.toml").write_text(
            '[package]\nname = "fetch-tokio"\nversion = "0.0.0"\nedition = "2021"\n'
            '[dependencies]\ntokio = "1"\n'
        )
        subprocess.run(["cargo", "fetch", "--manifest-path", str(manifest / "Cargo.toml")],
                       check=True)
        crate = registry_tokio()
        if crate is None:
            sys.exit("cargo fetch did not bring tokio into ~/.cargo/registry/src")
    dest.mkdir(parents=True)
    for i in range(TOKIO_COPIES):
        shutil.copytree(crate / "src", dest / f"copy{i}", symlinks=True)
    return f"{crate.name}/src x{TOKIO_COPIES} ({rs_bytes(dest) / 1e6:.1f} MB of .rs)"


def python_corpus(dest: Path, work: Path, ast_grep: str) -> str:
    """Django's `django/` package from its PyPI sdist (pip of the benchmark's venv)."""
    download = work / "download"
    pip = Path(ast_grep).parent / "pip"
    subprocess.run([str(pip), "download", "--quiet", "--no-binary", ":all:", "--no-deps",
                    DJANGO, "-d", str(download)], check=True)
    archive = next(download.glob("*.tar.gz"))
    subprocess.run(["tar", "xzf", str(archive), "-C", str(download)], check=True)
    package = next(download.glob("*/django"))
    shutil.copytree(package, dest, symlinks=True)
    return f"{DJANGO} `django/` ({rs_bytes(dest, 'py') / 1e6:.1f} MB of .py)"


def typescript_corpus(dest: Path, work: Path) -> str:
    """Four copies of rxjs's `src/`, from its npm package."""
    download = work / "download"
    download.mkdir(parents=True, exist_ok=True)
    subprocess.run(["npm", "pack", "--silent", RXJS], cwd=download, check=True,
                   stdout=subprocess.DEVNULL)
    archive = next(download.glob("*.tgz"))
    subprocess.run(["tar", "xzf", str(archive), "-C", str(download)], check=True)
    dest.mkdir(parents=True)
    for i in range(RXJS_COPIES):
        shutil.copytree(download / "package/src", dest / f"copy{i}", symlinks=True)
    return f"{RXJS} `src/` x{RXJS_COPIES} ({rs_bytes(dest, 'ts') / 1e6:.1f} MB of .ts)"


def generate_tree(dest: Path, megabytes: float) -> None:
    n = 0
    while rs_bytes(dest) < megabytes * 1e6:
        d = dest / f"m{n // 50}"
        d.mkdir(exist_ok=True)
        body = []
        for i in range(200):
            body.append(
                f"fn f{i}(x: Option<u32>) -> Poll<u32> {{\n"
                f"    let v = x.unwrap() + {i};\n"
                f"    if v > {i} {{ return Poll::Ready(v); }}\n"
                f"    Poll::Pending\n}}\n"
            )
        (d / f"f{n}.rs").write_text("use std::task::Poll;\n" + "".join(body))
        n += 1


def strip_gitignores(tree: Path) -> None:
    for path in tree.rglob(".gitignore"):
        path.unlink()


# Where set_aside moves what the bench is done with, deleted when the bench ends.
SET_ASIDE: list[Path] = []
SET_ASIDE_NAMES = itertools.count()


def set_aside(path: Path) -> None:
    """Move `path` out of the way instead of deleting it now (the work directory goes when
    the bench ends). On ext4 without a journal (this machine's root: its
    /sys/fs/ext4/<device>/journal_task says `<none>`), a new inode skips every inode freed in
    the last 60 s, or 360 s while its inode-table block is not yet written back (the kernel's
    `recently_deleted`, checked only without a journal), one by one, so a tool that creates
    files (an apply's temp files, a fresh store) would pay for the thousands of files the
    bench itself deleted just before; ast-grep creates none. Measured: an apply of tokio x4
    takes 70-90 ms after a quiet minute, 120-130 ms right after the bench deleted a copy; of
    rxjs x4, 0.10 s once 13 minutes passed, 0.13-0.23 s (over half its CPU in
    `recently_deleted`) within 5 minutes. The deletion at the end still reaches a bench
    started right after: leave six minutes between runs for the apply row."""
    if path.exists():
        SET_ASIDE[0].mkdir(exist_ok=True)
        path.rename(SET_ASIDE[0] / str(next(SET_ASIDE_NAMES)))


def fresh_copy(corpus: Path, dest: Path, copies: int = 1) -> Path:
    """A copy of the corpus at `dest`, written back before anything runs on it: a run that
    syncs a file (resolve stages durably) would otherwise wait for the device to take the
    copy's megabytes too (measured: tokio x4 selective, 34.7 ms on a copy just made, 25.4 ms
    once it is written back)."""
    set_aside(dest)
    if copies == 1:
        shutil.copytree(corpus, dest, symlinks=True)
    else:
        dest.mkdir()
        for i in range(copies):
            shutil.copytree(corpus, dest / f"copy{i}", symlinks=True)
    sync()
    return dest


# --- the rows -----------------------------------------------------------------------------


def resolve_preview(resolve: str, root: Path, pattern: tuple[str, str], lang: str) -> list[str]:
    return [resolve, "--root", str(root), "ast-edit", "-p", pattern[0], "-r", pattern[1],
            "--lang", lang, "."]


def ast_grep_preview(ast_grep: str, root: Path, pattern: tuple[str, str], lang: str) -> list[str]:
    return [ast_grep, "run", "-p", pattern[0], "-r", pattern[1], "--lang", lang,
            "--json=compact", str(root)]


def preview_row(args, resolve, ast_grep, corpus, work, pattern, copies=1, runs=None,
                baseline=None, with_floor=True):
    """Medians of resolve's and ast-grep's runs, of ast-grep's runs on only the files that match
    (None when none does or `with_floor` is false), and of `baseline`'s (another resolve binary)
    when one is given, else None."""
    tree = fresh_copy(corpus, work / "tree", copies)
    matching = list_matching(ast_grep, tree, pattern, args.lang) if with_floor else []
    ours, theirs, floor, base = [], [], [], []
    for _ in range(runs or args.runs):
        set_aside(tree / ".resolve")
        ours.append(measure(resolve_preview(resolve, tree, pattern, args.lang)))
        theirs.append(measure(ast_grep_preview(ast_grep, tree, pattern, args.lang)))
        if matching:
            floor.append(measure([*ast_grep_preview(ast_grep, tree, pattern, args.lang)[:-1],
                                  *matching]))
        if baseline:
            set_aside(tree / ".resolve")
            base.append(measure(resolve_preview(baseline, tree, pattern, args.lang)))
    set_aside(tree)
    return (median(ours), median(theirs), median(floor) if floor else None,
            median(base) if base else None)


def list_matching(ast_grep: str, tree: Path, pattern: tuple[str, str], lang: str) -> list[str]:
    """The files of `tree` that hold a match of the pattern, as ast-grep finds them."""
    listed = subprocess.run([ast_grep, "run", "-p", pattern[0], "--lang", lang, "--json=compact",
                             str(tree)], capture_output=True, text=True)
    if listed.returncode != 0:
        sys.exit(f"ast-grep failed to list the matching files: {listed.stderr}")
    return sorted({found["file"] for found in json.loads(listed.stdout)})


def census(args, corpus: Path, work: Path, pattern: tuple[str, str]) -> str:
    """`kept / matching / searched` files of the prefilter for the pattern, on a copy, and the
    shares of the bytes searched that the kept and the matching files hold."""
    tree = fresh_copy(corpus, work / "census")
    out = subprocess.run(
        [args.census, str(tree), args.lang, pattern[0]], capture_output=True, text=True
    )
    set_aside(tree)
    if out.returncode != 0:
        sys.exit(f"prefilter_census failed: {out.stderr}")
    counts = {key: int(value) for key, value in (item.split("=") for item in out.stdout.split())}
    share = lambda key: counts[key] / max(counts["searched_bytes"], 1)
    return (f"{counts['kept']} / {counts['matching']} / {counts['searched']} "
            f"({share('kept_bytes'):.2f} / {share('matching_bytes'):.2f} of the bytes)")


def apply_row(args, resolve, ast_grep, corpus, work, pattern):
    ours, theirs = [], []
    for run in range(args.runs):
        mine = fresh_copy(corpus, work / "ours")
        measure(resolve_preview(resolve, mine, pattern, args.lang))
        sync()
        ours.append(measure([resolve, "--root", str(mine), "apply", "--reason", "bench"]))
        other = fresh_copy(corpus, work / "theirs")
        theirs.append(measure([ast_grep, "run", "-p", pattern[0], "-r", pattern[1],
                               "--lang", args.lang, "-U", str(other)]))
        if run == 0:
            compare_trees(corpus, mine, other, EXTENSIONS[args.lang])
    return median(ours), median(theirs)


def compare_trees(original: Path, ours: Path, theirs: Path, extension: str) -> None:
    """Every file resolve wrote is byte-identical to ast-grep's; ast-grep may also have
    rewritten files that resolve skips by design (parse errors), which stay original."""
    written = skipped = 0
    for path in theirs.rglob(f"*.{extension}"):
        relative = path.relative_to(theirs)
        mine, before = (ours / relative).read_bytes(), (original / relative).read_bytes()
        theirs_bytes = path.read_bytes()
        if mine == theirs_bytes:
            written += mine != before
        elif mine == before:
            skipped += 1
        else:
            sys.exit(f"resolve apply and ast-grep -U wrote different bytes to {relative}")
    print(f"(apply check: {written} files byte-identical to ast-grep -U; {skipped} files "
          "ast-grep rewrote despite parse errors were skipped by resolve)", file=sys.stderr)


def sync() -> None:
    """Flush the copy's dirty pages so neither tool pays for writing back the other's."""
    os.sync()


# --- output -------------------------------------------------------------------------------


def fmt_row(name: str, ours: Sample, theirs: Sample, files: str = "",
            floor: Sample | None = None, base: Sample | None = None,
            with_base: bool = False) -> str:
    floor_ratio = f"{floor.wall / theirs.wall:.3f}×" if floor else ""
    row = (
        f"| {name} | {files} | {ours.wall:.4f} s | {theirs.wall:.4f} s | **{ours.wall / theirs.wall:.3f}×** "
        f"| {floor_ratio} "
        f"| {ours.cpu:.3f} s | {theirs.cpu:.3f} s | {ours.cpu / theirs.cpu:.2f}× "
        f"| {ours.rss_kb / 1024:.1f} MB | {theirs.rss_kb / 1024:.1f} MB "
        f"| {ours.rss_kb / theirs.rss_kb:.2f}× |"
    )
    if base:
        row += f" {base.wall:.4f} s | {100 * (ours.wall - base.wall) / base.wall:+.1f}% |"
    elif with_base:
        row += "  |  |"
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", default="registry",
                        help="tokio, registry (default), python, typescript, or a directory")
    parser.add_argument("--lang", help="the language of a --corpus DIR (default rust)")
    parser.add_argument("--corpus-mb", type=float, default=16.0,
                        help="size of the registry corpus in MB of .rs (default 16)")
    parser.add_argument("--runs", type=int, default=5, help="runs per row (default 5)")
    parser.add_argument("--scale", default="", help="corpus copies for a scaling table, e.g. 1,4,16")
    parser.add_argument("--scale-runs", type=int, default=3, help="runs per scaling row")
    parser.add_argument("--resolve", help="the resolve binary (default: a release build)")
    parser.add_argument("--no-build", action="store_true", help="do not run cargo build")
    parser.add_argument("--ast-grep", help="the ast-grep binary (default: venv, installed if missing)")
    parser.add_argument("--work", type=Path, help="scratch directory (default: a temp dir)")
    parser.add_argument("--baseline",
                        help="another resolve binary, run alongside on every preview row")
    parser.add_argument("--skip", default="",
                        help="comma list of row shapes to skip (selective, method chain, medium, "
                             "dense) and apply")
    args = parser.parse_args()
    skip = set(filter(None, args.skip.split(",")))

    ast_grep = ensure_ast_grep(args.ast_grep)
    resolve, args.census = ensure_resolve(args.resolve, not args.no_build)
    work = Path(tempfile.mkdtemp(prefix="resolve-bench-", dir=args.work))
    SET_ASIDE.append(work / "set-aside")
    try:
        corpus = work / "corpus"
        if args.corpus == "tokio":
            args.lang, rows = "rust", ROWS["tokio"]
            described = tokio_corpus(corpus, work)
        elif args.corpus == "registry":
            args.lang, rows = "rust", ROWS["rust"]
            described = build_corpus(corpus, args.corpus_mb)
        elif args.corpus == "python":
            args.lang, rows = "python", ROWS["python"]
            described = python_corpus(corpus, work, ast_grep)
        elif args.corpus == "typescript":
            args.lang, rows = "typescript", ROWS["typescript"]
            described = typescript_corpus(corpus, work)
        else:
            args.lang = args.lang or "rust"
            rows = ROWS[args.lang]
            shutil.copytree(args.corpus, corpus, symlinks=True)
            described = f"{args.corpus} ({rs_bytes(corpus, EXTENSIONS[args.lang]) / 1e6:.1f} MB)"
        strip_gitignores(corpus)
        files = sum(1 for _ in corpus.rglob(f"*.{EXTENSIONS[args.lang]}"))
        print(f"corpus: {described}, {files} .{EXTENSIONS[args.lang]} files; "
              f"{os.cpu_count()} cores; median of {args.runs} alternating runs")
        print(f"resolve: {resolve}\nast-grep: {ast_grep}\n")
        baseline = os.path.realpath(args.baseline) if args.baseline else None
        if baseline:
            print(f"baseline: {baseline}\n")
        print("| row | files kept / matching / searched (bytes) | resolve wall | ast-grep wall | ratio "
              "| floor (ast-grep on the matching files) | resolve CPU | ast-grep CPU | ratio | resolve RSS | ast-grep RSS | ratio |"
              + (" baseline wall | change |" if baseline else ""))
        print("|---|---|---|---|---|---|---|---|---|---|---|---|" + ("---|---|" if baseline else ""))
        for name, pattern in rows:
            if name not in skip:
                files = census(args, corpus, work, pattern)
                ours, theirs, floor, base = preview_row(args, resolve, ast_grep, corpus, work,
                                                        pattern, baseline=baseline)
                print(fmt_row(f"preview {name} `{pattern[0]}`", ours, theirs, files, floor, base),
                      flush=True)
        dense = rows[-1][1]
        if "apply" not in skip:
            ours, theirs = apply_row(args, resolve, ast_grep, corpus, work, dense)
            print(fmt_row(f"apply `{dense[0]}` (vs `-U`)", ours, theirs,
                          with_base=bool(baseline)), flush=True)
        if args.scale:
            print(f"\nScaling, preview dense `{dense[0]}` (median of {args.scale_runs}):\n")
            print("| corpus | MB | resolve wall | resolve RSS | ast-grep wall | ast-grep RSS |")
            print("|---|---|---|---|---|---|")
            size = rs_bytes(corpus, EXTENSIONS[args.lang]) / 1e6
            for factor in (int(f) for f in args.scale.split(",")):
                ours, theirs, _, _ = preview_row(args, resolve, ast_grep, corpus, work, dense,
                                                 copies=factor, runs=args.scale_runs,
                                                 with_floor=False)
                print(f"| {factor}× | {size * factor:.0f} | {ours.wall:.2f} s "
                      f"| {ours.rss_kb / 1024:.1f} MB | {theirs.wall:.2f} s "
                      f"| {theirs.rss_kb / 1024:.1f} MB |", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
