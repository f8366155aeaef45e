"""``mutation_targets.TARGETS`` for ``haystacks/``: each module and the fast tests that own it.

The token-space splicing, the exact cuts, the fillers, the placement and the plan of a grid.
"""

from __future__ import annotations

# The haystack tests on the static model's tokenizer took 20-80 s each under load (a large
# vocabulary over the shared corpus); these are the same rules on MiniLM's and the word one's.
SPLICE = "tests/haystacks/test_splice.py"
SPLICE_FAST = [
    f"{SPLICE}::test_spliced_haystacks_are_exactly_the_haystacks_tokenized_as_text[minilm_tokenizer]",
    f"{SPLICE}::test_only_tokenizers_that_split_at_spaces_first_are_spliced",
    f"{SPLICE}::test_a_tokenizer_without_the_property_is_never_spliced",
    f"{SPLICE}::test_a_needle_slot_between_a_lone_word_marker_and_its_word_is_built_from_text",
    f"{SPLICE}::test_a_needle_junction_the_tokenizer_reads_across_is_built_from_text",
    f"{SPLICE}::test_a_junction_read_across_at_a_needles_end_only_is_built_from_text",
]
TOKENS = "tests/haystacks/test_builder_tokens.py"
TOKENS_FAST = [
    f"{TOKENS}::test_a_first_try_that_misses_is_rebuilt_to_an_exact_length",
    f"{TOKENS}::test_fillers_cut_from_the_control_are_those_tokenized_alone[minilm_tokenizer]",
    f"{TOKENS}::test_fillers_cut_from_the_control_are_those_tokenized_alone[word_tokenizer]",
    f"{TOKENS}::test_each_haystack_is_tokenized_once_and_each_control_twice",
    f"{TOKENS}::test_a_control_cut_that_misses_is_fitted_again",
    f"{TOKENS}::test_word_slots_are_the_tokens_that_follow_white_space[minilm_tokenizer]",
    f"{TOKENS}::test_word_slots_are_the_tokens_that_follow_white_space[word_tokenizer]",
    f"{TOKENS}::test_building_on_several_threads_changes_no_byte",
    f"{TOKENS}::test_counting_without_offsets_gives_the_encoded_counts[minilm_tokenizer]",
    f"{TOKENS}::test_a_block_fits_its_needle_stream_once_per_size",
    f"{TOKENS}::test_a_spliced_haystack_whose_count_changed_is_not_tokenized_again",
]
ONEHOP = "tests/inputs/test_onehop_leading_words.py"
HIDDEN = "tests/robustness/test_hostile_hidden_letters.py"

