"""What ``mutate.py`` mutates: every module that holds a rule, and the fast tests that own it.

Each module's list holds the tests written for its rules and the tests that killed its
mutants in earlier runs (``benchmarks/results/mutation.md``), so a survivor means no test
checks that line, not that its killer was left out. A module listed here that does not exist
(yet) is skipped with a line saying so. A test may be a node id (``file::name``) where the
file's other tests are slow and kill nothing of the module.
"""

from __future__ import annotations

from mutation_targets_haystacks import HAYSTACKS, ONEHOP
from mutation_targets_measure import MEASURE

SERVED = "tests/embed/test_served_answers.py"

TARGETS: dict[str, list[str]] = {
    # the speed gate (--niah-speed-fail) and the speed figures it reads
    "experiment/speed.py": [
        "tests/plugin/test_speed_gate.py",
        "tests/plugin/test_speed_measured.py",
        "tests/test_speed_rules.py",  # cached counts, the round spread
    ],
    # compare
    "results/compare.py": [
        "tests/results/test_compare_rules.py",  # a meaningful change's reasons: "", not null
        "tests/results/test_compare_title_rules.py",  # the title's notes
        "tests/results/test_compare.py",
        "tests/results/test_compare_verdicts.py",
        "tests/results/test_compare_compatibility.py",
        "tests/results/test_compare_edges.py",
        "tests/results/test_window_change.py",  # the window phrase
        "tests/report/test_comparison_not_meaningful.py",  # the n/m marks (compare.py:261, :268)
    ],
    "results/deltas.py": [
        "tests/results/test_deltas_rules.py",
        "tests/results/test_compare.py",
        "tests/results/test_compare_verdicts.py",
        "tests/report/test_comparison_not_meaningful.py",
    ],
    # cache policy
    "config/cache_policy.py": [
        "tests/config/test_cache_policy.py",
        # a link among the cache's own entries refused, any other left alone
        "tests/results/test_cache_links.py::test_a_link_anywhere_the_cache_writes_is_refused_before_work",
        "tests/results/test_cache_links.py::test_the_cache_root_itself_may_be_a_link_and_other_files_are_not_its_business",
        "tests/plugin/test_session_settings.py",
    ],
    # naming: the one label -> file name rule
    "naming.py": [
        "tests/test_naming_rules.py",  # the limits, the hash's digits, "unnamed"
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
    # where the store keeps runs, and finding their files (split from storage.py)
    "results/store_layout.py": [
        "tests/results/test_store_layout_rules.py",  # which files are runs, which is read
        "tests/results/test_storage_edges.py",
        "tests/results/test_storage.py",
        "tests/results/test_storage_files.py",
        "tests/results/test_run_history.py",
    ],
    # reading a whole saved run back (split from storage.py)
    "results/run_reading.py": [
        "tests/results/test_storage.py",
        "tests/results/test_strict_reading.py",
        "tests/results/test_results_reading.py",
        "tests/results/test_storage_compression.py",
    ],
    # reading a results file through its format, and the scores it may hold (split from
    # results_schema.py)
    "results/results_validation.py": [
        "tests/results/test_results_validation_rules.py",  # which problem is named, and how
        # "(and 1 more problems)": the count of the problems not named
        "tests/results/test_storage.py::test_a_bad_saved_run_names_the_json_path_inside_its_results",
        "tests/results/test_results_reading.py",
        "tests/results/test_strict_reading.py",
        "tests/results/test_results.py",
    ],
    "results/score_checks.py": [
        "tests/results/test_strict_reading.py",  # each score out of range, named by its path
        "tests/results/test_results_reading.py",
        "tests/results/test_results.py",
    ],
    # the drift of a series of saved runs (split from run_history.py)
    "results/history_series.py": [
        "tests/results/test_run_history.py",
    ],
    "results/run_file.py": [
        "tests/results/test_run_file_rules.py",  # a saved_at ending in "z"
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
                "test_batches_are_dealt_to_the_job_with_the_fewest_tokens_ties_to_the_lower",
                "test_a_bad_shard_is_a_usage_error_naming_the_value",
                "test_shard_parsing",
                "test_each_input_is_embedded_by_exactly_one_job_in_whole_batches",
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
    "embed/batching.py": [
        "tests/test_shard_parts_rules.py",  # the deal's token weights
        "tests/embed/test_batching_rules.py",
        "tests/test_shards.py::test_batches_are_dealt_to_the_job_with_the_fewest_tokens_ties_to_the_lower",
    ],
    "experiment/shard_parts.py": [
        "tests/test_shard_parts_rules.py",  # one served run: all but the answers the same
        "tests/test_shard_part_digest_rules.py",  # rows that are not the ones written: refused
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
        "tests/test_files_rules.py",  # this process's temps
        # write_exclusive: one of several saves of a name wins
        "tests/results/test_storage_edges.py",
    ],
    "bounded_reads.py": ["tests/test_files_rules.py"],  # devices, sizes, gzip bombs refused
    "output_paths.py": [
        "tests/test_files.py",
        "tests/test_files_rules.py",  # the inclusive path limit
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
    # a served model checked during its run: the same batches alone, at same-batch noise
    "embed/server_watch.py": ["tests/embed/test_server_watch_rules.py"],
    # what a server reports about itself (/models, /info): its identity and window
    "embed/server_report.py": [
        "tests/embed/test_server_report_rules.py",  # fields kept, redacted, the window
        "tests/embed/test_served_changes.py::test_what_the_server_reports_about_itself_is_its_identity",
        "tests/embed/test_remote.py::test_the_servers_max_model_len_is_the_window_and_caps_the_users",
        "tests/embed/test_remote.py::test_identity_is_endpoint_model_server_report_tokenizer_and_settings",
    ],
    # a static model folder read once per process: what a later load may share, and when a
    # folder counts as the same
    "embed/static_memo.py": ["tests/embed/test_static_memo.py"],
    # identity: what makes two models the same
    "embed/identity.py": [
        "tests/embed/test_identity_rules.py",  # the schema number, the short form
        "tests/embed/test_identity.py",
        "tests/embed/test_identity_edges.py",
    ],
    "embed/model_files.py": [
        "tests/embed/test_identity_rules.py",  # the config size bound, hidden paths named
        "tests/embed/test_identity_edges.py",
        "tests/embed/test_identity.py",
    ],
    "embed/file_hashes.py": [
        "tests/embed/test_identity_rules.py",  # memoised once settled, the memo's table
        "tests/embed/test_identity.py",
        "tests/embed/test_identity_edges.py",
    ],
    **HAYSTACKS,
    **MEASURE,
    # a change that means something: an interval that leaves chance
    # what two runs must share to be compared
    "results/compatibility.py": [
        "tests/results/test_compatibility_rules.py",  # a draw in common
        "tests/results/test_compare_compatibility.py",
        "tests/results/test_compatibility_planned.py",
    ],
    # the --niah-fail / --niah-compare-fail expressions
    "config/gate_expressions.py": [
        "tests/config/test_parsers.py",
        # --niah-speed-fail's bounds: 0% to under 100%
        "tests/plugin/test_speed_gate.py::test_a_bad_percentage_is_refused_with_the_fix",
        "tests/plugin/test_speed_gate.py::test_the_percentage_parses",
        "tests/measure/test_gating.py",
    ],
    # the option values' parsers and their bounds
    "config/parsers.py": [
        "tests/config/test_parsers.py",
        "tests/config/test_bounds_and_strict_values.py",
    ],
    "config/bounded_numbers.py": [
        "tests/config/test_bounds_and_strict_values.py",
        "tests/config/test_length_ranges.py",
        "tests/config/test_parsers.py",
        "tests/config/test_seeds.py",
    ],
    # the results cache and the batch budget
    "experiment/results_cache.py": [
        "tests/results/test_results_cache_rules.py",  # a cache that cannot store warns
        "tests/results/test_cache_links.py",
        "tests/test_digest.py",
    ],
    "experiment/batch_budget.py": [
        "tests/test_experiment.py::test_the_batch_budget",
    ],
    # the collector paused while a model loads
    "embed/gc_pause.py": ["tests/embed/test_gc_pause.py"],
    # the GIL handed over quickly while a GPU encodes
    "embed/gil_handoff.py": ["tests/embed/test_gil_handoff.py"],
    # the needle and word rules: one-hop words, leading words, needle checks
    "inputs/words.py": [
        "tests/inputs/test_words.py",
        f"{ONEHOP}::test_the_word_rule_refuses_a_needle_word_beginning_with_the_questions",
        f"{ONEHOP}::test_the_stem_of_a_plural_question_word_counts_and_short_words_only_match_themselves",
    ],
    "inputs/needles.py": ["tests/inputs/test_needles.py", "tests/inputs/test_needle_files.py"],
    # what reaches a report's HTML, Markdown and CSV cells
    "report/escape.py": ["tests/report/test_escape.py"],
    # the settings checked before any work. Node ids: each runs pytester (pytest in-process).
    "plugin/setting_checks.py": [
        "tests/plugin/test_lexical_only_rules.py",  # options no model of the run reads
        "tests/plugin/test_threshold_lengths_rules.py",
        "tests/plugin/test_speed_gate.py::test_the_gate_without_speed_is_a_usage_error",
        "tests/plugin/test_option_shard.py::test_inconsistent_shard_options_are_usage_errors",
        "tests/plugin/test_option_shard.py::test_several_problems_are_reported_together_before_any_work",
        "tests/plugin/test_option_save.py::test_saving_a_name_again_needs_save_overwrite",
        "tests/plugin/test_option_save.py::test_an_empty_save_name_is_a_usage_error_not_a_silent_skip",
        "tests/plugin/test_option_compare.py::test_compare_fail_without_compare_is_a_usage_error",
        "tests/plugin/test_configure_time_checks.py",
        "tests/robustness/test_hostile_model_options.py::test_an_option_the_lexical_baseline_would_ignore_is_a_usage_error",
    ],
    # the gates benchmark's report: false alarms and their intervals
    "benchmarks/gates_report.py": [
        "tests/test_bench_gates.py",
        "tests/test_gates_sentences.py",
        "tests/test_benchmark_arguments.py::test_gates_report_refuses_a_bad_docs_page_before_writing",
    ],
}
