"""Probe of invented argument values, built from the tools' declarations rather than the records.

For every tool declared in agent-runs-v3 and agent-runs-v2 and every OPTIONAL argument of it
(top level, items of an array, leaves of a nested object the base call holds), take a valid
call of that tool (v3: only the open half, `bench.agent_runs_v3.half_of`; v2: any), set that
argument to a value nobody gave, of the argument's kind (read from its declaration: type,
format, enum, name, description), and record whether the check rejects the call. Its twin sets
the same argument to a value the last user turn DOES give (appended to it as "name: value");
a twin must never be rejected.

Kinds and what the check must do with them:

- must catch (a model must not make these up): id, cursor, email, url, phone, ip, date,
  datetime, time, amount, a date in a run that also dates something relatively
  (`date_relative`: far from every date the run names), a tag or label the user asked for in
  no words, and an enum member where the user named exactly one other member (`enum_other`);
- may pass (a valid agent sets them without the user saying so): an enum member nobody named
  (`enum_unnamed`: the tool's choice), a count or page size, a boolean option, free text the
  agent writes, a key the agent must generate (`generated`: a batch id, a nonce).

`python -m bench.invented_probe [--json PATH] [--tool NAME] [--misses]` prints the catch rate per
kind and per tool, and the twins rejected. It reads no held-half record: only the open half's
valid calls, whose failures may be read.
"""

from __future__ import annotations

import argparse
import copy
import json
import re
import sys
from collections import defaultdict
from datetime import timedelta
from pathlib import Path
from typing import Any

from agents.checking import formats, run_clock, tool_calls, written_values
from bench.agent_runs_v3 import half_of

ROOT = Path(__file__).resolve().parents[1]
SETS = {
    "v3": ROOT / "eval" / "sets" / "agent-runs-v3" / "records.jsonl",
    "v2": ROOT / "eval" / "sets" / "agent-runs-v2" / "records.jsonl",
}
MUST_CATCH = (
    "id",
    "cursor",
    "email",
    "url",
    "phone",
    "ip",
    "date",
    "datetime",
    "time",
    "amount",
    "enum_other",
    "date_relative",
    "tag",
)
MAY_PASS = ("generated", "enum_unnamed", "count", "boolean", "text", "number")

# invented values: shapes no run of either set writes (the probe checks that none is in the run)
INVENTED = {
    "id": "rec7QhZ2mXk41pL",
    "cursor": "Y3Vyc29yOjQ4MTk3NQ",
    "email": "dana.whitfield@quillmark.net",
    "url": "https://files.quillmark.net/share/7f3k9q",
    "phone": "+14155550172",
    "ip": "203.0.113.77",
    "date": "2027-09-17",
    "datetime": "2027-09-17T06:45:00Z",
    "time": "06:45",
    "amount": 1375.5,
    "count": 37,
    "number": 37,
    "boolean": True,
    "text": "Following up on the points we discussed",
    "tag": "quarterly-review",
    "generated": "batch-7QhZ2mXk41pL",
}
# the same kind given by the user: what the last user turn adds ("name: value"), and the value
GIVEN = {
    "id": ("rec5TmW8nPb27cY", "rec5TmW8nPb27cY"),
    "cursor": ("Q2hlY2twb2ludDo5MTI0", "Q2hlY2twb2ludDo5MTI0"),
    "email": ("lena.ortiz@brightfold.org", "lena.ortiz@brightfold.org"),
    "url": ("https://brightfold.org/docs/q4-plan", "https://brightfold.org/docs/q4-plan"),
    "phone": ("+1 415 555 0199", "+14155550199"),
    "ip": ("198.51.100.23", "198.51.100.23"),
    "date": ("2027-10-21", "2027-10-21"),
    "datetime": ("2027-10-21 14:30 UTC", "2027-10-21T14:30:00Z"),
    "time": ("14:30", "14:30"),
    "amount": ("845.25", 845.25),
    "count": ("12", 12),
    "number": ("12", 12),
    "boolean": ("yes", True),
    "text": ("Thanks for the quick reply", "Thanks for the quick reply"),
    "tag": ("onboarding", "onboarding"),
    "generated": ("batch-5TmW8nPb27cY", "batch-5TmW8nPb27cY"),
}
# an integer argument of a string kind: an integer of that kind
INTEGER_INVENTED = {"id": 48213977, "amount": 137550, "count": 37, "number": 37}
INTEGER_GIVEN = {"id": ("51730264", 51730264), "amount": ("84525", 84525), "count": ("12", 12)}

