#!/usr/bin/env python3
"""Derive, from each tree-sitter grammar `ast_edit` parses, where a node can have no more children.

Usage:  python3 scripts/node_ends.py          # rewrite crates/resolve-edit/src/ast_edit/node_ends.json
        python3 scripts/node_ends.py --check  # exit 1 when the file differs from the grammars

ast-grep's default ("smart") matcher lets a node of the source carry trailing children its pattern
lacks, so the literal prefilter of `ast_edit` has to let anything come after the end of a pattern
node. That is too loose where the grammar allows nothing there: in Rust, no node can follow the
`arguments` of a `call_expression`, nor the field of a `field_expression`, so between `foo` and
`bar` of `$X.foo().bar()` a match holds only punctuation, whitespace and comments.

For every node kind K of a grammar this finds the child kinds C such that no derivation of K puts
anything (a node, a token, even a hidden one) after a child of kind C: the "ends" of K. The
analysis runs over the grammar's rules as `grammar.json` gives them (the exact input tree-sitter
generated the parser from): hidden rules (`_name`, and rules listed in `inline`) are expanded
into their parent, as the parser does; an `ALIAS` names a node after its value and gives that
kind the aliased rule's children. Every approximation errs towards "something may follow": a
child kind that is missing from K's ends only costs the prefilter precision, never a match.

The key `"$"` in K's ends says that no named child of K is ever followed (a meta-variable, which
matches any named node, may then end K's pattern without anything after it). The key
`"$name."` (and `"$name?."`, `"$name::"`) says that what comes right after that token inside K is
always one name, an identifier or an integer token (the field of `a.b`, the property of `a?.b`),
and that nothing of K follows it: a meta-variable there stands for one word that ends K.

The grammars are the ones `cargo metadata` resolves for this workspace (the versions in
Cargo.lock), read from cargo's registry sources; nothing is downloaded.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "crates/resolve-edit/src/ast_edit/node_ends.json"

# ast_edit's language name (as `AstLang` displays it) -> (package, grammar.json below the package).
GRAMMARS = {
    "Bash": ("tree-sitter-bash", "src/grammar.json"),
    "C": ("tree-sitter-c", "src/grammar.json"),
    "Cpp": ("tree-sitter-cpp", "src/grammar.json"),
    "CSharp": ("tree-sitter-c-sharp", "src/grammar.json"),
    "Css": ("tree-sitter-css", "src/grammar.json"),
    "Dart": ("tree-sitter-dart", "src/grammar.json"),
    "Elixir": ("tree-sitter-elixir", "src/grammar.json"),
    "Go": ("tree-sitter-go", "src/grammar.json"),
    "Haskell": ("tree-sitter-haskell", "src/grammar.json"),
    "Hcl": ("tree-sitter-hcl", "src/grammar.json"),
    "Html": ("tree-sitter-html", "src/grammar.json"),
    "Java": ("tree-sitter-java", "src/grammar.json"),
    "JavaScript": ("tree-sitter-javascript", "src/grammar.json"),
    "Json": ("tree-sitter-json", "src/grammar.json"),
    "Kotlin": ("tree-sitter-kotlin-sg", "src/grammar.json"),
    "Lua": ("tree-sitter-lua", "src/grammar.json"),
    "Markdown": ("tree-sitter-md", "tree-sitter-markdown/src/grammar.json"),
    "Nix": ("tree-sitter-nix", "src/grammar.json"),
    "Php": ("tree-sitter-php", "php_only/src/grammar.json"),
    "Python": ("tree-sitter-python", "src/grammar.json"),
    "Ruby": ("tree-sitter-ruby", "src/grammar.json"),
    "Rust": ("tree-sitter-rust", "src/grammar.json"),
    "Scala": ("tree-sitter-scala", "src/grammar.json"),
    "Solidity": ("tree-sitter-solidity", "src/grammar.json"),
    "Swift": ("tree-sitter-swift", "src/grammar.json"),
    "Tla": ("tree-sitter-tlaplus", "src/grammar.json"),
    "Tsx": ("tree-sitter-typescript", "tsx/src/grammar.json"),
    "TypeScript": ("tree-sitter-typescript", "typescript/src/grammar.json"),
    "Yaml": ("tree-sitter-yaml", "src/grammar.json"),
    "Zig": ("tree-sitter-zig", "src/grammar.json"),
}

WRAPPERS = {"PREC", "PREC_LEFT", "PREC_RIGHT", "PREC_DYNAMIC", "FIELD", "RESERVED"}


# Tokens after which a pattern may hold a meta-variable standing for a member's name
# (`$X.$NAME`, `a?.$NAME`, `T::$NAME`): the analysis records which kinds come right after them.
QUALIFIERS = frozenset({".", "?.", "::"})


class Facts:
    """What one rule expression can derive, as far as the ends analysis needs.

    nullable: it may derive no text; nonempty: it may derive some text; followed: visible child
    kinds it may put something after, inside itself; last: visible child kinds it may end with
    (nothing but empty text after them); first: visible child kinds it may start with (nothing
    but hidden text before them); after: pairs (qualifier, kind) where a child of that kind may
    come right after that qualifier token, with only hidden text between.
    """

    __slots__ = ("nullable", "nonempty", "followed", "last", "first", "after")

    def __init__(self, nullable=False, nonempty=False, followed=frozenset(), last=frozenset(),
                 first=frozenset(), after=frozenset()):
        self.nullable = nullable
        self.nonempty = nonempty
        self.followed = frozenset(followed)
        self.last = frozenset(last)
        self.first = frozenset(first)
        self.after = frozenset(after)

    def key(self):
        return (self.nullable, self.nonempty, self.followed, self.last, self.first, self.after)


def pairs_after(last: frozenset, first: frozenset) -> frozenset:
    return frozenset((qualifier, kind) for qualifier in last & QUALIFIERS for kind in first)


def seq(a: Facts, b: Facts) -> Facts:
    return Facts(
        nullable=a.nullable and b.nullable,
        nonempty=a.nonempty or b.nonempty,
        followed=a.followed | b.followed | (a.last if b.nonempty else frozenset()),
        last=b.last | (a.last if b.nullable else frozenset()),
        first=a.first | (b.first if a.nullable else frozenset()),
        after=a.after | b.after | pairs_after(a.last, b.first),
    )


def choice(items: list[Facts]) -> Facts:
    return Facts(
        nullable=any(f.nullable for f in items),
        nonempty=any(f.nonempty for f in items),
        followed=frozenset().union(*(f.followed for f in items)),
        last=frozenset().union(*(f.last for f in items)),
        first=frozenset().union(*(f.first for f in items)),
        after=frozenset().union(*(f.after for f in items)),
    )


def repeat1(a: Facts) -> Facts:
    # a a …: the last kinds of one copy are followed by the next copy.
    return Facts(
        nullable=a.nullable,
        nonempty=a.nonempty,
        followed=a.followed | (a.last if a.nonempty else frozenset()),
        last=a.last,
        first=a.first,
        after=a.after | pairs_after(a.last, a.first),
    )


class Grammar:
    def __init__(self, grammar: dict):
        self.rules: dict[str, dict] = grammar["rules"]
        inline = set(grammar.get("inline", []))
        self.hidden = {name for name in self.rules if name.startswith("_") or name in inline}
        self.externals = set()
        for external in grammar.get("externals", []):
            if external.get("type") == "SYMBOL":
                self.externals.add(external["name"])
        # Hidden rules' facts, grown to a fixed point (recursion through hidden rules).
        self.hidden_facts = {name: Facts() for name in self.hidden}
        # Whether a visible symbol's text may be empty (its rule may derive nothing).
        self.visible_nullable = {name: False for name in self.rules if name not in self.hidden}
        # Each node kind's productions: its own rule and every rule aliased to its name.
        self.productions: dict[str, list[dict]] = {}
        for name, rule in self.rules.items():
            if name not in self.hidden:
                self.productions.setdefault(name, []).append(rule)
        # Kinds a node may be named by: visible rules, visible externals and named aliases.
        self.named_kinds = {name for name in self.rules if name not in self.hidden}
        self.named_kinds |= {name for name in self.externals if not name.startswith("_")}
        for rule in self.rules.values():
            self.collect_aliases(rule)
        self.solve()

    def collect_aliases(self, rule: dict) -> None:
        kind = rule["type"]
        if kind == "ALIAS":
            if rule.get("named"):
                self.named_kinds.add(rule["value"])
            content = rule["content"]
            # An aliased rule gives its children to the alias's kind; an aliased token is a leaf.
            if content["type"] == "SYMBOL" and content["name"] in self.rules:
                self.productions.setdefault(rule["value"], []).append(self.rules[content["name"]])
            elif content["type"] not in ("STRING", "PATTERN", "TOKEN", "IMMEDIATE_TOKEN", "SYMBOL", "BLANK"):
                self.productions.setdefault(rule["value"], []).append(content)
        if "content" in rule:
            self.collect_aliases(rule["content"])
        for member in rule.get("members", []):
            self.collect_aliases(member)

    def facts(self, rule: dict) -> Facts:
        kind = rule["type"]
        if kind == "BLANK":
            return Facts(nullable=True)
        if kind == "STRING":
            text = rule["value"]
            kinds = {text} if text else set()
            return Facts(nullable=text == "", nonempty=text != "", last=kinds, first=kinds)
        if kind == "PATTERN":
            # A hidden token: text, but no child of the node. Its regex may match nothing.
            return Facts(nullable=True, nonempty=True)
        if kind in ("TOKEN", "IMMEDIATE_TOKEN"):
            # One token; if it is a single string it is the anonymous node of that string.
            content = rule["content"]
            while content["type"] in WRAPPERS:
                content = content["content"]
            if content["type"] == "STRING":
                return self.facts(content)
            return Facts(nullable=True, nonempty=True)
        if kind == "SYMBOL":
            name = rule["name"]
            if name in self.hidden:
                return self.hidden_facts[name]
            if name in self.rules:
                return Facts(nullable=self.visible_nullable[name], nonempty=True, last={name},
                             first={name})
            # An external token (or one the external scanner names): may be zero-width.
            visible = {name} if not name.startswith("_") else set()
            return Facts(nullable=True, nonempty=True, last=visible, first=visible)
        if kind == "ALIAS":
            content = self.facts(rule["content"])
            return Facts(nullable=content.nullable, nonempty=content.nonempty, last={rule["value"]},
                         first={rule["value"]})
        if kind in WRAPPERS:
            return self.facts(rule["content"])
        if kind == "SEQ":
            result = Facts(nullable=True)
            for member in rule["members"]:
                result = seq(result, self.facts(member))
            return result
        if kind == "CHOICE":
            return choice([self.facts(member) for member in rule["members"]])
        if kind == "REPEAT":
            return choice([Facts(nullable=True), repeat1(self.facts(rule["content"]))])
        if kind == "REPEAT1":
            return repeat1(self.facts(rule["content"]))
        raise SystemExit(f"unknown rule type {kind}")

    def solve(self) -> None:
        changed = True
        while changed:
            changed = False
            for name in self.hidden:
                new = self.facts(self.rules[name])
                old = self.hidden_facts[name]
                merged = choice([old, new])
                if merged.key() != old.key():
                    self.hidden_facts[name] = merged
                    changed = True
            for name in self.visible_nullable:
                nullable = self.visible_nullable[name] or self.facts(self.rules[name]).nullable
                if nullable != self.visible_nullable[name]:
                    self.visible_nullable[name] = nullable
                    changed = True

    def ends(self) -> dict[str, list[str]]:
        result = {}
        for kind, productions in sorted(self.productions.items()):
            facts = choice([self.facts(rule) for rule in productions])
            children = facts.followed | facts.last | self.all_children(productions)
            ends = sorted(child for child in children if child not in facts.followed)
            # "$": no child that a meta-variable could stand for (a named node) is followed.
            if not any(child in self.named_kinds for child in facts.followed):
                ends.append("$")
            # "$name<q>": whatever comes right after the qualifier q in the kind is one name,
            # and nothing ever follows it there.
            for qualifier in sorted(QUALIFIERS):
                following = {child for (token, child) in facts.after if token == qualifier}
                if following and all(
                    self.is_name(child) and child not in facts.followed for child in following
                ):
                    ends.append("$name" + qualifier)
            if ends:
                result[kind] = ends
        return result

    def is_name(self, kind: str) -> bool:
        """Whether a node of `kind` is one token: an identifier (a named kind so called, every
        production of it a single token) or an integer literal."""
        if not (kind.endswith("identifier") or kind == "integer_literal"):
            return False
        productions = self.productions.get(kind)
        if productions is None:
            return kind in self.externals
        return all(self.is_token(rule) for rule in productions)

    def is_token(self, rule: dict, seen: frozenset = frozenset()) -> bool:
        """Whether `rule` is one token: a token rule, an external token, a rule that is one, or
        a choice of them (keywords aliased to an identifier)."""
        while rule["type"] in WRAPPERS or rule["type"] == "ALIAS":
            rule = rule["content"]
        if rule["type"] == "CHOICE":
            return all(self.is_token(member, seen) for member in rule["members"])
        if rule["type"] == "SYMBOL":
            name = rule["name"]
            if name in self.rules:
                return name not in seen and self.is_token(self.rules[name], seen | {name})
            return name in self.externals
        return rule["type"] in ("PATTERN", "TOKEN", "IMMEDIATE_TOKEN", "STRING")

    def all_children(self, productions: list[dict]) -> frozenset:
        kinds = set()
        seen = set()

        def walk(rule: dict) -> None:
            kind = rule["type"]
            if kind == "STRING":
                kinds.add(rule["value"])
            elif kind == "SYMBOL":
                name = rule["name"]
                if name in self.hidden:
                    if name not in seen:
                        seen.add(name)
                        walk(self.rules[name])
                elif not name.startswith("_"):
                    kinds.add(name)
            elif kind == "ALIAS":
                kinds.add(rule["value"])
            elif kind in ("TOKEN", "IMMEDIATE_TOKEN", "PATTERN", "BLANK"):
                pass
            else:
                if "content" in rule:
                    walk(rule["content"])
                for member in rule.get("members", []):
                    walk(member)

        for rule in productions:
            walk(rule)
        return frozenset(kinds)


def package_dirs() -> dict[str, Path]:
    metadata = json.loads(subprocess.run(
        ["cargo", "metadata", "--format-version", "1", "--locked"],
        cwd=ROOT, check=True, capture_output=True, text=True,
    ).stdout)
    return {package["name"]: Path(package["manifest_path"]).parent for package in metadata["packages"]}


def derive() -> str:
    dirs = package_dirs()
    table = {}
    for lang, (package, path) in sorted(GRAMMARS.items()):
        if package not in dirs:
            raise SystemExit(f"{package} (the grammar of {lang}) is not a dependency of this workspace")
        grammar = json.loads((dirs[package] / path).read_text())
        table[lang] = Grammar(grammar).ends()
    # One line per language: a language's table is read on its own (see node_ends.rs).
    lines = [
        json.dumps(lang, ensure_ascii=False) + ":"
        + json.dumps(ends, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        for lang, ends in sorted(table.items())
    ]
    return "{\n" + ",\n".join(lines) + "\n}\n"


def main() -> None:
    text = derive()
    if "--check" in sys.argv[1:]:
        if OUT.read_text() != text:
            print(f"{OUT.relative_to(ROOT)} is not what the grammars give; run python3 scripts/node_ends.py",
                  file=sys.stderr)
            sys.exit(1)
        return
    OUT.write_text(text)


if __name__ == "__main__":
    main()
