"""What ``mutate.py`` mutates: every module that holds a rule, and the fast tests that own it.

Each module's list holds the tests written for its rules and the tests that killed its
mutants in earlier runs (``benchmarks/results/mutation.md``), so a survivor means no test
checks that line, not that its killer was left out. A module listed here that does not exist
(yet) is skipped with a line saying so. A test may be a node id (``file::name``) where the
file's other tests are slow and kill nothing of the module.
"""

from __future__ import annotations

SERVED = "tests/embed/test_served_answers.py"

TARGETS: dict[str, list[str]] = {
    # gating and verdicts
    "measure/gating.py": [
        "tests/measure/test_gating.py",  # each gating rule on its own
        "tests/measure/test_gates.py",
        "tests/measure/test_gate_records.py",
        "tests/plugin/test_gate_cell.py",
    ],
    "measure/gate_reasons.py": [
        "tests/measure/test_gating.py",
        "tests/report/test_summary_headline.py",
    ],
    "measure/verdicts.py": [
        "tests/measure/test_verdicts.py",
        "tests/measure/test_gates.py",
        "tests/measure/test_gating.py",
        "tests/measure/test_resolve_advice.py",
    ],
    # the speed gate (--niah-speed-fail) and the speed figures it reads
    "experiment/speed.py": [
        "tests/plugin/test_speed_gate.py",
        "tests/plugin/test_speed_measured.py",
        "tests/test_speed_rules.py",  # cached counts, the round spread
    ],
    # compare
    "results/compare.py": [
        "tests/results/test_compare.py",
        "tests/results/test_compare_verdicts.py",
        "tests/results/test_compare_compatibility.py",
        "tests/results/test_compare_edges.py",
        "tests/results/test_window_change.py",  # the window phrase
    ],
    "results/deltas.py": [
        "tests/results/test_deltas_rules.py",
        "tests/results/test_compare.py",
        "tests/results/test_compare_verdicts.py",
        "tests/report/test_comparison_not_meaningful.py",
    ],
    # scoring and its numbers
    "measure/scoring.py": [
        "tests/measure/test_scoring_rules.py",
        "tests/measure/test_truncation.py",
        "tests/measure/test_retrieval.py",
        "tests/measure/test_tables.py",
        "tests/measure/test_metrics.py",
        "tests/measure/test_maxsim_rules.py",  # maxsim
    ],
    "measure/similarity.py": [
        "tests/measure/test_scoring_rules.py",
        "tests/measure/test_maxsim_rules.py",
        "tests/measure/test_truncation.py",
    ],
    "measure/metrics.py": [
        "tests/measure/test_metrics_rules.py",  # float dust on large scores
        "tests/measure/test_metrics.py",
        "tests/measure/test_position_effects.py",
        "tests/measure/test_question_metrics.py",
    ],
    "measure/stats.py": [
        "tests/measure/test_stats_rules.py",  # the metric checked first
        "tests/measure/test_stats.py",
        "tests/measure/test_stats_edges.py",
    ],
    # cache policy
    "config/cache_policy.py": [
        "tests/config/test_cache_policy.py",
        "tests/plugin/test_session_settings.py",
    ],
    # naming: the one label -> file name rule
    "naming.py": [
        "tests/test_naming.py",
        "tests/robustness/test_hostile_labels.py",
        "tests/results/test_storage_files.py",
    ],
    # the run store
    "results/storage.py": [
        "tests/results/test_storage_rules.py",  # every door checks the run name
        "tests/results/test_storage_edges.py",
        "tests/results/test_storage.py",
        "tests/results/test_storage_files.py",
        "tests/results/test_run_history.py",
    ],
    "results/run_file.py": [
        "tests/results/test_storage_edges.py",
        "tests/results/test_run_history.py",
        "tests/results/test_storage_compression.py",
        "tests/results/test_storage.py",
    ],
    # secrets: never in a file, a log or a message
    "embed/secrets.py": [
        "tests/embed/test_secrets_rules.py",  # the short key's base64; JSON with "/"
        "tests/embed/test_remote_secrets.py",
    ],
    # strict JSON reading
    "config/strict_json.py": [
        "tests/config/test_strict_json_rules.py",  # a reader's own repeated-key error
        "tests/results/test_strict_reading.py",
        "tests/test_strict_part_manifest.py",
        "tests/config/test_bounds_and_strict_values.py",
    ],
    # shards
    # Node ids: the whole file's baseline ran past 600 s under load (it runs eight grids);
    # these check the parts' rules on the one set of sharded folders.
    "experiment/shards.py": [
        "tests/test_shard_parts_rules.py",  # a served part beside another model's: named
        "tests/test_strict_part_manifest.py",
        *(
            f"tests/test_shards.py::{name}"
            for name in (
                "test_shares_are_deterministic_and_balanced_by_tokens",
                "test_a_bad_shard_is_a_usage_error_naming_the_value",
                "test_shard_parsing",
                "test_each_input_is_embedded_by_exactly_one_job",
                "test_a_missing_part_is_named",
                "test_a_folder_without_parts_is_named",
                "test_a_part_of_another_shard_count_is_named",
                "test_a_duplicated_part_is_named",
                "test_a_foreign_part_is_named",
                "test_a_part_holding_another_share_is_named",
                "test_a_damaged_part_is_named",
                "test_other_options_in_the_gate_job_are_refused_naming_them",
                "test_the_lexical_baseline_cannot_be_sharded",
                "test_an_empty_part_is_named_not_a_traceback",
                "test_a_part_with_a_vector_that_is_not_finite_is_refused",
                "test_a_part_whose_vectors_no_longer_match_its_keys_is_refused",
                "test_parts_whose_vectors_differ_in_width_are_refused",
                # run_shard keeps in the cache by default (killed shards.py:108)
                "test_with_the_cache_a_shard_job_keeps_what_a_whole_run_keeps",
            )
        ),
    ],
    "experiment/shard_parts.py": [
        "tests/test_shard_parts_rules.py",  # one served run: all but the answers the same
        "tests/test_strict_part_manifest.py",
        *(
            f"tests/test_shards.py::{name}"
            for name in (
                "test_a_damaged_part_is_named",
                "test_an_empty_part_is_named_not_a_traceback",
                "test_a_part_with_a_vector_that_is_not_finite_is_refused",
                "test_a_part_whose_vectors_no_longer_match_its_keys_is_refused",
                "test_a_part_of_another_shard_count_is_named",
                "test_shard_parsing",
            )
        ),
        "tests/embed/test_served_shards.py",  # parts of one noisy server, or of a swapped one
    ],
    # the report folder and whole-file writes
    "report/report_folder.py": [
        "tests/robustness/test_kill_report_folder.py",
        "tests/report/test_report_folder_rules.py",  # the newest report renamed aside
    ],
    "files.py": [
        # Not the kill tests (report folder's): with them the baseline took 352 s under load.
        "tests/test_files.py",
        "tests/test_files_rules.py",  # the inclusive path limit, this process's temps
        # write_exclusive: one of several saves of a name wins
        "tests/results/test_storage_edges.py",
    ],
    # the window probe
    "embed/window_probe.py": [
        "tests/embed/test_window_probe_rules.py",  # the shortest probe, ...
        "tests/embed/test_window_probe.py",
    ],
    # a served model: its noise (refused above a quarter of the signal) and fingerprint.
    # Node ids: the file's other tests run whole grids (7 minutes under load, not 1).
    "embed/server_noise.py": [
        "tests/embed/test_server_noise_rules.py",
        f"{SERVED}::test_noise_from_a_server_of_float_noise_stays_below_the_refusal",
        f"{SERVED}::test_a_server_whose_answers_ignore_the_text_is_refused_before_the_cache",
    ],
    "embed/server_fingerprint.py": [
        "tests/embed/test_server_fingerprint_rules.py",
        f"{SERVED}::test_fingerprints_match_within_the_measured_spread_and_are_kept_per_endpoint",
    ],
    # identity: what makes two models the same
    "embed/identity.py": ["tests/embed/test_identity.py", "tests/embed/test_identity_edges.py"],
}

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
        "files.py",
        'descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))',
        "0 -> 1",
    ): "unreachable on POSIX: the default is read only where os has no O_NONBLOCK (Windows)",
    ("files.py", "data = handle.read(limit + 1)  # it may have grown since", "1 -> 2"): (
        "reading limit + 2 bytes instead of limit + 1: a file of more than limit bytes is "
        "refused by len(data) > limit either way, one of at most limit bytes is read whole"
    ),
    ("files.py", "out = stream.read(limit + 1)", "1 -> 2"): (
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
    ("embed/server_noise.py", "return float(a @ b) / scale if scale > 0 else 1.0", "1.0 -> 2.0"): (
        "the cosine of a zero vector is only compared with -0.5 (a flip): 1.0 and 2.0 both "
        "say no flip"
    ),
    (
        "embed/server_fingerprint.py",
        "moved = np.linalg.norm(a - b, axis=1) / np.where(scale > 0, scale, 1.0)",
        "1.0 -> 2.0",
    ): "the stand-in divisor is used only where both rows are zero, and their 0 apart stays 0",
    ("measure/scoring.py", "if not texts:", "delete if"): (
        "unreachable: a plan with questions always has needles (see the next entry); and "
        "without the shortcut, no needle scores to the same empty dicts"
    ),
    ("measure/scoring.py", "return [{} for _ in q_keys]", "return None"): (
        "unreachable: every question of a run belongs to a needle group whose needles are "
        "planned with it (an empty needle set is refused by the schema), so a plan with "
        "questions always has needles (reviewed in mutation-fresh-981343202.md)"
    ),
    (
        "measure/scoring.py",
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
    ("measure/scoring.py", "@dataclass(frozen=True)", "True -> False"): (
        "_SliceScores is private, built once per slice by its own classmethod and only read: "
        "no code assigns to it, so frozen or not, nothing can tell"
    ),
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
}