# words that date something relatively, appended to the user's turn for `date_relative`
RELATIVE_WORDS = "We talked about this last month."
COUNT_WORDS = ("limit", "size", "count", "max", "top", "per", "page", "num", "first", "last")
AMOUNT_WORDS = ("amount", "price", "cost", "fee", "total", "budget", "value", "balance", "sum")


def _words(name: str) -> list[str]:
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", name)
    return [w.lower() for w in re.split(r"[\W_]+", spaced) if w]


def kind_of_argument(name: str, node: dict) -> str | None:
    """The kind of value an argument holds, from its declaration alone."""
    words = _words(name)
    if written_values.generated(name, node, "x"):
        return "generated"  # a key the agent must make up itself (a batch id, a nonce)
    text = f"{' '.join(words)} {node.get('description') or ''}".lower()
    kind = node.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), None)
    if isinstance(node.get("enum"), list):
        return "enum" if len(node["enum"]) > 1 else None  # one member: nothing to choose
    if kind == "boolean":
        return "boolean"
    if kind == "array":
        items = node.get("items") if isinstance(node.get("items"), dict) else {}
        inner = kind_of_argument(name.rstrip("s") if name.endswith("s") else name, items)
        return inner if inner not in (None, "object") else None
    if kind == "object":
        return "object"
    if kind in ("integer", "number"):
        if any(w in ("id", "ids") for w in words):
            return "id"
        if any(w.startswith(AMOUNT_WORDS) for w in words) or "cents" in text:
            return "amount"
        if any(w.startswith(COUNT_WORDS) for w in words):
            return "count"
        if re.search(r"unix|epoch|timestamp", text):
            return None  # a Unix time: its own rules (run_clock), not this probe's
        return "number"
    fmt = str(node.get("format") or "")
    if fmt == "date" or re.search(r"\bdate\b|yyyy-mm-dd", text) and "time" not in words:
        return "date"
    if fmt == "date-time" or re.search(r"iso ?8601|rfc ?3339|\btimestamp\b", text):
        return "datetime" if "unix" not in text and "ts" not in words else None
    if words and words[-1] in ("time", "at") and not re.search(r"zone|unix", text):
        return "datetime"
    if "email" in words or "e-mail" in text or "email address" in text:
        return "email"
    if any(w in ("url", "uri", "link", "webhook", "callback", "href") for w in words):
        return "url"
    if "phone" in words or "e.164" in text:
        return "phone"
    if any(w in ("ip", "cidr", "ranges", "address") for w in words) and re.search(
        r"\bip|cidr", text
    ):
        return "ip"
    if any(w in ("cursor", "token", "after", "before", "offset") for w in words) or (
        "starting" in words
    ):
        return "cursor"
    if words and words[-1] in ("id", "ids", "key", "uri", "sku", "ts", "view", "number"):
        return "id"
    if any(w in ("tag", "tags", "label", "labels", "category") for w in words):
        return "tag"
    return "text"


def _base_calls(max_per_tool: int) -> dict[str, list[tuple[str, formats.AgentRun]]]:
    """Valid calls per tool: v3's open half and all of v2, the run ending on that call."""
    found: dict[str, list[tuple[str, formats.AgentRun]]] = defaultdict(list)
    for set_name, path in SETS.items():
        for line in path.read_text().splitlines():
            record = json.loads(line)
            if record["label"] != "valid_call":
                continue
            if set_name == "v3" and half_of(record["pair"]) != "open":
                continue
            run = formats.parse_run(record["run"])
            if not run.calls or not isinstance(run.calls[-1].args, dict):
                continue
            tool = run.calls[-1].name
            if len(found[tool]) < max_per_tool:
                found[tool].append((record["id"], run))
    return found


def _slots(schema: dict, args: dict) -> list[tuple[list[str], dict, bool]]:
    """(path, declaration, optional) of each argument the probe may set: optional top-level
    arguments, and the leaves of a nested object (or an array of objects) the call holds."""
    props = schema.get("properties") or {}
    required = set(schema.get("required") or [])
    slots = []
    for name, node in props.items():
        if not isinstance(node, dict):
            continue
        if name not in required:
            slots.append(([name], node, True))
        inner = node if node.get("type") == "object" else None
        path = [name]
        items = node.get("items") if isinstance(node.get("items"), dict) else {}
        if items.get("type") == "object" and isinstance(args.get(name), list):
            inner, path = items, [name, "0"]
        if inner and isinstance(_get(args, path), dict):
            inner_required = set(inner.get("required") or [])
            for sub, subnode in (inner.get("properties") or {}).items():
                if isinstance(subnode, dict) and sub not in inner_required:
                    slots.append(([*path, sub], subnode, True))
    return slots


