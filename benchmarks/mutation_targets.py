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
    # TODO(lead, at merge): add "measure/gating.py" (being written on another branch) with
    # tests/measure/test_gating.py and tests/plugin/test_gate_cell.py as its tests.
    "measure/gates.py": [
        "tests/measure/test_gates.py",
        "tests/measure/test_verdicts.py",
        "tests/measure/test_gate_records.py",
        "tests/plugin/test_gate_cell.py",  # the gate-column rule is killed only here
    ],
    "measure/verdicts.py": [
        "tests/measure/test_verdicts.py",
        "tests/measure/test_gates.py",
        "tests/measure/test_resolve_advice.py",
        "tests/plugin/test_gate_cell.py",
    ],
    # compare
    "results/compare.py": [
        "tests/results/test_compare.py",
        "tests/results/test_compare_edges.py",
        "tests/results/test_window_change.py",  # the window phrase
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
    "measure/metrics.py": ["tests/measure/test_metrics.py"],
    "measure/stats.py": ["tests/measure/test_stats.py", "tests/measure/test_stats_edges.py"],
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
        "tests/results/test_strict_reading.py",
        "tests/test_strict_part_manifest.py",
        "tests/config/test_bounds_and_strict_values.py",
    ],
    # shards
    "experiment/shards.py": ["tests/test_shards.py", "tests/test_strict_part_manifest.py"],
    # the report folder and whole-file writes
    "report/report_folder.py": ["tests/robustness/test_kill_report_folder.py"],
    "files.py": [
        "tests/test_files.py",
        "tests/robustness/test_kill_report_folder.py",
        # write_exclusive: one of several saves of a name wins
        "tests/results/test_storage_edges.py",
    ],
    # the window probe
    "embed/window_probe.py": ["tests/embed/test_window_probe.py"],
    # a served model: its noise (refused above a quarter of the signal) and fingerprint.
    # Node ids: the file's other tests run whole grids (7 minutes under load, not 1).
    "embed/server_noise.py": [
        f"{SERVED}::test_noise_from_a_server_of_float_noise_stays_below_the_refusal",
        f"{SERVED}::test_a_server_whose_answers_ignore_the_text_is_refused_before_the_cache",
    ],
    "embed/server_fingerprint.py": [
        f"{SERVED}::test_fingerprints_match_within_the_measured_spread_and_are_kept_per_endpoint",
    ],
    # identity: what makes two models the same
    "embed/identity.py": ["tests/embed/test_identity.py", "tests/embed/test_identity_edges.py"],
}
