"""``mutation_equivalents.EQUIVALENT`` for ``haystacks/``: reviewed equivalents, each with why.

Keyed as there: (module, the line's source stripped, the mutant's description).
"""

from __future__ import annotations

HAYSTACKS: dict[tuple[str, str, str], str] = {
    (
        "haystacks/grid.py",
        'return f"d{round(share)}" if positions <= 101 else f"d{share:.1f}".removesuffix(".0")',
        "LtE -> Lt",
    ): (
        "at exactly 101 positions every depth is a whole percent (100 * p / 100 = p), so the "
        "one-decimal spelling with '.0' removed gives the same d0..d100 as round()"
    ),
    ("haystacks/tokens.py", "@lru_cache(maxsize=1 << 16)", "1 -> 2"): (
        "the size of a memo of a pure function: a larger one returns the same ids"
    ),
    ("haystacks/tokens.py", "@lru_cache(maxsize=1 << 16)", "16 -> 17"): (
        "the size of a memo of a pure function: a larger one returns the same ids"
    ),
    (
        "haystacks/assembly.py",
        "for key, e in zip(keys, spaced[: len(keys)], strict=True)",
        "True -> False",
    ): (
        "spaced holds the needles' encodings first, then the first words': its first "
        "len(keys) are always as many as keys, so the strict check can never fire"
    ),
    (
        "haystacks/assembly.py",
        "filler: in_context(e) for filler, e in zip(first, spaced[len(keys) :], strict=True)",
        "True -> False",
    ): (
        "spaced is one encoding per text sent, keys' then first's: past len(keys) there "
        "are always as many as first holds, so the strict check can never fire"
    ),
    (
        "haystacks/assembly.py",
        "for key, encoding in zip(composed, needle_haystacks, strict=True):",
        "True -> False",
    ): (
        "_tokens gives one needle haystack's encoding per composed text (spliced, or the "
        "batch of composed texts after the controls), so the strict check can never fire"
    ),
    (
        "haystacks/splice.py",
        "return list(zip(self.starts.tolist(), self.ends.tolist(), strict=True))",
        "True -> False",
    ): (
        "every SplicedEncoding's starts and ends are cut or concatenated alike from arrays of "
        "one length, so the strict check can never fire"
    ),
    (
        "haystacks/splice.py",
        "spans = np.asarray(base.offsets[:tokens], dtype=np.int64).reshape(-1, 2)",
        "1 -> 2",
    ): (
        "numpy reads any negative size as the one to infer (numpy 2.4: reshape(-2, 2) of 0 "
        "or 4 values gives (0, 2) and (2, 2)), so -2 is -1"
    ),
    (
        "haystacks/splice.py",
        "return all(list(e.ids) == ids for e, (_, ids) in zip(alone, tails, strict=True))",
        "True -> False",
    ): (
        "alone is the tokenizer's batch of the tails' pieces, one encoding per piece, so the "
        "strict check can never fire"
    ),
    (
        "haystacks/splice.py",
        'start = found.start() - (found.start() > 0 and filler.text[found.start() - 1] == " ")',
        "drop clause 1 of And",
    ): (
        "where the last piece starts the text, text[-1] is the piece's own last character, "
        "never a space (the piece is \\S+ up to the end): the clause dropped is always true there"
    ),
    (
        "haystacks/splice.py",
        'start = found.start() - (found.start() > 0 and filler.text[found.start() - 1] == " ")',
        "Gt -> GtE",
    ): (
        "the one start it adds, 0, reads text[-1]: the piece's own last character, never a "
        "space (the piece is \\S+ up to the end), so the answer is False as before"
    ),
    ("haystacks/fillers.py", "space = np.zeros(len(self.text) + 1, dtype=bool)", "1 -> 2"): (
        "a longer mask of spaces: it is read only at a token's start minus one, at most the "
        "text's last character, so the extra element is never read"
    ),
    ("haystacks/audit.py", "if not question_words or not needle_words:", "drop clause 1 of Or"): (
        "with no question word nothing is asked: the needle words are encoded and none can "
        "begin with a question's, so the loop raises nothing, as the skip did"
    ),
    ("haystacks/chunking.py", "open_stop = 0", "0 -> 1"): (
        "read only while a chunk is open, and every opening sets it (open_start, open_stop = "
        "start, stop): the first value is never read"
    ),
    ("haystacks/exact_cuts.py", "@dataclass(frozen=True)", "True -> False"): (
        "no code assigns an ExactCuts field after it is made: frozen only forbids what is "
        "never done"
    ),
    ("haystacks/builder.py", "if len(ahead) > self.threads:", "Gt -> GtE"): (
        "how many blocks are in flight at once, one fewer: blocks are still yielded in "
        "order and each is built alone from its own seeded generators, so the haystacks "
        "and their order are the same (test_building_on_several_threads_changes_no_byte)"
    ),
    (
        "haystacks/builder.py",
        "length + (_NEEDLE_ALLOWANCE if control == 0 else 0),",
        "0 -> 1 [1/2]",
    ): (
        "which control's counting ahead gets the needle's allowance, a guess: what it "
        "counts never changes a count or a haystack (SnippetDrawer.prefetch)"
    ),
    (
        "haystacks/builder.py",
        "length + (_NEEDLE_ALLOWANCE if control == 0 else 0),",
        "0 -> 1 [2/2]",
    ): (
        "the token budget of a further control's counting ahead, a guess: what it counts "
        "never changes a count or a haystack (SnippetDrawer.prefetch), one token more "
        "counts at most one sentence more ahead"
    ),
    (
        "haystacks/builder.py",
        "needles_of = dict(zip(texts, needle_encodings, strict=True))",
        "True -> False",
    ): "needle_encodings is encode_batch of list(texts.values()): one per text, always",
    (
        "haystacks/tokens.py",
        "index = bisect_right(self._spans, (char_pos, 1 << 62)) - 1",
        "1 -> 2 [2/2]",
    ): (
        "the probe's second item only has to exceed every span's end so that a span starting "
        "at char_pos sorts before it; 1 << 62 and 2 << 62 both exceed any text's length, so "
        "bisect_right finds the same index (the [1/2] twin, the `- 1`, is killable)"
    ),
    (
        "haystacks/tokens.py",
        "index = bisect_right(self._spans, (char_pos, 1 << 62)) - 1",
        "62 -> 63",
    ): (
        "1 << 63 exceeds every span's end as 1 << 62 does (Python ints do not overflow), so "
        "a span starting at char_pos still sorts before the probe and the index is the same"
    ),
    (
        "haystacks/sentence_tokens.py",
        "self._counts[book] = counts.astype(np.int32, copy=True)",
        "True -> False",
    ): (
        "counts is an array np.load just read from the file, held by nothing else (the stored "
        "tuple is dropped after the loop): a view of it is as private as a copy"
    ),
    (
        "haystacks/sentence_tokens.py",
        "if not all(_plausible(s, c) for s, c in zip(stored, self._counts, strict=True)):",
        "True -> False",
    ): (
        "stored is built with one entry per book of self._counts (range(len(self._counts))): "
        "the two always have the same length, so the strict check can never fire"
    ),
    (
        "haystacks/splice.py",
        'low = text.rfind(" ", 0, max(low, 0))',
        "0 -> 1 [2/2]",
    ): (
        "low enters the search at 1 or more (the loop stops once it reaches 0) except on an "
        "edge at 0, where max(0, 1) searches text[0:1]: a space found there gives 0, as the "
        "empty search's -1 is made 0, so the window is the same"
    ),
    ("haystacks/fillers.py", "if char >= len(text):", "delete if"): (
        "a shortcut: a character at or past the text's end is in no token for every "
        "encoding a filler holds (the tokenizers' own, the word tokenizer's, a cut or spliced "
        "one all answer None there), so the loop adds no slot after it either way"
    ),
}