def _get(args: Any, path: list[str]) -> Any:
    for part in path:
        if isinstance(args, list) and part.isdigit() and int(part) < len(args):
            args = args[int(part)]
        elif isinstance(args, dict) and part in args:
            args = args[part]
        else:
            return None
    return args


def _set(args: dict, path: list[str], value: Any) -> None:
    node: Any = args
    for part in path[:-1]:
        node = node[int(part)] if isinstance(node, list) else node[part]
    node[path[-1]] = value


def _with(run: formats.AgentRun, path: list[str], value: Any, say: str | None) -> Any:
    probe = copy.deepcopy(run)
    call = probe.calls[-1]
    _set(call.args, path, value)
    if say == RELATIVE_WORDS:
        probe.user_texts[-1] = f"{probe.user_texts[-1]}\n{say}"
    elif say is not None:
        probe.user_texts[-1] = f"{probe.user_texts[-1]}\n{path[-1]}: {say}"
    return probe


def _user_named(run: formats.AgentRun, pointer: str) -> bool:
    """The check reads the base call's value at `pointer` as named by a user turn."""
    validation = tool_calls.verify_call(run.calls[-1], run, [], check_fit=False)
    return any(
        t["pointer"] == pointer
        and t["status"] == "grounded"
        and str(t["source"]).startswith("user turn")
        for t in validation.provenance
    )


def _rejected(run: formats.AgentRun) -> tuple[bool, list[str]]:
    validation = tool_calls.verify_call(run.calls[-1], run, [], check_fit=False)
    return validation.status != "valid", validation.errors


def probe(max_per_tool: int = 1, only_tool: str | None = None) -> list[dict]:
    rows = []
    for tool, bases in sorted(_base_calls(max_per_tool).items()):
        if only_tool and tool != only_tool:
            continue
        for record_id, run in bases:
            schema = (run.tools or {}).get(tool) or {}
            if _rejected(run)[0]:
                continue  # a base the check already rejects says nothing about the argument
            for path, node, _ in _slots(schema, run.calls[-1].args):
                kind = kind_of_argument(path[-1], node)
                if kind in (None, "object"):
                    continue
                array = node.get("type") == "array"
                rows += _probe_slot(tool, record_id, run, path, node, kind, array)
    return rows


def _probe_slot(
    tool: str,
    record_id: str,
    run: formats.AgentRun,
    path: list[str],
    node: dict,
    kind: str,
    array: bool,
) -> list[dict]:
    wrap = (lambda v: [v]) if array else (lambda v: v)
    pointer = "/" + "/".join(path)
    rows = []
    if kind == "enum":
        declared = node.get("enum") or (node.get("items") or {}).get("enum") or []
        members = [m for m in declared if isinstance(m, str) and re.search(r"[a-z]", m, re.I)]
        current = _get(run.calls[-1].args, path)
        current = current[0] if array and isinstance(current, list) and current else current
        others = [m for m in members if m != current]
        if len(others) < 2:
            return []
        if current is not None and _user_named(run, pointer if not array else f"{pointer}/0"):
            # the user named the base call's member: another member is one nobody asked for
            cases = [("enum_other", wrap(others[0]), None, "invented")]
        elif current is not None:
            cases = [("enum_unnamed", wrap(others[0]), None, "invented")]
        else:
            named, chosen = others[0], others[1]
            cases = [
                ("enum_unnamed", wrap(chosen), None, "invented"),
                ("enum_other", wrap(chosen), str(named), "invented"),
                ("enum_other", wrap(named), str(named), "twin"),
            ]
    elif kind == "date" and (clock := run_clock.clock_of(run.user_texts)) is not None:
        # beside the plain date, the same argument in a run that also dates something relatively
        # ("last month"): a date far from every date the run names is still invented; one inside
        # that month is the model's computation
        days = [(clock.today - timedelta(days=back)).isoformat() for back in range(17, 40)]
        today = clock.today.isoformat()
        # not one digit away from today, which the one-character rule would read as a typo
        near = next(d for d in days if sum(a != b for a, b in zip(d, today, strict=True)) > 1)
        cases = [
            ("date", wrap(INVENTED["date"]), None, "invented"),
            ("date", wrap(GIVEN["date"][1]), GIVEN["date"][0], "twin"),
            ("date_relative", wrap(INVENTED["date"]), RELATIVE_WORDS, "invented"),
            ("date_relative", wrap(near), RELATIVE_WORDS, "twin"),
        ]
    else:
        declared = node.get("type")
        if declared == "array":
            declared = (node.get("items") or {}).get("type")
        if kind in ("text", "tag") and declared not in ("string", None):
            return []
        invented, (say, given) = INVENTED[kind], GIVEN[kind]
        if declared == "integer":
            if kind not in INTEGER_INVENTED:
                return []
            invented, (say, given) = INTEGER_INVENTED[kind], INTEGER_GIVEN.get(kind, GIVEN[kind])
        elif kind in ("amount", "count", "number") and declared == "string":
            invented, given = str(invented), str(given)
        elif declared in ("integer", "number") and kind not in INTEGER_INVENTED:
            return []
        cases = [(kind, wrap(invented), None, "invented"), (kind, wrap(given), say, "twin")]
    for case_kind, value, say, role in cases:
        probe_run = _with(run, path, value, say)
        rejected, errors = _rejected(probe_run)
        rows.append(
            {
                "tool": tool,
                "record": record_id,
                "pointer": pointer,
                "kind": case_kind,
                "role": role,
                "value": value,
                "rejected": rejected,
                "errors": errors[:2],
            }
        )
    return rows


