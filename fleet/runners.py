"""The fleet's runner list made into a GitHub Actions matrix, and a runner's name made into a
node name. Both run on CI machines before any GPU job does, so a mistake in fleet/runners.yml
is one line (path:line:col: message) in the first job, not a matrix of jobs that wait forever
for labels no runner has, or a file named after a runner that two machines share.

    python3 fleet/runners.py matrix [fleet/runners.yml]   prints matrix={"include": [...]}
    python3 fleet/runners.py node NAME [CARD]              prints NAME made a safe node name; with the
                                                           card's UUID (nvidia-smi), NAME-<its first group>:
                                                           a node name names one card, so a runner type
                                                           whose machines change names each card apart

Exit codes: 0 done; 1 the list (or the name) cannot be used, said why; 2 usage.
The node rule is the site's own (cudagloss.model.measurement_rules, standard library only).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from cudagloss.model.measurement_rules import is_node_name  # noqa: E402

LABEL = re.compile(r"[a-z0-9][a-z0-9._-]{0,63}")
BASE_LABELS = ("self-hosted", "linux", "gpu")
KEYS = ("type", "node")
MAX_RUNNERS = 64  # GitHub allows 256 jobs a matrix; more GPU types than this is a typo


class ListError(Exception):
    """A mistake in the runner list, already worded as path:line:col: message."""


def node_name(raw: str) -> str:
    """`raw` (a runner's name: anything its owner typed) as letters, digits and single
    '.', '_' or '-' between them, at most 64 characters: the rule a node's file name obeys."""
    name = re.sub(r"[^A-Za-z0-9]+", lambda m: m.group() if m.group() in (".", "_", "-") else "-", raw)
    name = name.strip("._-")[:64].rstrip("._-")
    if name.endswith(".failed"):  # <node>.failed.json is a failed run's file
        name = name[: -len(".failed")] + "-failed"
    if not is_node_name(name):
        raise ListError(f"cannot make a node name of {raw!r}: set `node:` for this runner in fleet/runners.yml")
    return name


def card_node_name(raw: str, card: str) -> str:
    """node_name(raw) for the card whose UUID is card ('GPU-3f1ceb1e-…'): the name with the UUID's
    first group after it (ci-h100-3f1ceb1e), so that every card a runner type lands on has a
    name of its own (a node name names one card); raw alone where card is not a GPU UUID."""
    found = re.fullmatch(r"\s*GPU-([0-9A-Fa-f]{8})-[0-9A-Fa-f-]{27}\s*", card)
    if not found:
        return node_name(raw)
    suffix = "-" + found[1].lower()
    base = node_name(raw)
    if base.endswith(suffix):
        return base
    return node_name(base[: 64 - len(suffix)] + suffix)


def _where(path: str, node: Any) -> str:
    mark = node.start_mark
    return f"{path}:{mark.line + 1}:{mark.column + 1}"


def _scalar(path: str, node: Any, what: str) -> str:
    import yaml

    if not isinstance(node, yaml.ScalarNode) or not isinstance(node.value, str):
        raise ListError(f"{_where(path, node)}: {what} must be one word")
    return node.value


def _entry(path: str, item: Any) -> dict[str, Any]:
    """One runner: its type label (required) and its node name (optional)."""
    import yaml

    if not isinstance(item, yaml.MappingNode):
        raise ListError(f"{_where(path, item)}: each runner is a mapping with `type:` (and `node:`)")
    fields: dict[str, tuple[str, Any]] = {}
    for key_node, value_node in item.value:
        key = _scalar(path, key_node, "a key")
        if key not in KEYS:
            raise ListError(f"{_where(path, key_node)}: unknown key {key!r}; a runner has {', '.join(KEYS)}")
        if key in fields:
            raise ListError(f"{_where(path, key_node)}: {key!r} given twice")
        fields[key] = (_scalar(path, value_node, f"`{key}:`"), value_node)
    if "type" not in fields:
        raise ListError(f"{_where(path, item)}: this runner has no `type:` (its GPU type's runner label)")
    kind, kind_node = fields["type"]
    if LABEL.fullmatch(kind) is None or kind in BASE_LABELS:
        raise ListError(
            f"{_where(path, kind_node)}: type {kind!r} is not a label: lower case letters, digits, '.', '_', '-', "
            f"at most 64, not one of {', '.join(BASE_LABELS)}"
        )
    node, node_node = fields.get("node", ("", item))
    if "node" in fields and not is_node_name(node):
        raise ListError(
            f"{_where(path, node_node)}: node {node!r} cannot name a file: letters, digits and single '.', '_' "
            "or '-' between them, at most 64"
        )
    return {"type": kind, "labels": [*BASE_LABELS, kind], "node": node}


def matrix(path: str, text: str) -> dict[str, list[dict[str, Any]]]:
    """The `strategy.matrix` for verify.yml: one job per GPU type, none twice, no node twice."""
    import yaml

    from cudagloss.load.yamlnodes import compose  # the term files' composer: depth, aliases, characters

    root, found = compose(path, text)
    problems = [d for d in found if not d.warning]
    if problems or root is None:
        first = problems[0] if problems else None
        raise ListError(
            f"{first.path}:{first.line}:{first.col}: not YAML: {first.message}" if first else f"{path}:1:1: not YAML"
        )
    runners = None
    if isinstance(root, yaml.MappingNode):
        named = [(k, v) for k, v in root.value if isinstance(k, yaml.ScalarNode) and k.value == "runners"]
        if len(named) > 1:  # PyYAML would take the second, a reader the first: neither, said where
            raise ListError(f"{_where(path, named[1][0])}: `runners:` given twice")
        runners = named[0][1] if named else None
    if not isinstance(runners, yaml.SequenceNode) or not runners.value:
        raise ListError(f"{path}:1:1: expected `runners:`, a list of at least one {{type: <label>}}")
    if len(runners.value) > MAX_RUNNERS:
        raise ListError(f"{_where(path, runners)}: {len(runners.value)} runners; at most {MAX_RUNNERS}")
    include: list[dict[str, Any]] = []
    for item in runners.value:
        entry = _entry(path, item)
        for other in include:
            if other["type"] == entry["type"]:
                raise ListError(f"{_where(path, item)}: type {entry['type']!r} listed twice")
            if entry["node"] and other["node"] == entry["node"]:
                raise ListError(f"{_where(path, item)}: node {entry['node']!r} listed twice: one file, two GPUs")
        include.append(entry)
    return {"include": include}


def main(argv: list[str]) -> int:
    """The script's one error boundary: a mistake is one line on stderr, never a traceback."""
    try:
        if len(argv) in (2, 3) and argv[0] == "node":
            print(card_node_name(argv[1], argv[2]) if len(argv) == 3 else node_name(argv[1]))
            return 0
        if argv[:1] == ["matrix"] and len(argv) <= 2:
            path = argv[1] if len(argv) == 2 else "fleet/runners.yml"
            try:
                text = Path(path).read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                raise ListError(f"{path}: cannot read it: {exc}") from None
            try:
                import yaml  # noqa: F401  (imported here: the `node` verb runs where PyYAML may be absent)
            except ImportError:
                raise ListError("fleet/runners.py matrix: needs PyYAML (pip install PyYAML)") from None
            print("matrix=" + json.dumps(matrix(path, text), separators=(",", ":")))
            return 0
    except ListError as exc:
        print(exc, file=sys.stderr)
        return 1
    print("usage: runners.py matrix [fleet/runners.yml] | runners.py node NAME [CARD_UUID]", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
