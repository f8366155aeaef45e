"""An audit as a table (the terminal), markdown (``--markdown``) and JSON (``--json``).

The terminal and markdown show the same rows: a section per question, each a line of what was
found. The JSON holds every number, and the fingerprint ``--expect`` reads.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import Any

from pytest_niah.audit.audit_run import Audit
from pytest_niah.audit.deployment import Change
from pytest_niah.audit.past_window import REFUSES

JSON_KIND = "pytest-niah endpoint audit"


def audit_json(audit: Audit, changed: list[Change] | None = None) -> str:
    """The audit as JSON: its findings, fingerprint and ``--expect``'s changes.

    The fingerprint is as ``--save`` writes it; ``changes`` is ``null`` without ``--expect``.
    """
    data: dict[str, Any] = {"kind": JSON_KIND, **asdict(audit)}
    data["fingerprint"] = audit.fingerprint.to_dict()
    data["changes"] = None if changed is None else [asdict(change) for change in changed]
    return json.dumps(data, indent=1) + "\n"


def rows(audit: Audit) -> list[tuple[str, str, str]]:
    """(section, item, finding) for each line of the table."""
    out = [("endpoint", "model", f"{audit.model} at {audit.endpoint}")]
    out.append(("endpoint", "tokenizer", audit.tokenizer))
    out += _window_rows(audit)
    out += _determinism_rows(audit)
    vectors = audit.vectors
    out.append(("vectors", "dimension", str(vectors.dim)))
    out.append(("vectors", "length", f"{vectors.norm_min:.4f} to {vectors.norm_max:.4f}"))
    out.append(("vectors", "input", vectors.behaviour))
    batch = audit.batch
    if batch.message or batch.status is not None:
        status = f"HTTP {batch.status}: " if batch.status is not None else ""
        stop = f" ({batch.tried} failed: {status}{batch.message})"
    else:
        stop = f" (all up to --max-batch {batch.tried} accepted)"
    out.append(("speed", "largest batch", f"{batch.largest}{stop}"))
    for row in audit.latency:
        item = f"{row.tokens:,} tokens x{row.concurrency}"
        if row.refused:
            out.append(("speed", item, f"refused: {row.refused}"))
        elif row.p50 is not None and row.p95 is not None:
            rate = f"{row.tokens_per_s:,.0f} tokens/s" if row.tokens_per_s else "-"
            finding = f"p50 {row.p50 * 1000:.0f} ms, p95 {row.p95 * 1000:.0f} ms, {rate}"
            out.append(("speed", item, finding))
    for needle in audit.needles:
        finding = f"{needle.found} of {needle.needles} found"
        if needle.refused:
            finding = f"refused: {needle.refused}"
        elif needle.missed:
            finding += " (missed: " + "; ".join(needle.missed) + ")"
        out.append(("needles", f"{needle.tokens:,} tokens", finding))
    sent = f"{audit.tokens:,} tokens in {audit.requests} requests (bound {audit.bound:,})"
    out.append(("audit", "sent", sent))
    steps = ", ".join(f"{name} {seconds:.1f}" for name, seconds in audit.steps.items())
    out.append(("audit", "took", f"{audit.seconds:.1f} s ({steps})"))
    return out


def _window_rows(audit: Audit) -> list[tuple[str, str, str]]:
    window = audit.window
    declared = (
        f"{window.declared:,} tokens ({window.origin}); {window.document:,} of text after "
        f"{window.specials} special"
    )
    measured = f"{window.measured:,} tokens of text" if window.measured is not None else "-"
    past = window.past
    if past == REFUSES:
        past = f"refuses {window.past_tokens:,} tokens: HTTP {window.status}: {window.message}"
    elif window.message:
        past = f"{past}: {window.message}"
    else:
        past = f"{past} (sent {window.past_tokens:,} tokens)"
    return [
        ("window", "declared", declared),
        ("window", "measured", f"{measured}: {window.note}"),
        ("window", "how", window.method),
        ("window", "past it", past),
    ]


def _determinism_rows(audit: Audit) -> list[tuple[str, str, str]]:
    found = audit.determinism

    def number(value: float | None) -> str:
        return "-" if value is None else f"{value:.3g}"

    return [
        ("determinism", "same batch twice", number(found.repeat)),
        ("determinism", "other batch-mates", number(found.batchmates)),
        ("determinism", "same text twice in a batch", number(found.pair)),
        ("determinism", "two different texts", number(found.signal)),
        ("determinism", "verdict", found.verdict),
    ]


def table(audit: Audit) -> str:
    """The terminal table."""
    lines = rows(audit)
    width = max(len(f"{section} {item}") for section, item, _ in lines)
    return "".join(
        f"{f'{section} {item}':<{width}}  {finding}\n" for section, item, finding in lines
    )


def markdown(audit: Audit, changed: list[Change] | None = None) -> str:
    """The audit as a markdown table (with the changes found by ``--expect``, if any)."""
    from pytest_niah.report.escape import md_cell, md_text

    out = [f"# Audit of {md_cell(audit.model)}\n\n", "| section | item | finding |\n"]
    out.append("| --- | --- | --- |\n")
    for section, item, finding in rows(audit):
        out.append(f"| {section} | {md_cell(item)} | {md_cell(finding)} |\n")
    if changed is not None:
        head, *lines = changes_text(changed).splitlines()
        out.append(f"\n{md_text(head)}\n")
        if lines:
            out.append("\n" + "".join(f"- {md_text(line.strip())}\n" for line in lines))
    return "".join(out)


def changes_text(changed: list[Change]) -> str:
    """What ``--expect`` found, one line per change."""
    if not changed:
        return "--expect: the same deployment\n"
    lines = [f"--expect: the deployment changed ({len(changed)}):\n"]
    lines += [f"  {c.what}: saved {c.saved}, now {c.now}\n" for c in changed]
    return "".join(lines)