def table(rows: list[dict]) -> dict[str, Any]:
    """Catch rate per kind and per tool (invented values), twins rejected per kind."""

    def rate(group: list[dict]) -> dict[str, Any]:
        return {
            "n": len(group),
            "rejected": sum(r["rejected"] for r in group),
            "rate": round(sum(r["rejected"] for r in group) / len(group), 3) if group else None,
        }

    invented = [r for r in rows if r["role"] == "invented"]
    twins = [r for r in rows if r["role"] == "twin"]
    kinds = sorted({r["kind"] for r in rows}, key=lambda k: (k not in MUST_CATCH, k))
    must = [r for r in invented if r["kind"] in MUST_CATCH]
    return {
        "invented_by_kind": {k: rate([r for r in invented if r["kind"] == k]) for k in kinds},
        "twins_by_kind": {
            k: rate([r for r in twins if r["kind"] == k])
            for k in kinds
            if any(r["kind"] == k for r in twins)
        },
        "must_catch_by_tool": {
            t: rate([r for r in must if r["tool"] == t]) for t in sorted({r["tool"] for r in must})
        },
        "must_catch": rate(must),
        "may_pass_rejected": rate([r for r in invented if r["kind"] in MAY_PASS]),
        "twins_rejected": rate(twins),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", type=Path, help="write every probe row and the table here")
    parser.add_argument("--tool", help="probe one tool only")
    parser.add_argument("--per-tool", type=int, default=1, help="valid calls per tool (1)")
    parser.add_argument("--misses", action="store_true", help="list misses and rejected twins")
    options = parser.parse_args(argv)
    rows = probe(options.per_tool, options.tool)
    result = table(rows)
    print("kind          must  invented rejected      twins rejected")
    for kind, figures in result["invented_by_kind"].items():
        twin = result["twins_by_kind"].get(kind)
        must = "yes" if kind in MUST_CATCH else "no"
        twin_text = f"{twin['rejected']}/{twin['n']}" if twin else "-"
        print(
            f"{kind:13} {must:5} {figures['rejected']:>3}/{figures['n']:<3} ({figures['rate']})"
            f"       {twin_text}"
        )
    print("per tool (must-catch kinds):")
    for tool, figures in result["must_catch_by_tool"].items():
        print(f"  {tool:38} {figures['rejected']}/{figures['n']}")
    print(f"must catch: {result['must_catch']}")
    print(f"may pass, rejected: {result['may_pass_rejected']}")
    print(f"twins rejected: {result['twins_rejected']}")
    if options.misses:
        for row in rows:
            miss = row["role"] == "invented" and row["kind"] in MUST_CATCH and not row["rejected"]
            if miss or (row["role"] == "twin" and row["rejected"]):
                print(json.dumps(row, ensure_ascii=False, default=str)[:300])
    if options.json:
        options.json.write_text(json.dumps({"table": result, "rows": rows}, indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
