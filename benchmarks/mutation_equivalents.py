"""Mutants ``mutate.py`` never draws: reviewed equivalents and unreachable ones, each with why.

See ``EQUIVALENT`` below; ``tests/test_mutate.py`` checks every key still names one mutant per
line and gives a reason.
"""

from __future__ import annotations

from mutation_equivalents_haystacks import HAYSTACKS

# Reviewed equivalents and unreachable mutants, never drawn: no test can kill them. Keyed by
# (module, the line's source stripped, the mutant's description), so an edit elsewhere keeps
# the key and an edit of the line itself drops it. A key covers every line of the module with
# that source (its reason must hold for each) and must name one mutant on each: a line with
# two mutants of one description (two `or`s) cannot be excluded (tests/test_mutate.py checks
# both). Only for a demonstrated equivalent, with why no input tells it apart: never for a
# mutant a test could kill.
_DURABLE = (
    "durability only: the bytes reach the file either way (close() flushes), and only a "
    "power cut or a kernel crash right after the write could show a difference"
)
EQUIVALENT: dict[tuple[str, str, str], str] = {
    **HAYSTACKS,
    (
        "embed/server_watch.py",
        "distance = np.linalg.norm(a - b, axis=1) / np.where(scale > 0, scale, 1.0)",
        "1.0 -> 2.0",
    ): "the stand-in divisor is used only where both rows have length 0: their distance is 0",
    (
        "embed/server_watch.py",
        "_since: tuple[int, float] = field(default=(0, 0.0), init=False)",
        "0 -> 1",
    ): ("__post_init__ sets _since before anything reads it: its default is never read"),
    (
        "embed/server_watch.py",
        "_since: tuple[int, float] = field(default=(0, 0.0), init=False)",
        "0.0 -> 1.0",
    ): ("__post_init__ sets _since before anything reads it: its default is never read"),
    (
        "embed/server_watch.py",
        "_since: tuple[int, float] = field(default=(0, 0.0), init=False)",
        "False -> True",
    ): ("no caller passes _since (a seventh field, after checks), and __post_init__ sets it"),
    (
        "embed/server_watch.py",
        "for encoding, text in zip(encodings, texts, strict=True)",
        "True -> False",
    ): "the encodings are of these texts, one each: the two lists always have one length",
    (
        "embed/server_watch.py",
        "_CHARS = 600  # characters of a book taken before the cut to CHECK_TOKENS",
        "600 -> 601",
    ): (
        "a piece is cut to 48 tokens after it is taken; 600 or 601 characters both hold more "
        "than 48 words' tokens of a book, and the start drawn differs by at most a character "
        "only in a book shorter than the piece, which the whole-word cut absorbs"
    ),
    ("embed/window_probe.py", "batch_size: int = 8,", "8 -> 9"): (
        "the probe submits at most 4 texts before each finish() (the two ends, then one pair "
        "per bisection step), so a batch of 8 or of 9 texts holds the same texts: one batch "
        "either way; the run's own caller passes its batch size"
    ),
    (
        "embed/window_probe.py",
        "if window is None and declared is not None and probed == declared:",
        "drop clause 2 of And",
    ): "probed is an int: probed == declared is already false when declared is None",
    ("embed/window_probe.py", "return (words * (length // len(words) + 1))[:length]", "1 -> 2"): (
        "one more copy of the words before the cut: the +1 copies already hold at least "
        "length words, so the first length are the same"
    ),
    (
        "embed/window_probe.py",
        "single.update((w, n == 2) for w, n in zip(fresh, counts, strict=True))",
        "True -> False",
    ): (
        "token_counts returns one count per text it is given, so strict zip never finds a "
        "length mismatch to refuse"
    ),
    ("embed/window_probe.py", "if len(words) >= wanted:", "GtE -> Gt"): (
        "with exactly `wanted` words the mutant scans on; the next chunk's words are cut off "
        "by words[:wanted], and with no chunk left `return words` holds the same `wanted`"
    ),
    (
        "bounded_reads.py",
        'descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))',
        "0 -> 1",
    ): "unreachable on POSIX: the default is read only where os has no O_NONBLOCK (Windows)",
    ("bounded_reads.py", "data = handle.read(limit + 1)  # it may have grown since", "1 -> 2"): (
        "reading limit + 2 bytes instead of limit + 1: a file of more than limit bytes is "
        "refused by len(data) > limit either way, one of at most limit bytes is read whole"
    ),
    ("bounded_reads.py", "out = stream.read(limit + 1)", "1 -> 2"): (
        "as for read_bounded: any content past limit is refused either way, the rest is whole"
    ),
    ("files.py", "out.flush()", "delete call"): _DURABLE,
    ("files.py", "os.fsync(out.fileno())", "delete call"): _DURABLE,
    ("files.py", "fsync_folder(real.parent)", "delete call"): _DURABLE + " (the rename)",
    ("files.py", "os.fsync(descriptor)", "delete call"): _DURABLE + " (the rename)",
    ("files.py", 'if line.startswith("Umask:"):', "delete if"): (
        "without the check the first line of /proc/self/status (Name:) fails int(), which "
        "falls back to reading the umask by setting and restoring it: the same value"
    ),
    ("files.py", "return int(line.split()[1], 8)", "1 -> 2"): (
        "split()[2] of the Umask: line raises IndexError, which falls back to reading the "
        "umask by setting and restoring it: the same value"
    ),
    ("files.py", "umask = os.umask(0o022)  # elsewhere: set and restore at once", "18 -> 19"): (
        "the value set is put back on the next line and the old one returned either way"
    ),
    (
        "results/results_validation.py",
        'if error["type"] == "schema_version" or str(last).endswith("schema_version"):',
        "drop clause 1 of Or",
    ): (
        "the one error of type schema_version is raised by the schema_version field's own "
        "validator (results_schema._version), so its location always ends in schema_version"
    ),
    ("config/parsers.py", "if isinstance(value, bool):", "delete if"): (
        "a bool then goes through str(): True reads as 'true' and False as 'false', which "
        "_TRUE and _FALSE hold, so the answer is the bool itself"
    ),
    ("experiment/results_cache.py", "if not path.is_file():", "delete if"): (
        "NiahResults.load of a missing path or a folder raises ResultsError, a NiahError, "
        "which the next lines answer with None, as the skipped check did"
    ),
    ("embed/server_report.py", "if body is None:", "delete if"): (
        "without it a missing listing takes the next lines with no entries: served is set "
        "to [], the value it already holds (each client has one report, whose listing is "
        "read once), and None is returned all the same"
    ),
    ("embed/server_noise.py", "return float(a @ b) / scale if scale > 0 else 1.0", "1.0 -> 2.0"): (
        "the cosine of a zero vector is only compared with -0.5 (a flip): 1.0 and 2.0 both "
        "say no flip"
    ),
    ("measure/slice_scores.py", "if not texts:", "delete if"): (
        "unreachable: a plan with questions always has needles (see the next entry); and "
        "without the shortcut, no needle scores to the same empty dicts"
    ),
    ("measure/slice_scores.py", "return [{} for _ in q_keys]", "return None"): (
        "unreachable: every question of a run belongs to a needle group whose needles are "
        "planned with it (an empty needle set is refused by the schema), so a plan with "
        "questions always has needles (reviewed in mutation-fresh-981343202.md)"
    ),
    (
        "measure/slice_scores.py",
        'float(self.alone[g].get(haystack.needle or "", math.nan)),',
        "drop clause 2 of Or",
    ): (
        "unreachable: case_scores is asked only of needle haystacks, which assembly.py always "
        "builds with their needle text; and were it None, .get(None) and .get('') both give "
        "NaN (no needle text is empty)"
    ),
    **{
        ("measure/scoring.py", line, "drop clause 2 of Or"): (
            "unreachable: these read needle haystacks only, which assembly.py always builds "
            "with their order (a str) and position (an int) from the block's (kind, order, "
            "position) key; the `or` stand-ins are for controls, which never get here"
        )
        for line in (
            "position=h.position or 0,",
            'orders.index(p.haystack.order or ""),',
            "p.haystack.position or 0,",
            'group.id, arm, h.order or "", h.length, h.duplicate_position, scoring, h.seed',
            'order=h.order or "",',
        )
    },
    ("measure/slice_scores.py", "@dataclass(frozen=True)", "True -> False"): (
        "SliceScores is built once per slice by its own classmethod and only read: "
        "no code assigns to it, so frozen or not, nothing can tell"
    ),
    ("report/report_folder.py", "fsync_folder(staging)", "delete call"): _DURABLE + " (the files)",
    ("report/report_folder.py", "fsync_folder(real.parent)", "delete call"): _DURABLE
    + " (the rename)",
    ("report/report_folder.py", "_AT_FDCWD = -100", "100 -> 101"): (
        "renameat2 ignores the folder descriptor of an absolute path, and both paths it is "
        "given are absolute (_real makes the target absolute, the staging folder is beside it)"
    ),
    (
        "experiment/speed.py",
        "values = np.random.default_rng(0).standard_normal(REFERENCE_SIZE).astype(np.float32)",
        "0 -> 1",
    ): "other seeded values of the same size: the same work; the values are never returned",
    ("experiment/speed.py", "x = np.sort(np.tanh(x * np.float32(1.01)))", "1.01 -> 2.01"): (
        "timing only: the reference's result is discarded, its time is the figure, and one "
        "elementwise pass costs the same for any factor; no test can pin a time that closely"
    ),
    ("experiment/speed.py", "x = np.sort(np.tanh(x * np.float32(1.01)))", "Mult -> Div"): (
        "timing only, as for the factor: the result is discarded and a division by 1.01 is "
        "the same elementwise pass"
    ),
    ("report/report_folder.py", "return False", "return None"): (
        "each of its four (_is_current_folder's and _exchange's) is read only by an if "
        "(`if _is_current_folder(real)`, `if _exchange(staging, real)`), where None is false "
        "as well"
    ),
    **{
        ("report/report_folder.py", line, "drop clause 2 of Or"): (
            "`exc.strerror or exc` where exc always comes from the OS (os.mkdir, os.rename, "
            "iterdir, or _exchange's OSError(code, strerror)): strerror is never empty there"
        )
        for line in (
            'return f"cannot be read ({exc.strerror or exc})", '
            'f"choose a folder you can read {_WHERE}"',
            'f"cannot create the report folder {target}: {exc.strerror or exc}",',
            'f"cannot replace the report folder {target}: {exc.strerror or exc}",',
            'f"{real.parent} ({exc.strerror or exc})",',
        )
    },
    ("files.py", 'pid_text = entry.name[len(prefix) :].split("-", 1)[0]', "1 -> 2"): (
        "split's maxsplit never changes the first field"
    ),
    **{
        ("embed/file_hashes.py", "_CHUNK = 1 << 20", description): (
            "the size of the pieces a file is read in: sha256 over the pieces in order is the "
            "same digest for any size"
        )
        for description in ("1 -> 2", "20 -> 21")
    },
    ("embed/secrets.py", 'after_scheme = _SCHEME.sub("", view, count=1)', "1 -> 2"): (
        "_SCHEME is anchored at the start (^, no MULTILINE): after the first match re.sub "
        "finds no second one, so any count removes the same scheme"
    ),
    # mutB (#34.6 round 3): embed/secrets.py
    ("embed/secrets.py", "for offset in range(3):", "3 -> 4"): (
        "a fourth alignment, three zero bytes ahead of the key, is base64 'AAAA' then the "
        "key's own encoding, and its core starts after those four characters: the same "
        "core as offset 0 (checked over 20,000 random keys)"
    ),
    (
        "embed/secrets.py",
        "for size in range(min(len(form) - 1, len(text)), MIN_PIECE - 1, -1):",
        "min -> max",
    ): (
        "starting at the larger of the two only adds sizes where form[:size] is longer than "
        "the text (no match) or is the whole form, which redact() has already blanked from "
        "the text (or the text was withheld): the first size that matches is the same"
    ),
    ("embed/secrets.py", 'authority = re.split(r"[/?#]", after_scheme, maxsplit=1)[0]', "1 -> 2"): (
        "split's maxsplit never changes the first field, the only one read"
    ),
    (
        "measure/metrics.py",
        "if x.size >= 2 and np.ptp(x) > 0 and np.ptp(y) > 0:",
        "drop clause 3 of And",
    ): (
        "scores without spread then reach scipy, whose pearsonr of a constant is NaN and whose "
        "least-squares slope of a constant is 0.0: the (NaN, 0.0) the next branch gives"
    ),
    # mutB (#34.6 round 3): results/storage.py (load_run now in run_reading.py, the listing of
    # the store's files in store_layout.py)
    **{
        ("results/run_reading.py", line, description): (
            "unreachable: validate(RunDocument, ...) has already refused every other "
            "run_schema_version (results_schema's field validator, with the same message), "
            "so load_run's own check never finds one"
        )
        for line, description in (
            ("if run.run_schema_version != RUN_SCHEMA_VERSION:", "delete if"),
            ("raise ResultsError(", "delete raise"),
        )
    },
    (
        "results/store_layout.py",
        'if run_name_of(p) is not None and not p.name.startswith(".") and not is_temp_file(p)',
        "drop clause 3 of And",
    ): (
        "a temporary file's name always starts with '.' (is_temp_file checks that first), "
        "so the clause before it has already left every one out"
    ),
    (
        "results/storage.py",
        "str(p.relative_to(self.root).with_name(run_name_of(p) or p.name)) for p in self.files()",
        "drop clause 2 of Or",
    ): "files() lists only files whose run_name_of is a name, so the stand-in is never used",
    (
        "results/store_layout.py",
        'return sorted(p for p in folder.iterdir() if p.is_dir() and not p.name.startswith("."))',
        "drop clause 1 of And",
    ): (
        "a file taken for a folder lists nothing: its iterdir() raises NotADirectoryError, an "
        "OSError, which _subfolders and _run_files_in both answer with []"
    ),
    # mutB (#34.6 round 3): embed/identity.py (and model_files.py, then part of it)
    (
        "embed/model_files.py",
        'if data and "\\n" not in data and len(data) < 256:',
        "drop clause 1 of And",
    ): (
        "an empty string passed on names no hidden path: its one part, '', does not start "
        "with '.', so named_hidden_paths skips it at the next check"
    ),
    ("embed/gil_handoff.py", "self.before = 0.0", "0.0 -> 1.0"): (
        "the first run to enter sets before from the interval it finds before anyone reads it"
    ),
    ("embed/identity.py", 'yield prefix.rstrip(".") or "(all)"', "drop clause 2 of Or"): (
        "unreachable through differences(): both identities' parts are mappings, so the "
        "walk yields only below a key, where the prefix is never empty"
    ),
    # mutB (#34.6 round 3): experiment/shard_parts.py
    (
        "experiment/shard_parts.py",
        "manifest=np.frombuffer(json.dumps(manifest, sort_keys=True).encode(), dtype=np.uint8),",
        "True -> False",
    ): (
        "the manifest's key order is never read: read_part parses it as JSON, and the run's "
        "digests sort the keys themselves (test_shard_parts_rules checks that order does not "
        "count)"
    ),
    (
        "experiment/shard_parts.py",
        'f"--niah-shard-dir: cannot write the part {path} ({exc.strerror or exc})",',
        "drop clause 2 of Or",
    ): (
        "exc comes from the OS (write_atomic's mkdir, mkstemp, write or rename): its "
        "strerror is never empty there"
    ),
    (
        "experiment/shard_parts.py",
        "if vectors.size and not np.isfinite(vectors).all():",
        "drop clause 1 of And",
    ): (
        "vectors of size 0 are all finite (np.isfinite of nothing, .all(), is True): no "
        "refusal either way"
    ),
    ("embed/batching.py", "self.load = [0] * count", "0 -> 1"): (
        "every job starts with the same load either way: the job with the fewest tokens "
        "(ties: the lower) is the same for every batch, so the deal is the same"
    ),
    (
        "experiment/shards.py",
        "groups = needle_set.select(config.groups or None).groups",
        "drop clause 2 of Or",
    ): (
        "NeedleSet.select keeps every group for None and for an empty selection alike, so "
        "`config.groups` (an empty tuple when none were chosen) selects what None does"
    ),
    (
        "experiment/speed.py",
        "if size is not None and len(sample) >= size:",
        "delete if",
    ): (
        "stops the walk over blocks early only: the sample grows in block order and is cut "
        "to size on return, so its first size inputs are the same with or without the break"
    ),
    # -- mutA sweep: measure/, results/compare and deltas, config/, naming -------------------
    ("measure/metrics.py", "if math.isnan(sd) or sd <= 1e-12 * scale:", "drop clause 1 of Or"): (
        "a NaN spread fails `sd <= ...` and reaches `difference / sd`, which is NaN too (a "
        "float division by NaN neither raises nor warns): the same NaN either way"
    ),
    **{
        (
            "measure/metrics.py",
            f'warnings.simplefilter("ignore", getattr(stats, "{name}", Warning))',
            "delete call",
        ): (
            f"scipy's {name} is a RuntimeWarning (through DegenerateDataWarning), which the "
            "line before already ignores: the filter only names it for the reader"
        )
        for name in ("NearConstantInputWarning", "ConstantInputWarning")
    },
    ("measure/metrics.py", "weights = np.ones((1, len(questions)))", "1 -> 2"): (
        "two rows of the same weights give two equal resamples, and only row 0 is read"
    ),
    (
        "config/strict_json.py",
        'raise AssertionError("no repeated key")  # pragma: no cover - called on a repeat only',
        "delete raise",
    ): (
        "unreachable: _first_repeated is called only when dict(items) is shorter than items, "
        "so some key repeats and the loop returns it before the raise"
    ),
    **{
        ("config/strict_json.py", line, description): (
            "the walk then also visits plain values and ASCII strings: a plain value is no "
            "container (skipped) and an ASCII string holds no surrogate, so nothing new is "
            "refused; the inner `and` ([2/2]) is the killable twin"
        )
        for line in (
            "if type(child) not in plain and not (type(child) is str and child.isascii())",
        )
        for description in (
            "And -> Or [1/2]",
            "drop clause 1 of And [1/2]",
            "drop clause 2 of And [1/2]",
        )
    },
    (
        "measure/metrics.py",
        "if x.size >= 2 and np.ptp(x) > 0 and np.ptp(y) > 0:",
        "Gt -> GtE [2/2]",
    ): (
        "`np.ptp(y) >= 0` sends scores without spread to scipy, whose pearsonr of a constant "
        "is NaN and whose least-squares slope is 0.0: the (NaN, 0.0) of the next branch"
    ),
    (
        "results/compare.py",
        "Fraction(c.position, positions - 1) if positions > 1 else Fraction(0),",
        "1 -> 2 [1/2]",
    ): (
        "`positions > 2`: a grid of 2 gets depth 0 instead of p/1, but the position index is "
        "in the key too, and for p > 0 that depth differs from every other grid's p/(m-1), so "
        "cells pair exactly as before (reviewed in mutation-sweep-2026-11-27.md)"
    ),
    (
        "measure/resolve_advice.py",
        "if groups < 1 or not math.isfinite(se) or not effect > 0:",
        "drop clause 2 of Or",
    ): (
        "a NaN or infinite se gives mde(se) NaN, so `needed` is NaN and the last line's "
        "`math.isfinite(needed)` gives the same None"
    ),
    (
        "config/cache_policy.py",
        "return cls(paths.cache_root(cache_dir or None), use_cache)",
        "drop clause 2 of Or",
    ): (
        "paths.cache_root tests `if explicit:`, so an empty cache_dir already falls through "
        "to $NIAH_CACHE_DIR and the user cache exactly as None does"
    ),
    ("measure/similarity.py", "safe = np.where(bad, 1.0, norms)", "1.0 -> 2.0"): (
        "the stand-in divisor of unusable rows only: the next line sets those rows to 0.0 "
        "whatever the division gave (and dividing inf or NaN by 1 or 2 warns of nothing)"
    ),
    (
        "measure/similarity.py",
        "scale = np.where(bad | (norms == 0), 0.0, 1.0 / np.where(norms == 0, 1.0, norms))",
        "1.0 -> 2.0 [2/2]",
    ): (
        "the stand-in divisor of empty sparse rows only (it keeps 1/0 from warning): the outer "
        "np.where gives those rows scale 0.0 whatever the division gave"
    ),
    ("results/compare.py", "for side, mine in zip(keep, ids, strict=True):", "True -> False"): (
        "keep and ids are both built as pairs (this run, the baseline): strict zip never "
        "finds a length mismatch to refuse"
    ),
    (
        "results/compare.py",
        "Fraction(c.position, positions - 1) if positions > 1 else Fraction(0),",
        "Sub -> Add",
    ): (
        "the position index is in the key beside the depth, so only cells of the same index p "
        "can pair; p/(m+1) == p/(n+1) holds exactly where p/(m-1) == p/(n-1) does (p = 0 or "
        "m = n), so the same cells pair"
    ),
    **{
        ("measure/scoring.py", line, description): (
            "unreachable: case_scores and _case read needle haystacks only, which assembly.py "
            "always builds with a name (the block's names[position]), an order (a str) and a "
            "position (an int); the `or` stand-ins are for controls, which never get here"
        )
        for line, description in (
            ('name=h.name or "",', "drop clause 2 of Or"),
            (
                'id=case_id(group.id, arm, h.order or "", h.length, h.position or 0, scoring, '
                "h.seed),",
                "drop clause 2 of Or [1/2]",
            ),
            (
                'id=case_id(group.id, arm, h.order or "", h.length, h.position or 0, scoring, '
                "h.seed),",
                "drop clause 2 of Or [2/2]",
            ),
        )
    },
    (
        "measure/slice_scores.py",
        "needles = [p for p in at_length if not p.haystack.is_control and p.haystack.kind == kind]",
        "drop clause 1 of And",
    ): (
        "a control never has a kind (assembly.py's _controls leave it None) and kind is an "
        "arm's needle kind (a str), so `kind == kind` alone already leaves the controls out"
    ),
    (
        "measure/slice_scores.py",
        "return [dict(zip(texts, row.tolist(), strict=True)) for row in matrix]",
        "True -> False",
    ): (
        "each row of the matrix scores the questions against one haystack per text, so it "
        "has exactly len(texts) values: strict zip never finds a mismatch to refuse"
    ),
}
