#!/usr/bin/env python3
"""Write crates/resolve-cli/code-order.txt: the functions the main commands of `resolve` run,
hottest first, which the linker lays out first and next to each other (see the crate's build.rs).

    python3 scripts/code_order.py [--resolve target/release/resolve]
    python3 scripts/code_order.py --check [--resolve ...]   # how much of the list the binary has

Runs previews in Rust (this repository's sources), Python (the standard library of the python3
running this) and TypeScript (generated here), one with --json, then list, show and apply, and
--version, each under valgrind's callgrind, and keeps every function of the binary that ran,
by the instructions it ran. Functions the program picks by CPU feature at run time are added
beside the ones valgrind's CPU made it pick (SHA-256 with the SHA extensions, which valgrind
lacks). Needs valgrind. Rebuild the release binary afterwards.
"""

import argparse
import collections
import glob
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
ORDER = REPO / "crates/resolve-cli/code-order.txt"

# Symbols (as regular expressions over mangled names) run instead of ones callgrind sees.
RUN_TIME_VARIANTS = [r"sha2.*sha256.*x86.*digest_blocks"]

TYPESCRIPT = """\
import { Observable, Subscription } from './types';

/**
 * Subscribes to `source` and logs each value: `source.subscribe((v) => log(v))`.
 */
export function watch<T>(source: Observable<T>, log: (value: T) => void): Subscription {
  const label = `watch ${source.name ?? 'anonymous'}`;
  const subscription = source.subscribe({
    next: (value: T) => log(value),
    error: (err: unknown) => console.error(label, err),
  });
  return subscription;
}

export class Counter {
  private count = 0;
  constructor(private readonly step: number = 1) {}
  increment(): number {
    this.count += this.step;
    return this.count / 2;
  }
}
"""


def tree_of(files: dict[str, bytes], root: Path) -> Path:
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)
    return root


def rust_tree(root: Path) -> Path:
    files = {}
    for path in sorted((REPO / "crates").glob("*/src/**/*.rs")):
        files[str(path.relative_to(REPO / "crates"))] = path.read_bytes()
    return tree_of(files, root)


def python_tree(root: Path) -> Path:
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    files = {p.name: p.read_bytes() for p in sorted(stdlib.glob("*.py"))[:60]}
    return tree_of(files, root)


def typescript_tree(root: Path) -> Path:
    files = {f"src/m{i}.ts": TYPESCRIPT.replace("Counter", f"Counter{i}").encode() for i in range(40)}
    return tree_of(files, root)


def runs(resolve: str, work: Path) -> list[list[str]]:
    rust, python, ts = rust_tree(work / "rs"), python_tree(work / "py"), typescript_tree(work / "ts")

    def edit(root: Path, lang: str, pattern: str, rewrite: str, *extra: str) -> list[str]:
        return [resolve, "--root", str(root), *extra, "ast-edit", "-p", pattern, "-r", rewrite,
                "--lang", lang, "."]

    return [
        edit(rust, "rust", "$X.unwrap()", '$X.expect("x")'),
        edit(rust, "rust", "Ok(())", "Ok(((),))", "--json"),
        edit(rust, "rust", "mem::replace($A, $B)", "std::mem::take($A)"),
        [resolve, "--root", str(rust), "list"],
        [resolve, "--root", str(rust), "show"],
        [resolve, "--root", str(rust), "apply", "--reason", "code order"],
        edit(python, "python", "$X.get($K)", "$X[$K]"),
        edit(ts, "ts", "$X.subscribe($$$A)", "$X.watch($$$A)"),
        [resolve, "--version"],
    ]


def costs(outputs: list[Path], binary: str) -> collections.Counter:
    """Instructions run per function of `binary`, from callgrind's output files."""
    cost: collections.Counter = collections.Counter()
    for path in outputs:
        objects, functions = {}, {}
        current_object = current_function = None
        after_call = False
        for line in path.read_text(errors="replace").splitlines():
            named = re.match(r"(c?)(ob|fn)=\((\d+)\)(?: (.*))?$", line)
            if named:
                callee, kind, number, name = named.groups()
                table = objects if kind == "ob" else functions
                if name:
                    # A recursive call's cycle shows as `name'2`, `name'3`, ...
                    table[number] = re.sub(r"'\d+$", "", name)
                if not callee:
                    if kind == "ob":
                        current_object = objects.get(number)
                    else:
                        current_function = functions.get(number)
                        after_call = False
                continue
            if line.startswith("calls="):
                after_call = True
                continue
            if line[:1].isdigit() or line[:1] in "+-*":
                if after_call:
                    # The cost of the call itself, which belongs to the callee.
                    after_call = False
                    continue
                fields = line.split()
                if (len(fields) >= 2 and current_function and current_object
                        and os.path.realpath(current_object) == binary):
                    cost[current_function] += int(fields[1]) if fields[1].isdigit() else 0
    return cost


def defined_symbols(resolve: str) -> set[str]:
    """The names of the symbols defined in the binary `resolve`."""
    symbols = subprocess.run(["nm", resolve], capture_output=True, text=True, check=True).stdout
    return {line.split()[-1] for line in symbols.splitlines() if len(line.split()) == 3}


def check(resolve: str) -> None:
    """Say how many of the listed functions `resolve` has (a dependency update renames some);
    exit 1 below 90%, when the list is worth writing again."""
    listed = [line.strip() for line in ORDER.read_text().splitlines() if line.strip()]
    defined = defined_symbols(resolve)
    found = sum(name in defined for name in listed)
    print(f"{found} of {len(listed)} listed functions are in {resolve}")
    if found < 0.9 * len(listed):
        sys.exit("the list is stale: run scripts/code_order.py to write it again")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--resolve", default=str(REPO / "target/release/resolve"))
    parser.add_argument("--check", action="store_true",
                        help="only count the listed functions the binary has; fail below 90%%")
    args = parser.parse_args()
    resolve = os.path.realpath(args.resolve)
    if args.check:
        check(resolve)
        return
    if not shutil.which("valgrind"):
        sys.exit("valgrind is not installed (Debian: apt install valgrind)")
    if not os.path.isfile(resolve):
        sys.exit(f"no binary at {resolve}; build one: cargo build --release")
    with tempfile.TemporaryDirectory() as work:
        work = Path(work)
        for argv in runs(resolve, work):
            subprocess.run(
                ["valgrind", "--tool=callgrind", "--demangle=no",
                 f"--callgrind-out-file={work}/callgrind.%p", *argv],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        cost = costs([Path(p) for p in glob.glob(f"{work}/callgrind.*")], resolve)
    names = [name for name, _ in cost.most_common() if not name.startswith("0x")]
    defined = defined_symbols(resolve)
    for pattern in RUN_TIME_VARIANTS:
        names += sorted(name for name in defined if re.search(pattern, name) and name not in names)
    kept = [name for name in names if name in defined]
    ORDER.write_text("".join(f"{name}\n" for name in kept))
    print(f"{len(kept)} functions ({len(names) - len(kept)} ran but are not symbols of the binary) "
          f"-> {ORDER.relative_to(REPO)}")


if __name__ == "__main__":
    main()
