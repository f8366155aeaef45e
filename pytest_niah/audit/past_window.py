"""The declared window, the measured one (token-exact), and what happens past it.

The declared window is the one a run would assume (``--max-seq-length``, the server's
``max_model_len``, a preset's, or ``sentence_bert_config.json`` beside the tokenizer). The
measured one is the run's window probe (:func:`~pytest_niah.embed.window_probe.measure_window`),
bisecting over pairs of texts that share their first k tokens, at the server's measured noise.
Past the window, a pair of texts that share the whole window and differ in the tokens after it
go in one request: the server refuses them (status and message), cuts them silently (the pair
comes back as one vector), or reads them (the pair differs).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pytest_niah.audit.determinism import distance
from pytest_niah.audit.endpoint import Endpoint, Refusal, in_audit_terms, past_extra
from pytest_niah.embed.window_probe import MOVED, NOISE_MARGIN, ProbeTexts, measure_window
from pytest_niah.errors import EmbedderError, ModelError
from pytest_niah.inputs.packaged_corpus import packaged_corpus

CUTS = "cuts silently"
REFUSES = "refuses"
READS = "reads past the window"
NOT_SEEN = "not measured"
_ORIGIN = re.compile(
    r"a window of \d+ tokens \((?P<origin>.*)\), (?P<specials>\d+) of them special"
)


@dataclass(frozen=True)
class WindowFinding:
    """What the endpoint says it reads and what it was seen to read.

    Attributes:
        declared: The declared window in tokens, special tokens included.
        origin: Where the declared window comes from.
        specials: Special tokens the tokenizer adds.
        document: Text tokens the declared window leaves (declared minus special tokens).
        measured: Text tokens the server was seen to read (``None``: not measured or no limit).
        note: What the probe found, in words.
        method: How it was measured.
        past: What the server does with text past the window (:data:`CUTS`, ...).
        past_tokens: Text tokens of the texts sent past the window.
        status: The HTTP status of a refusal (``None``: none).
        message: The start of the refusal's message, the API key blanked.
    """

    declared: int
    origin: str
    specials: int
    document: int
    measured: int | None
    note: str
    method: str
    past: str
    past_tokens: int
    status: int | None = None
    message: str = ""


def measure_windows(endpoint: Endpoint, document: int, pair_noise: float) -> WindowFinding:
    """Probe the ``document``-token window at the server's noise, then send a pair past it."""
    embedder = endpoint.embedder
    origin, specials = "unknown", 0
    for note in embedder.notes:
        found = _ORIGIN.search(note)
        if found is not None:
            origin, specials = in_audit_terms(found["origin"]), int(found["specials"])
    corpus = packaged_corpus()
    method = (
        f"pytest-niah's window probe: pairs of {document:,}-token texts that share their first "
        "k tokens, bisected over k, each token counted by the served model's tokenizer"
    )
    try:
        measured = measure_window(embedder, corpus, document, None, batch_size=8, noise=pair_noise)
        window, note = measured.window, measured.note
    except EmbedderError as exc:
        window, note = None, f"not measured: the probe failed: {exc.problem}"
    past = _past(endpoint, document, max(MOVED, NOISE_MARGIN * pair_noise))
    return WindowFinding(
        embedder.max_seq_length, origin, specials, document, window, note, method, *past
    )


def _past(endpoint: Endpoint, document: int, threshold: float) -> tuple[str, int, int | None, str]:
    """What the server does with a pair of texts that differ only past the window."""
    extra = past_extra(document)
    texts = ProbeTexts.of(endpoint.embedder.tokenizer, packaged_corpus(), document + extra)
    if texts is None:
        return NOT_SEEN, 0, None, "the corpus has too few one-token words"
    try:
        a, b = texts.inputs(document, keep_text=True)
        rows, _ = endpoint.embed([a.text, b.text])
    except Refusal as refusal:
        return REFUSES, document + extra, refusal.status, refusal.message
    except ModelError as exc:
        return NOT_SEEN, document + extra, None, exc.problem
    moved = distance(rows[0], rows[1])
    return (READS if moved > threshold else CUTS), document + extra, None, ""