HAYSTACKS: dict[str, list[str]] = {
    "haystacks/builder.py": [
        "tests/haystacks/test_builder.py",
        *TOKENS_FAST,
        *SPLICE_FAST,
        "tests/haystacks/test_sentence_counts.py::test_the_builder_counts_each_length_ahead_and_builds_the_same_haystacks",
    ],
    "haystacks/splice.py": [
        "tests/haystacks/test_haystack_rules.py",  # no junction to check holds
        "tests/haystacks/test_cut_pieces_rules.py",  # a cut piece read otherwise alone
        *SPLICE_FAST,
        *TOKENS_FAST,
        "tests/haystacks/test_sentence_tokens.py::test_joined_sentence_tokens_are_the_joined_text_tokenized[minilm_tokenizer]",
    ],
    "haystacks/exact_cuts.py": [
        "tests/haystacks/test_exact_cuts_rules.py",  # counts overstated alone, a short stream
        *TOKENS_FAST,
        *SPLICE_FAST,
    ],
    "haystacks/assembly.py": [
        "tests/haystacks/test_haystack_rules.py",  # BlockParts cannot change
        "tests/haystacks/test_builder.py",
        *TOKENS_FAST,
        *SPLICE_FAST,  # most needle haystacks are spliced where the tokenizer allows it
        f"{SPLICE}::test_a_needle_put_first_is_spliced_with_its_fillers_first_word_read_after_a_space",
    ],
    "haystacks/placement.py": [
        "tests/haystacks/test_placement.py",
        "tests/haystacks/test_builder.py",
    ],
    "haystacks/fillers.py": [
        "tests/haystacks/test_fillers_rules.py",  # leading sentences, slots, a cut encoding
        "tests/haystacks/test_cut_pieces_rules.py",  # a cut encoding's characters
        *TOKENS_FAST,
        "tests/haystacks/test_builder.py",
    ],
    "haystacks/audit.py": [
        "tests/haystacks/test_audit_rules.py",  # a needle's words off its template
        f"{ONEHOP}::test_the_word_rule_refuses_a_needle_word_beginning_with_the_questions",
        f"{ONEHOP}::test_the_models_tokenizer_refuses_a_word_that_begins_with_the_questions[minilm_tokenizer]",
        f"{ONEHOP}::test_the_builtin_needles_pass_every_tokenizer_family[minilm_tokenizer]",
        f"{HIDDEN}::test_a_needle_set_with_a_hidden_letter_in_a_question_word_is_refused",
        f"{HIDDEN}::test_the_models_tokenizer_reads_the_hidden_letter_word_as_the_questions",
        f"{HIDDEN}::test_honest_needles_pass_the_token_check",
        "tests/haystacks/test_builder.py::test_leak_audit_keeps_key_words_out_of_filler",
        "tests/haystacks/test_builder.py::test_audit_rejects_every_leaking_snippet_and_says_so",
    ],
    "haystacks/chunking.py": ["tests/haystacks/test_chunking.py"],
    "haystacks/plan.py": [
        "tests/haystacks/test_plan_rules.py",  # kinds, the window's text, chunks, the needle
        "tests/haystacks/test_haystack_rules.py",  # a prepared block cannot change
        "tests/haystacks/test_plan_threads.py",
        "tests/haystacks/test_builder.py",
        "tests/embed/test_batching_rules.py",
    ],
    "haystacks/grid.py": [
        "tests/haystacks/test_grid.py",
        "tests/config/test_grid_size.py",
    ],
    "haystacks/sentence_counts.py": [
        "tests/haystacks/test_haystack_rules.py",  # stored counts: whole numbers or unknown
        "tests/haystacks/test_sentence_counts.py",
        "tests/results/test_cache_links.py",
    ],
    "haystacks/sentence_tokens.py": [
        "tests/haystacks/test_sentence_tokens_rules.py",  # what a stored file must hold
        "tests/haystacks/test_sentence_tokens.py::test_joined_sentence_tokens_are_the_joined_text_tokenized[minilm_tokenizer]",
        "tests/haystacks/test_sentence_tokens.py::test_sentence_tokens_persist_and_a_damaged_file_is_encoded_again",
        "tests/haystacks/test_sentence_tokens.py::test_a_warm_build_tokenizes_no_filler_text[minilm_tokenizer]",
        "tests/haystacks/test_sentence_tokens.py::test_few_texts_are_encoded_one_by_one_as_the_batch_encodes_them",
    ],
    "haystacks/snippet_streams.py": [
        # first: a stream that never gives up fails it in 60 s, not the run's timeout
        "tests/haystacks/test_haystack_rules.py::test_a_stream_that_can_draw_nothing_gives_up_rather_than_hang",
        "tests/haystacks/test_exact_cuts_rules.py::test_a_stream_holds_its_length_and_a_slack_for_joins",
        "tests/haystacks/test_snippet_streams_rules.py",  # budget, misses, audit, joined
        "tests/haystacks/test_sentence_counts.py",
        "tests/haystacks/test_builder.py",
    ],
    "haystacks/haystack.py": [
        "tests/haystacks/test_haystack_rules.py",  # stable keys, values that cannot change
        "tests/haystacks/test_builder.py",
        "tests/measure/test_scoring_rules.py",
    ],
    "haystacks/tokens.py": [
        "tests/haystacks/test_haystack_rules.py",  # the word tokenizer's ids
        *TOKENS_FAST,
        "tests/embed/test_window_probe_rules.py",
    ],
}
